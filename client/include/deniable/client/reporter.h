// The SDK's entry point: answer a metric on the device (yes/no, one of k named categories, or a
// number), send only randomized reports.
//
// Example (see examples/report_app.cc and docs/sdk.md):
//   auto store = deniable::client::OpenSqliteDeviceStore({.path = dir + "/deniable.db"});
//   auto transport = deniable::client::MakeSecureGrpcTransport({.target = "collector:443",
//                                                               .ca_file = "ca.pem"});
//   auto reporter = deniable::client::Reporter::Open(*transport, *std::move(store), {});
//   (*reporter)->Prefetch({"uses_drugs"}, absl::Seconds(5));   // optional: designs up front
//   absl::Status s = (*reporter)->Report("uses_drugs", true);  // randomized, queued, durable
//   s = (*reporter)->Report("vote", "U");                      // a metric with categories
//   s = (*reporter)->ReportValue("load_ms", 183.0);            // a numeric metric
//   s = (*reporter)->ReportString("crash_sig", "oom@render");  // a heavy-hitters metric
//   s = (*reporter)->Flush(absl::Seconds(10));                 // optional: the sender also sends
//
// What leaves the device: for each Report() one randomized bit r (drawn with the metric's
// design, statistics.md section 1), a 16-byte report id from the secure generator, the design
// version, the event time rounded down to the metric's precision (an hour by default) and the
// reporter's public labels. The true answer is passed to the randomizer and dropped; it is
// never queued, logged or sent. Under memoization it is the key of the memo table (see
// device_store.h for why that local table is sensitive).
//
// Metrics with categories (a question with k answers; GetDesignResponse.categories names them):
// Report(metric, category) takes the true category by name (or ReportCategoryIndex by its index
// in the metric's order) and sends one v1::CategoricalReport drawn with the metric's categorical
// design (k-RR, OUE or OLH; common/categorical.h, RandomizeCategory) from the same generator as
// bits (SecureBitGen in production), with `bit` 0. Everything below applies to them unchanged:
// one report per period, the memo, the ledger, the delivery contract and the design
// fingerprint. The true category, like a true bit, goes only to the randomizer and the memo key;
// error messages never repeat a category the app passed.
//
// Numeric metrics (a value in a range [lo, hi] with a unit; GetDesignResponse.range and a
// `numeric` design: 1BitMean or dBitFlip, common/numeric.h): ReportValue(metric, value) clips the
// value to [lo, hi] (counted in MetricLedger::values_clipped and DeliveryStats::values_clipped),
// turns it into a level (ONE_BIT_MEAN: alpha-point rounding to a grid point with an alpha drawn
// once per metric from the generator and kept in the device store; D_BIT_FLIP: its bucket) and
// sends what the mechanism draws for that level: `bit` (ONE_BIT_MEAN) or Report.numeric
// (D_BIT_FLIP, with `bit` 0). The level plays the part of a true category: it is the memo key
// (MEMOIZED: one report drawn per (metric, design version, level), and each distinct level
// spends the design's epsilon once under the same cap), and goes nowhere else. The value itself
// is never stored, logged or sent, and error messages never repeat it. Periods, the ledger, the
// delivery contract and the design fingerprint apply unchanged.
//
// Heavy-hitters metrics (strings over an open dictionary; a `heavy_hitters` design,
// common/heavy_hitters.h): ReportString(metric, value) sends one v1::HeavyHittersReport with its
// `bit`, drawn by the design's mechanism (Mechanism::RandomizeString) for the device's group. The
// group is drawn once per (metric, design version, salt) from the generator
// (Mechanism::DrawDeviceGroup) and kept in the device store. Under MEMOIZED the report is drawn
// once per (metric, design version, value) and kept in the store under a SHA-256 of the value
// (HeavyHittersValueKey in device_store.h), never the value: the same value gives the same
// report in every later period, and each distinct value spends the design's epsilon once under
// the same cap. The value is never stored, logged or sent in clear, and error messages never
// repeat it. Periods, the ledger, the delivery contract and the design fingerprint apply
// unchanged.
//
// One report per period (the contract the server's estimates rely on; docs/sdk.md): every
// metric has a reporting period (GetDesignResponse.reporting_period_seconds; an older server's
// 0 means 86400, a day), with periods aligned to the Unix epoch. The SDK queues at most one
// report per metric and period: the first Report() of a period randomizes and queues it; every
// later Report() of the same metric in that period changes nothing on the wire, returns OK and
// is counted in MetricLedger::reports_repeated_in_period. The answer of the period is the first
// one given in it. The period state lives in the device store (it survives restarts with the
// SQLite store). So within one period the server's n counts devices, not calls.
//
// Longitudinal privacy (statistics.md section 4), chosen per metric by the server
// (GetDesignResponse.randomization):
//   - MEMOIZED (the default): the bit is drawn once per (metric, design version, true value)
//     and stored; every later period's report of that true value sends the same bit. For a
//     metric with categories the report is drawn once per (metric, design version, true
//     category), and each distinct category reported spends the design's epsilon once in the
//     ledger (as each distinct true value does for bits), under the same cap. However
//     long the device reports, the server learns no more than from the first report while the
//     true value stays the same. Remaining leaks: a change of the true value can show (the bit
//     for the other value is drawn independently, so the bits may differ), and a new design
//     version draws again (each spends its epsilon once).
//   - FRESH_PER_PERIOD: a new bit each period, so each period spends the design's epsilon again.
//     The app must cap the total: ReporterOptions::max_epsilon_per_metric. A draw that would
//     take the metric's MetricLedger::epsilon_spent above it is refused (RESOURCE_EXHAUSTED);
//     without a cap (0) Report() on such a metric returns FAILED_PRECONDITION.
//   The ledger (Ledger()) counts reports and epsilon spent per metric under both views.
//
// Delivery contract (docs/sdk.md "Delivery contract" has the table of every status code):
// Report() commits the randomized report to the device store before it returns (durable with
// the SQLite store) and never waits on the network once the metric's design is known. A
// committed report leaves the store only when
//   (a) the collector acknowledged it: stored, or a duplicate of a report it already stored
//       (DeliveryCounters::acknowledged, ::duplicates);
//   (b) the collector rejected that report for good: a SubmitReportsResponse.rejections entry
//       with permanent = true, or a batch of exactly one report rejected whole with a status
//       RetryPolicy::IsPermanentFailure calls permanent (default: INVALID_ARGUMENT)
//       (::dropped_rejected);
//   (b') the collector rejected it as randomized with a design it does not have under that
//       version: a rejection with code FAILED_PRECONDITION (its reason names
//       "design_fingerprint"; see "Design fingerprint" below) (::dropped_design_mismatch);
//   (c) a device-side bound drops it: the queue is full (max_queued_reports; the oldest go
//       first, ::dropped_queue_full) or it is older than max_report_age when its turn to be sent
//       comes (::dropped_too_old).
// Each drop is counted in DeliveryStats and reported through ReporterOptions::log with its
// reason. Everything else is retried, re-sending the same report ids (the server counts each
// id once), with the backoff policy between attempts: every other status code of a whole
// batch (UNAVAILABLE, INTERNAL, UNKNOWN, UNAUTHENTICATED, PERMISSION_DENIED, DATA_LOSS,
// NOT_FOUND, ...), transport errors, and per-report rejections with permanent = false. A
// batch of more than one report rejected whole as permanent (too large for this server, or an
// older server that judges batches whole) is never dropped: it is halved and re-sent, down to
// one report; the batch size grows back (doubling) after each success.
//
// Designs: cached in memory and in the store (so Report() works offline after a restart);
// refreshed in the background when the server lists the metric in stale_metrics, while reports
// keep using the cached version (the server accepts every existing version). A metric never
// seen before is fetched by Report() itself, bounded by first_design_wait; call Prefetch() at
// start-up to keep even that first call off the network.
//
// Design fingerprint (docs/sdk.md): every report carries the GetDesignResponse.design_fingerprint
// of the design its bit was drawn with. A collector whose design of that (metric, version)
// differs (another collector, a recreated database) rejects the report alone with
// FAILED_PRECONDITION. The reporter then drops exactly those reports, counts them in
// DeliveryCounters::dropped_design_mismatch, forgets the metric's cached design and the memo
// entries of that version, and fetches the design again; until it has it, Report() on that
// metric fetches it as for a metric never seen. The dropped answers are never randomized again
// (that would spend their privacy twice); the next Report() draws with the collector's design.
//
// Randomness: Create()/Open() use SecureBitGen (OpenSSL RAND_bytes). CreateForTesting() takes
// any absl::BitGenRef (a seeded engine or absl::MockingBitGen) and must not be used in
// production.
//
// Thread-safe: every method may be called from any number of threads.
#ifndef DENIABLE_CLIENT_REPORTER_H_
#define DENIABLE_CLIENT_REPORTER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/client/device_store.h"
#include "deniable/client/retry_policy.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/client/transport.h"
#include "deniable/common/categorical.h"
#include "deniable/common/clock.h"
#include "deniable/common/design.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"

