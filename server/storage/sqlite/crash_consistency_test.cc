// Crash consistency of the SQLite engine (docs/storage.md, invariants 11-13): a seeded model
// drives SqliteStorage through appends (with re-sends of stored and of lost ids), moves (tiny
// thresholds and chunks, so that they happen all the time and take many transactions), clean
// reopens and power losses (tests/support/power_loss_vfs.h: every byte not synced is dropped) at
// the k-th sync from a random point, so in the middle of appends, checkpoints and moves. After
// each reopen: the open succeeds; every stored report is visible once; sum of counts.n = visible
// reports per metric-hour, and the counters' sums (a third of the reports touch two counters of a
// sketch-sized layout, counter_chunks) are those of the visible reports; under durability=full
// every acknowledged report is stored, under durability=normal only those acknowledged since the
// database's WAL was last synced may be lost; then re-sends of stored ids are duplicates and
// re-sends of lost ids are counted once. The model also deletes and re-creates a metric
// (DeleteMetric: after a power loss the metric is either gone with all its rows or back whole)
// and runs retention passes, keeping or dropping the counts, over a metric's old hours (after a
// power loss an expired hour's visible reports are its own and counted, a pass run again leaves
// none), with power losses inside both (docs/storage.md, invariant 11).
// LegacyCopyTest: the step to schema version 8 (invariant 19) under the VFS's full disk.
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"
#include "tests/support/power_loss_vfs.h"

