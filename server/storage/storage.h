// The storage interface of the collector: metrics, their immutable design versions, reports
// (deduplicated by report id) and the counts that queries read.
//
// Implementations: SqliteStorage (production; sqlite_storage.h), PostgresStorage
// (postgres/postgres_storage.h) and MemoryStorage (tests; memory/memory_storage.h).
//
// Storage does not know kinds of report (yes/no, categorical, numeric): a report is its counter
// increments (ReportRow.counters, the mechanism's CounterIncrements, common/mechanism.h), and the
// counts are per (design version, event time, label set) n and the summed counter vector
// (CountRow.counters), summed in the same transaction as the deduplication. Only the mechanism
// (server/core via common/mechanism.h) gives the counters a meaning. All implementations are
// safe for concurrent use from multiple threads.
#ifndef DENIABLE_SERVER_STORAGE_STORAGE_H_
#define DENIABLE_SERVER_STORAGE_STORAGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/any_invocable.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deniable/common/mechanism.h"

namespace deniable::server {

// One immutable design version of a metric.
struct StoredDesign {
  uint32_t version = 0;              // 1, 2, ...
  std::string parameters;            // serialized deniable.v1.DesignParameters
  double a = 0;                      // P(r = 1 | x = 1)
  double b = 0;                      // P(r = 1 | x = 0)
  int64_t created_time_seconds = 0;  // Unix seconds
};

struct StoredMetric {
  int64_t id = 0;  // assigned by the storage
  std::string name;
  std::string description;
  int64_t created_time_seconds = 0;
  uint32_t time_precision_seconds = 3600;
  uint32_t min_reports = 0;  // 0: the server's default
  // Seconds; devices send at most one report per period (a multiple of time_precision_seconds).
  uint32_t reporting_period_seconds = 86400;
  int randomization = 1;              // a deniable.v1.Randomization value, never UNSPECIFIED
  std::vector<StoredDesign> designs;  // ascending by version, never empty
  // A categorical metric's category names (k of them, in index order); empty for yes/no.
  std::vector<std::string> categories;
  // Retention (ApplyRetention): reports older than this many days are dropped; 0 keeps
  // everything. At most kMaxRetentionDays.
  uint32_t retention_days = 0;
  // kRetentionKeepCounts or kRetentionDropCounts (deniable.v1.RetentionPolicy values).
  int retention_policy = 1;
  // Devices send no window flags for this metric (deniable.v1.Metric.window_firsts_off).
  bool window_firsts_off = false;
  // Each device reports this metric once ever (deniable.v1.Metric.reporting_once).
  bool reporting_once = false;
};

// StoredMetric.retention_policy: DROP_REPORTS_KEEP_COUNTS drops only the reports (estimates over
// any range stay as they were); DROP_REPORTS_AND_COUNTS drops the counts of the same event times
// too (estimates over the retained window stay exact; older ranges have no data).
inline constexpr int kRetentionKeepCounts = 1;  // deniable.v1.DROP_REPORTS_KEEP_COUNTS
inline constexpr int kRetentionDropCounts = 2;  // deniable.v1.DROP_REPORTS_AND_COUNTS
inline constexpr uint32_t kMaxRetentionDays = 36500;

// What one ApplyRetention run may drop.
struct RetentionOptions {
  int64_t now_seconds = 0;  // Unix seconds: the server's clock (tests pass a fake one)
  // Reports whose event time is less than this many seconds before now are never dropped: the
  // ingestor's --max_report_age_seconds, within which a re-sent report must still be recognised
  // as a duplicate (older ones are refused before storage, so their ids are no longer needed).
  int64_t dedup_window_seconds = 0;
  // Rows deleted per transaction: appends wait at most for one such transaction.
  int64_t batch_rows = 10000;
};

// The reports ApplyRetention dropped for one metric.
struct MetricDropCount {
  int64_t metric_id = 0;
  std::string name;
  int64_t reports = 0;
};

struct RetentionResult {
  int64_t reports_dropped = 0;     // reports deleted (all metrics)
  int64_t count_rows_dropped = 0;  // counts rows deleted (DROP_REPORTS_AND_COUNTS metrics)
  int64_t partitions_dropped = 0;  // PostgreSQL day partitions dropped whole
  int64_t count_rows_folded = 0;   // PostgreSQL count rows of closed hours folded into one shard
  std::vector<MetricDropCount> per_metric;  // metrics with reports dropped

