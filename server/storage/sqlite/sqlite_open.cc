// SqliteStorage's open: the connections, the schemas, the statements, the keyed file (made, or
// its pair and generations checked), the recovery of moves and deletes cut short, and the
// in-memory recent ids. Open runs it before any other thread can see the storage, holding every
// lock (move_mu_, write_mu_, read_mu_).
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/sqlite/moved_ids_filter.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_move_statements.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_storage_statements.h"
#include "spdlog/spdlog.h"

namespace deniable::server {
namespace {

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

// The writer's statements (PrepareWriteStatements) whose SQL spans lines; the two lookups of the
// keyed file run on keyed_lookup_db_.
constexpr char kFindReportSql[] =
    "SELECT 1 FROM reports WHERE metric_id = ? AND event_time = ? AND report_id = ?";
constexpr char kHourHasReportsSql[] =
    "SELECT 1 FROM reports WHERE metric_id = ? AND event_time = ? LIMIT 1";
constexpr char kInsertMetricSql[] =
    "INSERT INTO metrics(name, description, created_time_seconds, "
    "time_precision_seconds, min_reports, reporting_period_seconds, "
    "randomization, categories, retention_days, retention_policy, "
    "window_firsts_off, reporting_once) "
    "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
constexpr char kInsertDesignSql[] =
    "INSERT INTO designs(metric_id, version, parameters, a, b, "
    "created_time_seconds) VALUES(?, ?, ?, ?, ?, ?)";
constexpr char kInsertRecentSql[] =
    "INSERT INTO recent_reports(metric_id, event_time, seq, report_id, version, "
    "bit, labelset_id, support, firsts) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)";
// kInsertRecentSql with `rows` rows of values.
std::string InsertRecentRowsSql(int rows) {
  std::string sql(kInsertRecentSql);
  for (int i = 1; i < rows; ++i) absl::StrAppend(&sql, ", (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  return sql;
}
constexpr char kUpsertCountSql[] =
    "INSERT INTO counts(metric_id, event_time, version, labelset_id, n, "
    "counter0) VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, event_time, "
    "version, labelset_id) DO UPDATE SET n = n + excluded.n, counter0 = "
    "counter0 + excluded.counter0";
constexpr char kUpsertCounterChunkSql[] =
    "INSERT INTO counter_chunks(metric_id, event_time, version, labelset_id, "
    "win, chunk, sums) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, "
    "event_time, version, labelset_id, win, chunk) DO UPDATE SET sums = "
    "deniable_add_chunk(sums, excluded.sums)";
constexpr char kUpsertFirstCountSql[] =
    "INSERT INTO first_counts(metric_id, event_time, version, labelset_id, win, "
    "counter, count) VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, "
    "event_time, version, labelset_id, win, counter) DO UPDATE SET count = "
    "count + excluded.count";
constexpr char kInsertCounterDeltaSql[] =
    "INSERT INTO counter_deltas(metric_id, event_time, version, labelset_id, "
    "win, seq, sums) VALUES(?, ?, ?, ?, ?, ?, ?)";

}  // namespace

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

  DENIABLE_RETURN_IF_ERROR(PrepareWriteStatements());
  DENIABLE_RETURN_IF_ERROR(PrepareReadStatements());
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

absl::Status SqliteStorage::PrepareWriteStatements() {
  auto prepare_write = [this](absl::string_view sql) {
    write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    return SqliteStatement::Prepare(write_db_, sql);
  };
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement begin, prepare_write("BEGIN IMMEDIATE"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement commit, prepare_write("COMMIT"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement rollback, prepare_write("ROLLBACK"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_metric, prepare_write(kInsertMetricSql));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_design, prepare_write(kInsertDesignSql));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_labelset,
                            prepare_write("INSERT INTO labelsets(canonical) VALUES(?)"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement find_labelset,
                            prepare_write("SELECT id FROM labelsets WHERE canonical = ?"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_recent, prepare_write(kInsertRecentSql));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_recent_many,
                            prepare_write(InsertRecentRowsSql(kInsertRecentRows)));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement find_report,
                            SqliteStatement::Prepare(keyed_lookup_db_, kFindReportSql));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement hour_has_reports,
                            SqliteStatement::Prepare(keyed_lookup_db_, kHourHasReportsSql));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement upsert_count, prepare_write(kUpsertCountSql));
  // The chunk's sums merge into the stored ones inside the upsert (counter_chunks.h).
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement upsert_counter_chunk,
                            prepare_write(kUpsertCounterChunkSql));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement upsert_first_count,
                            prepare_write(kUpsertFirstCountSql));
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
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_counter_delta,
                            prepare_write(kInsertCounterDeltaSql));
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
                                   std::move(insert_recent_many),
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
  return absl::OkStatus();
}

