// The device's local state: the memo table, the queue of reports not yet acknowledged by the
// server, the privacy ledger, delivery counters and the cached designs.
//
// Two implementations: OpenSqliteDeviceStore (a file chosen by the app; survives process death,
// used in production) and MakeMemoryDeviceStore (lost with the process; for simulations and
// tests). The Reporter is the only writer; an app normally only chooses which one to open:
//
//   absl::StatusOr<std::unique_ptr<deniable::client::DeviceStore>> store =
//       deniable::client::OpenSqliteDeviceStore({.path = app_data_dir + "/deniable.db"});
//
// What is stored, and why it is sensitive:
//   - memo table: (metric, design version, true value) -> the randomized bit drawn for it
//     (statistics.md section 4; RAPPOR's permanent randomized response), and for metrics with
//     categories (metric, design version, true category index) -> the randomized
//     v1::CategoricalReport drawn for it. Anyone who reads the table learns which true values
//     or categories this device has reported and their reports, so the file is created with
//     mode 0600 and must stay in the app's private storage. It reveals nothing to the server
//     beyond the reports it already received. (Memoization needs this key: it is the only
//     place a true answer is kept, and only while memoization uses it.)
//   - numeric memo: for numeric metrics (metric, design version, level) -> the randomized answer
//     drawn for it (the ONE_BIT_MEAN bit or the D_BIT_FLIP report), where the level is the
//     value after clipping and rounding (common/numeric.h LevelOf): a grid point or a bucket,
//     as sensitive as a true category. The true value itself is never stored. Beside it, per
//     numeric metric, the alpha of alpha-point rounding (a uniform number drawn once; alone it
//     says nothing about any value).
//   - string memo: for heavy-hitters metrics (metric, design version, value key) -> the
//     randomized answer drawn for the value (its `bit` and v1::HeavyHittersReport). The value
//     itself is never stored: the key is HeavyHittersValueKey, a SHA-256 of the metric, the
//     design version, the design's salt and the value. That hash is not a secret against
//     whoever reads the file: they can hash candidate values and look for them, so this table is
//     as sensitive as a true category. Beside it, per (metric, design version, salt), the
//     device's group (Mechanism::DrawDeviceGroup: drawn once; alone it says nothing about any
//     value).
//   - queue: the randomized v1::Report messages exactly as they will be sent (bit or
//     categorical report, id, design version, fingerprint, rounded time, labels). Never the
//     true answer.
//   - ledger and counters: per-metric numbers of reports and epsilon spent (see MetricLedger).
//   - designs: the last GetDesignResponse per metric, so that Report() works offline after a
//     restart.
//
// One process per store file: two processes sharing a file would both send its queue (the
// server would still count each report once, by id). Implementations are thread-safe.
#ifndef DENIABLE_CLIENT_DEVICE_STORE_H_
#define DENIABLE_CLIENT_DEVICE_STORE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable::client {

// The privacy ledger of one metric on this device. Epsilon is in nats (statistics.md section 2);
// +infinity once a design with unbounded epsilon (for example tails-says-yes) was used.
struct MetricLedger {
  int64_t reports_accepted = 0;      // Report() calls that queued a report
  int64_t reports_acknowledged = 0;  // of those, committed by the server
  // Fresh draws of the randomizer. Memoization: one per (design version, true value) seen;
  // fresh randomization: one per report.
  int64_t randomizations = 0;
  // The privacy spent under the policy in use: the sum of the design's epsilon over the
  // randomizations (sequential composition, statistics.md section 4). Counted when the bit is
  // drawn, whether or not it was later sent (a lost acknowledgement cannot be told apart).
  double epsilon_spent = 0;
  // What the same reports would have spent with fresh randomization: the sum of epsilon over
  // every accepted report. epsilon_spent <= epsilon_if_fresh; the gap is what memoization saved.
  double epsilon_if_fresh = 0;
  // The metric's reporting period (reporter.h, "One report per period"): the start of the
  // period of the last queued report (seconds since the Unix epoch, UTC) and the reports queued
  // in it (1 while the one-report-per-period rule holds).
  int64_t period_start_seconds = 0;
  int64_t reports_this_period = 0;
  // Report() calls that sent nothing because the metric's report of their period was already
  // queued (counted over the device's life, never sent anywhere).
  int64_t reports_repeated_in_period = 0;
  // The event time (seconds since the Unix epoch, UTC, rounded to the metric's precision) of the
  // last queued report; 0 before the first (or in a store written before this field). The next
  // report's window flags (v1::WindowFirsts: first in its UTC day, ISO week, calendar month) are
  // computed from it.
  int64_t last_report_seconds = 0;
  // Numeric metrics: queued reports whose value was outside the metric's range and was clipped
  // to its nearest end (ReportValue). Kept on the device only.
  int64_t values_clipped = 0;
};

