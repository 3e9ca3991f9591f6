// The scale-out Storage: any number of stateless collectors (deniable-server processes) on one
// PostgreSQL database, each report counted once across all of them (docs/deploy.md).
//
// Schema (postgres_schema.h; created or migrated at Open under an advisory lock, so collectors
// starting together are safe):
//   metrics(id bigserial, name UNIQUE, ...), designs(metric_id, version, ...)
//   reports(metric_id, event_time, report_id uuid, version, bit, labels)
//       PRIMARY KEY (metric_id, event_time, report_id): the deduplication set, in the database.
//       PARTITION BY RANGE (event_time), one partition per UTC day ("reports_YYYYMMDD", created
//       on first use), so retention detaches or drops whole days and the key of the current day
//       stays small and hot.
//   counts(metric_id, event_time, version, labels, shard, n, counter0)
//       one row per key and collector shard: each process adds to its own shard (drawn from the
//       sequence collector_shards at Open, modulo kCountShards), so collectors never wait on
//       one hot row; ReadCounts sums the shards. ApplyRetention folds the shards of closed hours
//       into one row (kFoldedShard), so reads stay one row per hour and key.
//   counter_chunks(..., shard, win, chunk, offsets, sums): counters 1 and up of the summed
//       counter vector (storage.h CountRow::counters; counter 0 is counts.counter0), keyed like
//       counts plus the window (-1: every report; 0, 1, 2: a window's first reports) and the
//       chunk of 1024 counters, the chunk's non-zero sums in two parallel arrays, merged in the
//       append's upsert; first_counts(..., win, counter, count) a window's first reports' n
//       (counter -1) and counter 0 (postgres_counter_sums.h).
//   label_values(metric_id, key, value): each metric's stored label values (label_values.h).
//       An append whose rows carry values not stored yet takes the transaction advisory lock
//       (kLabelValuesLockClass, metric id) of each such metric, in id order, then counts and
//       inserts them in its transaction: collectors admitting values of one metric take turns, so
//       the cap holds across them. Rows whose values are all stored take no lock, nor do new
//       values of a key this collector already found full (refused at once).
//   auth_tokens (PostgresTokenStore), schema_version, sequence collector_shards.
//
// Deleted metrics: AppendBatches first locks the rows of the batch's metrics FOR KEY SHARE in its
// transaction and refuses the rows of a metric that no longer exists (AppendResult::
// missing_metrics), so a collector whose cache still holds a metric another collector deleted
// never stores reports under the dead id; ids (bigserial) are never reused.
//
// Exactly once: AppendBatches runs, in ONE transaction, `INSERT INTO reports ... ON CONFLICT DO
// NOTHING RETURNING` the keys that were new, then adds exactly those rows to the counts. The
// rows reach the INSERT as arrays (`SELECT FROM unnest($1::bigint[], ...)`) for fewer than
// kCopyRows rows, else by COPY into a temporary staging table of the session (ON COMMIT DELETE
// ROWS) and `INSERT ... SELECT FROM report_staging`: the faster way at each size
// (bench/postgres_append_bench.cc; figures in docs/benchmarks.md). Two collectors inserting the
// same id: PostgreSQL makes the second wait for the first's commit and then skip the row, so it is
// counted once whichever commits. Rows are inserted in key order so that two transactions never
// wait on each other in a cycle.
//
// Durability: AppendReports returns after COMMIT, which with PostgreSQL's defaults
// (synchronous_commit=on, fsync=on) survives a crash of the database server.
//
// Connection loss: every call answers UNAVAILABLE while PostgreSQL cannot be reached (the devices
// keep their reports and retry) and the next call reconnects by itself. A COMMIT whose answer was
// lost is reported UNAVAILABLE; the device's retry is then recognised as a duplicate.
//
// Reads: every read is ONE statement (so one round trip and one snapshot, also for the counts
// and the category support together) on a pool of up to kReadConnections sessions of its own
// (postgres_pool.h): queries neither queue behind one another nor behind the writer.
//
// Thread-safe: writes take one of kWriteConnections writing sessions (group commit keeps them
// busy); reads take a connection of the pool.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_STORAGE_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_STORAGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "server/storage/label_values.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/postgres_pool.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct PostgresOptions {
  // libpq URI, e.g. "postgresql://deniable@db.internal:5432/deniable". The password comes from
  // the URI, PGPASSFILE or PGPASSWORD, and is never logged (RedactedConninfo).
  std::string uri;
  // The count shard of this storage; unset: drawn from the sequence collector_shards (one per
  // process). Set only by benchmarks and tests (all collectors on one shard = one counts row per
  // key, the layout the shards replace).
  std::optional<int> shard = std::nullopt;
  // The caps on distinct values of each label key and on distinct label keys, per metric
  // (label_values.h; 0: none).
  int64_t max_label_values = kDefaultMaxLabelValues;
  int64_t max_label_keys = kDefaultMaxLabelKeys;
};

