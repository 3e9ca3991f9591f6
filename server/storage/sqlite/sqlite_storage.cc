#include "server/storage/sqlite/sqlite_storage.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_move_statements.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/storage_error.h"
#include "spdlog/spdlog.h"

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

// A connection to options.path (the database, or with the keyed file's path, that file).
absl::StatusOr<sqlite3*> OpenConnection(const SqliteOptions& options) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(options.path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = SqliteError(db, rc, absl::StrCat("opening database \"", options.path, "\""));
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, options.busy_timeout_millis);
  return db;
}

// The pragmas of a writing connection: WAL, the durability, the page cache, the WAL's size
// after a restart.
absl::Status SetWriterPragmas(sqlite3* db, const SqliteOptions& options) {
  DENIABLE_RETURN_IF_ERROR(SqliteExec(db, "PRAGMA journal_mode=WAL"));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(db, options.durability == Durability::kFull
                                              ? "PRAGMA synchronous=FULL"
                                              : "PRAGMA synchronous=NORMAL"));
  DENIABLE_RETURN_IF_ERROR(
      SqliteExec(db, absl::StrCat("PRAGMA cache_size=-", options.write_cache_kib)));
  return SqliteExec(db, absl::StrCat("PRAGMA journal_size_limit=", options.wal_size_limit_bytes));
}

bool FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// A row of kMetricColumns (below), without its designs.
StoredMetric MetricFromRow(const SqliteStatement& st) {
  StoredMetric m;
  m.id = st.ColumnInt64(0);
  m.name = st.ColumnText(1);
  m.description = st.ColumnText(2);
  m.created_time_seconds = st.ColumnInt64(3);
  m.time_precision_seconds = static_cast<uint32_t>(st.ColumnInt64(4));
  m.min_reports = static_cast<uint32_t>(st.ColumnInt64(5));
  m.reporting_period_seconds = static_cast<uint32_t>(st.ColumnInt64(6));
  m.randomization = static_cast<int>(st.ColumnInt64(7));
  m.categories = SplitCategories(st.ColumnText(8));
  m.retention_days = static_cast<uint32_t>(st.ColumnInt64(9));
  m.retention_policy = static_cast<int>(st.ColumnInt64(10));
  m.window_firsts_off = st.ColumnInt64(11) != 0;
  m.reporting_once = st.ColumnInt64(12) != 0;
  return m;
}

}  // namespace

struct SqliteStorage::WriteStatements {
  SqliteStatement begin, commit, rollback;
  SqliteStatement insert_metric, insert_design, insert_labelset, find_labelset;
  SqliteStatement insert_recent, upsert_count;
  SqliteStatement find_report, hour_has_reports;  // on keyed_lookup_db_
  SqliteStatement upsert_counter_chunk;           // counter_chunks (counter_chunks.h)
  SqliteStatement upsert_first_count;             // first_counts (sqlite_schema.h version 5)
  SqliteStatement metric_exists;
  SqliteStatement label_value_known, label_value_count, insert_label_value, label_key_count;
  // counter_deltas (counter_chunks.h): AppendCounterCells' CounterStatements.
  SqliteStatement counter_delta_rows, insert_counter_delta, read_counter_deltas,
      delete_counter_deltas;
};

struct SqliteStorage::ReadStatements {
  SqliteStatement get_metric, list_metrics, get_designs, read_counts, count_reports;
  SqliteStatement read_counter_chunks;
  SqliteStatement read_first_counts;
  SqliteStatement read_counter_deltas;
};

absl::StatusOr<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(const SqliteOptions& options) {
  if (options.path.empty() || options.path == ":memory:") {
    return absl::InvalidArgumentError("path must name a database file, but is \"" + options.path +
                                      "\"");
  }
  std::unique_ptr<SqliteStorage> storage(new SqliteStorage());
  // Before SQLite touches the file: a second process never opens it (leveldb DBImpl::Recover).
  DENIABLE_ASSIGN_OR_RETURN(DatabaseLock lock, DatabaseLock::Acquire(options.path));
  storage->path_ = options.path;
  storage->file_device_ = lock.device();
  storage->file_inode_ = lock.inode();
  storage->lock_.emplace(std::move(lock));
  DENIABLE_RETURN_IF_ERROR(storage->Init(options));
  DENIABLE_RETURN_IF_ERROR(storage->StartMoves(options));
  return storage;
}