namespace deniable::client {

// Superseded: the metric's randomization (set on the server, GetDesignResponse.randomization)
// decides how a device randomizes. Kept so that code written for earlier releases compiles;
// ReporterOptions::policy is ignored.
enum class PrivacyPolicy {
  kMemoize,
  kFresh,
};

enum class LogLevel { kInfo, kWarning, kError };

// The implicit copy and move of ReporterOptions copy its deprecated fields (below), and GCC
// reports that at the struct's first line in every file that copies options: the warning is off
// for that line only. Code that sets or reads a deprecated field still gets it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
struct ReporterOptions {
#pragma GCC diagnostic pop
  // The most privacy (epsilon, nats) this device may spend on one metric over its life: a fresh
  // draw of the randomizer (each period of a FRESH_PER_PERIOD metric; each new design version
  // or true value of a MEMOIZED one) that would take MetricLedger::epsilon_spent above it is
  // refused with RESOURCE_EXHAUSTED, and nothing is queued. 0: no cap for MEMOIZED metrics, and
  // FRESH_PER_PERIOD metrics are refused (FAILED_PRECONDITION): fresh randomization only with a
  // cap the app chose. +infinity: no cap. Must be >= 0.
  double max_epsilon_per_metric = 0;
  // true (the contract, see "One report per period" above): at most one report per metric and
  // period. false only for load tests, benchmarks and simulations where each Report() call
  // stands for a different device; estimates then count calls, not devices.
  bool one_report_per_period = true;

