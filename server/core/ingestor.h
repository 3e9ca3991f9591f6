// Validates batches of reports, judging each report on its own, and stores the valid ones of a
// batch atomically.
//
// A batch malformed as a whole is rejected whole (nothing stored, the call fails):
//   empty batch, or more than max_batch_reports      INVALID_ARGUMENT "reports: ..."
//   (an unparsable request never reaches the ingestor: gRPC refuses it)
// Each report is then checked on its own. An invalid report becomes a v1::ReportRejection
// (index, code, reason, permanent) in the response, and the valid reports beside it are stored:
//   metric name not matching [a-z][a-z0-9_.-]{0,63}   INVALID_ARGUMENT "reports[i].metric"
//   permanent unknown metric                                   NOT_FOUND "reports[i].metric"
//   retryable design version that the metric does not have     INVALID_ARGUMENT
//   "reports[i].design_version" bit not 0 or 1                                   INVALID_ARGUMENT
//   "reports[i].bit" report id not exactly 16 bytes                   INVALID_ARGUMENT
//   "reports[i].report_id" event time <= 0, not rounded to the metric's precision, in the future
//   beyond max_future_skew, or older than max_report_age    INVALID_ARGUMENT
//   "reports[i].event_time_seconds" (for an import: older than max_import_age, see below)
//   more than 4 labels, malformed key or value INVALID_ARGUMENT
//   "reports[i].labels[...]"
//   design fingerprint set (non-zero) and not the collector's fingerprint of that version
//                                                  FAILED_PRECONDITION
//                                                  "reports[i].design_fingerprint"
//   metric deleted after validation, found by the storage in the append's transaction
//                                                  NOT_FOUND "reports[i].metric: ... was deleted"
//   a label value its metric does not have, for a key that already has the storage's
//   --max_label_values values, or a key it does not have when it has --max_label_keys
//   (label_values.h; decided in the append's transaction)
//                                                  INVALID_ARGUMENT "reports[i].labels[\"key\"]"
// Categorical metrics (metric_registry.h; docs/statistics.md section 5) add, per report:
//   `categorical` absent for a categorical metric, or set for a yes/no one
//                                                  INVALID_ARGUMENT "reports[i].categorical"
//   bit not 0 in a categorical report              INVALID_ARGUMENT "reports[i].bit"
//   report not of its design's mechanism and k (ValidateCategoricalReport; OUE bits not exactly
//   ceil(k / 8) bytes or an unused high bit set)   INVALID_ARGUMENT
//                                                  "reports[i].categorical.<category|bits|hash_a|
//                                                  hash_b|bucket>"
// and a valid one is stored with the categories it supports (ReportRow.supported).
// Every INVALID_ARGUMENT and FAILED_PRECONDITION rejection is permanent (re-sending the same report
// can never succeed); NOT_FOUND is not (the metric may be created, or the database restored,
// later). A batch whose reports are ALL invalid is still answered OK: accepted = duplicates = 0 and
// one rejection per report, so a device drops (or keeps) each report by its own verdict. Messages
// name the field and the offending value (truncated by EchoValue), never a bit.
//
// Forged window flags (docs/security.md "Forged window flags"): a batch sent with a token (token
// id > 0, not an import) may carry at most IngestOptions::max_window_firsts_per_token reports
// flagged first in any one day, week or month per metric (WindowFirstLimiter). A report beyond
// it is rejected alone:
//   RESOURCE_EXHAUSTED "reports[i].window_firsts.<day|week|month>: ..." (permanent: its flags
//   name a window whose budget stays spent), counted by the sink's RecordWindowFirstRefused.
//
// Historical imports (ReportOrigin::kImport; docs/cli.md "Importing historical data"): a batch that
// an analyst imports is judged exactly as above except for the oldest event time accepted, which
// is now - max(max_report_age, max_import_age) instead of now - max_report_age. The future skew,
// validation, fingerprints and deduplication by (metric, event time, report id) are unchanged.
// Who may import is the access policy's business (server/auth/access_policy.h); the ingestor
// only refuses an import batch whole when imports are off:
//   max_import_age zero (the default)             FAILED_PRECONDITION "x-deniable-import: ..."
//
// Thread-safe. Does not own its arguments, which must outlive it.
#ifndef DENIABLE_SERVER_CORE_INGESTOR_H_
#define DENIABLE_SERVER_CORE_INGESTOR_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/echo.h"
#include "server/core/metric_registry.h"
#include "server/core/window_first_limit.h"
#include "server/storage/storage.h"

