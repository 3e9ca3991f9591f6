// SqliteStorage's append (AppendBatches): deduplication against the recent ids and the keyed
// file, the recent rows, and the counts, counter deltas, window firsts and label values of the
// batch, in one transaction of the writer (write_mu_).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/label_values.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_storage_statements.h"

namespace deniable::server {
namespace {

// Binds the integers of a count key (metric, hour, version, labelset, ...) to parameters 1..N
// of `st` and returns N + 1, the next parameter.
template <typename... Ints>
int BindKey(SqliteStatement& st, const std::tuple<Ints...>& key) {
  int i = 0;
  std::apply([&](const auto&... v) { (st.BindInt64(++i, static_cast<int64_t>(v)), ...); }, key);
  return i + 1;
}

// A counter_chunks row's key: metric, event time, version, labelset, window (-1: every report),
// chunk (counter_chunks.h).
using ChunkKey = std::tuple<int64_t, int64_t, uint32_t, int64_t, int, uint32_t>;

// A counter_deltas row's key: a ChunkKey without the chunk (counter_chunks.h).
using DeltaKey = std::tuple<int64_t, int64_t, uint32_t, int64_t, int>;

DeltaKey DeltaKeyOf(const ChunkKey& k) {
  return {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), std::get<4>(k)};
}

// The append's statements for counters 1 and up (counter_chunks.h), each bound from parameter 1
// with a DeltaKey.
struct CounterStatements {
  SqliteStatement& upsert_chunk;   // + chunk, blob: merges into counter_chunks
  SqliteStatement& delta_rows;     // the key's delta rows: count(*), max(seq)
  SqliteStatement& insert_delta;   // + seq, blob
  SqliteStatement& read_deltas;    // the key's delta blobs
  SqliteStatement& delete_deltas;  // deletes the key's delta rows
};

// Upserts `sums` ((counter j, sum), ascending, distinct) of `key` into its chunks, one blob per
// chunk.
absl::Status UpsertChunksOf(SqliteStatement& up, const DeltaKey& key,
                            absl::Span<const ChunkCell> sums) {
  std::vector<ChunkCell> chunk;
  for (size_t i = 0; i < sums.size();) {
    const uint32_t c = sums[i].first / kCounterChunkCounters;
    chunk.clear();
    for (; i < sums.size() && sums[i].first / kCounterChunkCounters == c; ++i) {
      chunk.emplace_back(sums[i].first % kCounterChunkCounters, sums[i].second);
    }
    const std::string blob = EncodeCounterChunk(chunk);
    const int next = BindKey(up, key);
    up.BindInt64(next, c);
    up.BindBlob(next + 1, blob.data(), static_cast<int>(blob.size()));
    DENIABLE_RETURN_IF_ERROR(up.Run());
  }
  return absl::OkStatus();
}

// Sorts the transaction's increments (key, offset) and writes, per key and window, their sums as
// one counter_deltas row; a key and window whose rows would reach kCounterDeltaFold has them and
// this transaction's sums folded into its chunks instead, and its rows deleted.
absl::Status AppendCounterCells(CounterStatements& st,
                                std::vector<std::pair<ChunkKey, uint32_t>>& cells) {
  std::sort(cells.begin(), cells.end());
  std::vector<ChunkCell> sums;  // (counter j, sum)
  for (size_t i = 0; i < cells.size();) {
    const DeltaKey key = DeltaKeyOf(cells[i].first);
    sums.clear();
    for (; i < cells.size() && DeltaKeyOf(cells[i].first) == key; ++i) {
      const uint32_t j = std::get<5>(cells[i].first) * kCounterChunkCounters + cells[i].second;
      if (!sums.empty() && sums.back().first == j) {
        ++sums.back().second;
      } else {
        sums.emplace_back(j, 1);
      }
    }
    BindKey(st.delta_rows, key);
    absl::StatusOr<bool> row = st.delta_rows.Step();
    const int64_t rows = row.ok() && *row ? st.delta_rows.ColumnInt64(0) : 0;
    const int64_t last_seq = row.ok() && *row ? st.delta_rows.ColumnInt64(1) : 0;
    st.delta_rows.Reset();
    if (!row.ok()) return row.status();
    if (rows + 1 < kCounterDeltaFold) {
      const std::string blob = EncodeCounterChunk(sums);
      const int next = BindKey(st.insert_delta, key);
      st.insert_delta.BindInt64(next, last_seq + 1);
      st.insert_delta.BindBlob(next + 1, blob.data(), static_cast<int>(blob.size()));
      DENIABLE_RETURN_IF_ERROR(st.insert_delta.Run());
      continue;
    }
    // The fold: every delta of the key and this transaction's sums, into the chunks.
    BindKey(st.read_deltas, key);
    absl::Status read = absl::OkStatus();
    while (read.ok()) {
      absl::StatusOr<bool> more = st.read_deltas.Step();
      if (!more.ok()) read = more.status();
      if (!read.ok() || !*more) break;
      read = DecodeCounterDelta(st.read_deltas.ColumnBlob(0), "counter_deltas",
                                [&](uint32_t j, int64_t sum) { sums.emplace_back(j, sum); });
    }
    st.read_deltas.Reset();
    DENIABLE_RETURN_IF_ERROR(read);
    std::sort(sums.begin(), sums.end());
    size_t out = 0;
    for (size_t k = 0; k < sums.size(); ++k) {
      if (out > 0 && sums[out - 1].first == sums[k].first) {
        if (sums[out - 1].second > INT64_MAX - sums[k].second) {
          return absl::DataLossError("counter_deltas: a counter's sum past 2^63 - 1");
        }
        sums[out - 1].second += sums[k].second;
      } else {
        sums[out++] = sums[k];
      }
    }
    sums.resize(out);
    DENIABLE_RETURN_IF_ERROR(UpsertChunksOf(st.upsert_chunk, key, sums));
    BindKey(st.delete_deltas, key);
    DENIABLE_RETURN_IF_ERROR(st.delete_deltas.Run());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> SqliteStorage::HourHasSortedRows(const HourKey& key) {
  SqliteStatement& st = write_->hour_has_reports;
  st.BindInt64(1, key.metric_id);
  st.BindInt64(2, key.event_time);
  absl::StatusOr<bool> found = st.Step();
  st.Reset();
  return found;
}

absl::StatusOr<bool> SqliteStorage::IsStored(const HourKey& key, const ReportRow& row) {
  SqliteStatement& st = write_->find_report;
  st.BindInt64(1, key.metric_id);
  st.BindInt64(2, key.event_time);
  st.BindBlob(3, row.report_id.data(), static_cast<int>(row.report_id.size()));
  absl::StatusOr<bool> found = st.Step();
  st.Reset();
  return found;
}

absl::StatusOr<int64_t> SqliteStorage::LabelsetId(const std::string& canonical) {
  if (auto it = labelset_ids_.find(canonical); it != labelset_ids_.end()) return it->second;
  SqliteStatement& find = write_->find_labelset;
  find.BindText(1, canonical);
  DENIABLE_ASSIGN_OR_RETURN(bool found, find.Step());
  int64_t id = 0;
  if (found) {
    id = find.ColumnInt64(0);
    find.Reset();
  } else {
    find.Reset();
    write_->insert_labelset.BindText(1, canonical);
    DENIABLE_RETURN_IF_ERROR(write_->insert_labelset.Run());
    id = sqlite3_last_insert_rowid(write_db_);
  }
  // Cached only after the transaction commits (see AppendReports), so a rollback cannot leave a
  // dangling id here.
  return id;
}

// A transaction's sums so far, written after its rows (WriteTotals), and the label sets it
// checked against the caps, known once it commits.
struct SqliteStorage::AppendTotals {
  // (metric, event time, version, labelset) -> (n, counter 0) for this transaction.
  std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t>, std::pair<int64_t, int64_t>> delta;
  // The same key plus a window (-1: every report, w: its firsts), a chunk and the counter's
  // offset in it, one entry per increment of a counter j >= 1 (counter_chunks.h); sorted and
  // summed into one counter_deltas row per key and window (AppendCounterCells).
  std::vector<std::pair<ChunkKey, uint32_t>> chunk_cells;
  // The same key plus a window and a counter (-1: n, 0: counter 0) -> first reports.
  std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t, int, int>, int64_t> first_delta;
  absl::flat_hash_map<std::string, int64_t> new_labelsets;
  std::vector<std::pair<int64_t, std::string>> checked_labelsets;  // known once committed
  // New rows for recent_reports, in arrival order, until InsertRecentRows (the rows point into
  // the append's batches).
  struct RecentRow {
    const ReportRow* row;
    int64_t seq;
    int64_t labelset_id;
    StoredCounters counters;
  };
  std::vector<RecentRow> recent_rows;
};

namespace {

// Adds a stored row's n, counter 0, counters 1 and up and window firsts to `totals`' sums. No
// lock (the caller's own sums).
void AddToTotals(
    const ReportRow& row, int64_t labelset_id,
    std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t>, std::pair<int64_t, int64_t>>& delta,
    std::vector<std::pair<ChunkKey, uint32_t>>& chunk_cells,
    std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t, int, int>, int64_t>& first_delta) {
  auto& [n, sum0] = delta[{row.metric_id, row.event_time_seconds, row.design_version, labelset_id}];
  ++n;
  sum0 += AddsToCounter0(row.counters) ? 1 : 0;
  auto add_cell = [&](int win, uint32_t j) {
    chunk_cells.emplace_back(ChunkKey{row.metric_id, row.event_time_seconds, row.design_version,
                                      labelset_id, win, j / kCounterChunkCounters},
                             j % kCounterChunkCounters);
  };
  for (uint32_t j : row.counters) {
    if (j != 0) add_cell(-1, j);
  }
  ForEachWindowFirst(row.window_firsts, row.counters, [&](int w, int counter) {
    if (counter >= 1) {
      add_cell(w, static_cast<uint32_t>(counter));
      return;
    }
    ++first_delta[{row.metric_id, row.event_time_seconds, row.design_version, labelset_id, w,
                   counter}];
  });
}

}  // namespace

absl::StatusOr<absl::flat_hash_map<int64_t, bool>> SqliteStorage::MetricsExist(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  absl::flat_hash_map<int64_t, bool> exists;
  for (absl::Span<const ReportRow> batch : batches) {
    for (const ReportRow& row : batch) {
      if (exists.contains(row.metric_id)) continue;
      SqliteStatement& st = write_->metric_exists;
      st.BindInt64(1, row.metric_id);
      absl::StatusOr<bool> found = st.Step();
      st.Reset();
      if (!found.ok()) return found.status();
      exists[row.metric_id] = *found;
    }
  }
  return exists;
}

LabelValueAdmission SqliteStorage::LabelAdmission() {
  return LabelValueAdmission(
      max_label_values_, max_label_keys_,
      {.known = [this](int64_t metric, absl::string_view key, absl::string_view value)
                    ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::StatusOr<bool> {
         SqliteStatement& st = write_->label_value_known;
         st.BindInt64(1, metric);
         st.BindText(2, key);
         st.BindText(3, value);
         absl::StatusOr<bool> found = st.Step();
         st.Reset();
         return found;
       },
       .count = [this](int64_t metric, absl::string_view key)
                    ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::StatusOr<int64_t> {
         SqliteStatement& st = write_->label_value_count;
         st.BindInt64(1, metric);
         st.BindText(2, key);
         absl::StatusOr<bool> row = st.Step();
         const int64_t count = row.ok() && *row ? st.ColumnInt64(0) : 0;
         st.Reset();
         if (!row.ok()) return row.status();
         return count;
       },
       .keys = [this](int64_t metric) ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::StatusOr<int64_t> {
         SqliteStatement& st = write_->label_key_count;
         st.BindInt64(1, metric);
         absl::StatusOr<bool> row = st.Step();
         const int64_t count = row.ok() && *row ? st.ColumnInt64(0) : 0;
         st.Reset();
         if (!row.ok()) return row.status();
         return count;
       }});
}

absl::StatusOr<bool> SqliteStorage::IsDuplicate(const HourKey& key, const ReportRow& row) {
  RecentHours::Hour* hour = recent_.Find(key);
  if (hour == nullptr) {
    DENIABLE_ASSIGN_OR_RETURN(bool sorted, HourHasSortedRows(key));
    hour = &recent_.Create(key, sorted);
  }
  // One probe of the recent set: the id goes in unless it is there (and comes out again if
  // the keyed file has it).
  bool stored = !recent_.TryInsert(key, *hour, row.report_id);
  // The moved ids' filter rules most new ids out of `reports` without a B-tree lookup.
  if (!stored && hour->may_have_sorted_rows &&
      (hour->moved == nullptr || hour->moved->MayContain(row.report_id))) {
    DENIABLE_ASSIGN_OR_RETURN(stored, IsStored(key, row));
    if (stored) recent_.TakeBackLast(*hour);
  }
  return stored;
}

void SqliteStorage::QueueRecentRow(const ReportRow& row, int64_t labelset_id,
                                   AppendTotals& totals) {
  totals.recent_rows.push_back({&row, next_seq_++, labelset_id, EncodeCounters(row.counters)});
}

namespace {

// Binds one recent row's 9 values from parameter `first` on.
void BindRecentRow(SqliteStatement& ins, int first, const ReportRow& row, int64_t seq,
                   int64_t labelset_id, const StoredCounters& counters) {
  ins.BindInt64(first, row.metric_id);
  ins.BindInt64(first + 1, row.event_time_seconds);
  ins.BindInt64(first + 2, seq);
  ins.BindBlob(first + 3, row.report_id.data(), static_cast<int>(row.report_id.size()));
  ins.BindInt64(first + 4, row.design_version);
  ins.BindInt64(first + 5, counters.bit);
  ins.BindInt64(first + 6, labelset_id);
  if (const std::optional<std::string>& support = counters.support; support.has_value()) {
    ins.BindBlob(first + 7, support->data(), static_cast<int>(support->size()));
  } else {
    ins.BindNull(first + 7);
  }
  if (row.window_firsts >= 0) {
    ins.BindInt64(first + 8, row.window_firsts);
  } else {
    ins.BindNull(first + 8);
  }
}

}  // namespace

absl::Status SqliteStorage::InsertRecentRows(AppendTotals& totals) {
  constexpr int kValues = 9;
  const std::vector<AppendTotals::RecentRow>& rows = totals.recent_rows;
  size_t i = 0;
  for (; i + kInsertRecentRows <= rows.size(); i += kInsertRecentRows) {
    SqliteStatement& many = write_->insert_recent_many;
    for (int k = 0; k < kInsertRecentRows; ++k) {
      const AppendTotals::RecentRow& r = rows[i + k];
      BindRecentRow(many, 1 + k * kValues, *r.row, r.seq, r.labelset_id, r.counters);
    }
    DENIABLE_RETURN_IF_ERROR(many.Run());
  }
  for (; i < rows.size(); ++i) {
    SqliteStatement& one = write_->insert_recent;
    BindRecentRow(one, 1, *rows[i].row, rows[i].seq, rows[i].labelset_id, rows[i].counters);
    DENIABLE_RETURN_IF_ERROR(one.Run());
  }
  totals.recent_rows.clear();
  return absl::OkStatus();
}

absl::Status SqliteStorage::AppendRow(const ReportRow& row, size_t index,
                                      absl::flat_hash_map<int64_t, bool>& exists,
                                      LabelValueAdmission& labels, AppendTotals& totals,
                                      AppendResult& result) {
  if (!exists[row.metric_id]) {
    if (!result.IsMissing(row.metric_id)) result.missing_metrics.push_back(row.metric_id);
    return absl::OkStatus();
  }
  if (!row.labels.empty() && !known_labelsets_.Contains(row.metric_id, row.labels)) {
    DENIABLE_ASSIGN_OR_RETURN(std::optional<LabelCapRefusal> refused,
                              labels.Admit(row.metric_id, row.labels));
    if (refused.has_value()) {
      result.label_refusals.push_back({index, row.metric_id, refused->key, max_label_values_,
                                       max_label_keys_, refused->new_key});
      return absl::OkStatus();
    }
    totals.checked_labelsets.emplace_back(row.metric_id, row.labels);
  }
  DENIABLE_ASSIGN_OR_RETURN(const bool stored,
                            IsDuplicate(HourKey{row.metric_id, row.event_time_seconds}, row));
  if (stored) {
    result.Count(row.metric_id, /*duplicate=*/true);
    return absl::OkStatus();
  }
  int64_t labelset_id = 0;
  if (auto it = totals.new_labelsets.find(row.labels); it != totals.new_labelsets.end()) {
    labelset_id = it->second;
  } else {
    DENIABLE_ASSIGN_OR_RETURN(labelset_id, LabelsetId(row.labels));
    totals.new_labelsets.emplace(row.labels, labelset_id);
  }
  QueueRecentRow(row, labelset_id, totals);
  result.Count(row.metric_id, /*duplicate=*/false);
  AddToTotals(row, labelset_id, totals.delta, totals.chunk_cells, totals.first_delta);
  return absl::OkStatus();
}

absl::Status SqliteStorage::WriteTotals(AppendTotals& totals, const LabelValueAdmission& labels) {
  for (const auto& [key, value] : totals.delta) {
    SqliteStatement& up = write_->upsert_count;
    const int next = BindKey(up, key);
    up.BindInt64(next, value.first);
    up.BindInt64(next + 1, value.second);
    DENIABLE_RETURN_IF_ERROR(up.Run());
  }
  CounterStatements counter_statements{write_->upsert_counter_chunk, write_->counter_delta_rows,
                                       write_->insert_counter_delta, write_->read_counter_deltas,
                                       write_->delete_counter_deltas};
  DENIABLE_RETURN_IF_ERROR(AppendCounterCells(counter_statements, totals.chunk_cells));
  for (const auto& [key, count] : totals.first_delta) {
    SqliteStatement& up = write_->upsert_first_count;
    up.BindInt64(BindKey(up, key), count);
    DENIABLE_RETURN_IF_ERROR(up.Run());
  }
  for (const auto& [metric, key, value] : labels.added()) {
    SqliteStatement& st = write_->insert_label_value;
    st.BindInt64(1, metric);
    st.BindText(2, key);
    st.BindText(3, value);
    DENIABLE_RETURN_IF_ERROR(st.Run());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AppendResult>> SqliteStorage::AppendLocked(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  std::vector<AppendResult> results(batches.size());
  // Each metric of the call must still exist, checked in this (the one writer's) transaction: a
  // batch validated before DeleteMetric and committed after it is refused, not stored under the
  // dead id (which AUTOINCREMENT never gives again, sqlite_schema.h version 3).
  absl::StatusOr<absl::flat_hash_map<int64_t, bool>> exists = MetricsExist(batches);
  if (!exists.ok()) return exists.status();
  // The cap on label values, read and written in this transaction (label_values.h).
  LabelValueAdmission labels = LabelAdmission();
  AppendTotals totals;
  size_t rows = 0;
  for (absl::Span<const ReportRow> batch : batches) rows += batch.size();
  totals.recent_rows.reserve(rows);  // at most every row is new: no regrowth on the hot path
  // Rows in arrival order: of two equal keys the earlier batch's row is stored. A row is new when
  // its id is neither among its metric-hour's recent ids (this transaction's included) nor, if
  // that metric-hour has moved rows, in the keyed table.
  // A hot metric-hour's recent set and filter are larger than the CPU's caches: what the row a
  // few ahead will read is fetched while this row is stored (docs/performance.md, "Allocations
  // and cache misses").
  constexpr size_t kPrefetchAhead = 8;
  HourKey ahead_key;
  // Valid through this call: entries are erased only under write_mu_, held here, and not here.
  const RecentHours::Hour* ahead_hour = nullptr;
  for (size_t b = 0; b < batches.size(); ++b) {
    for (size_t i = 0; i < batches[b].size(); ++i) {
      if (i + kPrefetchAhead < batches[b].size()) {
        const ReportRow& ahead = batches[b][i + kPrefetchAhead];
        const HourKey key{ahead.metric_id, ahead.event_time_seconds};
        if (ahead_hour == nullptr || !(key == ahead_key)) {
          ahead_key = key;
          ahead_hour = recent_.Find(key);
        }
        if (ahead_hour != nullptr) RecentHours::Prefetch(*ahead_hour, ahead.report_id);
      }
      DENIABLE_RETURN_IF_ERROR(AppendRow(batches[b][i], i, *exists, labels, totals, results[b]));
    }
  }
  DENIABLE_RETURN_IF_ERROR(InsertRecentRows(totals));
  DENIABLE_RETURN_IF_ERROR(WriteTotals(totals, labels));
  DENIABLE_RETURN_IF_ERROR(write_->commit.Run());
  for (const auto& [canonical, id] : totals.new_labelsets) labelset_ids_.emplace(canonical, id);
  known_labelsets_.Add(totals.checked_labelsets);
  return results;
}

absl::StatusOr<AppendResult> SqliteStorage::AppendReports(absl::Span<const ReportRow> rows) {
  const absl::Span<const ReportRow> one[] = {rows};
  DENIABLE_ASSIGN_OR_RETURN(std::vector<AppendResult> results, AppendBatches(one));
  return results.front();
}

absl::StatusOr<std::vector<AppendResult>> SqliteStorage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  std::vector<HourKey> to_move;
  absl::StatusOr<std::vector<AppendResult>> results;
  DENIABLE_RETURN_IF_ERROR(FileHealth());
  {
    appends_waiting_.fetch_add(1, std::memory_order_relaxed);
    absl::MutexLock lock(&write_mu_);
    appends_waiting_.fetch_sub(1, std::memory_order_relaxed);
    appends_started_.fetch_add(1, std::memory_order_relaxed);
    if (absl::Status begin = write_->begin.Run(); !begin.ok()) {
      NoteWrite(begin);
      return begin;
    }
    recent_.Begin();
    results = AppendLocked(batches);
    // A full disk or a damaged file turns Health() (and the health service) NOT_SERVING until
    // a write succeeds again.
    NoteWrite(results.status());
    if (!results.ok()) {
      if (!sqlite3_get_autocommit(write_db_)) (void)write_->rollback.Run();
      recent_.Undo();
      return results;
    }
    recent_.Commit();
    // Committed, but into the file the path names? If not (deleted or replaced meanwhile), the
    // batch is not acknowledged: the client keeps it and retries.
    if (absl::Status health = FileHealth(); !health.ok()) return health;
    // With background moves the mover thread wakes up by itself (MoverLoop's condition).
    if (!background_moves_ && recent_.size() > max_recent_reports_) {
      to_move = recent_.OldestBeyond(max_recent_reports_ / 2);
    }
  }
  // The batch is committed whatever happens here; a failed move leaves rows recent, to be moved
  // after a later append.
  if (!to_move.empty()) (void)MoveHours(to_move);
  return results;
}

}  // namespace deniable::server