namespace deniable::server {
namespace {

using deniable::testing::PowerLossVfs;
using testing_util::NewMetric;
using testing_util::TempDbPath;

// (metric, hour, report id): a report's identity for deduplication.
using Key = std::tuple<int64_t, int64_t, std::string>;

struct Figures {
  int64_t steps = 0;
  int64_t power_losses = 0;
  int64_t losses_in_moves = 0;  // the power went while MoveRecentReports ran
  int64_t clean_reopens = 0;
  int64_t moves = 0;
  int64_t acknowledged = 0;
  int64_t lost_in_window = 0;  // acknowledged, unsynced, lost (durability=normal only)
  int64_t resent_stored = 0;
  int64_t resent_lost = 0;
  int64_t deletes = 0;            // DeleteMetric calls (each followed by a re-create)
  int64_t losses_in_deletes = 0;  // the power went while DeleteMetric ran
  int64_t deletes_undone = 0;     // a power loss brought the deleted metric back (whole)
  int64_t retention_passes = 0;
  int64_t losses_in_retention = 0;  // the power went while ApplyRetention ran
};

// The metric DeleteMetric deletes and re-creates, and the one retention passes expire.
constexpr char kChurned[] = "m3";
constexpr char kExpiring[] = "m2";

struct Param {
  Durability durability;
  uint64_t seed;
};

class CrashConsistencyTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    vfs_ = &PowerLossVfs::Install();
    path_ = TempDbPath("crash");
    options_.path = path_;
    options_.durability = GetParam().durability;
    options_.max_recent_reports = 48;  // moves every few appends, in the foreground
    options_.background_moves = false;
    options_.move_chunk_rows = 8;  // a move of an hour is several keyed transactions
    options_.bound_move_wal = false;
    options_.wal_restart_wait_tries = 2;
    options_.write_cache_kib = 512;
    rng_.seed(GetParam().seed);
  }
  void TearDown() override {
    storage_.reset();
    for (const char* suffix : {"", "-wal", "-shm", "-reports", "-reports-wal", "-reports-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
  }

  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  absl::Status Open() {
    // Checkpoints (and their syncs) all the time, one file's more often than the other's, which
    // one chosen again at each open: a step of one file is then often synced before the other's
    // step it follows, or the other way round (what invariant 11's fsyncs are for).
    const bool keyed_first = Uniform(0, 1) == 0;
    options_.wal_autocheckpoint_pages = keyed_first ? 16 : 4;
    options_.keyed_wal_autocheckpoint_pages = keyed_first ? 2 : 24;
    absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(options_);
    if (!s.ok()) return s.status();
    storage_ = *std::move(s);
    return absl::OkStatus();
  }

  // Hourly periods: retention cuts at an hour (RetentionCutoff floors to the period).
  static StoredMetric HourlyMetric(const std::string& name) {
    StoredMetric m = NewMetric(name);
    m.reporting_period_seconds = 3600;
    return m;
  }

  ReportRow MakeRow(const Key& key) {
    ReportRow r;
    r.metric_id = std::get<0>(key);
    r.design_version = 1;
    std::copy(std::get<2>(key).begin(), std::get<2>(key).end(), r.report_id.begin());
    r.event_time_seconds = std::get<1>(key) * 3600;
    if (std::get<2>(key)[1] & 1) r.counters = {0};
    // A third of the reports also touch two counters of a sketch-sized layout, past 65 535 and
    // in several chunks of counter_chunks (issue 37), so that the counters' sums are checked
    // against the visible reports after every power loss too.
    if (static_cast<uint8_t>(std::get<2>(key)[8]) % 3 == 0) {
      const uint32_t cell = static_cast<uint8_t>(std::get<2>(key)[0]);
      r.counters.push_back(65536 + 2 * 1024 * cell);
      r.counters.push_back(65536 + 2 * 1024 * cell + 1);
    }
    return r;
  }
  Key NewKey() {
    const int64_t id = next_id_++;
    std::string bytes(16, '\0');
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<char>(id >> (8 * b));
    bytes[8] = static_cast<char>(Uniform(0, 255));  // ids arrive out of key order
    const int64_t hour = figures_.steps / 100 + Uniform(0, 2);
    const int which = Uniform(0, 7);
    return Key{metrics_[which < 4 ? 0 : which < 6 ? 1 : 2], hour, bytes};
  }
  // A random stored id (nullptr: none).
  const Key* PickStored() {
    if (stored_keys_.empty()) return nullptr;
    return &stored_keys_[Uniform(0, static_cast<int>(stored_keys_.size()) - 1)];
  }
  // A random lost id (nullptr: none; few are).
  const Key* PickLost() {
    if (lost_.empty()) return nullptr;
    auto it = lost_.begin();
    std::advance(it, Uniform(0, static_cast<int>(lost_.size()) - 1));
    return &*it;
  }
  void Store(const Key& k, int64_t wal_syncs) {
    if (stored_.emplace(k, wal_syncs).second) stored_keys_.push_back(k);
  }

  // Keys taken out of the model: the stored ones (with their WAL syncs) and the uncertain ones.
  struct Taken {
    std::map<Key, int64_t> stored;
    std::set<Key> uncertain;
  };
  // Takes the keys `pred` picks out of stored_, uncertain_ and lost_ (the lost ones are dropped):
  // they are no longer sent again.
  Taken Take(const std::function<bool(const Key&)>& pred) {
    Taken t;
    for (auto it = stored_.begin(); it != stored_.end();) {
      if (!pred(it->first)) {
        ++it;
        continue;
      }
      t.stored.insert(*it);
      it = stored_.erase(it);
    }
    std::erase_if(uncertain_,
                  [&](const Key& k) { return pred(k) && t.uncertain.insert(k).second; });
    std::erase_if(lost_, pred);
    stored_keys_.clear();
    for (const auto& [k, syncs] : stored_) stored_keys_.push_back(k);
    return t;
  }

  // DeleteMetric of kChurned, then its re-creation (a new id). Its keys leave the model; until
  // the next reopen says whether the delete stayed (Resolve), they are kept in pending_.
  void DeleteAndRecreate(bool may_fail) {
    const int64_t old_id = metrics_[2];
    pending_.push_back({old_id, Take([old_id](const Key& k) { return std::get<0>(k) == old_id; })});
    ++figures_.deletes;
    const absl::Status s = storage_->DeleteMetric(kChurned);
    metrics_[2] = 0;  // unknown until the re-create returns
    if (!s.ok() || vfs_->crashed()) {
      ASSERT_TRUE(may_fail && vfs_->crashed()) << "step " << figures_.steps << ": " << s;
      ++figures_.losses_in_deletes;
      churn_cut_ = true;
      return;
    }
    absl::StatusOr<StoredMetric> m = storage_->CreateMetric(HourlyMetric(kChurned));
    if (!m.ok()) {
      ASSERT_TRUE(may_fail && vfs_->crashed()) << "step " << figures_.steps << ": " << m.status();
      churn_cut_ = true;
      return;
    }
    Created(m->id);
  }

  // A new id of kChurned (AUTOINCREMENT may give again the id of a create a power loss undid).
  void Created(int64_t id) {
    metrics_[2] = id;
    dead_.erase(id);
  }

  // After a reopen: which of the deletes of kChurned stayed. The metric on disk must be the one
  // the model has (every delete stayed) or, after a power loss under durability=normal, one the
  // model deleted since the last reopen, then back whole (its keys return to the model: each
  // visible once and counted, or lost in the window), or none (a delete stayed, its re-create
  // did not). Every other id is dead: none of its reports visible, none of its counts left.
  void Resolve(bool power_loss, int64_t wal_syncs) {
    absl::StatusOr<StoredMetric> m = storage_->GetMetric(kChurned);
    ASSERT_TRUE(m.ok() || absl::IsNotFound(m.status())) << m.status();
    const int64_t on_disk = m.ok() ? m->id : 0;
    const bool cut = churn_cut_;
    churn_cut_ = false;
    if (on_disk != 0 && on_disk == metrics_[2]) {
      for (const Pending& p : pending_) dead_.insert(p.id);
      pending_.clear();
      return;
    }
    // Under durability=full only a delete or re-create the power cut short may be undone.
    ASSERT_TRUE(power_loss && (GetParam().durability == Durability::kNormal || cut))
        << "step " << figures_.steps << ": metric " << kChurned << " has id " << on_disk
        << " after a reopen, the model " << metrics_[2];
    if (metrics_[2] != 0) {
      // Re-created after a commit the power loss undid: every report of it came after.
      const int64_t undone = metrics_[2];
      Taken t = Take([undone](const Key& k) { return std::get<0>(k) == undone; });
      for (const auto& [k, syncs] : t.stored) {
        ASSERT_EQ(syncs, wal_syncs) << "step " << figures_.steps
                                    << ": a report of a re-created metric is lost outside the "
                                       "window";
      }
      dead_.insert(undone);
    }
    // A re-create cut short whose commit is durable: the new id, with no report yet.
    bool found = on_disk == 0 ||
                 (cut && metrics_[2] == 0 && (pending_.empty() || on_disk > pending_.back().id));
    for (Pending& p : pending_) {
      if (p.id != on_disk) {
        dead_.insert(p.id);
        continue;
      }
      found = true;
      ++figures_.deletes_undone;
      for (const auto& [k, syncs] : p.keys.stored) Store(k, syncs);
      uncertain_.insert(p.keys.uncertain.begin(), p.keys.uncertain.end());
    }
    ASSERT_TRUE(found) << "step " << figures_.steps << ": metric " << kChurned << " has id "
                       << on_disk << ", never given to it";
    pending_.clear();
    Created(on_disk);
    if (on_disk == 0) {
      absl::StatusOr<StoredMetric> created = storage_->CreateMetric(HourlyMetric(kChurned));
      ASSERT_TRUE(created.ok()) << created.status();
      Created(created->id);
    }
  }

  absl::Status RunRetention() {
    absl::StatusOr<StoredMetric> m = storage_->SetRetention(kExpiring, 1, retention_policy_);
    if (!m.ok()) return m.status();
    return storage_->ApplyRetention(retention_).status();
  }

  // A retention pass over kExpiring's hours before the one before the current (no new report
  // comes to them), keeping or dropping their counts, a few rows per transaction. Their keys
  // leave the model (expired_keys_: a re-send would be new).
  void Retention(bool may_fail) {
    const int64_t cutoff_hour = figures_.steps / 100 - 1;
    if (cutoff_hour < 1) return;  // nothing old yet
    const int64_t id = metrics_[1];
    Taken t =
        Take([&](const Key& k) { return std::get<0>(k) == id && std::get<1>(k) < cutoff_hour; });
    for (const auto& [k, syncs] : t.stored) expired_keys_.insert(k);
    expired_keys_.insert(t.uncertain.begin(), t.uncertain.end());
    for (int64_t h = 0; h < cutoff_hour; ++h) expired_.insert({id, h});
    retention_.now_seconds = cutoff_hour * 3600 + 86400;  // 1 day of retention: the cutoff
    retention_.dedup_window_seconds = 0;
    retention_.batch_rows = 4;
    retention_policy_ = Uniform(0, 1) == 0 ? kRetentionKeepCounts : kRetentionDropCounts;
    retention_clean_ = false;
    ++figures_.retention_passes;
    const absl::Status s = RunRetention();
    if (!s.ok() || vfs_->crashed()) {
      ASSERT_TRUE(may_fail && vfs_->crashed()) << "step " << figures_.steps << ": " << s;
      ++figures_.losses_in_retention;
      return;
    }
    retention_clean_ = true;
  }

  // One AppendBatches of new ids and re-sends (of stored ids: duplicates; of lost ids: counted
  // again). `may_fail`: while the power may go (the rows of a failed append are uncertain).
  void Append(bool may_fail) {
    std::set<Key> in_call;
    std::vector<std::vector<ReportRow>> batches(Uniform(1, 2));
    std::vector<std::vector<Key>> keys(batches.size());
    for (size_t b = 0; b < batches.size(); ++b) {
      const int rows = Uniform(1, 8);
      for (int i = 0; i < rows; ++i) {
        const int kind = Uniform(0, 9);
        const Key* picked = kind < 2 ? PickStored() : kind < 3 ? PickLost() : nullptr;
        Key key = picked != nullptr ? *picked : NewKey();
        if (!in_call.insert(key).second) continue;
        keys[b].push_back(key);
        batches[b].push_back(MakeRow(key));
      }
    }
    std::vector<absl::Span<const ReportRow>> spans(batches.begin(), batches.end());
    absl::StatusOr<std::vector<AppendResult>> got = storage_->AppendBatches(spans);
    if (!got.ok()) {
      ASSERT_TRUE(may_fail) << "step " << figures_.steps << ": " << got.status();
      for (const auto& batch : keys) {
        for (const Key& k : batch) {
          if (!stored_.contains(k)) uncertain_.insert(k);
        }
      }
      return;
    }
    ASSERT_EQ(got->size(), batches.size());
    const int64_t wal_syncs = vfs_->Syncs(path_ + "-wal");
    for (size_t b = 0; b < batches.size(); ++b) {
      int64_t fresh = 0, stored = 0;
      for (const Key& k : keys[b]) (stored_.contains(k) ? stored : fresh) += 1;
      ASSERT_EQ((*got)[b].duplicates, stored) << "step " << figures_.steps;
      ASSERT_EQ((*got)[b].accepted, fresh) << "step " << figures_.steps;
      for (const Key& k : keys[b]) {
        if (stored_.contains(k)) continue;
        Store(k, wal_syncs);
        if (lost_.erase(k) > 0) ++figures_.resent_lost;
        uncertain_.erase(k);
        ++figures_.acknowledged;
      }
      figures_.resent_stored += stored;
    }
  }

  // The visible reports (each with how many times it is visible) and the sum of counts.n, per
  // metric-hour, read on a connection of the test's own.
  void ReadState(std::map<Key, int>* visible, std::map<std::pair<int64_t, int64_t>, int64_t>* n,
                 std::map<std::pair<int64_t, int64_t>, SparseCounters>* sums) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    ASSERT_TRUE(AttachKeyedReports(db, path_).ok());
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db,
                                 "SELECT metric_id, event_time, report_id, count(*) FROM "
                                 "stored_reports GROUP BY 1, 2, 3",
                                 -1, &st, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const auto* blob = static_cast<const char*>(sqlite3_column_blob(st, 2));
      Key k{sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1) / 3600,
            std::string(blob, sqlite3_column_bytes(st, 2))};
      (*visible)[k] = sqlite3_column_int(st, 3);
    }
    sqlite3_finalize(st);
    // No count of a deleted metric is left.
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT DISTINCT metric_id FROM counts", -1, &st, nullptr),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      const int64_t metric = sqlite3_column_int64(st, 0);
      EXPECT_FALSE(dead_.contains(metric))
          << "step " << figures_.steps << ": counts of deleted metric " << metric << " are left";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    for (int64_t metric : metrics_) {
      if (metric == 0) continue;
      absl::StatusOr<std::vector<CountRow>> rows = storage_->ReadCounts(metric, 0, 1 << 30);
      ASSERT_TRUE(rows.ok()) << rows.status();
      for (const CountRow& r : *rows) {
        (*n)[{metric, r.event_time_seconds / 3600}] += r.n;
        (*sums)[{metric, r.event_time_seconds / 3600}].AddAll(r.counters);
      }
    }
  }

  // The invariants, after a reopen (`power_loss`: after one, with `wal_syncs` syncs of the
  // database's WAL done before it) or, with the storage open all along, exactly the model.
  void Check(bool reopened, bool power_loss, int64_t wal_syncs) {
    std::map<Key, int> visible;
    std::map<std::pair<int64_t, int64_t>, int64_t> n;
    std::map<std::pair<int64_t, int64_t>, SparseCounters> sums;
    ASSERT_NO_FATAL_FAILURE(ReadState(&visible, &n, &sums));
    std::map<std::pair<int64_t, int64_t>, int64_t> per_hour;
    std::map<std::pair<int64_t, int64_t>, SparseCounters> counters_per_hour;
    std::map<std::pair<int64_t, int64_t>, int64_t> expired_visible;
    for (const auto& [k, times] : visible) {
      ASSERT_EQ(times, 1) << "step " << figures_.steps << ": a report is visible " << times
                          << " times (hour " << std::get<1>(k) << ")";
      ASSERT_FALSE(dead_.contains(std::get<0>(k)))
          << "step " << figures_.steps << ": a report of deleted metric " << std::get<0>(k)
          << " is visible";
      if (expired_.contains({std::get<0>(k), std::get<1>(k)})) {
        ASSERT_TRUE(expired_keys_.contains(k))
            << "step " << figures_.steps << ": a report no append sent is visible in an expired "
            << "hour";
        expired_visible[{std::get<0>(k), std::get<1>(k)}] += 1;
        continue;
      }
      per_hour[{std::get<0>(k), std::get<1>(k)}] += 1;
      for (uint32_t j : MakeRow(k).counters)
        counters_per_hour[{std::get<0>(k), std::get<1>(k)}].Add(j, 1);
      if (!stored_.contains(k)) {
        ASSERT_TRUE(uncertain_.contains(k))
            << "step " << figures_.steps << ": a report no append sent is visible";
      }
    }
    // An expired hour (a retention pass reached it): its visible reports are counted (none is
    // left uncounted by counts dropped before the keyed rows); once a pass has run to its end
    // (no power loss since), none is visible, and after a pass that drops counts none is left.
    for (const auto& hour : expired_) {
      ASSERT_LE(expired_visible[hour], n[hour])
          << "step " << figures_.steps << ": metric " << hour.first << " hour " << hour.second
          << " (expired) has visible reports its counts miss";
      if (!retention_clean_) continue;
      ASSERT_EQ(expired_visible[hour], 0)
          << "step " << figures_.steps << ": metric " << hour.first << " hour " << hour.second
          << " keeps reports past a retention pass";
      if (retention_policy_ == kRetentionDropCounts) {
        ASSERT_EQ(n[hour], 0) << "step " << figures_.steps << ": metric " << hour.first << " hour "
                              << hour.second << " keeps counts past a pass dropping "
                              << "them";
      }
    }
    for (auto& [hour, count] : n) {
      if (count == 0 || expired_.contains(hour)) continue;
      ASSERT_EQ(count, per_hour[hour])
          << "step " << figures_.steps << ": sum of counts.n of metric " << hour.first << " hour "
          << hour.second << " is not its visible reports";
    }
    for (const auto& [hour, count] : per_hour) {
      ASSERT_EQ(n[hour], count) << "step " << figures_.steps << ": metric " << hour.first
                                << " hour " << hour.second << " has uncounted reports";
      ASSERT_EQ(sums[hour].ToString(), counters_per_hour[hour].ToString())
          << "step " << figures_.steps << ": metric " << hour.first << " hour " << hour.second
          << ": the counters' sums are not those of its visible reports";
    }
    for (auto it = stored_.begin(); it != stored_.end();) {
      if (visible.contains(it->first)) {
        if (reopened) it->second = -1;  // read from the disk after a reopen: durable
        ++it;
        continue;
      }
      const bool in_window =
          power_loss && GetParam().durability == Durability::kNormal && it->second == wal_syncs;
      ASSERT_TRUE(in_window) << "step " << figures_.steps << ": an acknowledged report is lost"
                             << (power_loss ? " after a power loss" : "")
                             << " (acknowledged at WAL sync " << it->second << ", the last was "
                             << wal_syncs << ")";
      ++figures_.lost_in_window;
      lost_.insert(it->first);
      it = stored_.erase(it);
    }
    for (const Key& k : uncertain_) {
      if (visible.contains(k)) {
        Store(k, -1);
      } else {
        lost_.insert(k);
      }
    }
    uncertain_.clear();
    stored_keys_.clear();
    for (const auto& [k, syncs] : stored_) stored_keys_.push_back(k);
  }

  // After a reopen: re-send a few stored and a few lost ids, then check again.
  void ResendAndCheck() {
    std::vector<Key> dup, again;
    for (int i = 0; i < 6; ++i) {
      if (const Key* k = PickStored(); k != nullptr) dup.push_back(*k);
      if (const Key* k = PickLost(); k != nullptr) again.push_back(*k);
    }
    std::set<Key> all(dup.begin(), dup.end());
    const size_t dups = all.size();
    all.insert(again.begin(), again.end());
    std::vector<ReportRow> rows;
    for (const Key& k : all) rows.push_back(MakeRow(k));
    if (rows.empty()) return;
    absl::StatusOr<AppendResult> got = storage_->AppendReports(rows);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->duplicates, static_cast<int64_t>(dups)) << "step " << figures_.steps;
    ASSERT_EQ(got->accepted, static_cast<int64_t>(all.size() - dups)) << "step " << figures_.steps;
    const int64_t wal_syncs = vfs_->Syncs(path_ + "-wal");
    for (const Key& k : all) {
      if (lost_.erase(k) > 0) {
        Store(k, wal_syncs);
        ++figures_.resent_lost;
      }
    }
    figures_.resent_stored += static_cast<int64_t>(dups);
    ASSERT_NO_FATAL_FAILURE(Check(false, false, 0));
  }

  void PowerLoss() {
    // A third of the power losses come inside a DeleteMetric (and its re-create) or soon after
    // it (at one of the first 4 syncs from its start), a third inside a retention pass (many
    // transactions of a few rows) or after it (at one of the first 16).
    const int first = Uniform(0, 2);
    vfs_->CrashAtSync(first == 0 ? Uniform(1, 12) : first == 1 ? Uniform(1, 4) : Uniform(1, 16));
    if (first == 1) {
      ASSERT_NO_FATAL_FAILURE(DeleteAndRecreate(/*may_fail=*/true));
    } else if (first == 2) {
      ASSERT_NO_FATAL_FAILURE(Retention(/*may_fail=*/true));
    }
    for (int i = 0; i < 40 && !vfs_->crashed(); ++i) {
      const int op = Uniform(0, 19);
      if (op < 4) {
        const absl::Status s = storage_->MoveRecentReports();
        ++figures_.moves;
        if (!s.ok() && vfs_->crashed()) ++figures_.losses_in_moves;
        ASSERT_TRUE(s.ok() || vfs_->crashed()) << s;
      } else if (op == 4) {
        ASSERT_NO_FATAL_FAILURE(DeleteAndRecreate(/*may_fail=*/true));
      } else if (op == 5) {
        ASSERT_NO_FATAL_FAILURE(Retention(/*may_fail=*/true));
      } else {
        ASSERT_NO_FATAL_FAILURE(Append(/*may_fail=*/true));
      }
    }
    vfs_->CrashNow();  // if the k-th sync did not come
    const int64_t wal_syncs = vfs_->Syncs(path_ + "-wal");
    ++figures_.power_losses;
    storage_.reset();
    ASSERT_TRUE(vfs_->Restore()) << vfs_->open_files() << " files still open";
    const absl::Status opened = Open();
    ASSERT_TRUE(opened.ok()) << "step " << figures_.steps
                             << ": the open after a power loss: " << opened;
    retention_clean_ = false;  // the power loss may have undone part of the last pass
    ASSERT_NO_FATAL_FAILURE(Resolve(true, wal_syncs));
    ASSERT_NO_FATAL_FAILURE(Check(true, true, wal_syncs));
    if (figures_.retention_passes > 0) {
      // The next pass (the server's next run) finishes what the power cut short.
      const absl::Status s = RunRetention();
      ASSERT_TRUE(s.ok()) << "step " << figures_.steps << ": " << s;
      retention_clean_ = true;
    }
    ASSERT_NO_FATAL_FAILURE(ResendAndCheck());
  }

  void Run(int steps) {
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(Open().ok());
    for (const char* name : {"m1", kExpiring, kChurned}) {
      absl::StatusOr<StoredMetric> m = storage_->CreateMetric(HourlyMetric(name));
      ASSERT_TRUE(m.ok()) << m.status();
      metrics_.push_back(m->id);
    }
    storage_.reset();  // a clean close: everything so far is synced
    ASSERT_TRUE(Open().ok());
    for (figures_.steps = 0; figures_.steps < steps; ++figures_.steps) {
      const int r = Uniform(0, 99);
      if (r < 70) {
        ASSERT_NO_FATAL_FAILURE(Append(false));
      } else if (r < 78) {
        const absl::Status s = storage_->MoveRecentReports();
        ASSERT_TRUE(s.ok()) << s;
        ++figures_.moves;
      } else if (r < 84) {
        storage_.reset();
        const absl::Status opened = Open();
        ASSERT_TRUE(opened.ok()) << opened;
        ++figures_.clean_reopens;
        ASSERT_NO_FATAL_FAILURE(Resolve(false, 0));
        ASSERT_NO_FATAL_FAILURE(Check(true, false, 0));
        ASSERT_NO_FATAL_FAILURE(ResendAndCheck());
      } else if (r < 86) {
        ASSERT_NO_FATAL_FAILURE(Check(false, false, 0));
      } else if (r < 88) {
        ASSERT_NO_FATAL_FAILURE(DeleteAndRecreate(false));
        ASSERT_NO_FATAL_FAILURE(Check(false, false, 0));
      } else if (r < 90) {
        ASSERT_NO_FATAL_FAILURE(Retention(false));
        ASSERT_NO_FATAL_FAILURE(Check(false, false, 0));
      } else {
        ASSERT_NO_FATAL_FAILURE(PowerLoss());
      }
    }
    ASSERT_NO_FATAL_FAILURE(Check(false, false, 0));
    EXPECT_EQ(*storage_->IntegrityCheck(), "ok");
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "crash consistency (%s, seed %llu): %lld steps, %lld power losses (%lld during a move), "
        "%lld clean reopens, %lld moves, %lld acknowledged, %lld lost in the window, %lld "
        "re-sends of stored ids, %lld of lost ids, %lld deletes (%lld cut by a power loss, %lld "
        "undone), %lld retention passes (%lld cut), %lld syncs, %.1f s\n",
        GetParam().durability == Durability::kFull ? "full" : "normal",
        static_cast<unsigned long long>(GetParam().seed), static_cast<long long>(figures_.steps),
        static_cast<long long>(figures_.power_losses),
        static_cast<long long>(figures_.losses_in_moves),
        static_cast<long long>(figures_.clean_reopens), static_cast<long long>(figures_.moves),
        static_cast<long long>(figures_.acknowledged),
        static_cast<long long>(figures_.lost_in_window),
        static_cast<long long>(figures_.resent_stored),
        static_cast<long long>(figures_.resent_lost), static_cast<long long>(figures_.deletes),
        static_cast<long long>(figures_.losses_in_deletes),
        static_cast<long long>(figures_.deletes_undone),
        static_cast<long long>(figures_.retention_passes),
        static_cast<long long>(figures_.losses_in_retention),
        static_cast<long long>(vfs_->TotalSyncs()), seconds);
    // The workload reached the states it is for.
    EXPECT_GT(figures_.power_losses, steps / 20);
    EXPECT_GT(figures_.losses_in_moves, 0);
    EXPECT_GT(figures_.losses_in_deletes, 0);
    EXPECT_GT(figures_.losses_in_retention, 0);
    EXPECT_GT(figures_.resent_lost, 0);
  }

  PowerLossVfs* vfs_ = nullptr;
  std::string path_;
  SqliteOptions options_;
  std::unique_ptr<SqliteStorage> storage_;
  std::mt19937_64 rng_;
  std::vector<int64_t> metrics_;
  int64_t next_id_ = 1;
  // Stored reports, each with the database WAL's syncs when it was acknowledged (-1: read back
  // after a reopen, durable); reports whose append failed with the power; reports known lost.
  std::map<Key, int64_t> stored_;
  std::vector<Key> stored_keys_;  // stored_'s keys, to pick from
  std::set<Key> uncertain_;
  std::set<Key> lost_;
  // kChurned's ids deleted since the last reopen, each with the keys it had; ids known deleted.
  struct Pending {
    int64_t id;
    Taken keys;
  };
  std::vector<Pending> pending_;
  std::set<int64_t> dead_;
  bool churn_cut_ = false;  // a power loss cut a delete or re-create short since the last reopen
  // kExpiring's metric-hours a retention pass reached, and the keys they had; the last pass's
  // options and policy, and whether it ran to its end with no power loss since.
  std::set<std::pair<int64_t, int64_t>> expired_;
  std::set<Key> expired_keys_;
  RetentionOptions retention_;
  int retention_policy_ = kRetentionKeepCounts;
  bool retention_clean_ = false;
  Figures figures_;
};