namespace deniable::server {

// Where a batch comes from: devices (every SubmitReports/StreamReports call, the default) or an
// analyst's historical import (a call carrying the `x-deniable-import: historical` header with
// an analyst token, admitted by AccessPolicy).
enum class ReportOrigin { kDevice, kImport };

struct IngestOptions {
  int max_batch_reports = 10000;                    // reports per SubmitReports call
  absl::Duration max_future_skew = absl::Hours(1);  // tolerated device clock skew
  // Reports whose event time is older than now minus this are rejected (late or replayed
  // batches). Compared with the event time as sent (already rounded down by the device).
  absl::Duration max_report_age = absl::Hours(24 * 30);
  // For imports only (ReportOrigin::kImport): reports back to now minus the larger of this and
  // max_report_age are accepted. Zero (the default): imports are off and every import batch is
  // refused whole with FAILED_PRECONDITION. REQUIRES: >= 0.
  absl::Duration max_import_age = absl::ZeroDuration();
  // StreamReports stores a stream's buffered reports whenever no flush of it is in progress and
  // reads on meanwhile; once this many are buffered during a flush it stops reading until that
  // flush has committed: bounds a stream's memory (server/service/report_stream_reactor.h).
  int stream_flush_reports = 10000;
  // Reports flagged first in one window (day, week, month) per token and metric
  // (WindowFirstLimiter; docs/security.md "Forged window flags"); 0 turns the limit off.
  // Tokenless callers and imports are never limited.
  int64_t max_window_firsts_per_token = 100000;
};

// A validated batch, ready to store.
struct ValidatedBatch {
  std::vector<ReportRow> rows;             // the valid reports, in request order
  std::vector<std::string> stale_metrics;  // metrics reported with an older design version
  // The invalid reports, ordered by index (their position in the request).
  std::vector<v1::ReportRejection> rejections;
  // For each rejection, the name of the metric it names when that is a metric of this server,
  // else "" (an unknown or malformed name is never passed on).
  std::vector<std::string> rejected_metrics;
  // The names of the metrics of `rows`, by metric id.
  std::vector<std::pair<int64_t, std::string>> metric_names;
  ReportOrigin origin = ReportOrigin::kDevice;  // as passed to Ingestor::Validate
  // rows[j] is the request's report row_indices[j].
  std::vector<int> row_indices;
};

// The rejection of report `index` of a batch whose metric `metric` the storage found deleted when
// it stored the batch (AppendResult::missing_metrics): NOT_FOUND "reports[i].metric: metric ...
// was deleted", not permanent, like every NOT_FOUND (docs/sdk.md: a restored backup brings the
// metric back with its id and design fingerprint, and the device's reports count then).
v1::ReportRejection DeletedMetricRejection(int index, absl::string_view metric);

// The rejection of report `index` of a batch that the storage's caps on labels refused
// (AppendResult::label_refusals): INVALID_ARGUMENT "reports[i].labels[\"key\"]: metric \"m\"
// already has N distinct values of label \"key\" (--max_label_values); ..." (or "... already
// has N distinct label keys (--max_label_keys); ..."), permanent.
v1::ReportRejection LabelValueRejection(int index, absl::string_view metric,
                                        const LabelValueRefusal& refusal);

// Receives the ingestor's verdicts on reports, by metric: the server's counters
// (ServerCounters, the `metric` label of /metrics). Only names of metrics of this server are
// passed, so the label's values are bounded by the metrics the server has.
class ReportOutcomeSink {
 public:
  virtual ~ReportOutcomeSink() = default;
  // Reports of `metric` stored now (`accepted`) or recognised as stored before (`duplicates`).
  virtual void RecordStored(absl::string_view metric, int64_t accepted, int64_t duplicates) = 0;
  // One report rejected on its own (a SubmitReportsResponse.rejections entry) with `code`;
  // `metric` as ValidatedBatch::rejected_metrics ("" when the report names no metric of this
  // server).
  virtual void RecordReportRejected(absl::string_view metric, absl::StatusCode code) = 0;
  // Of the reports passed to RecordStored, those that came in a historical import (called right
  // after RecordStored with the same figures).
  virtual void RecordImported(absl::string_view metric, int64_t accepted, int64_t duplicates) = 0;
  // One report of `metric` refused by the cap on label values (also passed to
  // RecordReportRejected as INVALID_ARGUMENT).
  virtual void RecordLabelValueRefused(absl::string_view /*metric*/) {}
  // One report of `metric` refused by the per-token limit on first-in-window reports (also
  // passed to RecordReportRejected as RESOURCE_EXHAUSTED).
  virtual void RecordWindowFirstRefused(absl::string_view /*metric*/) {}
};

class Ingestor {
 public:
  Ingestor(MetricRegistry* registry, Storage* storage, const Clock* clock, IngestOptions options);

  // Validates the batch, stores its valid reports in one transaction and returns once it has
  // committed (at once, without touching storage, when no report is valid). The response lists
  // the rejected reports; accepted + duplicates + rejections_size() = the batch's size.
  // `origin` kImport: an analyst's historical import (see the file comment).
  // Errors: INVALID_ARGUMENT for a batch malformed as a whole (see the file comment);
  // FAILED_PRECONDITION "x-deniable-import: ..." for an import while imports are off; storage
  // errors (UNAVAILABLE when it may pass, DATA_LOSS, INTERNAL for a bug) with nothing
  // acknowledged.
  // `token_id`: the caller's token (0: tokenless), for the limit on first-in-window reports.
  absl::StatusOr<v1::SubmitReportsResponse> Submit(const v1::SubmitReportsRequest& request,
                                                   ReportOrigin origin = ReportOrigin::kDevice,
                                                   int64_t token_id = 0);