  // Superseded by the metric's reporting period and randomization (see above); ignored, kept
  // so that code written for earlier releases compiles (with a deprecation warning).
  ABSL_DEPRECATED(
      "ignored: the metric's randomization decides; use create-metric --randomization on the "
      "server")
  PrivacyPolicy policy = PrivacyPolicy::kMemoize;
  ABSL_DEPRECATED("ignored: use one_report_per_period (one report per metric and period)")
  int64_t max_reports_per_period = 0;
  ABSL_DEPRECATED("ignored: the metric's period decides; use create-metric --reporting_period")
  absl::Duration period = absl::Hours(24);

  // Deadline of each RPC.
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Reports per SubmitReports call (the server accepts up to 10000 by default).
  int max_batch_reports = 1000;
  // Flush(): attempts per batch on a transient error before Flush gives up (the reports stay
  // queued). Used only when retry_policy is null. The background sender retries without limit.
  int max_attempts = 5;
  // How many transient failures one Flush() call tolerates before it returns (the reports stay
  // queued either way), and which whole-batch statuses are permanent (IsPermanentFailure).
  // Cloned per Flush() call; the background sender uses only IsPermanentFailure and never
  // gives up. Null: LimitedErrorCountRetryPolicy(max_attempts - 1).
  std::shared_ptr<const RetryPolicy> retry_policy;
  // The wait after each failure, cloned (and seeded from the reporter's generator) for each
  // run of failures. Null: ExponentialBackoffPolicy(initial_backoff, max_backoff), a uniform
  // draw in [0, initial_backoff * 2^k] with the bound capped at max_backoff (full jitter).
  std::shared_ptr<const BackoffPolicy> backoff_policy;
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // The queue holds at most this many reports; the oldest are dropped (and counted) beyond it.
  int64_t max_queued_reports = 100000;
  // A queued report whose event time (rounded down to the metric's precision) is older than
  // this when its batch is assembled is dropped and counted (DeliveryCounters::dropped_too_old)
  // instead of sent. The default matches the collector's default --max_report_age_seconds,
  // beyond which it would reject the report anyway. InfiniteDuration(): never. > 0.
  absl::Duration max_report_age = absl::Hours(24 * 30);

  // The background sender: every send_interval it sends everything queued (in batches), so
  // reports made within one interval share a call. false: only Flush() and the destructor send.
  bool background_sending = true;
  absl::Duration send_interval = absl::Milliseconds(200);
  // How long Report() may wait to fetch the design of a metric it has never seen. Zero: never
  // wait; Report() returns UNAVAILABLE and the sender fetches the design in the background.
  absl::Duration first_design_wait = absl::Seconds(2);
  // The destructor flushes for at most this long; what is left stays in the store.
  absl::Duration shutdown_drain_timeout = absl::Seconds(2);