absl::Status SqliteStorage::Init(const SqliteOptions& options) {
  absl::MutexLock mlock(&move_mu_);
  absl::MutexLock wlock(&write_mu_);
  absl::MutexLock rlock(&read_mu_);
  DENIABLE_ASSIGN_OR_RETURN(write_db_, OpenConnection(options));
  DENIABLE_RETURN_IF_ERROR(SetWriterPragmas(write_db_, options));
  // Replaces SQLite's autocheckpoint (PASSIVE, which readers can starve): see SqliteOptions.
  wal_checkpoint_pages_ = std::max(1, options.wal_autocheckpoint_pages);
  database_wal_ = std::make_unique<WalCheckpointer>(
      write_db_, options.path,
      WalCheckpointer::Options{.checkpoint_pages = wal_checkpoint_pages_,
                               .restart_wait_tries = std::max(0, options.wal_restart_wait_tries),
                               .busy_timeout_millis = options.busy_timeout_millis,
                               .durability = options.durability,
                               .when = WalCheckpointer::When::kInCommit});
  DENIABLE_RETURN_IF_ERROR(RegisterCounterChunkFunctions(write_db_));
  DENIABLE_RETURN_IF_ERROR(EnsureCollectorSchema(write_db_, options.path));
  DENIABLE_RETURN_IF_ERROR(OpenKeyedFile(options));
  DENIABLE_ASSIGN_OR_RETURN(read_db_, OpenConnection(options));
  DENIABLE_RETURN_IF_ERROR(AttachKeyedReports(read_db_, options.path));

  auto prepare_write = [this](absl::string_view sql) {
    write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    return SqliteStatement::Prepare(write_db_, sql);
  };
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement begin, prepare_write("BEGIN IMMEDIATE"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement commit, prepare_write("COMMIT"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement rollback, prepare_write("ROLLBACK"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_metric,
      prepare_write("INSERT INTO metrics(name, description, created_time_seconds, "
                    "time_precision_seconds, min_reports, reporting_period_seconds, "
                    "randomization, categories, retention_days, retention_policy, "
                    "window_firsts_off, reporting_once) "
                    "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_design,
      prepare_write("INSERT INTO designs(metric_id, version, parameters, a, b, "
                    "created_time_seconds) VALUES(?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_labelset,
                            prepare_write("INSERT INTO labelsets(canonical) VALUES(?)"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement find_labelset,
                            prepare_write("SELECT id FROM labelsets WHERE canonical = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_recent,
      prepare_write("INSERT INTO recent_reports(metric_id, event_time, seq, report_id, version, "
                    "bit, labelset_id, support, firsts) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement find_report,
      SqliteStatement::Prepare(keyed_lookup_db_,
                               "SELECT 1 FROM reports WHERE metric_id = ? AND event_time = ? AND "
                               "report_id = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement hour_has_reports,
      SqliteStatement::Prepare(keyed_lookup_db_,
                               "SELECT 1 FROM reports WHERE metric_id = ? AND event_time = ? "
                               "LIMIT 1"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement upsert_count,
      prepare_write("INSERT INTO counts(metric_id, event_time, version, labelset_id, n, "
                    "counter0) VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, event_time, "
                    "version, labelset_id) DO UPDATE SET n = n + excluded.n, counter0 = "
                    "counter0 + excluded.counter0"));
  // The chunk's sums merge into the stored ones inside the upsert (counter_chunks.h).
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement upsert_counter_chunk,
      prepare_write("INSERT INTO counter_chunks(metric_id, event_time, version, labelset_id, "
                    "win, chunk, sums) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, "
                    "event_time, version, labelset_id, win, chunk) DO UPDATE SET sums = "
                    "deniable_add_chunk(sums, excluded.sums)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement upsert_first_count,
      prepare_write("INSERT INTO first_counts(metric_id, event_time, version, labelset_id, win, "
                    "counter, count) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, "
                    "event_time, version, labelset_id, win, counter) DO UPDATE SET count = "
                    "count + excluded.count"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement metric_exists,
                            prepare_write("SELECT 1 FROM metrics WHERE id = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement label_value_known,
      prepare_write("SELECT 1 FROM label_values WHERE metric_id = ? AND key = ? AND value = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement label_value_count,
      prepare_write("SELECT count(*) FROM label_values WHERE metric_id = ? AND key = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_label_value,
      prepare_write("INSERT OR IGNORE INTO label_values(metric_id, key, value) VALUES(?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement label_key_count,
      prepare_write("SELECT count(DISTINCT key) FROM label_values WHERE metric_id = ?"));
  constexpr char kDeltaKey[] =
      " FROM counter_deltas WHERE metric_id = ? AND event_time = ? AND version = ? AND "
      "labelset_id = ? AND win = ?";
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement counter_delta_rows,
      prepare_write(absl::StrCat("SELECT count(*), coalesce(max(seq), 0)", kDeltaKey)));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_counter_delta,
      prepare_write("INSERT INTO counter_deltas(metric_id, event_time, version, labelset_id, "
                    "win, seq, sums) VALUES(?, ?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement read_counter_deltas_of_key,
                            prepare_write(absl::StrCat("SELECT sums", kDeltaKey)));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement delete_counter_deltas,
                            prepare_write(absl::StrCat("DELETE", kDeltaKey)));
  write_.reset(new WriteStatements{std::move(begin),
                                   std::move(commit),
                                   std::move(rollback),
                                   std::move(insert_metric),
                                   std::move(insert_design),
                                   std::move(insert_labelset),
                                   std::move(find_labelset),
                                   std::move(insert_recent),
                                   std::move(upsert_count),
                                   std::move(find_report),
                                   std::move(hour_has_reports),
                                   std::move(upsert_counter_chunk),
                                   std::move(upsert_first_count),
                                   std::move(metric_exists),
                                   std::move(label_value_known),
                                   std::move(label_value_count),
                                   std::move(insert_label_value),
                                   std::move(label_key_count),
                                   std::move(counter_delta_rows),
                                   std::move(insert_counter_delta),
                                   std::move(read_counter_deltas_of_key),
                                   std::move(delete_counter_deltas)});

  auto prepare_read = [this](absl::string_view sql) {
    read_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    return SqliteStatement::Prepare(read_db_, sql);
  };
  constexpr char kMetricColumns[] =
      "SELECT id, name, description, created_time_seconds, time_precision_seconds, min_reports, "
      "reporting_period_seconds, randomization, categories, retention_days, retention_policy, "
      "window_firsts_off, reporting_once FROM metrics";
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement get_metric,
                            prepare_read(absl::StrCat(kMetricColumns, " WHERE name = ?")));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement list_metrics,
                            prepare_read(absl::StrCat(kMetricColumns, " ORDER BY name")));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement get_designs,
      prepare_read("SELECT version, parameters, a, b, created_time_seconds FROM designs "
                   "WHERE metric_id = ? ORDER BY version"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement read_counts,
      prepare_read("SELECT c.version, c.event_time, l.canonical, c.n, c.counter0 FROM counts c "
                   "JOIN labelsets l ON l.id = c.labelset_id WHERE c.metric_id = ? AND "
                   "c.event_time >= ? AND c.event_time < ? ORDER BY c.event_time"));
  // Through the view (sqlite_keyed_file.h): the database's snapshot is taken first.
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement count_reports,
                            prepare_read("SELECT count(*) FROM stored_reports"));
  // In key order, so each row's chunks (and their counters) come ascending.
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement read_counter_chunks,
      prepare_read("SELECT c.version, c.event_time, l.canonical, c.win, c.chunk, c.sums FROM "
                   "counter_chunks c JOIN labelsets l ON l.id = c.labelset_id WHERE "
                   "c.metric_id = ? AND c.event_time >= ? AND c.event_time < ? ORDER BY "
                   "c.metric_id, c.event_time, c.version, c.labelset_id, c.win, c.chunk"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement read_first_counts,
      prepare_read("SELECT c.version, c.event_time, l.canonical, c.win, c.counter, c.count FROM "
                   "first_counts c JOIN labelsets l ON l.id = c.labelset_id WHERE "
                   "c.metric_id = ? AND c.event_time >= ? AND c.event_time < ?"));
  // The deltas not folded yet (counter_chunks.h), at most kCounterDeltaFold - 1 per key and
  // window.
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement read_counter_deltas,
      prepare_read("SELECT c.version, c.event_time, l.canonical, c.win, c.sums FROM "
                   "counter_deltas c JOIN labelsets l ON l.id = c.labelset_id WHERE "
                   "c.metric_id = ? AND c.event_time >= ? AND c.event_time < ?"));
  read_.reset(new ReadStatements{std::move(get_metric), std::move(list_metrics),
                                 std::move(get_designs), std::move(read_counts),
                                 std::move(count_reports), std::move(read_counter_chunks),
                                 std::move(read_first_counts), std::move(read_counter_deltas)});
  max_recent_reports_ = options.max_recent_reports;
  max_label_values_ = options.max_label_values;
  max_label_keys_ = options.max_label_keys;
  background_moves_ = options.background_moves;
  move_chunk_rows_ = static_cast<size_t>(std::max(1, options.move_chunk_rows));
  bound_move_wal_ = options.bound_move_wal;
  DENIABLE_ASSIGN_OR_RETURN(move_db_, OpenConnection(options));
  DENIABLE_RETURN_IF_ERROR(PrepareMoveStatements());
  DENIABLE_RETURN_IF_ERROR(FinishInterruptedMoves());
  return LoadRecent();
}

absl::Status SqliteStorage::OpenKeyedFile(const SqliteOptions& options) {
  keyed_path_ = KeyedReportsPath(options.path);
  DENIABLE_ASSIGN_OR_RETURN(const std::string pair_id, ReadPairId(write_db_));
  std::string new_pair;
  bool migrating = false;
  if (pair_id.empty()) {
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement legacy,
        SqliteStatement::Prepare(write_db_,
                                 "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                                 "'legacy_reports'"));
    DENIABLE_ASSIGN_OR_RETURN(migrating, legacy.Step());
    legacy.Reset();
    // A copy of legacy_reports cut short (a crash, a full disk) goes on into the keyed file it
    // started, which the database recorded (legacy_copy) before the first row.
    std::string resume;
    if (migrating) {
      DENIABLE_ASSIGN_OR_RETURN(resume, ReadLegacyCopyPairId(write_db_));
    }
    if (KeyedFileHasPairId(keyed_path_, resume)) {
      new_pair = resume;
      spdlog::info("event=legacy_copy_resumed keyed_file=\"{}\"", keyed_path_);
    } else {
      // No keyed file belongs to this database yet (a new one, or one of version 7 or older
      // whose copy has not started): whatever file has the name is left over (the database
      // still holds every report) and is made anew.
      for (const char* suffix : {"", "-wal", "-shm"}) {
        std::remove(absl::StrCat(keyed_path_, suffix).c_str());
      }
      absl::BitGen gen;
      new_pair.resize(16);
      for (char& c : new_pair) c = static_cast<char>(absl::Uniform<uint8_t>(gen));
      if (migrating) {
        DENIABLE_RETURN_IF_ERROR(SqliteExec(
            write_db_,
            "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS legacy_copy(pair_id BLOB NOT NULL); "
            "DELETE FROM legacy_copy"));
        absl::StatusOr<SqliteStatement> record =
            SqliteStatement::Prepare(write_db_, "INSERT INTO legacy_copy(pair_id) VALUES(?)");
        absl::Status s = record.status();
        if (s.ok()) {
          record->BindBlob(1, new_pair.data(), static_cast<int>(new_pair.size()));
          s = record->Run();
        }
        if (s.ok()) s = SqliteExec(write_db_, "COMMIT");
        if (!s.ok()) {
          SqliteExec(write_db_, "ROLLBACK").IgnoreError();
          return s;
        }
      }
    }
  } else if (!FileExists(keyed_path_)) {
    return absl::DataLossError(absl::StrCat(
        "the keyed reports file \"", keyed_path_, "\" of database \"", options.path,
        "\" is missing: restore it beside the database (back up, copy and move both files "
        "together; docs/operations.md)"));
  }
  DENIABLE_ASSIGN_OR_RETURN(DatabaseLock lock, DatabaseLock::Acquire(keyed_path_));
  keyed_device_ = lock.device();
  keyed_inode_ = lock.inode();
  keyed_lock_.emplace(std::move(lock));
  SqliteOptions keyed_options = options;
  keyed_options.path = keyed_path_;
  DENIABLE_ASSIGN_OR_RETURN(keyed_db_, OpenConnection(keyed_options));
  DENIABLE_RETURN_IF_ERROR(SetWriterPragmas(keyed_db_, keyed_options));
  // Checkpointed after each keyed transaction (RunInKeyedTransaction, the legacy copy's).
  keyed_wal_ = std::make_unique<WalCheckpointer>(
      keyed_db_, keyed_path_,
      WalCheckpointer::Options{
          .checkpoint_pages = options.keyed_wal_autocheckpoint_pages > 0
                                  ? options.keyed_wal_autocheckpoint_pages
                                  : std::max(1, options.wal_autocheckpoint_pages),
          .restart_wait_tries = std::max(0, options.wal_restart_wait_tries),
          .busy_timeout_millis = options.busy_timeout_millis,
          .durability = options.durability,
          .when = WalCheckpointer::When::kAfterTransaction});
  DENIABLE_RETURN_IF_ERROR(
      EnsureKeyedSchema(keyed_db_, keyed_path_, pair_id.empty() ? new_pair : pair_id));
  if (pair_id.empty()) {
    if (migrating) {
      // Checkpointed as it goes: its WAL stays within wal_autocheckpoint_pages and a chunk.
      DENIABLE_RETURN_IF_ERROR(
          CopyLegacyReports(keyed_db_, options.path, kLegacyCopyRows,
                            [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { keyed_wal_->Checkpoint(); }));
      // The drop below relies on the copy: generation 1 (sqlite_keyed_file.h, "Generations").
      DENIABLE_RETURN_IF_ERROR(SqliteExec(keyed_db_, "UPDATE keyed_file SET generation = 1"));
    }
    // The pair id and the drop of the copied table, in one transaction of the database.
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement pair,
        SqliteStatement::Prepare(write_db_,
                                 "INSERT INTO keyed_file(pair_id, keyed_generation) VALUES(?, ?)"));
    DENIABLE_RETURN_IF_ERROR(SqliteExec(write_db_, "BEGIN IMMEDIATE"));
    pair.BindBlob(1, new_pair.data(), static_cast<int>(new_pair.size()));
    pair.BindInt64(2, migrating ? 1 : 0);
    absl::Status s = pair.Run();
    if (s.ok()) {
      s = SqliteExec(write_db_,
                     "DROP TABLE IF EXISTS legacy_reports; DROP TABLE IF EXISTS "
                     "legacy_copy");
    }
    if (s.ok()) s = SqliteExec(write_db_, "COMMIT");
    if (!s.ok()) {
      SqliteExec(write_db_, "ROLLBACK").IgnoreError();
      return s;
    }
  }
  // An older keyed file than the database relies on is refused (sqlite_keyed_file.h).
  DENIABLE_ASSIGN_OR_RETURN(int64_t relied, ReadGeneration(write_db_, /*keyed=*/false));
  DENIABLE_ASSIGN_OR_RETURN(keyed_generation_, ReadGeneration(keyed_db_, /*keyed=*/true));
  DENIABLE_RETURN_IF_ERROR(CheckGenerations(options.path, relied, keyed_path_, keyed_generation_));
  // And a database older than the keyed file relies on (the other direction).
  DENIABLE_ASSIGN_OR_RETURN(db_generation_, ReadDatabaseGeneration(write_db_));
  DENIABLE_ASSIGN_OR_RETURN(int64_t keyed_relies, ReadDatabaseGeneration(keyed_db_));
  DENIABLE_RETURN_IF_ERROR(
      CheckDatabaseGeneration(options.path, db_generation_, keyed_path_, keyed_relies));
  DENIABLE_ASSIGN_OR_RETURN(keyed_lookup_db_, OpenConnection(keyed_options));
  // The interior pages of a hot metric-hour's keyed part (about 12 MiB at 20 M reports), so
  // that the lookups appends make for the ids the moved-ids filter passes read one leaf each.
  return SqliteExec(keyed_lookup_db_, absl::StrCat("PRAGMA cache_size=-",
                                                   std::max(2048, options.write_cache_kib / 4)));
}

absl::Status SqliteStorage::StartMoves(const SqliteOptions& /*options*/) {
  if (background_moves_) mover_ = std::thread([this] { MoverLoop(); });
  return absl::OkStatus();
}

absl::Status SqliteStorage::LoadRecent() {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(write_db_,
                               "SELECT metric_id, event_time, report_id, seq FROM recent_reports"));
  recent_.Begin();
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool has_row, st.Step());
    if (!has_row) break;
    const HourKey key{st.ColumnInt64(0), st.ColumnInt64(1)};
    next_seq_ = std::max(next_seq_, st.ColumnInt64(3) + 1);
    DENIABLE_ASSIGN_OR_RETURN(const ReportId id, ColumnReportId(st, 2));
    RecentHours::Hour* hour = recent_.Find(key);
    if (hour == nullptr) {
      DENIABLE_ASSIGN_OR_RETURN(bool sorted, HourHasSortedRows(key));
      hour = &recent_.Create(key, sorted);
    }
    recent_.Insert(key, *hour, id);
  }
  recent_.Commit();
  // The moved-ids filter of each recent metric-hour with keyed rows, built again from them
  // (one read of the hour's keyed ids): before, a restart dropped it, and every new id of a hot
  // hour that had moved paid a B-tree lookup in the keyed file.
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement moved,
      SqliteStatement::Prepare(
          keyed_lookup_db_,
          "SELECT report_id FROM reports WHERE metric_id = ? AND event_time = ?"));
  for (const HourKey& key : recent_.All()) {
    RecentHours::Hour* hour = recent_.Find(key);
    if (hour == nullptr || !hour->may_have_sorted_rows) continue;
    auto filter = std::make_unique<MovedIdsFilter>();
    moved.BindInt64(1, key.metric_id);
    moved.BindInt64(2, key.event_time);
    while (true) {
      DENIABLE_ASSIGN_OR_RETURN(bool row, moved.Step());
      if (!row) break;
      DENIABLE_ASSIGN_OR_RETURN(const ReportId id, ColumnReportId(moved, 0));
      filter->Add(id);
    }
    moved.Reset();
    hour->moved = std::move(filter);
  }
  return absl::OkStatus();
}

int64_t SqliteStorage::MovedIdsFilterBytes() {
  absl::MutexLock lock(&write_mu_);
  int64_t bytes = 0;
  for (const HourKey& key : recent_.All()) {
    const RecentHours::Hour* hour = recent_.Find(key);
    if (hour != nullptr && hour->moved != nullptr) bytes += hour->moved->bytes();
  }
  return bytes;
}

absl::StatusOr<ReportId> ColumnReportId(const SqliteStatement& st, int column) {
  const std::string blob = st.ColumnBlob(column);
  ReportId id{};
  if (blob.size() != id.size()) {
    return absl::DataLossError("the database holds a report id that is not 16 bytes");
  }
  std::copy(blob.begin(), blob.end(), id.begin());
  return id;
}

SqliteStorage::CheckpointCounts SqliteStorage::Checkpoints() {
  absl::MutexLock lock(&write_mu_);
  CheckpointCounts counts;
  if (database_wal_ != nullptr) {
    const WalCheckpointer::Counts c = database_wal_->counts();
    counts.attempts = c.attempts;
    counts.restarted = c.restarted;
    counts.busy = c.busy;
    counts.passive = c.passive;
    counts.largest_wal_pages = c.largest_wal_pages;
    counts.largest_commit_pages = c.largest_commit_pages;
  }
  // keyed_wal_ is set once at open; its largest WAL is an atomic (no move_mu_, which a move
  // holds for long).
  const WalCheckpointer* keyed = ABSL_TS_UNCHECKED_READ(keyed_wal_).get();
  if (keyed != nullptr) counts.largest_keyed_wal_pages = keyed->largest_wal_pages();
  return counts;
}

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

SqliteStorage::~SqliteStorage() {
  {
    absl::MutexLock wlock(&write_mu_);
    stop_ = true;
  }
  if (mover_.joinable()) mover_.join();
  {
    absl::MutexLock mlock(&move_mu_);
    move_.reset();
    keyed_wal_.reset();  // its WAL hook goes before the connection
    sqlite3_close(move_db_);
    sqlite3_close(keyed_db_);
  }
  absl::MutexLock wlock(&write_mu_);
  absl::MutexLock rlock(&read_mu_);
  write_.reset();
  read_.reset();
  database_wal_.reset();
  sqlite3_close(write_db_);
  sqlite3_close(read_db_);
  sqlite3_close(keyed_lookup_db_);
  // Last, once SQLite has closed the files.
  keyed_lock_.reset();
  lock_.reset();
}

absl::StatusOr<StoredMetric> SqliteStorage::CreateMetric(StoredMetric metric) {
  absl::MutexLock lock(&write_mu_);
  if (metric.designs.size() != 1) {
    return absl::InvalidArgumentError("a new metric must have exactly one design");
  }
  DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
  auto body = [&]() -> absl::Status {
    write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    write_->insert_metric.BindText(1, metric.name);
    write_->insert_metric.BindText(2, metric.description);
    write_->insert_metric.BindInt64(3, metric.created_time_seconds);
    write_->insert_metric.BindInt64(4, metric.time_precision_seconds);
    write_->insert_metric.BindInt64(5, metric.min_reports);
    write_->insert_metric.BindInt64(6, metric.reporting_period_seconds);
    write_->insert_metric.BindInt64(7, metric.randomization);
    write_->insert_metric.BindText(8, JoinCategories(metric.categories));
    write_->insert_metric.BindInt64(9, metric.retention_days);
    write_->insert_metric.BindInt64(10, metric.retention_policy);
    write_->insert_metric.BindInt64(11, metric.window_firsts_off ? 1 : 0);
    write_->insert_metric.BindInt64(12, metric.reporting_once ? 1 : 0);
    if (absl::Status s = write_->insert_metric.Run(); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::AlreadyExistsError(
            absl::StrCat("metric \"", metric.name, "\" already exists"));
      }
      return s;
    }
    metric.id = sqlite3_last_insert_rowid(write_db_);
    DENIABLE_RETURN_IF_ERROR(InsertDesign(metric.id, metric.designs.front()));
    return write_->commit.Run();
  };
  if (absl::Status s = body(); !s.ok()) {
    (void)write_->rollback.Run();
    return s;
  }
  return metric;
}

absl::Status SqliteStorage::InsertDesign(int64_t metric_id, const StoredDesign& d) {
  SqliteStatement& st = write_->insert_design;
  st.BindInt64(1, metric_id);
  st.BindInt64(2, d.version);
  st.BindBlob(3, d.parameters.data(), static_cast<int>(d.parameters.size()));
  st.BindDouble(4, d.a);
  st.BindDouble(5, d.b);
  st.BindInt64(6, d.created_time_seconds);
  return st.Run();
}

absl::StatusOr<StoredMetric> SqliteStorage::AddDesignVersion(absl::string_view name,
                                                             StoredDesign design) {
  DENIABLE_ASSIGN_OR_RETURN(StoredMetric metric, GetMetric(name));
  {
    absl::MutexLock lock(&write_mu_);
    const uint32_t next = metric.designs.back().version + 1;
    if (design.version != next) {
      return absl::FailedPreconditionError(
          absl::StrCat("metric \"", name, "\": next version is ", next, ", not ", design.version));
    }
    if (absl::Status s = InsertDesign(metric.id, design); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "metric \"", name, "\": version ", design.version, " was added concurrently"));
      }
      return s;
    }
  }
  metric.designs.push_back(std::move(design));
  return metric;
}

absl::StatusOr<std::vector<StoredDesign>> SqliteStorage::ReadDesigns(int64_t metric_id) {
  SqliteStatement& st = read_->get_designs;
  st.BindInt64(1, metric_id);
  std::vector<StoredDesign> designs;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    designs.push_back(StoredDesign{static_cast<uint32_t>(st.ColumnInt64(0)), st.ColumnBlob(1),
                                   st.ColumnDouble(2), st.ColumnDouble(3), st.ColumnInt64(4)});
  }
  st.Reset();
  return designs;
}