  // Submit without blocking, for asynchronous handlers: `done` runs with the response once the
  // batch has committed, or with the error (inline for a batch-wide validation error or a batch
  // with no valid report, else on the storage's thread). `done` must not block. `request` need not
  // outlive the call.
  using SubmitCallback = absl::AnyInvocable<void(absl::StatusOr<v1::SubmitReportsResponse>) &&>;
  void SubmitAsync(const v1::SubmitReportsRequest& request, SubmitCallback done) {
    SubmitAsync(request, ReportOrigin::kDevice, std::move(done));
  }
  void SubmitAsync(const v1::SubmitReportsRequest& request, ReportOrigin origin,
                   SubmitCallback done) {
    SubmitAsync(request, origin, /*token_id=*/0, std::move(done));
  }
  void SubmitAsync(const v1::SubmitReportsRequest& request, ReportOrigin origin, int64_t token_id,
                   SubmitCallback done);

  // Validates the batch without storing it: the valid rows and the rejections.
  // Errors: INVALID_ARGUMENT for a batch malformed as a whole; FAILED_PRECONDITION for an import
  // while imports are off; storage errors from reading a metric.
  absl::StatusOr<ValidatedBatch> Validate(const v1::SubmitReportsRequest& request,
                                          ReportOrigin origin = ReportOrigin::kDevice,
                                          int64_t token_id = 0);

  Storage* storage() const { return storage_; }

  // Where verdicts by metric go; null (the default): nowhere. Set before the first call.
  void set_outcome_sink(ReportOutcomeSink* sink) { sink_ = sink; }
  // Passes a committed append's per-metric counts to the sink, naming each metric by `names`
  // (and, for an import, to RecordImported too).
  void RecordStored(const AppendResult& stored,
                    const std::vector<std::pair<int64_t, std::string>>& names,
                    ReportOrigin origin = ReportOrigin::kDevice) const;
  // Passes one report of `metric` refused by the cap on label values to the sink.
  void RecordLabelValueRefused(absl::string_view metric) const {
    if (sink_ != nullptr) sink_->RecordLabelValueRefused(metric);
  }
  // Passes rejections (and their metrics, parallel) to the sink.
  void RecordRejected(const std::vector<v1::ReportRejection>& rejections,
                      const std::vector<std::string>& metrics) const;
  const IngestOptions& options() const { return options_; }
  // After an append: the rows of `batch` whose metric the storage found deleted
  // (stored.missing_metrics) become DeletedMetricRejection entries of batch->rejections
  // (rejected_metrics ""), and those metrics leave the registry's cache; the rows the cap on
  // label values refused (stored.label_refusals) become LabelValueRejection entries (rejected
  // metrics: the metric's name), each passed to the sink's RecordLabelValueRefused. Rejections
  // are kept in index order.
  void RejectDeleted(const AppendResult& stored, ValidatedBatch* batch) const;
  // Drops the metrics of stored.missing_metrics, named by `names`, from the registry's cache.
  void ForgetDeleted(const AppendResult& stored,
                     const std::vector<std::pair<int64_t, std::string>>& names) const;

 private:
  struct Bounds {
    int64_t latest_allowed = 0;     // newest event time accepted, Unix seconds
    int64_t earliest_allowed = 0;   // oldest event time accepted, Unix seconds
    absl::Duration max_age;         // now - earliest_allowed, for messages
    const char* max_age_name = "";  // "report" or "import", for messages
    int64_t now = 0;                // the clock at validation, Unix seconds
    bool import = false;            // a historical import (ReportOrigin::kImport)
  };
  // One report of a known metric. Errors: INVALID_ARGUMENT naming `field`.
  absl::StatusOr<ReportRow> ValidateReport(const v1::Report& report, const MetricInfo& metric,
                                           absl::string_view field, const Bounds& bounds);

  MetricRegistry* const registry_;
  Storage* const storage_;
  const Clock* const clock_;
  const IngestOptions options_;
  WindowFirstLimiter firsts_limit_;
  ReportOutcomeSink* sink_ = nullptr;
};

// Validates labels and returns their canonical form "k1=v1,k2=v2" sorted by key ("" for none):
// deniable::CanonicalLabels (common/include/deniable/common/labels.h, the rules the SDK checks
// too). Keys match [a-z][a-z0-9_]{0,31}, values [A-Za-z0-9_.:-]{1,32}, at most 4 labels.
// Errors: INVALID_ARGUMENT naming `field` and the label.
absl::StatusOr<std::string> CanonicalLabels(
    const google::protobuf::Map<std::string, std::string>& labels, absl::string_view field);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_INGESTOR_H_