  // Public, low-cardinality labels attached to every report (for example {"region", "N"}).
  // Never put identifying or free-text values here: they are sent in the clear. Checked by
  // Open() with the collector's rules (deniable/common/labels.h: at most 4; keys
  // [a-z][a-z0-9_]{0,31}, values [A-Za-z0-9_.:-]{1,32}); Report() may add or override labels
  // per report.
  std::map<std::string, std::string> labels;
  // Receives delivery events (drops with their reason, retries). Called from the sender or the
  // flushing thread; must be thread-safe and must not call back into the Reporter. Messages
  // never contain a true answer. Default: none.
  std::function<void(LogLevel, absl::string_view)> log;
};

// Delivery figures of a reporter (all metrics), read with Reporter::Stats().
struct DeliveryStats {
  int64_t queued = 0;         // reports in the store waiting for an acknowledgement
  DeliveryCounters counters;  // persisted with the store (survive restarts)
  // Since this Reporter was created (not persisted): SubmitReports calls made, calls that
  // failed as a whole (any status but OK), batches halved after a whole-batch permanent
  // rejection, and reports kept after a per-report rejection with permanent = false.
  int64_t send_attempts = 0;
  int64_t failed_attempts = 0;
  int64_t batch_splits = 0;
  int64_t kept_after_rejection = 0;
  // Numeric metrics, all of them: queued reports whose value was outside the metric's range and
  // was clipped to its nearest end (persisted: the sum of MetricLedger::values_clipped).
  int64_t values_clipped = 0;
};

class Reporter {
 public:
  // A reporter over `store` (owned) that randomizes with SecureBitGen and reads the system clock.
  // Errors: INVALID_ARGUMENT naming the option (for example "max_epsilon_per_metric" < 0 or
  // NaN, "max_batch_reports" < 1, or "labels[\"key\"]: value must match ..." for a label the
  // collector would reject).
  static absl::StatusOr<std::unique_ptr<Reporter>> Open(std::shared_ptr<ReportTransport> transport,
                                                        std::unique_ptr<DeviceStore> store,
                                                        ReporterOptions options);
  // Open() with an in-memory store. Invalid options make every Report() return the error.
  static std::unique_ptr<Reporter> Create(std::shared_ptr<ReportTransport> transport,
                                          ReporterOptions options = {});
  // For tests and simulations only: randomness from `gen` (must outlive the reporter; calls to
  // it are serialized by the reporter) and time from `clock` (must outlive the reporter).
  // `store` null means an in-memory store. Invalid options make every Report() return the error.
  static std::unique_ptr<Reporter> CreateForTesting(std::shared_ptr<ReportTransport> transport,
                                                    ReporterOptions options, absl::BitGenRef gen,
                                                    const Clock* clock,
                                                    std::unique_ptr<DeviceStore> store = nullptr);

  // Close(shutdown_drain_timeout) unless Close() was called; logs (ReporterOptions::log) what
  // it leaves queued.
  ~Reporter();

  // Ends the reporter's work: from its first instant every Report(), Flush(), Prefetch() and
  // Categories() returns FAILED_PRECONDITION "reporter: closed" (nothing queued); then it stops
  // the background sender and sends what is queued for at most `timeout` on the calling thread
  // (no design is fetched). Returns OK when the queue is empty, else what Flush() returns
  // (DEADLINE_EXCEEDED at the bound, the last transient failure, the first drop); unsent
  // reports stay in the store for the next Open(). A second call returns OK at once. Pending(),
  // Ledger() and Stats() still work after it. Thread-safe.
  // The exit path (docs/sdk.md "Exit"): a reporter that lives until the process ends (a static,
  // a global, a leaked singleton) must be closed before main() returns or exit() is called,
  // while gRPC is still up; its destructor would otherwise send during static destruction.
  absl::Status Close(absl::Duration timeout);

  // Randomizes `answer` with the metric's design (or takes its memoized bit) and commits the
  // randomized report to the store; OK means it is durable and will be sent. When the metric's
  // report of the current period is already queued, nothing is queued, the call is counted in
  // MetricLedger::reports_repeated_in_period, ReporterOptions::log receives kInfo "metric \"m\":
  // already reported this period; nothing sent", `report_id` is cleared and OK is returned (see
  // "One report per period"): an empty id is how a caller tells that outcome from a queued one.
  // Errors (nothing is queued then): INVALID_ARGUMENT for invalid options;
  // the design fetch's status for a metric never seen (NOT_FOUND, UNAVAILABLE,
  // DEADLINE_EXCEEDED; INVALID_ARGUMENT if the server sent a design the SDK cannot verify);
  // FAILED_PRECONDITION for a FRESH_PER_PERIOD metric without max_epsilon_per_metric;
  // RESOURCE_EXHAUSTED when a draw would exceed max_epsilon_per_metric; the store's error;
  // FAILED_PRECONDITION "reporter: closed" after Close(); UNAVAILABLE when the metric's design
  // was replaced three times while this call ran (the collector disowned it meanwhile).
  // `report_id`, if not null, receives the 16 random bytes that identify the queued report on
  // the server (for delivery tracing; they carry no information about the answer), or is
  // cleared when the call queued nothing.
  absl::Status Report(const std::string& metric, bool answer, std::string* report_id = nullptr);

