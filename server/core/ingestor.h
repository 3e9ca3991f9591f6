// Validates batches of reports and stores them atomically.
//
// Validation (the whole batch is rejected, nothing stored, on the first invalid report):
//   empty batch, or more than max_batch_reports      INVALID_ARGUMENT "reports: ..."
//   unknown metric                                   NOT_FOUND "reports[i].metric: ..."
//   design version that the metric does not have     INVALID_ARGUMENT "reports[i].design_version"
//   bit not 0 or 1                                   INVALID_ARGUMENT "reports[i].bit"
//   report id not exactly 16 bytes                   INVALID_ARGUMENT "reports[i].report_id"
//   event time <= 0, not rounded to the metric's precision, in the future beyond
//   max_future_skew, or older than max_report_age    INVALID_ARGUMENT
//   "reports[i].event_time_seconds" more than 4 labels, malformed key or value INVALID_ARGUMENT
//   "reports[i].labels[...]"
// Messages name the field and the offending value, never a bit.
//
// Thread-safe. Does not own its arguments, which must outlive it.
#ifndef DENIABLE_SERVER_CORE_INGESTOR_H_
#define DENIABLE_SERVER_CORE_INGESTOR_H_

#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct IngestOptions {
  int max_batch_reports = 10000;                    // reports per SubmitReports call
  absl::Duration max_future_skew = absl::Hours(1);  // tolerated device clock skew
  // Reports whose event time is older than now minus this are rejected (late or replayed
  // batches). Compared with the event time as sent (already rounded down by the device).
  absl::Duration max_report_age = absl::Hours(24 * 30);
  // StreamReports buffers validated reports and stores them once this many are pending (and at
  // the end of the stream): bounds a stream's memory and lets small messages share a commit.
  int stream_flush_reports = 10000;
};

// A validated batch, ready to store.
struct ValidatedBatch {
  std::vector<ReportRow> rows;
  std::vector<std::string> stale_metrics;  // metrics reported with an older design version
};

class Ingestor {
 public:
  Ingestor(MetricRegistry* registry, Storage* storage, const Clock* clock, IngestOptions options);

  // Validates the batch, stores it in one transaction and returns once it has committed.
  // Errors: see the file comment; storage errors (INTERNAL, UNAVAILABLE, RESOURCE_EXHAUSTED)
  // with nothing acknowledged.
  absl::StatusOr<v1::SubmitReportsResponse> Submit(const v1::SubmitReportsRequest& request);

  // Submit without blocking, for asynchronous handlers: `done` runs with the response once the
  // batch has committed, or with the error (inline for a validation error, else on the storage's
  // thread). `done` must not block. `request` need not outlive the call.
  using SubmitCallback = absl::AnyInvocable<void(absl::StatusOr<v1::SubmitReportsResponse>) &&>;
  void SubmitAsync(const v1::SubmitReportsRequest& request, SubmitCallback done);

  // Validates the batch without storing it. Errors: see the file comment.
  absl::StatusOr<ValidatedBatch> Validate(const v1::SubmitReportsRequest& request);

  Storage* storage() const { return storage_; }
  const IngestOptions& options() const { return options_; }

 private:
  MetricRegistry* const registry_;
  Storage* const storage_;
  const Clock* const clock_;
  const IngestOptions options_;
};

// Validates labels and returns their canonical form "k1=v1,k2=v2" sorted by key ("" for none).
// Keys match [a-z][a-z0-9_]{0,31}, values [A-Za-z0-9_.:-]{1,32}, at most 4 labels.
// Errors: INVALID_ARGUMENT naming `field` and the label.
absl::StatusOr<std::string> CanonicalLabels(
    const google::protobuf::Map<std::string, std::string>& labels, absl::string_view field);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_INGESTOR_H_