absl::StatusOr<StoredMetric> SqliteStorage::GetMetric(absl::string_view name) {
  absl::MutexLock lock(&read_mu_);
  SqliteStatement& st = read_->get_metric;
  st.BindText(1, name);
  DENIABLE_ASSIGN_OR_RETURN(bool found, st.Step());
  if (!found) {
    st.Reset();
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  StoredMetric m = MetricFromRow(st);
  st.Reset();
  DENIABLE_ASSIGN_OR_RETURN(m.designs, ReadDesigns(m.id));
  return m;
}

absl::StatusOr<std::vector<StoredMetric>> SqliteStorage::ListMetrics() {
  absl::MutexLock lock(&read_mu_);
  SqliteStatement& st = read_->list_metrics;
  std::vector<StoredMetric> metrics;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    metrics.push_back(MetricFromRow(st));
  }
  st.Reset();
  for (StoredMetric& m : metrics) {
    DENIABLE_ASSIGN_OR_RETURN(m.designs, ReadDesigns(m.id));
  }
  return metrics;
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

absl::StatusOr<std::vector<AppendResult>> SqliteStorage::AppendLocked(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  std::vector<AppendResult> results(batches.size());
  // (metric, event time, version, labelset) -> (n, counter 0) for this transaction.
  std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t>, std::pair<int64_t, int64_t>> delta;
  // The same key plus a window (-1: every report, w: its firsts), a chunk and the counter's
  // offset in it, one entry per increment of a counter j >= 1 (counter_chunks.h); sorted and
  // summed into one counter_deltas row per key and window (AppendCounterCells).
  std::vector<std::pair<ChunkKey, uint32_t>> chunk_cells;
  // The same key plus a window and a counter (-1: n, 0: counter 0) -> first reports.
  std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t, int, int>, int64_t> first_delta;
  absl::flat_hash_map<std::string, int64_t> new_labelsets;
  SqliteStatement& ins = write_->insert_recent;
  // Each metric of the call must still exist, checked in this (the one writer's) transaction: a
  // batch validated before DeleteMetric and committed after it is refused, not stored under the
  // dead id (which AUTOINCREMENT never gives again, sqlite_schema.h version 3).
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
  // The cap on label values, read and written in this transaction (label_values.h).
  LabelValueAdmission labels(
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
  std::vector<std::pair<int64_t, std::string>> checked_labelsets;  // known once committed
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
    AppendResult& result = results[b];
    for (size_t i = 0; i < batches[b].size(); ++i) {
      const ReportRow& row = batches[b][i];
      if (i + kPrefetchAhead < batches[b].size()) {
        const ReportRow& ahead = batches[b][i + kPrefetchAhead];
        const HourKey key{ahead.metric_id, ahead.event_time_seconds};
        if (ahead_hour == nullptr || !(key == ahead_key)) {
          ahead_key = key;
          ahead_hour = recent_.Find(key);
        }
        if (ahead_hour != nullptr) RecentHours::Prefetch(*ahead_hour, ahead.report_id);
      }
      if (!exists[row.metric_id]) {
        if (!result.IsMissing(row.metric_id)) result.missing_metrics.push_back(row.metric_id);
        continue;
      }
      if (!row.labels.empty() && !known_labelsets_.Contains(row.metric_id, row.labels)) {
        DENIABLE_ASSIGN_OR_RETURN(std::optional<LabelCapRefusal> refused,
                                  labels.Admit(row.metric_id, row.labels));
        if (refused.has_value()) {
          result.label_refusals.push_back({i, row.metric_id, refused->key, max_label_values_,
                                           max_label_keys_, refused->new_key});
          continue;
        }
        checked_labelsets.emplace_back(row.metric_id, row.labels);
      }
      const HourKey key{row.metric_id, row.event_time_seconds};
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
      if (stored) {
        result.Count(row.metric_id, /*duplicate=*/true);
        continue;
      }
      int64_t labelset_id = 0;
      if (auto it = new_labelsets.find(row.labels); it != new_labelsets.end()) {
        labelset_id = it->second;
      } else {
        DENIABLE_ASSIGN_OR_RETURN(labelset_id, LabelsetId(row.labels));
        new_labelsets.emplace(row.labels, labelset_id);
      }
      ins.BindInt64(1, row.metric_id);
      ins.BindInt64(2, row.event_time_seconds);
      ins.BindInt64(3, next_seq_++);
      ins.BindBlob(4, row.report_id.data(), static_cast<int>(row.report_id.size()));
      ins.BindInt64(5, row.design_version);
      const bool counter0 = AddsToCounter0(row.counters);
      const StoredCounters stored_counters = EncodeCounters(row.counters);
      ins.BindInt64(6, stored_counters.bit);
      ins.BindInt64(7, labelset_id);
      if (const std::optional<std::string>& support = stored_counters.support;
          support.has_value()) {
        ins.BindBlob(8, support->data(), static_cast<int>(support->size()));
      } else {
        ins.BindNull(8);
      }
      if (row.window_firsts >= 0) {
        ins.BindInt64(9, row.window_firsts);
      } else {
        ins.BindNull(9);
      }
      DENIABLE_RETURN_IF_ERROR(ins.Run());
      result.Count(row.metric_id, /*duplicate=*/false);
      auto& [n, sum0] =
          delta[{row.metric_id, row.event_time_seconds, row.design_version, labelset_id}];
      ++n;
      sum0 += counter0 ? 1 : 0;
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
  }
  for (const auto& [key, value] : delta) {
    SqliteStatement& up = write_->upsert_count;
    const int next = BindKey(up, key);
    up.BindInt64(next, value.first);
    up.BindInt64(next + 1, value.second);
    DENIABLE_RETURN_IF_ERROR(up.Run());
  }
  CounterStatements counter_statements{write_->upsert_counter_chunk, write_->counter_delta_rows,
                                       write_->insert_counter_delta, write_->read_counter_deltas,
                                       write_->delete_counter_deltas};
  DENIABLE_RETURN_IF_ERROR(AppendCounterCells(counter_statements, chunk_cells));
  for (const auto& [key, count] : first_delta) {
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
  DENIABLE_RETURN_IF_ERROR(write_->commit.Run());
  for (const auto& [canonical, id] : new_labelsets) labelset_ids_.emplace(canonical, id);
  known_labelsets_.Add(checked_labelsets);
  return results;
}

absl::StatusOr<AppendResult> SqliteStorage::AppendReports(absl::Span<const ReportRow> rows) {
  const absl::Span<const ReportRow> one[] = {rows};
  DENIABLE_ASSIGN_OR_RETURN(std::vector<AppendResult> results, AppendBatches(one));
  return results.front();
}

absl::Status SqliteStorage::Health() {
  DENIABLE_RETURN_IF_ERROR(FileHealth());
  absl::Status failure;
  {
    absl::MutexLock lock(&health_mu_);
    failure = write_failure_;
  }
  if (failure.ok()) return absl::OkStatus();
  if (IsDiskFull(failure)) {
    // Has space come back? A real commit says (a check of free blocks would not: a quota, the
    // WAL's reserved pages, root's reserve). One small transaction a call, only while failing.
    absl::MutexLock lock(&write_mu_);
    const absl::Status probe =
        RunInTransaction([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::Status {
          // A row in and out again: the page is written (an UPDATE to the same value is not).
          return SqliteExec(write_db_,
                            "INSERT INTO keyed_file(pair_id) VALUES(x''); DELETE FROM keyed_file "
                            "WHERE rowid = last_insert_rowid()");
        });
    NoteWrite(probe);
    if (probe.ok()) return absl::OkStatus();
  }
  return absl::Status(failure.code(),
                      absl::StrCat("storage: the last write failed and none has succeeded since (",
                                   failure.message(), "); not serving until a write succeeds"));
}

void SqliteStorage::NoteWrite(const absl::Status& status) {
  if (status.ok()) {
    if (!write_failed_.load(std::memory_order_relaxed)) return;
    absl::MutexLock lock(&health_mu_);
    write_failure_ = absl::OkStatus();
    write_failed_.store(false, std::memory_order_relaxed);
    return;
  }
  // Only the failures that every write meets until someone acts: a full disk, a damaged file.
  if (!IsDiskFull(status) && status.code() != absl::StatusCode::kDataLoss) return;
  absl::MutexLock lock(&health_mu_);
  write_failure_ = status;
  write_failed_.store(true, std::memory_order_relaxed);
}

absl::Status SqliteStorage::FileHealth() {
  struct stat st {};
  for (const auto& [path, device, inode] : {std::tuple(&keyed_path_, keyed_device_, keyed_inode_),
                                            std::tuple(&path_, file_device_, file_inode_)}) {
    if (stat(path->c_str(), &st) != 0) {
      return absl::UnavailableError(absl::StrCat(
          "storage: the database file \"", *path, "\" was deleted while the server runs (",
          std::strerror(errno), "); nothing more is acknowledged: restore the file and restart"));
    }
    if (static_cast<uint64_t>(st.st_dev) != device || static_cast<uint64_t>(st.st_ino) != inode) {
      return absl::UnavailableError(
          absl::StrCat("storage: the database file \"", *path,
                       "\" was replaced by another file while the server runs; nothing more is "
                       "acknowledged: restart the server"));
    }
  }
  if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
    return absl::UnavailableError(absl::StrFormat(
        "storage: the database file \"%s\" is read-only (mode %04o); nothing is acknowledged "
        "until it is writable again",
        path_, st.st_mode & 07777));
  }
  struct statvfs fs {};
  if (statvfs(path_.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0) {
    return absl::UnavailableError(
        absl::StrCat("storage: the file system of \"", path_,
                     "\" is read-only; nothing is acknowledged until it is writable again"));
  }
  return absl::OkStatus();
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

absl::Status SqliteStorage::RunInTransaction(const std::function<absl::Status()>& body) {
  DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
  absl::Status s = body();
  if (s.ok()) s = write_->commit.Run();
  if (!s.ok() && !sqlite3_get_autocommit(write_db_)) (void)write_->rollback.Run();
  return s;
}

absl::Status SqliteStorage::DeleteMetric(absl::string_view name) {
  // move_mu_ first: no move of one of the metric's hours is half done while its rows go.
  absl::MutexLock mlock(&move_mu_);
  absl::MutexLock lock(&write_mu_);
  int64_t id = 0;
  absl::Status s = RunInTransaction([&]() -> absl::Status {
    write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement find,
        SqliteStatement::Prepare(write_db_, "SELECT id FROM metrics WHERE name = ?"));
    find.BindText(1, name);
    DENIABLE_ASSIGN_OR_RETURN(bool found, find.Step());
    if (!found) return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
    id = find.ColumnInt64(0);
    find.Reset();
    for (const char* sql :
         {"DELETE FROM recent_reports WHERE metric_id = ?",
          "DELETE FROM counts WHERE metric_id = ?",
          "DELETE FROM counter_chunks WHERE metric_id = ?",
          "DELETE FROM counter_deltas WHERE metric_id = ?",
          "DELETE FROM first_counts WHERE metric_id = ?",
          "DELETE FROM label_values WHERE metric_id = ?", "DELETE FROM designs WHERE metric_id = ?",
          "DELETE FROM metrics WHERE id = ?"}) {
      DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(write_db_, sql));
      st.BindInt64(1, id);
      DENIABLE_RETURN_IF_ERROR(st.Run());
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  // The in-memory half of recent_reports follows the committed delete.
  for (const HourKey& key : recent_.All()) {
    if (key.metric_id == id) recent_.Erase(key);
  }
  // Then the keyed file, in a transaction of its own: the metric is gone once the first
  // committed (appends refuse its id, AUTOINCREMENT never gives it again); if this one fails,
  // the next open deletes the rows left (FinishInterruptedMoves). Under durability=normal the
  // first is made durable before (docs/storage.md, invariant 11): else a power loss could keep
  // the keyed delete and undo the database's, and the metric would come back with its counts
  // but without its moved reports. If the sync fails, the keyed rows stay for the next open
  // (which syncs first), and the delete is as durable as any commit under durability=normal.
  // The keyed step relies on the delete: a database generation after it, durable first.
  absl::Status keyed = BumpDatabaseGeneration();
  if (keyed.ok()) keyed = SyncDatabaseCommits();
  if (keyed.ok()) keyed = DeleteKeyedMetric(id, db_generation_);
  if (!keyed.ok()) {
    spdlog::warn(
        "event=delete_metric_keyed_rows_left metric_id={} reason=\"{}\" (deleted at the next "
        "start)",
        id, std::string(keyed.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<StoredMetric> SqliteStorage::SetRetention(absl::string_view name, uint32_t days,
                                                         int policy) {
  DENIABLE_RETURN_IF_ERROR(CheckRetention(days, policy));
  {
    absl::MutexLock lock(&write_mu_);
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement st,
        SqliteStatement::Prepare(
            write_db_,
            "UPDATE metrics SET retention_days = ?, retention_policy = ? WHERE name = ?"));
    st.BindInt64(1, days);
    st.BindInt64(2, policy);
    st.BindText(3, name);
    DENIABLE_RETURN_IF_ERROR(st.Run());
    if (sqlite3_changes(write_db_) == 0) {
      return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
    }
  }
  return GetMetric(name);
}

absl::StatusOr<int64_t> SqliteStorage::DeleteExpired(const char* table, const char* key,
                                                     int64_t metric_id, int64_t cutoff,
                                                     int64_t batch_rows,
                                                     const std::function<void()>& after_last) {
  const std::string sql = absl::StrCat(
      "DELETE FROM ", table, " WHERE metric_id = ?1 AND (event_time, ", key, ") IN (SELECT ",
      "event_time, ", key, " FROM ", table, " WHERE metric_id = ?1 AND event_time < ?2 LIMIT ?3)");
  int64_t total = 0;
  while (true) {
    absl::MutexLock lock(&write_mu_);
    int64_t deleted = 0;
    const absl::Status done = RunInTransaction([&]() -> absl::Status {
      write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(write_db_, sql));
      st.BindInt64(1, metric_id);
      st.BindInt64(2, cutoff);
      st.BindInt64(3, batch_rows);
      DENIABLE_RETURN_IF_ERROR(st.Run());
      deleted = sqlite3_changes(write_db_);
      return absl::OkStatus();
    });
    if (!done.ok()) return done;
    total += deleted;
    if (deleted < batch_rows) {
      if (after_last) after_last();
      return total;
    }
  }
}

absl::StatusOr<int64_t> SqliteStorage::DeleteExpiredCounts(int64_t metric_id, int64_t cutoff,
                                                           int64_t batch_rows) {
  // The same keys in the four statements: the subquery reads counts in key order, and the
  // counts rows go last.
  constexpr char kKeys[] =
      "metric_id = ?1 AND (event_time, version, labelset_id) IN (SELECT event_time, version, "
      "labelset_id FROM counts WHERE metric_id = ?1 AND event_time < ?2 ORDER BY event_time, "
      "version, labelset_id LIMIT ?3)";
  int64_t total = 0;
  while (true) {
    absl::MutexLock lock(&write_mu_);
    int64_t deleted = 0;
    const absl::Status done = RunInTransaction([&]() -> absl::Status {
      write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      for (const char* table : {"counter_chunks", "counter_deltas", "first_counts", "counts"}) {
        DENIABLE_ASSIGN_OR_RETURN(
            SqliteStatement st,
            SqliteStatement::Prepare(write_db_,
                                     absl::StrCat("DELETE FROM ", table, " WHERE ", kKeys)));
        st.BindInt64(1, metric_id);
        st.BindInt64(2, cutoff);
        st.BindInt64(3, batch_rows);
        DENIABLE_RETURN_IF_ERROR(st.Run());
      }
      deleted = sqlite3_changes(write_db_);  // of the last: counts
      return absl::OkStatus();
    });
    if (!done.ok()) return done;
    total += deleted;
    if (deleted < batch_rows) return total;
  }
}

absl::StatusOr<int64_t> SqliteStorage::DeleteExpiredKeyed(int64_t metric_id, int64_t cutoff,
                                                          int64_t batch_rows) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(keyed_db_,
                               "DELETE FROM reports WHERE metric_id = ?1 AND (event_time, "
                               "report_id) IN (SELECT event_time, report_id FROM reports WHERE "
                               "metric_id = ?1 AND event_time < ?2 LIMIT ?3)"));
  int64_t total = 0;
  while (true) {
    int64_t deleted = 0;
    DENIABLE_RETURN_IF_ERROR(RunInKeyedTransaction([&]() -> absl::Status {
      move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      st.BindInt64(1, metric_id);
      st.BindInt64(2, cutoff);
      st.BindInt64(3, batch_rows);
      absl::Status s = st.Run();
      deleted = sqlite3_changes(keyed_db_);
      return s;
    }));
    total += deleted;
    if (deleted < batch_rows) break;
  }
  // The watermarks go last: the recent rows of these hours are gone already (ApplyRetention).
  DENIABLE_RETURN_IF_ERROR(RunInKeyedTransaction([&]() -> absl::Status {
    move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement del,
        SqliteStatement::Prepare(keyed_db_,
                                 "DELETE FROM watermarks WHERE metric_id = ? AND event_time < ?"));
    del.BindInt64(1, metric_id);
    del.BindInt64(2, cutoff);
    return del.Run();
  }));
  return total;
}

absl::StatusOr<RetentionResult> SqliteStorage::ApplyRetention(const RetentionOptions& options) {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<StoredMetric> metrics, ListMetrics());
  const int64_t batch = std::max<int64_t>(1, options.batch_rows);
  RetentionResult result;
  absl::MutexLock mlock(&move_mu_);
  for (const StoredMetric& m : metrics) {
    if (m.retention_days == 0) continue;
    const int64_t cutoff = RetentionCutoff(m, options);
    // The recent rows first, the keyed ones after: a reader never sees a recent row whose
    // watermark is gone (sqlite_keyed_file.h). The recent ids of the emptied metric-hours go with
    // the transaction that deleted the last of their rows (nothing can be appended to them in
    // between: the writer lock is held).
    DENIABLE_ASSIGN_OR_RETURN(
        int64_t recent, DeleteExpired("recent_reports", "seq", m.id, cutoff, batch,
                                      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                        for (const HourKey& key : recent_.All()) {
                                          if (key.metric_id == m.id && key.event_time < cutoff)
                                            recent_.Erase(key);
                                        }
                                      }));
    // Each step of one file after the other's commits it follows are durable (invariant 11,
    // under durability=normal): the keyed deletes after the recent rows' (so a power loss never
    // leaves recent rows whose watermark and copies are gone), the counts after the keyed
    // deletes (so it never leaves visible reports whose counts are gone).
    {
      absl::MutexLock lock(&write_mu_);
      DENIABLE_RETURN_IF_ERROR(SyncDatabaseCommits());
    }
    DENIABLE_ASSIGN_OR_RETURN(int64_t sorted, DeleteExpiredKeyed(m.id, cutoff, batch));
    result.Count(m, sorted + recent);
    if (m.retention_policy != kRetentionDropCounts) continue;
    DENIABLE_RETURN_IF_ERROR(SyncKeyedCommits());
    DENIABLE_ASSIGN_OR_RETURN(int64_t counts, DeleteExpiredCounts(m.id, cutoff, batch));
    result.count_rows_dropped += counts;
    // Rows of a key without counts (none: the batches above take them with their counts).
    DENIABLE_RETURN_IF_ERROR(DeleteExpired("counter_chunks", "version, labelset_id, win, chunk",
                                           m.id, cutoff, batch, nullptr)
                                 .status());
    DENIABLE_RETURN_IF_ERROR(DeleteExpired("counter_deltas", "version, labelset_id, win, seq", m.id,
                                           cutoff, batch, nullptr)
                                 .status());
    DENIABLE_RETURN_IF_ERROR(DeleteExpired("first_counts", "version, labelset_id, win, counter",
                                           m.id, cutoff, batch, nullptr)
                                 .status());
  }
  return result;
}

int64_t SqliteStorage::RecentReportCount() {
  absl::MutexLock lock(&write_mu_);
  return recent_.size();
}

absl::StatusOr<std::vector<CountRow>> SqliteStorage::ReadCounts(int64_t metric_id,
                                                                int64_t start_seconds,
                                                                int64_t end_seconds) {
  absl::MutexLock lock(&read_mu_);
  // One read transaction: n and every counter come from the same snapshot.
  DENIABLE_RETURN_IF_ERROR(SqliteExec(read_db_, "BEGIN"));
  absl::StatusOr<std::vector<CountRow>> rows =
      ReadCountsLocked(metric_id, start_seconds, end_seconds);
  if (!rows.ok()) {
    // A read stopped midway (a damaged row) leaves its statement stepping in the old snapshot.
    for (SqliteStatement* st : {&read_->read_counts, &read_->read_counter_chunks,
                                &read_->read_counter_deltas, &read_->read_first_counts}) {
      st->Reset();
    }
  }
  const absl::Status end = SqliteExec(read_db_, rows.ok() ? "COMMIT" : "ROLLBACK");
  if (!rows.ok()) return rows.status();
  DENIABLE_RETURN_IF_ERROR(end);
  return rows;
}

absl::StatusOr<std::vector<CountRow>> SqliteStorage::ReadCountsLocked(int64_t metric_id,
                                                                      int64_t start_seconds,
                                                                      int64_t end_seconds) {
  SqliteStatement& st = read_->read_counts;
  st.BindInt64(1, metric_id);
  st.BindInt64(2, start_seconds);
  st.BindInt64(3, end_seconds);
  std::vector<CountRow> rows;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    CountRow& r = rows.emplace_back();
    r.design_version = static_cast<uint32_t>(st.ColumnInt64(0));
    r.event_time_seconds = st.ColumnInt64(1);
    r.labels = st.ColumnText(2);
    r.n = st.ColumnInt64(3);
    AddCounter(&r.counters, 0, st.ColumnInt64(4));
  }
  st.Reset();
  // Counters 1 and up (counter_chunks: every report's, win -1, and the windows' firsts), merged
  // into their count rows.
  // The count row of a statement's key columns (version, event time, labels: 0-2), from an
  // index of `rows` built at the first lookup; nullopt for a key without counts.
  std::map<std::tuple<uint32_t, int64_t, std::string>, size_t> index;
  auto row_of = [&](SqliteStatement& s) -> std::optional<size_t> {
    if (index.empty()) {
      for (size_t i = 0; i < rows.size(); ++i) {
        index[{rows[i].design_version, rows[i].event_time_seconds, rows[i].labels}] = i;
      }
    }
    auto it =
        index.find({static_cast<uint32_t>(s.ColumnInt64(0)), s.ColumnInt64(1), s.ColumnText(2)});
    if (it == index.end()) return std::nullopt;
    return it->second;
  };
  SqliteStatement& cat = read_->read_counter_chunks;
  cat.BindInt64(1, metric_id);
  cat.BindInt64(2, start_seconds);
  cat.BindInt64(3, end_seconds);
  while (true) {
    absl::StatusOr<bool> row = cat.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<size_t> it = row_of(cat);
    const int64_t win = cat.ColumnInt64(3);
    const int64_t chunk = cat.ColumnInt64(4);
    if (!it.has_value()) {
      return absl::DataLossError(
          absl::StrCat("metric ", metric_id, ": counter sums without counts in the database"));
    }
    if (win < -1 || win > 2 || chunk < 0 ||
        chunk >= kMaxCounterLayoutLength / static_cast<int64_t>(kCounterChunkCounters)) {
      return absl::DataLossError(absl::StrCat("counter_chunks: metric ", metric_id,
                                              " has a row of window ", win, " and chunk ", chunk,
                                              ", outside the stored ranges"));
    }
    CountRow& r = rows[*it];
    SparseCounters& counters = win < 0 ? r.counters : r.firsts[static_cast<size_t>(win)].counters;
    const uint32_t base = static_cast<uint32_t>(chunk) * kCounterChunkCounters;
    DENIABLE_RETURN_IF_ERROR(DecodeCounterChunk(
        cat.ColumnBlob(5), "counter_chunks",
        [&](uint32_t offset, int64_t sum) { counters.Add(base + offset, sum); }));
  }
  cat.Reset();
  // The deltas not folded yet (counter_deltas: counter indices, not offsets), added the same way.
  SqliteStatement& del = read_->read_counter_deltas;
  std::map<std::pair<size_t, int>, std::vector<SparseCounters::Entry>> deltas;  // (row, win)
  del.BindInt64(1, metric_id);
  del.BindInt64(2, start_seconds);
  del.BindInt64(3, end_seconds);
  while (true) {
    absl::StatusOr<bool> row = del.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<size_t> it = row_of(del);
    const int64_t win = del.ColumnInt64(3);
    if (!it.has_value()) {
      return absl::DataLossError(
          absl::StrCat("metric ", metric_id, ": counter sums without counts in the database"));
    }
    if (win < -1 || win > 2) {
      return absl::DataLossError(absl::StrCat("counter_deltas: metric ", metric_id,
                                              " has a row of window ", win,
                                              ", outside the stored ranges"));
    }
    std::vector<SparseCounters::Entry>& cells = deltas[{*it, static_cast<int>(win)}];
    DENIABLE_RETURN_IF_ERROR(
        DecodeCounterDelta(del.ColumnBlob(4), "counter_deltas",
                           [&](uint32_t j, int64_t sum) { cells.emplace_back(j, sum); }));
  }
  del.Reset();
  // One merge per row and window (a merge per delta row would cost its rows' size each time).
  for (auto& [where, cells] : deltas) {
    std::sort(cells.begin(), cells.end());
    SparseCounters added;
    for (const auto& [j, sum] : cells) added.Add(j, sum);  // ascending: O(1) each
    CountRow& r = rows[where.first];
    (where.second < 0 ? r.counters : r.firsts[static_cast<size_t>(where.second)].counters)
        .AddAll(added);
  }
  // The window-first counts (first_counts), merged the same way.
  SqliteStatement& fc = read_->read_first_counts;
  fc.BindInt64(1, metric_id);
  fc.BindInt64(2, start_seconds);
  fc.BindInt64(3, end_seconds);
  while (true) {
    absl::StatusOr<bool> row = fc.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<size_t> it = row_of(fc);
    const int64_t w = fc.ColumnInt64(3);
    if (!it.has_value() || w < 0 || w > 2) {
      return absl::DataLossError(
          absl::StrCat("metric ", metric_id, ": first counts without counts in the database"));
    }
    CountRow::Firsts& f = rows[*it].firsts[static_cast<size_t>(w)];
    const int64_t counter = fc.ColumnInt64(4);
    if (counter < -1 || counter >= kMaxCounterLayoutLength) {
      return absl::DataLossError(absl::StrCat("first_counts: metric ", metric_id, " has counter ",
                                              counter, ", outside the stored ranges"));
    }
    if (counter < 0) {
      f.n += fc.ColumnInt64(5);
    } else {
      AddCounter(&f.counters, static_cast<size_t>(counter), fc.ColumnInt64(5));
    }
  }
  fc.Reset();
  return rows;
}

absl::StatusOr<int64_t> SqliteStorage::ReportCount() {
  absl::MutexLock lock(&read_mu_);
  DENIABLE_ASSIGN_OR_RETURN(bool has_row, read_->count_reports.Step());
  const int64_t n = has_row ? read_->count_reports.ColumnInt64(0) : 0;
  read_->count_reports.Reset();
  return n;
}

absl::StatusOr<std::string> SqliteStorage::IntegrityCheck() {
  absl::MutexLock lock(&read_mu_);
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st,
                            SqliteStatement::Prepare(read_db_, "PRAGMA integrity_check"));
  std::string out;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (!out.empty()) out += "\n";
    out += st.ColumnText(0);
  }
  return out;
}

}  // namespace deniable::server