  // Adds `reports` dropped of `metric` to the total and per_metric.
  void Count(const StoredMetric& metric, int64_t reports);
};

// The event time before which ApplyRetention drops `metric`'s reports (and, under
// kRetentionDropCounts, its counts): now - retention_days * 86400, but at most now - the dedup
// window, rounded down to a multiple of the metric's reporting period (periods are aligned to the
// Unix epoch), so that a period is dropped whole and every period left keeps all its reports.
// INT64_MIN when the metric keeps everything (retention_days 0).
int64_t RetentionCutoff(const StoredMetric& metric, const RetentionOptions& options);

// Checks retention settings: days at most kMaxRetentionDays, policy kRetentionKeepCounts or
// kRetentionDropCounts. Errors: INVALID_ARGUMENT naming "retention_days" or "retention_policy".
absl::Status CheckRetention(uint32_t days, int policy);

using ReportId = std::array<uint8_t, 16>;

// A validated report, ready to store. Carries no device identifier and no address.
struct ReportRow {
  int64_t metric_id = 0;
  uint32_t design_version = 0;
  ReportId report_id{};
  int64_t event_time_seconds = 0;  // already rounded to the metric's precision
  std::string labels;              // canonical "k1=v1,k2=v2" sorted by key, or empty
  // What the report adds besides 1 to n: 1 to each counter j listed (CounterIncrements::ones of
  // its design version's mechanism: ascending, distinct, each < the layout's coordinates; empty
  // when it adds to none, e.g. a yes/no "no" or an OUE report of zeros). Inline for a few
  // counters, so a yes/no report costs no allocation. Each j < deniable::kMaxCounterLayoutLength
  // (common/mechanism.h).
  absl::InlinedVector<uint32_t, 8> counters;
  // The report's window flags (calendar_windows.h: kFirstInDay | kFirstInWeek | kFirstInMonth);
  // -1 when unknown (an older SDK, or a metric with the flags off): never counted as a first.
  int window_firsts = -1;
};

// A report the caps on labels refused (label_values.h): `key`, a label of the report, already has
// max_values distinct values of its metric, none of them the report's; or (new_key) the metric
// already has max_keys distinct keys, none of them `key`.
struct LabelValueRefusal {
  size_t row = 0;  // the report's index in its batch (the span passed to the append)
  int64_t metric_id = 0;
  std::string key;
  int64_t max_values = 0;  // the caps in force (--max_label_values, --max_label_keys)
  int64_t max_keys = 0;
  bool new_key = false;
};

// The reports of one metric in an AppendResult.
struct MetricAppendCount {
  int64_t metric_id = 0;
  int64_t accepted = 0;
  int64_t duplicates = 0;
};

struct AppendResult {
  int64_t accepted = 0;    // new reports stored and counted
  int64_t duplicates = 0;  // reports whose (metric, event time, id) was stored before
  // The same split by metric, one entry per metric of the batch (in no set order); the sums
  // of its accepted and duplicates equal the two totals above (server metrics and the
  // AdminService read them, docs/operations.md). Small: a batch holds few metrics.
  std::vector<MetricAppendCount> per_metric;
  // Metrics of the batch that no longer existed when the append's transaction ran (deleted
  // after the batch was validated, by this collector or another on the same database): their
  // rows were neither stored nor counted, and are in neither total above. Distinct ids, in no
  // set order. The caller rejects those reports with NOT_FOUND (Ingestor). The check runs in
  // the append's own transaction, so a metric deleted concurrently is either deleted with the
  // batch's rows or listed here.
  std::vector<int64_t> missing_metrics;
  // Reports refused by the caps on distinct label values and keys (label_values.h), ascending by
  // row: not stored, not counted, in neither total above. Decided in the append's own transaction,
  // so two collectors on one database never both admit a value past the cap. The caller rejects
  // each with INVALID_ARGUMENT, permanent (Ingestor).
  std::vector<LabelValueRefusal> label_refusals;

  // Whether `metric_id` is in missing_metrics.
  bool IsMissing(int64_t metric_id) const {
    for (int64_t id : missing_metrics) {
      if (id == metric_id) return true;
    }
    return false;
  }