class PostgresStorage : public Storage {
 public:
  // Count shards: a collector adds to shard (its sequence number mod kCountShards).
  static constexpr int kCountShards = 64;
  // The shard ApplyRetention folds the rows of closed hours into (no writer adds to it).
  static constexpr int kFoldedShard = -1;
  // An hour's count rows are folded once its end is this long past (a late report still adds a
  // row in its writer's shard, folded at a later run).
  static constexpr int64_t kFoldAfterSeconds = 2 * 3600;
  // Writing connections of one storage, each with a count shard of its own: group commit
  // (GroupCommitOptions::committers) keeps that many transactions going at once, so PostgreSQL
  // works on one while the collector prepares the next.
  static constexpr int kWriteConnections = 2;
  // Most reading connections of one storage (queries, metric reads, health).
  static constexpr int kReadConnections = 4;
  // Rows from which an append goes through COPY rather than unnest arrays (measured crossover:
  // between 1000 and 3000 rows, docs/benchmarks.md).
  static constexpr size_t kCopyRows = 2000;

  // Connects (kWriteConnections writers, a first reader) and creates or migrates the schema
  // (EnsurePostgresSchema). Errors: INVALID_ARGUMENT for an empty URI; UNAVAILABLE when PostgreSQL
  // cannot be reached; FAILED_PRECONDITION when the database's schema is newer than this server.
  static absl::StatusOr<std::unique_ptr<PostgresStorage>> Open(const PostgresOptions& options);

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
  // Under the session advisory lock kRetentionLockKey (another collector applying retention:
  // returns at once, nothing dropped). First drops whole day partitions of `reports` that hold
  // only expired rows (the day ends at or before the cutoff of every metric with a row in it):
  // their rows counted, then DROP TABLE (a short ACCESS EXCLUSIVE lock on `reports`); then
  // deletes the remaining expired rows batch_rows per transaction (and the counts under
  // kRetentionDropCounts). Last, folds the count rows of every hour that ended
  // kFoldAfterSeconds or more ago into one row per key in kFoldedShard (FoldShards), so a query
  // reads one row per hour whatever the number of collectors that wrote in it.
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionOptions& options) override;
  // A `SELECT 1` on a reading connection (reconnecting if needed). Errors: UNAVAILABLE saying
  // PostgreSQL cannot be reached.
  absl::Status Health() override;

  // Number of stored reports (a full count; for tests and checks, not for queries).
  absl::StatusOr<int64_t> ReportCount();
  // The count shard of this storage's first writer, in [0, kCountShards) (each writer has its
  // own, drawn one after the other).
  int shard() const { return shard_; }

 private:
  PostgresStorage() = default;
  // A writing session with its count shard.
  struct Writer {
    std::unique_ptr<PgConnection> conn;
    int shard = 0;
    // conn->reconnects() when report_staging was made on the session; -1: not made.
    int64_t staging_session = -1;
  };
  // Runs `body` with a writer of its own (waiting while all are busy).
  absl::Status WithWriter(const std::function<absl::Status(Writer&)>& body);
  absl::Status EnsurePartitions(Writer& w, absl::Span<const absl::Span<const ReportRow>> batches);
  // `checked`: the (metric, labels) whose values are all stored once the transaction commits.
  absl::StatusOr<std::vector<AppendResult>> AppendLocked(
      Writer& w, absl::Span<const absl::Span<const ReportRow>> batches,
      std::vector<std::pair<int64_t, std::string>>* checked);
  // What LabelValueAdmission needs for the rows of `batches` whose (metric, labels) are not in
  // known_labelsets_: which of their values are stored, and, for the keys with a value that is
  // not, how many are and how many keys their metric has (read under the metrics' label-values
  // locks, which this takes). Inside
  // AppendLocked's transaction.
  struct LabelValueState {
    absl::flat_hash_set<LabelValueAdmission::Value> known;
    absl::flat_hash_map<std::pair<int64_t, std::string>, int64_t> counts;
    absl::flat_hash_map<int64_t, int64_t> keys;  // distinct keys of those metrics
    // check[b][i]: row i of batch b goes through the admission (its labels were not known).
    std::vector<std::vector<bool>> check;
  };
  absl::StatusOr<LabelValueState> ReadLabelValues(
      Writer& w, absl::Span<const absl::Span<const ReportRow>> batches,
      const absl::flat_hash_set<int64_t>& existing);
  // The ids among the batches' metrics that exist, each row locked FOR KEY SHARE until the end
  // of AppendLocked's transaction on `w`.
  absl::StatusOr<absl::flat_hash_set<int64_t>> LockMetrics(
      Writer& w, absl::Span<const absl::Span<const ReportRow>> batches);
  // INSERT ... ON CONFLICT DO NOTHING RETURNING (metric_id, event_time, report_id) of `rows`, in
  // the given (key) order; `ids` are their uuids as text. Inside AppendLocked's transaction.
  absl::StatusOr<PgResult> InsertReports(Writer& w, absl::Span<const ReportRow* const> rows,
                                         absl::Span<const std::string* const> ids);

  // Drops the day partitions that hold only expired rows (see ApplyRetention).
  absl::Status DropExpiredPartitions(const std::vector<StoredMetric>& metrics,
                                     const RetentionOptions& options, RetentionResult* result)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(retention_mu_);
  // Moves the rows of `table` (counts or counter_chunks, whose chunks are merged) with event_time <
  // cutoff and a shard other than kFoldedShard into kFoldedShard, summed per key, batch_rows rows
  // per statement; each statement deletes and adds in ONE transaction (a data-modifying WITH), so
  // every read sees each count once, before or after. Rows are locked in key order, as appends lock
  // them, so the two never deadlock. Returns the rows moved.
  absl::StatusOr<int64_t> FoldShards(const char* table, int64_t cutoff, int64_t batch_rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(retention_mu_);
  // Deletes rows of `table` of `metric_id` with event_time < cutoff, batch_rows per statement
  // (each its own transaction); returns the rows deleted.
  absl::StatusOr<int64_t> DeleteExpired(const char* table, int64_t metric_id, int64_t cutoff,
                                        int64_t batch_rows)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(retention_mu_);

  std::string uri_;
  // ApplyRetention's own connection (made at its first run), so appends never wait for it.
  absl::Mutex retention_mu_;
  std::unique_ptr<PgConnection> retention_ ABSL_GUARDED_BY(retention_mu_);
  int shard_ = 0;
  absl::Mutex write_mu_;
  std::vector<std::unique_ptr<Writer>> idle_writers_ ABSL_GUARDED_BY(write_mu_);
  absl::Mutex partition_mu_;
  absl::flat_hash_set<int64_t> partition_days_ ABSL_GUARDED_BY(partition_mu_);  // known to exist
  std::unique_ptr<PgPool> reads_;
  int64_t max_label_values_ = kDefaultMaxLabelValues;
  int64_t max_label_keys_ = kDefaultMaxLabelKeys;
  KnownLabelsets known_labelsets_;  // (metric, labels) whose values are in label_values
  // (metric, key) pairs found with max_label_values values: a new value is refused without
  // taking the metric's label-values lock (an identifier sent by many devices does not make
  // every append of the metric wait in line).
  KnownLabelsets full_keys_;
};

// Reads a metric and its designs through `conn` (shared by the storage and the migration).
// Errors: NOT_FOUND naming the metric; storage errors.
absl::StatusOr<StoredMetric> ReadPostgresMetric(PgConnection& conn, absl::string_view name);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_STORAGE_H_
