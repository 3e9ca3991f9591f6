// The production Storage: a SQLite database file in WAL mode, and its keyed reports file beside
// it ("<db>-reports", sqlite_keyed_file.h), which holds `reports`.
//
// Schema (created on open; see docs/storage.md):
//   metrics(id AUTOINCREMENT, name UNIQUE, description, created_time_seconds,
//           time_precision_seconds, min_reports, reporting_period_seconds, randomization,
//           categories, retention_days, retention_policy)
//   designs(metric_id, version, parameters, a, b, created_time_seconds)      WITHOUT ROWID
//   labelsets(id, canonical UNIQUE)
//   recent_reports(metric_id, event_time, seq, report_id, version, bit, labelset_id)
//       WITHOUT ROWID, PRIMARY KEY (metric_id, event_time, seq): new reports, appended in
//       arrival order (seq), so a commit writes a few pages at the end of each metric-hour
//       instead of one page per report at random places. An in-memory set of each metric-hour's
//       recent ids (recent_hours.h) deduplicates them. When more than
//       SqliteOptions::max_recent_reports are recent, a background thread moves the least
//       recently written metric-hours into the keyed file's `reports` (keyed by metric, hour and
//       report id, so a lookup never searches one random-id B-tree of all history), in key
//       order, on the keyed file's own connection while appends go on: a sorted bulk insert.
//       Each of its transactions advances the hour's watermark there past the rows it copied;
//       the copied rows are deleted from `recent_reports` at the end, by seq range, in
//       transactions between which appends go first. Rows behind the watermark count as moved,
//       so every report counts exactly once at every moment, for every reader (ReportCount, the
//       view stored_reports of AttachKeyedReports). (docs/performance.md, "Deduplication")
//   keyed_file(pair_id, keyed_generation, db_generation): the keyed file's pair id, the keyed
//       file's generation that this file's deletes of moved rows relied on (an open refuses a
//       keyed file of a lower one), and this file's own generation, which the keyed file's
//       copies rely on (an open refuses a database of a lower one than the keyed file records;
//       sqlite_keyed_file.h, "Generations").
//   legacy_copy(pair_id): only while a version 7 database's reports are copied into a new
//       keyed file, that file's pair id (the copy goes on into it after a stop).
//   counts(metric_id, event_time, version, labelset_id, n, counter0)         WITHOUT ROWID
//   counter_chunks(metric_id, event_time, version, labelset_id, win, chunk, sums) WITHOUT ROWID
//   counter_deltas(metric_id, event_time, version, labelset_id, win, seq, sums) WITHOUT ROWID
//   first_counts(metric_id, event_time, version, labelset_id, win, counter, count)
//       n and the summed counter vector (storage.h CountRow; counter 0 beside n; counters 1 and
//       up 1024 to a row as one blob, counter_chunks.h, win -1 for every report and 0-2 for the
//       window's first reports; counter_deltas an append transaction's increments of counters 1
//       and up, one row per key and window, folded into counter_chunks every kCounterDeltaFold
//       rows; first_counts the window's firsts' n, counter -1, and counter 0), maintained in the
//       same transaction as the reports: queries never scan reports.
//   label_values(metric_id, key, value)                                      WITHOUT ROWID
//       each metric's stored label values, for the cap on distinct values of a label key
//       (label_values.h), written and counted in the append's transaction.
//
// Durability: AppendReports returns after COMMIT. With Durability::kFull (synchronous=FULL, the
// default) a committed batch survives power loss; with kNormal it survives a crash of the
// process but the batches committed since the database's WAL was last synced (a checkpoint, a
// move) may roll back on power loss, never a moved report, never counted twice (docs/storage.md,
// invariants 11-13).
//
// Thread-safe: writes are serialized on one connection, reads use a second connection
// (WAL lets them run beside a write); moves write the keyed file on a third, and appends look
// the keyed file up on a fourth.
//
// Parts (docs/storage.md, "Parts": each file's job, lock and tests): sqlite_open.cc (Open, Init,
// OpenKeyedFile, LoadRecent, FinishInterruptedMoves), sqlite_append.cc (AppendBatches),
// sqlite_read.cc (GetMetric, ListMetrics, ReadCounts), sqlite_delete.cc (DeleteMetric,
// retention), sqlite_move.cc (moves), wal_checkpointer.h (each file's WAL checkpoints and
// syncs), sqlite_storage.cc (the rest: metrics, health, checkpoint counts, the destructor).
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_H_