  // Counts one report of `metric_id`, stored now or a duplicate, in the totals and per_metric.
  void Count(int64_t metric_id, bool duplicate) {
    ++(duplicate ? duplicates : accepted);
    for (MetricAppendCount& m : per_metric) {
      if (m.metric_id == metric_id) {
        ++(duplicate ? m.duplicates : m.accepted);
        return;
      }
    }
    per_metric.push_back({metric_id, duplicate ? 0 : 1, duplicate ? 1 : 0});
  }
};

// A counter vector stored sparsely: the non-zero counters as (j, count) pairs, ascending by j, so
// that a count row of a large layout (a sketch of 2^21 counters) costs what its reports touched.
// A value type; thread-compatible (const methods may be called concurrently).
class SparseCounters {
 public:
  using Entry = std::pair<uint32_t, int64_t>;

  SparseCounters() = default;
  // From dense counters (index j = counter j; zeros are left out).
  static SparseCounters FromDense(absl::Span<const int64_t> dense);

  // Counter j's count; 0 when it has none.
  int64_t At(uint32_t j) const;
  // Adds `count` to counter j. A count of 0 changes nothing; a sum that reaches 0 drops the
  // entry. O(1) when j is at least the largest index held (the storages add in ascending
  // order), else O(size()).
  void Add(uint32_t j, int64_t count);
  // Adds every counter of `other` (a merge, O(size() + other.size())).
  void AddAll(const SparseCounters& other);

  bool empty() const { return entries_.empty(); }
  // The number of non-zero counters.
  size_t size() const { return entries_.size(); }
  // The largest index held plus one (0 when empty): the dense length.
  uint32_t DenseLength() const { return entries_.empty() ? 0 : entries_.back().first + 1; }
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + entries_.size(); }
  // The dense vector [count of 0 .. count of DenseLength() - 1] (tests, messages).
  std::vector<int64_t> Dense() const;
  // "j:count,j:count" ascending, for messages.
  std::string ToString() const;

  friend bool operator==(const SparseCounters& a, const SparseCounters& b) {
    return a.entries_ == b.entries_;
  }
  friend bool operator!=(const SparseCounters& a, const SparseCounters& b) { return !(a == b); }

 private:
  absl::InlinedVector<Entry, 2> entries_;
};

// Counts of reports sharing a design version, event time and label set.
struct CountRow {
  uint32_t design_version = 0;
  int64_t event_time_seconds = 0;
  std::string labels;
  int64_t n = 0;
  // counters.At(j) = reports of this row that added 1 to counter j (ReportRow::counters): the
  // mechanism's y_j (common/mechanism.h CounterLayout). Only the non-zero counters are held: a
  // read costs what the reports touched, not the layout's length.
  SparseCounters counters;
  // The same counts over the reports of the row that were their device's first in the UTC day
  // (firsts[0]), ISO week (firsts[1]) and calendar month (firsts[2]) of the metric
  // (ReportRow::window_firsts).
  struct Firsts {
    int64_t n = 0;
    SparseCounters counters;
  };
  std::array<Firsts, 3> firsts;
};

// Whether a report with these counter increments (ReportRow::counters, ascending) adds 1 to
// counter 0: the stored bit (reports.bit) and its share of counts.counter0.
inline bool AddsToCounter0(absl::Span<const uint32_t> counters) {
  return !counters.empty() && counters[0] == 0;
}

// counters[j], or 0 when j is past the end (the query layer's dense sums).
int64_t CounterAt(const std::vector<int64_t>& counters, size_t j);
// counters.At(j) (a CountRow's counters).
inline int64_t CounterAt(const SparseCounters& counters, size_t j) {
  return counters.At(static_cast<uint32_t>(j));
}

// The window-first counts one stored report adds, the one rule every backend (memory, SQLite,
// PostgreSQL) counts them by: for each window w (0 day, 1 week, 2 month: CountRow::firsts[w])
// whose bit 1 << w is set in `window_firsts` (ReportRow::window_firsts; <= 0 adds nothing), in
// order, calls add(w, -1) for the window's n and then add(w, j) for each counter increment j of
// `counters` (each < kMaxCounterLayoutLength, so it fits an int). Thread-compatible (no state).
void ForEachWindowFirst(int window_firsts, absl::Span<const uint32_t> counters,
                        absl::FunctionRef<void(int window, int counter)> add);

// Adds one report's window firsts (ForEachWindowFirst) to `row.firsts` (for storage
// implementations that count in memory).
void AddWindowFirsts(CountRow* row, int window_firsts, absl::Span<const uint32_t> counters);