  // Report() with labels for this report only: `labels` are added to ReporterOptions::labels,
  // a key in both taking the value given here. The merged set is checked with the collector's
  // rules before anything is randomized or queued. Errors: as Report(), and INVALID_ARGUMENT
  // "labels: at most 4 labels ..." / "labels[\"key\"]: ..." (nothing queued, nothing spent).
  // Example: reporter->Report("crashed", true, {{"app_version", "4.2"}});
  absl::Status Report(const std::string& metric, bool answer,
                      const std::map<std::string, std::string>& labels,
                      std::string* report_id = nullptr);

  // Randomizes the true category `category`, one of the metric's category names (case
  // sensitive, GetDesignResponse.categories), with the metric's categorical design, or takes
  // the report memoized for (metric, design version, category), and commits the randomized
  // report to the store, exactly as Report(metric, bool) does for bits (periods, memo, ledger,
  // cap and delivery contract alike). Errors (nothing is queued, nothing is spent): as
  // Report(metric, bool), and INVALID_ARGUMENT "category: ..." when `category` is not one of
  // the metric's categories (the message lists the metric's categories and never repeats the
  // value passed), FAILED_PRECONDITION when the metric is a yes/no metric (report a bool),
  // INVALID_ARGUMENT "labels..." for labels the collector would reject. Report(metric, bool) on
  // a metric with categories returns FAILED_PRECONDITION likewise.
  // Example: reporter->Report("vote", "U");
  absl::Status Report(const std::string& metric, absl::string_view category,
                      std::string* report_id = nullptr);
  absl::Status Report(const std::string& metric, absl::string_view category,
                      const std::map<std::string, std::string>& labels,
                      std::string* report_id = nullptr);
  // The overloads above for a string literal (without these, Report("vote", "U") would convert
  // the pointer to bool and report "yes").
  absl::Status Report(const std::string& metric, const char* category,
                      std::string* report_id = nullptr);
  absl::Status Report(const std::string& metric, const char* category,
                      const std::map<std::string, std::string>& labels,
                      std::string* report_id = nullptr);
  // Report(metric, category) with the category given by its index in the metric's order
  // (GetDesignResponse.categories), 0 <= index < k. Errors: as Report(metric, category), with
  // INVALID_ARGUMENT "category: index must be in [0, k) ..." for an index outside the range.
  absl::Status ReportCategoryIndex(const std::string& metric, int index,
                                   const std::map<std::string, std::string>& labels = {},
                                   std::string* report_id = nullptr);

  // Randomizes the value `value` of a numeric metric (in the metric's unit) and commits the
  // randomized report to the store, as Report(metric, bool) does for bits (periods, memo,
  // ledger, cap and delivery contract alike): the value is clipped to the metric's range [lo, hi]
  // (a clipped value is counted, not refused), rounded to its level (alpha-point rounding for
  // ONE_BIT_MEAN, its bucket for D_BIT_FLIP) and the level's memoized report is sent, or a new
  // one drawn for it (spending the design's epsilon once per distinct level). Errors (nothing
  // is queued, nothing is spent): as Report(metric, bool), and INVALID_ARGUMENT "value: ..."
  // for NaN, INVALID_ARGUMENT "metric: ..." when the metric is not numeric (yes/no or with
  // categories); Report(metric, bool) and Report(metric, category) on a numeric metric return
  // INVALID_ARGUMENT "metric: ..." likewise. Messages never repeat the value.
  // Example: reporter->ReportValue("load_ms", 183.0, {{"app_version", "4.2"}});
  absl::Status ReportValue(const std::string& metric, double value,
                           std::string* report_id = nullptr);
  absl::Status ReportValue(const std::string& metric, double value,
                           const std::map<std::string, std::string>& labels,
                           std::string* report_id = nullptr);

  // Randomizes the string `value` of a heavy-hitters metric (any bytes but NUL, at most the
  // design's max_length bytes; UTF-8 for text) and commits the randomized report to the store,
  // as Report(metric, bool) does for bits (periods, memo, ledger, cap and delivery contract
  // alike): the device's group is the one kept for the metric's design (drawn on first use),
  // and the value's memoized report is sent, or a new one drawn for it (spending the design's
  // epsilon once per distinct value). Errors (nothing is queued, nothing is spent): as
  // Report(metric, bool), and FAILED_PRECONDITION naming the metric's kind ("yes_no",
  // "categorical" or "numeric") when the metric is not a heavy-hitters metric; Report(),
  // ReportCategoryIndex() and ReportValue() on a heavy-hitters metric return
  // FAILED_PRECONDITION naming "heavy_hitters" likewise; INVALID_ARGUMENT "value: ..." for a
  // value longer than max_length or holding a NUL byte (the message gives its length and the
  // limit, or the NUL's offset, never the value). Thread-safe.
  // Example: reporter->ReportString("crash_sig", "oom@render", {{"app_version", "4.2"}});
  absl::Status ReportString(const std::string& metric, absl::string_view value,
                            std::string* report_id = nullptr);
  absl::Status ReportString(const std::string& metric, absl::string_view value,
                            const std::map<std::string, std::string>& labels,
                            std::string* report_id = nullptr);