TEST_P(CrashConsistencyTest, EveryAcknowledgedReportOnceAfterPowerLoss) {
  ASSERT_NO_FATAL_FAILURE(Run(1000));
}

INSTANTIATE_TEST_SUITE_P(
    Seeds, CrashConsistencyTest,
    ::testing::Values(Param{Durability::kFull, 20260701}, Param{Durability::kFull, 37},
                      Param{Durability::kNormal, 20260701}, Param{Durability::kNormal, 37}),
    [](const ::testing::TestParamInfo<Param>& param) {
      return absl::StrCat(param.param.durability == Durability::kFull ? "Full" : "Normal", "Seed",
                          param.param.seed);
    });

// The v7 -> v8 copy of a database's reports into a new keyed file (CopyLegacyReports,
// docs/storage.md invariant 19): its keyed WAL stays bounded, and a copy a full disk stopped
// goes on where it stopped at the next open, into the same keyed file.
class LegacyCopyTest : public ::testing::Test {
 protected:
  static constexpr int kReports = 200'000;
  static constexpr int kWalPages = 64;  // wal_autocheckpoint_pages: 256 KiB

  void SetUp() override {
    vfs_ = &PowerLossVfs::Install();
    path_ = TempDbPath("legacy");
  }
  void TearDown() override {
    vfs_->ClearFull();
    for (const char* suffix : {"", "-wal", "-shm", "-reports", "-reports-wal", "-reports-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
  }
  static int64_t FileBytes(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : -1;
  }
  int64_t Query(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    int64_t n = -1;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_type(st, 0) == SQLITE_BLOB
                ? static_cast<int64_t>(std::hash<std::string>()(
                      std::string(static_cast<const char*>(sqlite3_column_blob(st, 0)),
                                  static_cast<size_t>(sqlite3_column_bytes(st, 0)))))
                : sqlite3_column_int64(st, 0);
      }
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return n;
  }
  SqliteOptions Options() const {
    SqliteOptions o;
    o.path = path_;
    o.background_moves = false;
    o.wal_autocheckpoint_pages = kWalPages;
    return o;
  }

  // A schema version 7 database (built from a current one, as
  // SqliteKeyedFileTest.AVersion7DatabasesReportsMoveIntoANewKeyedFile does): kReports reports
  // of one metric over 4 hours, all in its `reports` table, no keyed file.
  void MakeLegacy() {
    {
      absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(Options());
      ASSERT_TRUE(s.ok()) << s.status();
      absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewMetric("m"));
      ASSERT_TRUE(m.ok()) << m.status();
      std::vector<ReportRow> rows;
      for (int i = 0; i < kReports; ++i) {
        ReportRow r;
        r.metric_id = m->id;
        r.design_version = 1;
        for (int b = 0; b < 8; ++b)
          r.report_id[b] = static_cast<uint8_t>((i * 2654435761u) >> (8 * (b % 4)) ^ b);
        for (int b = 0; b < 4; ++b) r.report_id[8 + b] = static_cast<uint8_t>(i >> (8 * b));
        r.event_time_seconds = (i % 4) * 3600;
        if (i % 2 == 0) r.counters = {0};
        rows.push_back(r);
        if (rows.size() == 10'000) {
          ASSERT_TRUE((*s)->AppendReports(rows).ok());
          rows.clear();
        }
      }
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(AttachKeyedReports(db, path_).ok());
    ASSERT_EQ(sqlite3_exec(db, R"sql(
BEGIN;
CREATE TABLE main.reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  support BLOB,
  firsts INTEGER,
  PRIMARY KEY (metric_id, event_time, report_id)) WITHOUT ROWID;
INSERT INTO main.reports SELECT metric_id, event_time, report_id, version, bit, labelset_id,
  support, firsts FROM stored_reports;
DELETE FROM main.recent_reports;
CREATE TABLE main.moving(metric_id, event_time);
CREATE TABLE main.move_watermarks(metric_id, event_time, last_seq, last_id);
DROP TABLE main.keyed_file;
DROP TABLE main.counter_chunks;
DROP TABLE main.counter_deltas;
CREATE TABLE main.counter_sums(metric_id, event_time, version, labelset_id, counter, total);
PRAGMA main.user_version = 7;
COMMIT;
)sql",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
    for (const char* suffix : {"-reports", "-reports-wal", "-reports-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
    legacy_bytes_ = FileBytes(path_);
  }

  // The migrated pair: every report once, counted.
  void ExpectEveryReportOnce(SqliteStorage& s) {
    EXPECT_EQ(*s.ReportCount(), kReports);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(AttachKeyedReports(db, path_).ok());
    for (const char* sql :
         {"SELECT count(*) FROM stored_reports",
          "SELECT count(*) FROM (SELECT DISTINCT metric_id, event_time, report_id FROM "
          "stored_reports)",
          "SELECT sum(n) FROM main.counts"}) {
      sqlite3_stmt* st = nullptr;
      ASSERT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
      ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
      EXPECT_EQ(sqlite3_column_int64(st, 0), kReports) << sql;
      sqlite3_finalize(st);
    }
    sqlite3_close(db);
    EXPECT_EQ(Query(path_,
                    "SELECT count(*) FROM sqlite_master WHERE name IN ('legacy_reports', "
                    "'legacy_copy')"),
              0);
  }

  PowerLossVfs* vfs_ = nullptr;
  std::string path_;
  int64_t legacy_bytes_ = 0;
};

// The copy checkpoints as it goes: the keyed WAL stays within wal_autocheckpoint_pages and one
// copy transaction (kLegacyCopyRows rows), where it held the whole table before.
TEST_F(LegacyCopyTest, TheKeyedWalStaysBounded) {
  ASSERT_NO_FATAL_FAILURE(MakeLegacy());
  absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(Options());
  ASSERT_TRUE(s.ok()) << s.status();
  const std::string keyed = KeyedReportsPath(path_);
  const int64_t wal_bytes = FileBytes(keyed + "-wal");
  const int64_t largest_pages = (*s)->Checkpoints().largest_keyed_wal_pages;
  std::printf(
      "legacy copy of %d reports: database %lld bytes before, keyed file %lld bytes, keyed WAL "
      "%lld bytes (largest %lld pages)\n",
      kReports, static_cast<long long>(legacy_bytes_), static_cast<long long>(FileBytes(keyed)),
      static_cast<long long>(wal_bytes), static_cast<long long>(largest_pages));
  constexpr int64_t kBoundPages = kWalPages + 200;  // the threshold, one copy transaction
  EXPECT_LE(largest_pages, kBoundPages);
  EXPECT_LE(wal_bytes, kBoundPages * 4096 + 4096);
  ASSERT_NO_FATAL_FAILURE(ExpectEveryReportOnce(**s));
}

// A full disk stops the copy (the open fails, nothing acknowledged is at stake: the database
// still holds every report); the next open goes on into the same keyed file (its pair id is
// the one the stopped copy created) instead of starting again, and every report is there once,
// counted.
TEST_F(LegacyCopyTest, ACopyAFullDiskStoppedGoesOnWhereItStopped) {
  ASSERT_NO_FATAL_FAILURE(MakeLegacy());
  const std::string keyed = KeyedReportsPath(path_);
  vfs_->FullAt(keyed, 2 << 20);
  vfs_->FullAt(keyed + "-wal", 2 << 20);
  {
    absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(Options());
    ASSERT_FALSE(s.ok()) << "the copy needed less than 2 MiB";
    std::printf("the full disk stopped the copy: %s\n", s.status().ToString().c_str());
  }
  vfs_->ClearFull();
  const int64_t copied = Query(keyed, "SELECT count(*) FROM reports");
  const int64_t pair = Query(keyed, "SELECT pair_id FROM keyed_file");
  EXPECT_GT(copied, 0);
  EXPECT_LT(copied, kReports);
  std::printf("copied before the disk was full: %lld of %d\n", static_cast<long long>(copied),
              kReports);
  absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(Options());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(Query(path_, "SELECT pair_id FROM keyed_file"), pair)
      << "the copy started again in a new keyed file";
  ASSERT_NO_FATAL_FAILURE(ExpectEveryReportOnce(**s));
}

}  // namespace
}  // namespace deniable::server