// Adds `count` to counter j of `counters`, growing it as needed (the queries' dense sums). A
// zero count past the end leaves the vector as it is.
void AddCounter(std::vector<int64_t>* counters, size_t j, int64_t count);
// counters->Add(j, count) (the storages' count rows).
inline void AddCounter(SparseCounters* counters, size_t j, int64_t count) {
  counters->Add(static_cast<uint32_t>(j), count);
}

// reports.bit (SQLite, both files): bit 0 (value 1) is counter 0 (AddsToCounter0); bit 1
// (value 2) says that reports.support holds the sparse form (EncodeCounters) rather than a
// bitmap (rows written before the sparse form, which still decode).
inline constexpr int64_t kStoredBitCounter0 = 1;
inline constexpr int64_t kStoredBitSparse = 2;

// The stored form of a report's counter increments (SQLite's reports.bit and reports.support):
// `bit` = kStoredBitCounter0 when counter 0 is among them, plus kStoredBitSparse when `support`
// is set; `support` is nullopt when the increments are at most counter 0 (the bit holds it),
// else the sparse form: every index (counter 0 included) as LEB128 varints, the first index and
// then each difference to the previous one (>= 1). A report costs what it touches: a 2^21-counter
// layout's report of 2 counters takes at most 8 bytes (a bitmap took 256 KiB).
struct StoredCounters {
  int64_t bit = 0;
  std::optional<std::string> support;
};
StoredCounters EncodeCounters(absl::Span<const uint32_t> counters);
// The counters of a stored report from its reports.bit and reports.support: the sparse form
// when bit has kStoredBitSparse; else the bitmap of rows written before it (counter j in byte
// j / 8 under mask 1 << (j % 8)), when there is one; else {0} or {} by bit 0.
// Errors: DATA_LOSS naming `table` when the stored value is malformed (a truncated varint, a
// difference of 0, an index >= kMaxCounterLayoutLength, or a bitmap longer than the layout).
absl::StatusOr<absl::InlinedVector<uint32_t, 8>> DecodeCounters(
    int64_t bit, const std::optional<std::string>& support, absl::string_view table);
// The bitmap's set indices, ascending (rows written before the sparse form).
std::vector<uint32_t> DecodeSupport(absl::string_view bitmap);

// The stored form of StoredMetric.categories: the names joined by ',' ("" for yes/no metrics).
// Category names never contain ',' (metric_registry.h checks [A-Za-z0-9_.:-]{1,32}).
std::string JoinCategories(const std::vector<std::string>& categories);
// JoinCategories' inverse ("" gives no categories).
std::vector<std::string> SplitCategories(absl::string_view joined);

class Storage {
 public:
  virtual ~Storage() = default;

  // Stores a new metric with its first design (metric.designs must hold exactly one, version 1).
  // Returns the metric with its id. Errors: ALREADY_EXISTS if the name is taken; INTERNAL or
  // UNAVAILABLE on storage failure (nothing is written).
  virtual absl::StatusOr<StoredMetric> CreateMetric(StoredMetric metric) = 0;

  // Appends design version `design.version`, which must be one more than the metric's newest.
  // Returns the updated metric. Errors: NOT_FOUND; FAILED_PRECONDITION if the version is not
  // the next one (a concurrent update won); storage errors.
  virtual absl::StatusOr<StoredMetric> AddDesignVersion(absl::string_view name,
                                                        StoredDesign design) = 0;

  // Errors: NOT_FOUND naming the metric.
  virtual absl::StatusOr<StoredMetric> GetMetric(absl::string_view name) = 0;

  // All metrics, ordered by name.
  virtual absl::StatusOr<std::vector<StoredMetric>> ListMetrics() = 0;

  // Appends a batch atomically: either every row is stored (or recognised as a duplicate) and
  // the counts updated, or nothing changes. Returns only once the batch is durable under the
  // storage's durability setting. A row whose (metric_id, event_time_seconds, report_id) is
  // already stored, in the store or earlier in the same batch, is counted once. Rows of a metric
  // that does not exist (any more) are refused, not stored: AppendResult::missing_metrics. A
  // row carrying a label value its metric does not have yet, for a key that already has the
  // storage's max_label_values values (or a new key when the metric has max_label_keys), is
  // refused alone: AppendResult::label_refusals.
  // Errors: INTERNAL / UNAVAILABLE / RESOURCE_EXHAUSTED (disk full) with nothing written; and, on
  // SQLite, UNAVAILABLE when the database file was deleted or replaced under the server (the
  // rows may have been committed to the file that is gone; the batch is not acknowledged).
  virtual absl::StatusOr<AppendResult> AppendReports(absl::Span<const ReportRow> rows) = 0;