#include <sqlite3.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "server/storage/label_values.h"
#include "server/storage/sqlite/database_lock.h"
#include "server/storage/sqlite/recent_hours.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/wal_checkpointer.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct SqliteOptions {
  std::string path;  // database file; ":memory:" is refused (WAL needs a file)
  Durability durability = Durability::kFull;  // wal_checkpointer.h
  int busy_timeout_millis = 5000;             // wait for a lock held by another process
  // Page cache of each writing connection (the database's and the keyed reports file's), in KiB
  // (PRAGMA cache_size=-N). It holds the B-tree pages that inserts touch: the current hours'
  // recent rows and counts, and the keyed part a move inserts into. The appends' lookups in the
  // keyed file get a quarter of it; the reading connection keeps SQLite's default (2 MiB).
  // Bounds the storage's memory.
  int write_cache_kib = 64 * 1024;
  // The WAL is copied back into the database once it holds this many pages (4 KiB each). A
  // report insert dirties a page at a random place of its hour's part of the key, so a larger
  // interval lets one checkpoint write a page once for many commits.
  //
  // The checkpoint is SQLITE_CHECKPOINT_RESTART, run by the writer right after the commit that
  // crossed this size (sqlite3_wal_hook, replacing SQLite's PASSIVE autocheckpoint): it copies
  // the WAL into the database, then waits (at most wal_restart_wait_tries busy-handler calls,
  // about 1 ms each; appends wait meanwhile) until no reader still reads an older snapshot from
  // the WAL, so that the next write starts the WAL from its beginning. A PASSIVE checkpoint never
  // waits, so with queries running beside ingestion some reader always held an old snapshot,
  // the WAL was never restarted and grew without bound (2.35 GB in deniable-bench). Readers here
  // use short transactions (one statement each; a move lists its rows in short read
  // transactions, see MoveHour), so the wait is short. If it times out the checkpoint still copies
  // what it can, and the restart is tried again once the WAL has grown by a quarter of this size.
  int wal_autocheckpoint_pages = 10000;
  // The same for the keyed reports file's WAL (X.db-reports-wal); 0: wal_autocheckpoint_pages.
  // Tests set it apart from the database's, so that each file's checkpoints (and their syncs)
  // come at other moments (server/storage/sqlite/crash_consistency_test.cc).
  int keyed_wal_autocheckpoint_pages = 0;
  int wal_restart_wait_tries = 200;
  // PRAGMA journal_size_limit: when the WAL restarts, its file is truncated to this size, so
  // the file on disk stays below about max(this, wal_autocheckpoint_pages pages plus one
  // transaction) instead of keeping its largest size.
  int64_t wal_size_limit_bytes = 64 << 20;
  // Recent reports whose ids are held in memory (about 30 bytes each, see recent_hours.h) before
  // the least recently written metric-hours move to the keyed table, down to half of this. A
  // metric-hour that has moved pays one B-tree lookup per new report. Reopening loads the recent
  // reports' ids again (a scan of recent_reports).
  int64_t max_recent_reports = 4'000'000;
  // true: a background thread moves metric-hours while appends go on. false: the append that
  // exceeded max_recent_reports moves them before it returns (deterministic, for tests).
  bool background_moves = true;
  // The rows per transaction of a move (SqliteStorage::kMoveChunkRows by default; smaller in
  // tests that watch a move chunk by chunk).
  int move_chunk_rows = 50'000;
  // true (default): each move transaction is sized to write about wal_autocheckpoint_pages / 2
  // pages to the WAL (measured on the previous one; at most move_chunk_rows rows, fewer when
  // the hour's keyed part is large), which keeps the WAL below wal_size_limit_bytes while moves
  // run. Since moves copy in key order and delete by seq range (schema version 6), this costs
  // a hot metric-hour little (docs/performance.md, "The WAL and the hot hour"). false:
  // move_chunk_rows per transaction, whatever the pages they write.
  bool bound_move_wal = true;
  // The caps on distinct values of each label key and on distinct label keys, per metric
  // (label_values.h; 0: none).
  int64_t max_label_values = kDefaultMaxLabelValues;
  int64_t max_label_keys = kDefaultMaxLabelKeys;
};