  // The category names of a metric with categories, in the metric's order, from its design
  // (fetched as Report() fetches it: bounded by first_design_wait); empty for a yes/no metric.
  // Errors: the design fetch's status, as Report().
  absl::StatusOr<std::vector<std::string>> Categories(const std::string& metric);

  // Fetches and caches the designs of `metrics`, each call bounded by `timeout`. Returns the
  // first error (the others are still fetched); FAILED_PRECONDITION after Close().
  absl::Status Prefetch(const std::vector<std::string>& metrics, absl::Duration timeout);

  // Sends queued reports on the calling thread until the queue is empty (OK), `timeout` has
  // passed (DEADLINE_EXCEEDED), or the retry policy is exhausted by transient failures (the last
  // failure's status, for example UNAVAILABLE or UNAUTHENTICATED). Unsent reports stay queued.
  // Reports dropped under the delivery contract (b) or (c) are counted and Flush continues; it
  // then returns the first such drop's status (INVALID_ARGUMENT, NOT_FOUND, ...; the message
  // says "dropped") if the queue emptied. FAILED_PRECONDITION after Close().
  absl::Status Flush(absl::Duration timeout = absl::InfiniteDuration());

  // Reports queued and not yet acknowledged (0 if the store cannot be read).
  size_t pending() const;
  // The privacy ledger, per metric.
  absl::StatusOr<std::map<std::string, MetricLedger>> Ledger() const;
  absl::StatusOr<DeliveryStats> Stats() const;

 private:
  struct CachedDesign {
    uint32_t version = 0;
    Channel channel;
    double epsilon = 0;
    int64_t time_precision_seconds = 3600;
    int64_t period_seconds = 86400;  // the metric's reporting period
    bool fresh_per_period = false;   // FRESH_PER_PERIOD, else MEMOIZED
    bool window_firsts = true;       // send Report.window_firsts (GetDesignResponse)
    bool reporting_once = false;     // one report of the metric ever (GetDesignResponse)
    uint64_t fingerprint = 0;        // GetDesignResponse.design_fingerprint; 0 from old servers
    // Metrics with categories: their names and the categorical design (channel and epsilon
    // above are then the design's support channel (p*, q*) and epsilon).
    std::vector<std::string> categories;
    std::optional<CategoricalDesign> categorical;
    // Numeric metrics: the design (range, edges, mechanism, epsilon) and its mechanism.
    std::optional<NumericDesign> numeric;
    std::shared_ptr<const Mechanism> numeric_mechanism;
    // Heavy-hitters metrics: the design (its salt keys the device's group and the memo) and its
    // mechanism.
    std::optional<HeavyHittersDesign> heavy_hitters;
    std::shared_ptr<const Mechanism> heavy_hitters_mechanism;
    // Stamped from design_generation_ when installed in designs_: a report checks, under mu_,
    // that the design it drew with is still the installed one.
    uint64_t generation = 0;
  };
  // The true answer of one Report() call: a yes/no value, a category by name or by index, a
  // number, or a string (heavy hitters; in `name`).
  struct TrueAnswer {
    enum class Kind { kYesNo, kCategoryName, kCategoryIndex, kValue, kString };
    Kind kind = Kind::kYesNo;
    bool yes = false;
    absl::string_view name;
    int index = -1;
    double value = 0;
    static TrueAnswer YesNo(bool yes) { return {Kind::kYesNo, yes, {}, -1, 0}; }
    static TrueAnswer Name(absl::string_view name) {
      return {Kind::kCategoryName, false, name, -1, 0};
    }
    static TrueAnswer Index(int index) { return {Kind::kCategoryIndex, false, {}, index, 0}; }
    static TrueAnswer Value(double value) { return {Kind::kValue, false, {}, -1, value}; }
    static TrueAnswer String(absl::string_view value) {
      return {Kind::kString, false, value, -1, 0};
    }
  };
  // The memoized draws of one answer in the store: at most one is set; none means a fresh draw.
  struct Memos {
    std::optional<bool> yes_no;
    std::optional<v1::CategoricalReport> category;
    std::optional<v1::Report> numeric;
    std::optional<v1::Report> string;  // heavy hitters: `bit` and `heavy_hitters`
    bool any() const {
      return yes_no.has_value() || category.has_value() || numeric.has_value() ||
             string.has_value();
    }
  };
  // kSplit: a batch was rejected whole as permanent and halved; re-send at once.
  enum class SendOutcome { kEmpty, kSent, kTransient, kPermanent, kSplit };
  // What the collector said of each report of a sent batch (sequences of the store), with the
  // first reason of each kind of rejection.
  struct BatchVerdicts {
    std::vector<int64_t> acknowledged;  // stored or duplicates: removed from the store
    std::vector<int64_t> dropped;       // rejected for good
    std::vector<int64_t> kept;          // rejected for now: sent again later
    std::vector<int64_t> mismatched;    // FAILED_PRECONDITION: a design the collector disowned
    std::vector<std::string> disowned;  // the metrics of `mismatched`
    std::string first_drop, first_kept, first_mismatch;
    absl::StatusCode drop_code = absl::StatusCode::kOk;  // of first_drop
  };

