// Debiased prevalence with a confidence interval, read from the maintained counts.
//
// Reads only the counts table (one row per metric, hour, design version and label set), never
// the reports, so a query's cost does not grow with the number of reports.
//
// Thread-safe. Does not own its arguments, which must outlive it.
#ifndef DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_
#define DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_

#include "absl/status/statusor.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/storage/storage.h"

namespace deniable::server {

class PrevalenceQuery {
 public:
  PrevalenceQuery(MetricRegistry* registry, Storage* storage);

  // The prevalence of "yes" for request.metric over [start, end) (statistics.md section 3).
  // Errors: NOT_FOUND for an unknown metric; INVALID_ARGUMENT naming "start_time_seconds",
  // "end_time_seconds", "confidence_level" or "method"; FAILED_PRECONDITION when the range holds
  // no reports; UNIMPLEMENTED when the range mixes several design versions (not yet supported).
  absl::StatusOr<v1::Prevalence> Get(const v1::GetPrevalenceRequest& request);

 private:
  MetricRegistry* const registry_;
  Storage* const storage_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_