class SqliteStorage : public Storage {
 public:
  // Opens (creating if needed) the database, its keyed reports file and their schemas, after
  // taking each file's writer lock (DatabaseLock, on the file's identity): one SqliteStorage per
  // database file, in any process, whatever name (hard link, symlink, bind mount, path
  // spelling) opens it. A database of schema version 7 or older is migrated: its reports are
  // copied into a new keyed file, then dropped from it. Errors: INVALID_ARGUMENT for an empty
  // path; FAILED_PRECONDITION naming the path and the holder's pid when another process (or
  // another SqliteStorage of this one) has the database open; DATA_LOSS naming the keyed file
  // when it is missing or belongs to another database; UNAVAILABLE / DATA_LOSS / INTERNAL if
  // SQLite fails (see SqliteError); DATA_LOSS naming both files when the keyed file is older
  // than the database relies on (its generation lower: an older copy, a lost -wal).
  static absl::StatusOr<std::unique_ptr<SqliteStorage>> Open(const SqliteOptions& options);
  ~SqliteStorage() override;

  absl::StatusOr<StoredMetric> CreateMetric(StoredMetric metric) override;
  absl::StatusOr<StoredMetric> AddDesignVersion(absl::string_view name,
                                                StoredDesign design) override;
  absl::StatusOr<StoredMetric> GetMetric(absl::string_view name) override;
  absl::StatusOr<std::vector<StoredMetric>> ListMetrics() override;
  absl::StatusOr<AppendResult> AppendReports(absl::Span<const ReportRow> rows) override;
  absl::StatusOr<std::vector<AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const ReportRow>> batches) override;
  absl::StatusOr<std::vector<CountRow>> ReadCounts(int64_t metric_id, int64_t start_seconds,
                                                   int64_t end_seconds) override;
  absl::Status DeleteMetric(absl::string_view name) override;
  absl::StatusOr<StoredMetric> SetRetention(absl::string_view name, uint32_t days,
                                            int policy) override;
  // Holds the move lock for the whole run (no metric-hour is half moved while its rows go) and
  // the writer for one batch_rows transaction at a time; a metric-hour whose recent rows are all
  // gone leaves the in-memory recent ids with the transaction that deleted the last of them.
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionOptions& options) override;

  // Number of stored reports (a full scan; for tests and checks, not for queries).
  absl::StatusOr<int64_t> ReportCount();
  // Reports in recent_reports, not yet moved to the keyed table.
  int64_t RecentReportCount();
  // Bytes held by the metric-hours' moved-ids filters (moved_ids_filter.h), for tests and
  // figures. Thread-safe.
  int64_t MovedIdsFilterBytes();
  // Checkpoints run by the writer (see SqliteOptions::wal_autocheckpoint_pages): how many
  // RESTART checkpoints were attempted, how many restarted the WAL and how many found a reader in
  // the way (and copied what they could); PASSIVE ones run between a busy attempt and the next;
  // the largest WAL the writer saw after a commit, and the most WAL pages one commit wrote.
  struct CheckpointCounts {
    int64_t attempts = 0;
    int64_t restarted = 0;
    int64_t busy = 0;
    int64_t passive = 0;
    int64_t largest_wal_pages = 0;
    int64_t largest_commit_pages = 0;
    int64_t largest_keyed_wal_pages = 0;  // the keyed file's largest WAL after a commit
  };
  CheckpointCounts Checkpoints();
  // Moves every recent metric-hour into the keyed table now, on the calling thread. Not needed
  // for correctness; for tests, benchmarks and an orderly compaction. Errors: as AppendReports;
  // a failed move leaves the rest of that metric-hour recent.
  absl::Status MoveRecentReports();
  // The most rows per transaction of a move.
  static constexpr int kMoveChunkRows = 50'000;
  // The rows per transaction of the copy of a version 7 database's reports into a new keyed
  // file (CopyLegacyReports): about 100 WAL pages, so that the keyed WAL stays within
  // wal_autocheckpoint_pages and one such transaction.
  static constexpr int kLegacyCopyRows = 4096;
  // Rows per read transaction when a move lists a metric-hour's recent rows.
  static constexpr int kMoveReadRows = 65'536;
  // Rows per INSERT statement of an append's new recent rows: one statement's run per 25 rows
  // costs 0.58 of one per row (docs/performance.md, "Where the time goes").
  static constexpr int kInsertRecentRows = 25;
  // "ok" when PRAGMA integrity_check finds no problem, else its findings.
  absl::StatusOr<std::string> IntegrityCheck();

  // Whether the storage can store reports now: FileHealth() (below), and, after an append failed
  // because the disk is full (UNAVAILABLE "storage: the disk is full ...") or a file is damaged
  // (DATA_LOSS), that failure until a write succeeds again. While the disk is full each call
  // tries one small write transaction (about a page, and a sync) and is healthy again once it
  // commits; a damaged file stays unhealthy until an append succeeds (or the server restarts on
  // a restored file). The server polls it (CollectorServer, ServerOptions::health_check_interval)
  // and its health service answers NOT_SERVING while it fails. Thread-safe; may wait for the
  // writer while a write failure is recorded. Errors: as FileHealth; UNAVAILABLE (disk full) or
  // DATA_LOSS "storage: the last write failed and none has succeeded since (...)".
  absl::Status Health() override;

 private:
  // Checks that the path still names the file this storage opened (same device and inode), the
  // same for the keyed file, and that the file and its file system are writable; every append
  // runs it before its transaction and again after its commit, so a batch written into a deleted
  // (unlinked) or replaced file is never acknowledged. Errors: UNAVAILABLE "storage: the database
  // file \"<path>\" was deleted | was replaced | is read-only ...".
  absl::Status FileHealth();
  // Records the outcome of a write for Health(): a disk-full or DATA_LOSS failure is kept until an
  // OK outcome clears it; other failures change nothing. Called with write_mu_ held, so outcomes
  // are recorded in the order of the writes.
  void NoteWrite(const absl::Status& status) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  struct WriteStatements;
  struct ReadStatements;
  SqliteStorage() = default;
  // The open after the database's lock (sqlite_open.cc): connections, schemas, statements, the
  // keyed file, the recovery of what a crash cut short, the recent ids. Takes every lock.
  absl::Status Init(const SqliteOptions& options);
  // Prepares write_ on write_db_ (and the appends' lookups on keyed_lookup_db_).
  absl::Status PrepareWriteStatements() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Prepares read_ on read_db_.
  absl::Status PrepareReadStatements() ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  absl::Status StartMoves(const SqliteOptions& options) ABSL_LOCKS_EXCLUDED(write_mu_);
  absl::StatusOr<int64_t> LabelsetId(const std::string& canonical)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status InsertDesign(int64_t metric_id, const StoredDesign& design)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The append's transaction after its BEGIN (sqlite_append.cc): every row, then the sums, then
  // COMMIT; the in-memory recent ids take the rows (the caller commits or undoes them).
  absl::StatusOr<std::vector<AppendResult>> AppendLocked(
      absl::Span<const absl::Span<const ReportRow>> batches)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // A transaction's sums and the label sets it checked (sqlite_append.cc).
  struct AppendTotals;
  // Whether each metric the batches name still exists, read in the append's transaction.
  absl::StatusOr<absl::flat_hash_map<int64_t, bool>> MetricsExist(
      absl::Span<const absl::Span<const ReportRow>> batches)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // The label caps' admission of the append's transaction, reading label_values on write_db_.
  LabelValueAdmission LabelAdmission() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // One row of the append (the `index`-th of its batch): refused (missing metric, label cap),
  // a duplicate, or stored and added to `totals`; the outcome counted in `result`.
  absl::Status AppendRow(const ReportRow& row, size_t index,
                         absl::flat_hash_map<int64_t, bool>& exists, LabelValueAdmission& labels,
                         AppendTotals& totals, AppendResult& result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Whether the row's id is stored already (recent ids, this transaction's included, then the
  // keyed file); if not, it joins its metric-hour's recent ids.
  absl::StatusOr<bool> IsDuplicate(const HourKey& key, const ReportRow& row)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Queues the row for recent_reports with the next seq (InsertRecentRows writes the queue).
  void QueueRecentRow(const ReportRow& row, int64_t labelset_id, AppendTotals& totals)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Inserts the queued rows, kInsertRecentRows per statement (the rest one by one), and empties
  // the queue. Nothing reads recent_reports on write_db_ between the queueing and this: the
  // append's dedup reads the recent ids in memory and the keyed file.
  absl::Status InsertRecentRows(AppendTotals& totals) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Writes the transaction's counts, counter deltas (or folds), window firsts and new label
  // values.
  absl::Status WriteTotals(AppendTotals& totals, const LabelValueAdmission& labels)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status LoadRecent() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::StatusOr<bool> HourHasSortedRows(const HourKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::StatusOr<bool> IsStored(const HourKey& key, const ReportRow& row)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Opens the keyed file (creating it, and copying a migrated database's legacy_reports into
  // it, when the database has no pair id yet) and its connections (sqlite_keyed_file.h).
  absl::Status OpenKeyedFile(const SqliteOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  // Takes the keyed file's lock and opens its writer (keyed_db_, keyed_wal_); returns the
  // options of its connections (the keyed file's path).
  absl::StatusOr<SqliteOptions> OpenKeyedWriter(const SqliteOptions& options)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // Makes the new keyed file the database's: the legacy copy (when `migrating`), then the pair
  // id recorded and legacy_reports dropped in one transaction of the database.
  absl::Status PairKeyedFile(const std::string& db_path, const std::string& pair_id, bool migrating)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  // Refuses a keyed file older than the database relies on, and a database older than the
  // keyed file relies on (sqlite_keyed_file.h, "Generations"); reads both generations.
  absl::Status CheckKeyedGenerations(const std::string& db_path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  absl::Status PrepareMoveStatements() ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  // A metric-hour's row of the keyed file's watermarks (all zero when it has none).
  struct Watermark {
    int64_t moved_seq = 0;
    int64_t last_seq = 0;
    bool copying = false;  // last_id is set: a move copies (or was cut short copying)
    std::string last_id;
  };
  absl::StatusOr<Watermark> ReadWatermark(const HourKey& key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // Deletes the recent rows behind every watermark (a move a crash or a Close cut short) and the
  // keyed rows of metrics the database no longer has. Numbers the next appended row past every
  // watermark (LoadRecent, after it, takes the recent rows' seq into account).
  absl::Status FinishInterruptedMoves() ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  // Deletes the metric-hour's recent rows behind `w`, in transactions of at most kMoveReadRows
  // rows of the hour.
  absl::Status DropBehind(const HourKey& key, const Watermark& w)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  // Deletes, in one transaction, the metric-hour's recent rows with after < seq <= to that are
  // behind a watermark: seq <= moved_seq, or report_id <= last_id (empty: no id is) while a move
  // copies.
  absl::Status DeleteBehind(const HourKey& key, int64_t after, int64_t to, int64_t moved_seq,
                            const std::string& last_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_, write_mu_);
  // Deletes a metric's rows and watermarks from the keyed file, in one of its transactions, which
  // records `relied` (a database generation committed after the metric's delete) as the
  // database generation the keyed file relies on.
  absl::Status DeleteKeyedMetric(int64_t metric_id, int64_t relied)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  absl::Status MoveHours(const std::vector<HourKey>& keys) ABSL_LOCKS_EXCLUDED(write_mu_);
  absl::Status MoveHour(const HourKey& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_)
      ABSL_LOCKS_EXCLUDED(write_mu_);
  // One move of the hour: the one `mark` says was cut short, or else a new one (sqlite_move.cc:
  // MarkMove, ListMovingRows, CopyMovingRows, DeleteMovedRows).
  absl::Status MoveHourOnce(const HourKey& key, const Watermark& mark)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) ABSL_LOCKS_EXCLUDED(write_mu_);
  // The rows a move copies and its delete phase's seq bounds (sqlite_move.cc).
  struct MovingRows;
  // The move's mark: drops what a failed move copied, raises and syncs the database's
  // generation, sets `last_seq` and `relied`, and starts the hour's watermark (a new move).
  // false: nothing to move.
  absl::StatusOr<bool> MarkMove(const HourKey& key, const Watermark& mark, int64_t& last_seq,
                                int64_t& relied) ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_)
      ABSL_LOCKS_EXCLUDED(write_mu_);
  // Lists the hour's recent rows with after < seq <= last_seq on move_db_ (short read
  // transactions), sorted by id.
  absl::Status ListMovingRows(const HourKey& key, int64_t after, int64_t last_seq, MovingRows& out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // Copies the rows into the keyed file, a keyed transaction a chunk; after each, the chunk's
  // ids leave the recent ids (under write_mu_, after waiting appends).
  absl::Status CopyMovingRows(const HourKey& key, int64_t relied, const MovingRows& moving)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) ABSL_LOCKS_EXCLUDED(write_mu_);
  // The body of one copy transaction: rows [next, end), the watermark (finished when `last`),
  // the keyed generation recording `relied`.
  absl::Status InsertMovingChunk(const HourKey& key, const MovingRows& moving, size_t next,
                                 size_t end, bool last, int64_t relied)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // Deletes the copied recent rows by seq range (`seq_marks`, from moved_seq on), in
  // transactions of the writer between which appends go first.
  absl::Status DeleteMovedRows(const HourKey& key, int64_t moved_seq,
                               const std::vector<int64_t>& seq_marks)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) ABSL_LOCKS_EXCLUDED(write_mu_);
  // The rows of a move phase's next transaction, from the rows and WAL pages of the last one
  // (`wrote`): with bound_move_wal_, aimed at half of wal_autocheckpoint_pages, growing at most
  // fourfold a transaction, within [floor, ceiling]. No lock.
  size_t NextChunkRows(size_t rows_done, int64_t wrote, size_t floor, size_t ceiling) const;
  // True when no append waits for write_mu_ (a move's next step waits for it).
  absl::Condition AppendsDone();
  absl::Status RunInTransaction(const std::function<absl::Status()>& body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Under Durability::kNormal, makes the database's (or the keyed file's) commits so far
  // durable (WalCheckpointer::Sync of database_wal_ or keyed_wal_). A transaction of one file
  // that relies on a commit of the other runs after it (docs/storage.md, invariant 11): a move's
  // first keyed copy after the database's appends it copies, a delete of moved rows after their
  // keyed copy, DeleteMetric's and retention's keyed deletes after their database deletes,
  // retention's counts after its keyed deletes. Errors: as SqliteError (the fsync's code).
  absl::Status SyncDatabaseCommits() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Raises the database's generation (keyed_file.db_generation; sqlite_keyed_file.h,
  // "Generations"), in a transaction of its own, when the database committed anything since the
  // last raise: a keyed transaction that relies on what the database committed so far records
  // db_generation_ afterwards. Errors: as SqliteError (nothing raised).
  absl::Status BumpDatabaseGeneration() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status SyncKeyedCommits() ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // A transaction of the keyed file's writer; checkpoints its WAL after the commit.
  absl::Status RunInKeyedTransaction(const std::function<absl::Status()>& body)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // Deletes the keyed rows of `metric_id` with event_time < cutoff, batch_rows per
  // transaction, then their watermarks. Returns the rows deleted.
  absl::StatusOr<int64_t> DeleteExpiredKeyed(int64_t metric_id, int64_t cutoff, int64_t batch_rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_);
  // Deletes the counts of `metric_id` with event_time < cutoff, batch_rows keys per
  // transaction, each with its counter_chunks and first_counts rows in the same transaction (a
  // key's chunks never outlive its counts row, which ReadCounts would refuse as DATA_LOSS).
  // Returns the counts rows deleted.
  absl::StatusOr<int64_t> DeleteExpiredCounts(int64_t metric_id, int64_t cutoff, int64_t batch_rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) ABSL_LOCKS_EXCLUDED(write_mu_);
  // Deletes, batch_rows per transaction, the rows of `table` (keyed by metric_id, event_time,
  // then `key`) of `metric_id` with event_time < cutoff; `after_last` runs inside the writer lock
  // right after the transaction that deleted the last of them. Returns the rows deleted.
  absl::StatusOr<int64_t> DeleteExpired(const char* table, const char* key, int64_t metric_id,
                                        int64_t cutoff, int64_t batch_rows,
                                        const std::function<void()>& after_last)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(move_mu_) ABSL_LOCKS_EXCLUDED(write_mu_);
  void MoverLoop() ABSL_LOCKS_EXCLUDED(write_mu_);
  // ReadCounts inside its read transaction (sqlite_read.cc): the counts rows, then their
  // chunks, deltas and window firsts.
  absl::StatusOr<std::vector<CountRow>> ReadCountsLocked(int64_t metric_id, int64_t start_seconds,
                                                         int64_t end_seconds)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  // The count rows of a statement's key columns, by (version, event time, labels).
  class CountRowIndex;
  // The counts rows (n, counter 0) of the metric's hours [start, end).
  absl::StatusOr<std::vector<CountRow>> ReadCountRows(int64_t metric_id, int64_t start_seconds,
                                                      int64_t end_seconds)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  // Adds the counter_chunks rows of those hours to `rows` (DATA_LOSS for a chunk without
  // counts or out of range).
  absl::Status AddCounterChunks(int64_t metric_id, int64_t start_seconds, int64_t end_seconds,
                                CountRowIndex& index, std::vector<CountRow>& rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  // Adds the counter_deltas rows, merged once per row and window (DATA_LOSS as above).
  absl::Status AddCounterDeltas(int64_t metric_id, int64_t start_seconds, int64_t end_seconds,
                                CountRowIndex& index, std::vector<CountRow>& rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  // Adds the first_counts rows (the windows' firsts' n and counters).
  absl::Status AddFirstCounts(int64_t metric_id, int64_t start_seconds, int64_t end_seconds,
                              CountRowIndex& index, std::vector<CountRow>& rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  absl::StatusOr<std::vector<StoredDesign>> ReadDesigns(int64_t metric_id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);

  absl::Mutex write_mu_;
  sqlite3* write_db_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  std::unique_ptr<WriteStatements> write_ ABSL_GUARDED_BY(write_mu_);
  absl::flat_hash_map<std::string, int64_t> labelset_ids_ ABSL_GUARDED_BY(write_mu_);
  int64_t max_label_values_ = kDefaultMaxLabelValues;
  int64_t max_label_keys_ = kDefaultMaxLabelKeys;
  KnownLabelsets known_labelsets_;  // (metric, labels) whose values are in label_values
  RecentHours recent_ ABSL_GUARDED_BY(write_mu_);
  int64_t next_seq_ ABSL_GUARDED_BY(write_mu_) = 1;
  int64_t max_recent_reports_ = 0;
  // The checkpoints of write_db_'s WAL, in the WAL hook of every commit (When::kInCommit), its
  // counts (Checkpoints()) and its commits since the last sync under kNormal; every commit of
  // write_db_, hence every call, holds write_mu_, the database's writer lock.
  std::unique_ptr<WalCheckpointer> database_wal_ ABSL_GUARDED_BY(write_mu_);
  // The database's generation (keyed_file.db_generation), and database_wal_'s commits() when it
  // was last raised (-1 at open: a commit may have come since).
  int64_t db_generation_ ABSL_GUARDED_BY(write_mu_) = 0;
  int64_t commits_at_bump_ ABSL_GUARDED_BY(write_mu_) = -1;
  bool background_moves_ = true;
  size_t move_chunk_rows_ = kMoveChunkRows;
  bool bound_move_wal_ = true;
  bool stop_ ABSL_GUARDED_BY(write_mu_) = false;
  int wal_checkpoint_pages_ = 10000;  // SqliteOptions::wal_autocheckpoint_pages, at least 1
  // Appends waiting for write_mu_: a move's next chunk waits for them (MoveHour).
  std::atomic<int> appends_waiting_{0};
  // Appends that have taken write_mu_ so far: a background move that saw one since its last
  // transaction pauses before its next (MoveHour).
  std::atomic<int64_t> appends_started_{0};

  // Moves read the metric-hour in key order on their own connection, so neither appends nor
  // queries wait for the sort.
  absl::Mutex move_mu_ ABSL_ACQUIRED_BEFORE(write_mu_);
  sqlite3* move_db_ ABSL_GUARDED_BY(move_mu_) = nullptr;
  // The keyed file's writer (moves, retention, DeleteMetric) and its statements.
  struct MoveStatements;
  sqlite3* keyed_db_ ABSL_GUARDED_BY(move_mu_) = nullptr;
  std::unique_ptr<MoveStatements> move_ ABSL_GUARDED_BY(move_mu_);
  // The keyed file's last committed generation (sqlite_keyed_file.h, "Generations").
  int64_t keyed_generation_ ABSL_GUARDED_BY(move_mu_) = 0;
  // The checkpoints of keyed_db_'s WAL, after each keyed transaction (RunInKeyedTransaction,
  // the legacy copy's: When::kAfterTransaction), and its commits since the last sync under
  // kNormal; every commit of keyed_db_, hence every call, holds move_mu_, the keyed file's
  // writer lock (Checkpoints() reads largest_wal_pages() without it).
  std::unique_ptr<WalCheckpointer> keyed_wal_ ABSL_GUARDED_BY(move_mu_);
  // Appends' lookups in the keyed file (find_report, hour_has_reports), each statement its own
  // read transaction, so each sees every committed move.
  sqlite3* keyed_lookup_db_ ABSL_GUARDED_BY(write_mu_) = nullptr;
  std::string keyed_path_;
  uint64_t keyed_device_ = 0;
  uint64_t keyed_inode_ = 0;
  std::optional<DatabaseLock> keyed_lock_;  // destroyed after SQLite has closed the file
  std::thread mover_;
  // The writer lock; destroyed last, after SQLite has closed the file (see database_lock.h).
  std::optional<DatabaseLock> lock_;
  std::string path_;
  uint64_t file_device_ = 0;  // st_dev and st_ino of the database file when it was opened
  uint64_t file_inode_ = 0;

  // The last write failure Health() reports (OK: none); write_failed_ mirrors !ok() so that a
  // successful append checks it without the lock.
  absl::Mutex health_mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  absl::Status write_failure_ ABSL_GUARDED_BY(health_mu_);
  std::atomic<bool> write_failed_{false};

  absl::Mutex read_mu_;
  sqlite3* read_db_ ABSL_GUARDED_BY(read_mu_) = nullptr;
  std::unique_ptr<ReadStatements> read_ ABSL_GUARDED_BY(read_mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_H_