  // Appends several batches in ONE transaction: all of them are stored (or recognised as
  // duplicates) and committed together, or nothing changes. Returns one AppendResult per batch,
  // in order; a row repeated in a later batch of the same call counts as that batch's duplicate.
  // Returns only once the transaction is durable (see AppendReports). Used by group commit
  // (group_commit_storage.h) to share one commit among concurrent callers.
  // The default implementation handles a single batch with AppendReports and returns
  // UNIMPLEMENTED for more: callers then append the batches one by one.
  // Errors: as AppendReports, with nothing written for any batch.
  virtual absl::StatusOr<std::vector<AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const ReportRow>> batches);

  // AppendReports without blocking: calls `done` with the result once the batch has committed (or
  // failed), possibly on another thread and possibly before returning. `rows` must stay valid
  // until `done` runs. The default implementation calls AppendReports, then `done` inline;
  // GroupCommitStorage queues the batch for its committer thread.
  using AppendCallback = absl::AnyInvocable<void(absl::StatusOr<AppendResult>) &&>;
  virtual void AppendReportsAsync(absl::Span<const ReportRow> rows, AppendCallback done);

  // The maintained counts of a metric for event times in [start_seconds, end_seconds), one row
  // per (design version, event time, label set), ordered by event time. Reads counts only,
  // never the reports.
  virtual absl::StatusOr<std::vector<CountRow>> ReadCounts(int64_t metric_id, int64_t start_seconds,
                                                           int64_t end_seconds) = 0;

  // Deletes the metric named `name` with all its design versions, reports, counts and label
  // values (label_values.h). The metric goes in one transaction: once it commits, everything of
  // the metric is gone for every reader and writer (its name is free for a new metric); when it
  // fails, nothing changed. Memory and PostgreSQL delete everything in that transaction. SQLite
  // deletes the rows of its keyed reports file (sqlite_keyed_file.h) in a second transaction
  // after the first has committed, as a WAL transaction spans one file only; if that one fails,
  // the call still succeeds (the metric is gone), the rows left are logged
  // (event=delete_metric_keyed_rows_left) and deleted at the next open, and no query counts them
  // meanwhile: their metric id is never given again. Other metrics are untouched. A report
  // appended afterwards with the deleted metric's id (validated against a cached metric) is
  // refused by the append (AppendResult::missing_metrics), and metric ids are never reused, so a
  // later metric never counts it. Callers should still clear their caches of the metric
  // (MetricRegistry::Delete). Errors: NOT_FOUND naming the metric; INTERNAL / UNAVAILABLE on
  // storage failure of the first transaction (nothing deleted).
  virtual absl::Status DeleteMetric(absl::string_view name) = 0;

  // Sets the retention of the metric named `name` (days: 0 keeps everything, at most
  // kMaxRetentionDays; policy: kRetentionKeepCounts or kRetentionDropCounts), in one transaction.
  // Returns the updated metric. Takes effect at the next ApplyRetention. Errors: NOT_FOUND naming
  // the metric; INVALID_ARGUMENT for days or policy out of range; storage errors (nothing
  // changed).
  virtual absl::StatusOr<StoredMetric> SetRetention(absl::string_view name, uint32_t days,
                                                    int policy) = 0;

  // Drops what the metrics' retention says has expired at options.now_seconds: for each metric
  // with retention_days > 0, its reports with event time < RetentionCutoff (stored or recent),
  // and under kRetentionDropCounts its counts (and category support) of the same event times.
  // Reports inside the dedup window are never dropped. Works in transactions of at most
  // options.batch_rows rows, so appends go on between them; an interrupted run leaves a
  // consistent database (each transaction drops whole rows) and the next run goes on. Returns
  // what it dropped. Errors: storage errors (what was committed before stays dropped).
  virtual absl::StatusOr<RetentionResult> ApplyRetention(const RetentionOptions& options) = 0;

  // Whether the storage can take writes now, checked cheaply (no transaction). The server's
  // health service follows it (NOT_SERVING while it fails). The default is always OK.
  // Errors: UNAVAILABLE saying what is wrong (for SqliteStorage: the database file was deleted,
  // replaced or made read-only under the running server).
  virtual absl::Status Health() { return absl::OkStatus(); }
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_STORAGE_H_