absl::Status SqliteStorage::PrepareReadStatements() {
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
  return absl::OkStatus();
}

namespace {

// The pair id of the keyed file a database without one gets, and whether it is a migrated
// database (schema version 7 or older) whose legacy_reports the keyed file takes.
struct NewKeyedPair {
  std::string pair_id;
  bool migrating = false;
};

// Records, in its own transaction of `db`, the pair id of the keyed file a legacy copy starts
// (legacy_copy), so that a copy cut short goes on into the same file. The caller holds the
// database's writer (write_mu_).
absl::Status RecordLegacyCopy(sqlite3* db, const std::string& pair_id) {
  DENIABLE_RETURN_IF_ERROR(
      SqliteExec(db,
                 "BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS legacy_copy(pair_id BLOB NOT NULL); "
                 "DELETE FROM legacy_copy"));
  absl::StatusOr<SqliteStatement> record =
      SqliteStatement::Prepare(db, "INSERT INTO legacy_copy(pair_id) VALUES(?)");
  absl::Status s = record.status();
  if (s.ok()) {
    record->BindBlob(1, pair_id.data(), static_cast<int>(pair_id.size()));
    s = record->Run();
  }
  if (s.ok()) s = SqliteExec(db, "COMMIT");
  if (!s.ok()) {
    SqliteExec(db, "ROLLBACK").IgnoreError();
    return s;
  }
  return absl::OkStatus();
}

// The keyed file of database `db` (writer connection, write_mu_ held) that has no pair id yet:
// the one a cut-short legacy copy started, or a new one (whatever file has its name is removed).
absl::StatusOr<NewKeyedPair> ChooseKeyedPair(sqlite3* db, const std::string& keyed_path) {
  NewKeyedPair pair;
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement legacy,
      SqliteStatement::Prepare(db,
                               "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                               "'legacy_reports'"));
  DENIABLE_ASSIGN_OR_RETURN(pair.migrating, legacy.Step());
  legacy.Reset();
  // A copy of legacy_reports cut short (a crash, a full disk) goes on into the keyed file it
  // started, which the database recorded (legacy_copy) before the first row.
  std::string resume;
  if (pair.migrating) {
    DENIABLE_ASSIGN_OR_RETURN(resume, ReadLegacyCopyPairId(db));
  }
  if (KeyedFileHasPairId(keyed_path, resume)) {
    pair.pair_id = resume;
    spdlog::info("event=legacy_copy_resumed keyed_file=\"{}\"", keyed_path);
    return pair;
  }
  // No keyed file belongs to this database yet (a new one, or one of version 7 or older
  // whose copy has not started): whatever file has the name is left over (the database
  // still holds every report) and is made anew.
  for (const char* suffix : {"", "-wal", "-shm"}) {
    std::remove(absl::StrCat(keyed_path, suffix).c_str());
  }
  absl::BitGen gen;
  pair.pair_id.resize(16);
  for (char& c : pair.pair_id) c = static_cast<char>(absl::Uniform<uint8_t>(gen));
  if (pair.migrating) DENIABLE_RETURN_IF_ERROR(RecordLegacyCopy(db, pair.pair_id));
  return pair;
}

}  // namespace

absl::Status SqliteStorage::OpenKeyedFile(const SqliteOptions& options) {
  keyed_path_ = KeyedReportsPath(options.path);
  DENIABLE_ASSIGN_OR_RETURN(const std::string pair_id, ReadPairId(write_db_));
  NewKeyedPair new_pair;
  if (pair_id.empty()) {
    DENIABLE_ASSIGN_OR_RETURN(new_pair, ChooseKeyedPair(write_db_, keyed_path_));
  } else if (!FileExists(keyed_path_)) {
    return absl::DataLossError(absl::StrCat(
        "the keyed reports file \"", keyed_path_, "\" of database \"", options.path,
        "\" is missing: restore it beside the database (back up, copy and move both files "
        "together; docs/operations.md)"));
  }
  DENIABLE_ASSIGN_OR_RETURN(const SqliteOptions keyed_options, OpenKeyedWriter(options));
  DENIABLE_RETURN_IF_ERROR(
      EnsureKeyedSchema(keyed_db_, keyed_path_, pair_id.empty() ? new_pair.pair_id : pair_id));
  if (pair_id.empty()) {
    DENIABLE_RETURN_IF_ERROR(PairKeyedFile(options.path, new_pair.pair_id, new_pair.migrating));
  }
  DENIABLE_RETURN_IF_ERROR(CheckKeyedGenerations(options.path));
  DENIABLE_ASSIGN_OR_RETURN(keyed_lookup_db_, OpenConnection(keyed_options));
  // The interior pages of a hot metric-hour's keyed part (about 12 MiB at 20 M reports), so
  // that the lookups appends make for the ids the moved-ids filter passes read one leaf each.
  return SqliteExec(keyed_lookup_db_, absl::StrCat("PRAGMA cache_size=-",
                                                   std::max(2048, options.write_cache_kib / 4)));
}

absl::StatusOr<SqliteOptions> SqliteStorage::OpenKeyedWriter(const SqliteOptions& options) {
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
  return keyed_options;
}

absl::Status SqliteStorage::PairKeyedFile(const std::string& db_path, const std::string& pair_id,
                                          bool migrating) {
  if (migrating) {
    // Checkpointed as it goes: its WAL stays within wal_autocheckpoint_pages and a chunk.
    DENIABLE_RETURN_IF_ERROR(
        CopyLegacyReports(keyed_db_, db_path, kLegacyCopyRows,
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
  pair.BindBlob(1, pair_id.data(), static_cast<int>(pair_id.size()));
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
  return absl::OkStatus();
}

absl::Status SqliteStorage::CheckKeyedGenerations(const std::string& db_path) {
  // An older keyed file than the database relies on is refused (sqlite_keyed_file.h).
  DENIABLE_ASSIGN_OR_RETURN(int64_t relied, ReadGeneration(write_db_, /*keyed=*/false));
  DENIABLE_ASSIGN_OR_RETURN(keyed_generation_, ReadGeneration(keyed_db_, /*keyed=*/true));
  DENIABLE_RETURN_IF_ERROR(CheckGenerations(db_path, relied, keyed_path_, keyed_generation_));
  // And a database older than the keyed file relies on (the other direction).
  DENIABLE_ASSIGN_OR_RETURN(db_generation_, ReadDatabaseGeneration(write_db_));
  DENIABLE_ASSIGN_OR_RETURN(int64_t keyed_relies, ReadDatabaseGeneration(keyed_db_));
  return CheckDatabaseGeneration(db_path, db_generation_, keyed_path_, keyed_relies);
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

absl::Status SqliteStorage::FinishInterruptedMoves() {
  // The recent rows a move copied and a crash or a Close kept it from deleting: those behind
  // each metric-hour's watermark.
  std::vector<std::pair<HourKey, Watermark>> marks;
  {
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement st,
        SqliteStatement::Prepare(keyed_db_,
                                 "SELECT metric_id, event_time, moved_seq, last_seq, last_id "
                                 "FROM watermarks"));
    while (true) {
      DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      Watermark w{st.ColumnInt64(2), st.ColumnInt64(3), !st.ColumnIsNull(4), st.ColumnBlob(4)};
      // Seq numbers only grow: the next row is numbered past every watermark, not only past the
      // recent rows LoadRecent finds (none when every one was moved; a row numbered from 1 again
      // would sit behind its hour's watermark, hidden, and the hour's next move would delete it
      // uncopied).
      next_seq_ = std::max(next_seq_, std::max(w.moved_seq, w.last_seq) + 1);
      marks.emplace_back(HourKey{st.ColumnInt64(0), st.ColumnInt64(1)}, std::move(w));
    }
  }
  for (const auto& [key, w] : marks) DENIABLE_RETURN_IF_ERROR(DropBehind(key, w));
  // The keyed rows of metrics the database no longer has (a DeleteMetric whose second
  // transaction, in the keyed file, did not run): every keyed metric-hour has a watermark.
  std::vector<int64_t> gone;
  {
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement st,
        SqliteStatement::Prepare(keyed_db_, "SELECT DISTINCT metric_id FROM watermarks"));
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement known,
        SqliteStatement::Prepare(write_db_, "SELECT 1 FROM metrics WHERE id = ?"));
    while (true) {
      DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
      if (!row) break;
      known.BindInt64(1, st.ColumnInt64(0));
      DENIABLE_ASSIGN_OR_RETURN(bool exists, known.Step());
      known.Reset();
      if (!exists) gone.push_back(st.ColumnInt64(0));
    }
  }
  // The database's delete of them must be durable first (invariant 11): what an earlier process
  // committed may not be, after a SIGKILL under durability=normal; and a database generation
  // after it is what the keyed deletes record (invariant 18: the process that deleted them may
  // have died before it raised one).
  if (!gone.empty()) {
    DENIABLE_RETURN_IF_ERROR(BumpDatabaseGeneration());
    DENIABLE_RETURN_IF_ERROR(SyncDatabaseCommits());
  }
  for (int64_t metric : gone) DENIABLE_RETURN_IF_ERROR(DeleteKeyedMetric(metric, db_generation_));
  return absl::OkStatus();
}

}  // namespace deniable::server