  Reporter(std::shared_ptr<ReportTransport> transport, std::unique_ptr<DeviceStore> store,
           ReporterOptions options, std::unique_ptr<SecureBitGen> secure, absl::BitGenRef gen,
           const Clock* clock, absl::Status options_status);
  static absl::Status ValidateOptions(const ReporterOptions& options);
  // Every Report() overload: labels, design, kind of answer, period, memo, cap, randomize,
  // commit.
  absl::Status ReportAnswer(const std::string& metric, const TrueAnswer& answer,
                            const std::map<std::string, std::string>& extra_labels,
                            std::string* report_id);
  // One attempt of ReportAnswer; sets *design_changed (and queues nothing) when the design was
  // disowned or replaced between its lookup and the commit.
  absl::Status ReportAnswerOnce(const std::string& metric, const TrueAnswer& answer,
                                const std::map<std::string, std::string>& extra_labels,
                                std::string* report_id, bool* design_changed);
  // ReportAnswerOnce's steps, in the order it takes them. The true category's index of
  // `answer` (-1 for yes/no and numeric answers); INVALID_ARGUMENT or FAILED_PRECONDITION for an
  // answer of the wrong kind or out of range (messages never repeat the answer).
  static absl::StatusOr<int32_t> CategoryOf(const std::string& metric, const CachedDesign& design,
                                            const TrueAnswer& answer);
  // Points *period and *history at the metric's entries of periods_ and history_, read from
  // the store's ledger the first time. Errors: the store's.
  absl::Status LoadLedgerCaches(const std::string& metric, std::pair<int64_t, int64_t>** period,
                                std::pair<int64_t, bool>** history)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A numeric value's level: clipped (commit->value_clipped), then rounded with the metric's
  // alpha (ONE_BIT_MEAN: drawn once and kept in the store). Errors: the store's.
  absl::StatusOr<int32_t> NumericLevel(const std::string& metric, const CachedDesign& design,
                                       double value, ReportCommit* commit)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A heavy-hitters metric's group for this device: the one kept for (metric, design version,
  // salt), else drawn from the generator and kept. Errors: the store's.
  absl::StatusOr<uint32_t> HeavyHittersGroup(const std::string& metric, const CachedDesign& design)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The answer's memoized draw (none for FRESH_PER_PERIOD metrics); `value_key` is the
  // heavy-hitters value's HeavyHittersValueKey (empty for the other kinds). Errors:
  // FAILED_PRECONDITION for a FRESH_PER_PERIOD metric without max_epsilon_per_metric; the
  // store's.
  absl::StatusOr<Memos> LookupMemos(const std::string& metric, const CachedDesign& design,
                                    const TrueAnswer& answer, int32_t category, int32_t level,
                                    const std::string& value_key)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A fresh draw against max_epsilon_per_metric. Errors: RESOURCE_EXHAUSTED past the cap; the
  // store's.
  absl::Status CheckEpsilonCap(const std::string& metric, const CachedDesign& design)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Fills commit->report's answer from `memos` or with a fresh draw (then commit->randomized,
  // and the memo entry to store for a MEMOIZED metric). Errors: the mechanism's.
  absl::Status RandomizeInto(const CachedDesign& design, const TrueAnswer& answer, int32_t category,
                             int32_t level, uint32_t group, const std::string& value_key,
                             Memos memos, ReportCommit* commit) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sets the report's metric, design, a fresh id, rounded event time, window flags (after the
  // last report at `last_report_seconds`) and labels.
  void StampReport(const std::string& metric, const CachedDesign& design, absl::Time now,
                   int64_t last_report_seconds, const std::map<std::string, std::string>& labels,
                   v1::Report* report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // options_status_, then FAILED_PRECONDITION once closed.
  absl::Status CheckOpen() const;
  static absl::Status ClosedError();
  // Flush() without the closed check; refresh_designs: fetch stale designs once empty.
  absl::Status Drain(absl::Duration timeout, bool refresh_designs);
  static absl::StatusOr<CachedDesign> ParseDesign(const v1::GetDesignResponse& response);
  absl::StatusOr<CachedDesign> DesignFor(const std::string& metric);
  absl::StatusOr<CachedDesign> FetchDesign(const std::string& metric, absl::Duration timeout);
  // Sends the oldest batch once. REQUIRES: send_mu_ held.
  SendOutcome SendOneBatch(absl::Duration timeout, absl::Status* error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(send_mu_);
  // SendOneBatch's steps. Moves the live reports of `batch` into *request (their sequences into
  // *sequences) and drops those past max_report_age; true when it dropped any (nothing is sent
  // then: the next call assembles a batch of live reports).
  bool DropTooOld(std::vector<QueuedReport> batch, v1::SubmitReportsRequest* request,
                  std::vector<int64_t>* sequences);
  // A call of `size` reports that failed whole with *error: retried (kTransient), halved
  // (kSplit) or, a single report, dropped (kPermanent, *error says so).
  SendOutcome OnBatchFailed(int size, const std::vector<int64_t>& sequences, absl::Status* error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(send_mu_);
  // Sorts the reports of an answered call by the response's rejections. Errors: UNAVAILABLE for
  // a malformed response (an index out of range or repeated); nothing is removed then.
  static absl::StatusOr<BatchVerdicts> JudgeReports(const v1::SubmitReportsRequest& request,
                                                    const std::vector<int64_t>& sequences,
                                                    const v1::SubmitReportsResponse& response);
  // Drops the mismatched (disowning their designs) and the rejected for good, counts the kept;
  // kSent when none, else kPermanent or kTransient with *error saying why.
  SendOutcome ActOnRejections(const BatchVerdicts& verdicts, absl::Status* error);
  // Removes `sequences` (not acknowledged) counting `drops`, and logs `reason`.
  void DropReports(const std::vector<int64_t>& sequences, const DeliveryCounters& drops,
                   const std::string& reason);
  // Logs queue-full evictions made by Report() since the last call.
  void LogQueueFullDrops() ABSL_EXCLUSIVE_LOCKS_REQUIRED(send_mu_);
  std::unique_ptr<BackoffPolicy> NewBackoff();
  void RefreshStaleDesigns();
  void SenderLoop();
  void Log(LogLevel level, const std::string& message) const;

  const std::shared_ptr<ReportTransport> transport_;
  const std::unique_ptr<DeviceStore> store_;
  const ReporterOptions options_;
  const Clock* const clock_;
  const absl::Status options_status_;

  mutable absl::Mutex mu_;  // Report()'s lookup-randomize-commit, the generator, the caches
  std::unique_ptr<SecureBitGen> secure_ ABSL_GUARDED_BY(mu_);  // owned default generator
  absl::BitGenRef gen_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, CachedDesign> designs_ ABSL_GUARDED_BY(mu_);
  // Per metric: the start of the period of its last queued report and the reports queued in it
  // (read from the ledger once, then kept in step with it).
  absl::flat_hash_map<std::string, std::pair<int64_t, int64_t>> periods_ ABSL_GUARDED_BY(mu_);
  // Per metric: the event time of its last queued report (0: none) and whether it ever queued
  // one (read from the ledger once, then kept in step with it): the window flags and
  // reporting_once.
  absl::flat_hash_map<std::string, std::pair<int64_t, bool>> history_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stale_ ABSL_GUARDED_BY(mu_);    // designs to refresh
  std::vector<std::string> missing_ ABSL_GUARDED_BY(mu_);  // designs to fetch in the background
  // Metrics whose cached design the collector disowned (fingerprint mismatch): DesignFor skips
  // the memory and store caches until a fetch succeeds.
  absl::flat_hash_set<std::string> disowned_ ABSL_GUARDED_BY(mu_);
  uint64_t design_generation_ ABSL_GUARDED_BY(mu_) = 0;  // the last CachedDesign::generation
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;  // Close() was called

  absl::Mutex send_mu_;  // one batch in flight at a time, so a batch is never sent twice at once
  // Reports per call now: max_batch_reports, halved on a whole-batch permanent rejection,
  // doubled back after each success.
  int batch_limit_ ABSL_GUARDED_BY(send_mu_) = 1;
  int64_t queue_full_logged_ ABSL_GUARDED_BY(send_mu_) = -1;  // dropped_queue_full last logged
  std::shared_ptr<const RetryPolicy> retry_prototype_;
  std::shared_ptr<const BackoffPolicy> backoff_prototype_;
  mutable absl::Mutex stats_mu_;
  DeliveryStats session_ ABSL_GUARDED_BY(stats_mu_);  // the in-memory fields of DeliveryStats
  std::thread sender_;
};

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_REPORTER_H_