// Delivery counters of the device (all metrics), persisted with the queue.
struct DeliveryCounters {
  int64_t acknowledged = 0;  // reports the server committed
  int64_t duplicates = 0;    // of those, ids the server already had (a re-send after a lost ack)
  // Dropped because the server rejected that report for good: a per-report rejection with
  // permanent = true, or a one-report batch rejected whole with INVALID_ARGUMENT.
  int64_t dropped_rejected = 0;
  int64_t dropped_queue_full = 0;  // oldest reports evicted because the queue was full
  int64_t dropped_too_old = 0;     // older than ReporterOptions::max_report_age when sent
  // Dropped because the collector rejected them as randomized with a design it does not have
  // under that version (a per-report rejection FAILED_PRECONDITION, "design_fingerprint"; not
  // counted in dropped_rejected). Their answers are never randomized again.
  int64_t dropped_design_mismatch = 0;
};

// One report waiting in the queue; `sequence` orders the queue (oldest first).
struct QueuedReport {
  int64_t sequence = 0;
  v1::Report report;
};

// What Report() commits in one transaction.
struct ReportCommit {
  v1::Report report;  // the randomized report to queue
  // Set when the bit was freshly drawn under memoization: the memo entry to store.
  struct MemoEntry {
    uint32_t design_version = 0;
    bool true_value = false;
    bool bit = false;
  };
  std::optional<MemoEntry> memo;
  // Set when a categorical report was freshly drawn under memoization: the memo entry to store
  // for (report.metric(), design_version, category), the true category's index.
  struct CategoryMemoEntry {
    uint32_t design_version = 0;
    int32_t category = 0;
    v1::CategoricalReport report;
  };
  std::optional<CategoryMemoEntry> category_memo;
  // Set when a numeric report was freshly drawn under memoization: the memo entry to store for
  // (report.metric(), design_version, level), `level` the value's level (common/numeric.h
  // LevelOf) and `answer` a v1::Report holding only the randomized answer: `bit` (ONE_BIT_MEAN)
  // or `numeric` (D_BIT_FLIP).
  struct NumericMemoEntry {
    uint32_t design_version = 0;
    int32_t level = 0;
    v1::Report answer;
  };
  std::optional<NumericMemoEntry> numeric_memo;
  // Set when a heavy-hitters report was freshly drawn under memoization: the memo entry to store
  // for (report.metric(), design_version, value_key), `value_key` the value's
  // HeavyHittersValueKey (never the value) and `answer` a v1::Report holding only the randomized
  // answer: `bit` and `heavy_hitters`.
  struct StringMemoEntry {
    uint32_t design_version = 0;
    std::string value_key;
    v1::Report answer;
  };
  std::optional<StringMemoEntry> string_memo;
  // A numeric report whose value was clipped to the range: adds 1 to MetricLedger::values_clipped.
  bool value_clipped = false;
  // Ledger increments for report.metric(); period fields as described in MetricLedger.
  bool randomized = false;
  double epsilon = 0;  // the design's epsilon, nats
  int64_t period_start_seconds = 0;
  // The report's event time: becomes MetricLedger::last_report_seconds.
  int64_t report_time_seconds = 0;
  // The queue holds at most this many reports: the oldest are evicted (and counted in
  // DeliveryCounters::dropped_queue_full) when the new one would exceed it. >= 1.
  int64_t max_queued_reports = 1;
};

class DeviceStore {
 public:
  virtual ~DeviceStore() = default;

  // The memoized bit for (metric, design version, true value), or nullopt.
  virtual absl::StatusOr<std::optional<bool>> LookupMemo(const std::string& metric,
                                                         uint32_t design_version,
                                                         bool true_value) = 0;
  // The memoized categorical report for (metric, design version, true category index), or
  // nullopt.
  virtual absl::StatusOr<std::optional<v1::CategoricalReport>> LookupCategoryMemo(
      const std::string& metric, uint32_t design_version, int32_t category) = 0;
  // The memoized answer for (metric, design version, level) of a numeric metric (a v1::Report
  // with only `bit` or `numeric` set), or nullopt.
  virtual absl::StatusOr<std::optional<v1::Report>> LookupNumericMemo(const std::string& metric,
                                                                      uint32_t design_version,
                                                                      int32_t level) = 0;
  // The alpha of alpha-point rounding kept for a numeric metric (in [0, 1)), or nullopt.
  virtual absl::StatusOr<std::optional<double>> LoadNumericAlpha(const std::string& metric) = 0;
  // Durably keeps `alpha` for the metric unless one is kept already (that one stays: alpha is
  // drawn once per device and metric). Not forgotten by ForgetMemo.
  virtual absl::Status SaveNumericAlpha(const std::string& metric, double alpha) = 0;
  // The memoized answer for (metric, design version, value key) of a heavy-hitters metric (a
  // v1::Report with only `bit` and `heavy_hitters` set), or nullopt. `value_key` is the value's
  // HeavyHittersValueKey.
  virtual absl::StatusOr<std::optional<v1::Report>> LookupStringMemo(
      const std::string& metric, uint32_t design_version, const std::string& value_key) = 0;
  // The device's group kept for a heavy-hitters metric's design (metric, design version, salt),
  // or nullopt.
  virtual absl::StatusOr<std::optional<uint32_t>> LoadHeavyHittersGroup(const std::string& metric,
                                                                        uint32_t design_version,
                                                                        uint64_t salt) = 0;
  // Durably keeps `group` for (metric, design version, salt) unless one is kept already (that
  // one stays: the group is drawn once per device and design). Not forgotten by ForgetMemo (a
  // recreated collector draws a new salt, so its design gets a group of its own).
  virtual absl::Status SaveHeavyHittersGroup(const std::string& metric, uint32_t design_version,
                                             uint64_t salt, uint32_t group) = 0;
  // Atomically: stores the memo entry, category, numeric or string memo entry (if any),
  // appends the report, updates the metric's ledger and evicts the oldest reports beyond
  // max_queued_reports. Durable when it returns OK (for the SQLite store: committed and synced).
  // On error nothing changed.
  virtual absl::Status CommitReport(const ReportCommit& commit) = 0;
  // Up to `limit` oldest queued reports, oldest first.
  virtual absl::StatusOr<std::vector<QueuedReport>> PeekOldest(int64_t limit) = 0;
  // Atomically removes the reports with these sequences (those not queued any more are ignored)
  // and adds to the counters; each removed report counts as acknowledged in its metric's
  // ledger when `acknowledged` is true.
  virtual absl::Status RemoveReports(const std::vector<int64_t>& sequences, bool acknowledged,
                                     const DeliveryCounters& counter_increments) = 0;
  // Durably adds one to the metric's MetricLedger::reports_repeated_in_period (creating its
  // ledger row if needed). Nothing else changes.
  virtual absl::Status CountRepeatedReport(const std::string& metric) = 0;
  // Durably deletes the memo entries of (metric, design_version), both true values, every
  // category, every numeric level and every string value: their reports
  // were drawn with a design the collector does not have under that version (design
  // fingerprint mismatch), so the next report draws with the collector's design. Nothing else
  // changes (the ledger keeps the epsilon already spent).
  virtual absl::Status ForgetMemo(const std::string& metric, uint32_t design_version) = 0;
  virtual absl::StatusOr<int64_t> QueueSize() = 0;
  virtual absl::StatusOr<std::map<std::string, MetricLedger>> ReadLedger() = 0;
  virtual absl::StatusOr<DeliveryCounters> ReadCounters() = 0;

  // The cached design response of a metric (a serialized v1::GetDesignResponse), or nullopt.
  virtual absl::StatusOr<std::optional<std::string>> LoadDesign(const std::string& metric) = 0;
  virtual absl::Status SaveDesign(const std::string& metric, const std::string& serialized) = 0;
};

// The key of a value in the string memo: SHA-256 (OpenSSL) over "deniable.hh.memo.v1", then the
// metric's length (4 bytes, little endian) and bytes, the design version (4 bytes, little
// endian), the design's salt (8 bytes, little endian) and the value's bytes; 32 bytes. The value
// cannot be read back from it, but a reader of the store can test a guessed value (see "What is
// stored" above). Pure; thread-safe.
std::string HeavyHittersValueKey(const std::string& metric, uint32_t design_version, uint64_t salt,
                                 absl::string_view value);

// Volatile state for simulations and tests. Thread-safe.
std::unique_ptr<DeviceStore> MakeMemoryDeviceStore();

struct SqliteDeviceStoreOptions {
  // The file; created (mode 0600) if missing. Its directory must exist.
  std::string path = {};
  // true: every CommitReport is synced to disk before it returns (SQLite synchronous=FULL in WAL
  // mode): a report survives power loss. false: synchronous=NORMAL: it survives the death of
  // the process but the last reports may be lost on power loss; several times faster.
  bool sync_every_report = true;
};

// Opens or creates the SQLite store. A store written by an earlier release (schema 1: no
// category_memo table; schema 2: no ledger.last_report_seconds; schema 3: no numeric_memo and
// numeric_alpha tables, no ledger.values_clipped; schema 4: no string_memo and
// heavy_hitters_group tables) is migrated in place when opened: what is missing is added
// (last_report_seconds 0: the next report of each metric is marked first in its day, week and
// month; values_clipped 0) and everything in the file (queue, memo, ledger, counters, designs) is
// kept. Errors: INVALID_ARGUMENT naming "path" when it is empty; UNAVAILABLE when the file cannot
// be opened or created (the message names the path); DATA_LOSS when it is not a device store.
absl::StatusOr<std::unique_ptr<DeviceStore>> OpenSqliteDeviceStore(
    const SqliteDeviceStoreOptions& options);

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_DEVICE_STORE_H_
