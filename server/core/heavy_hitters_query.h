// The queries of heavy-hitters metrics (common/heavy_hitters_estimate.h): GetTopValues
// (discovery) and GetFrequencies (given candidates). Both read the counts of the metric's newest
// design version in the range (each version hashes with its own salt, so versions do not
// combine; reports of older versions are counted in TopValues.reports_of_older_versions), sum
// them into one sketch and answer from it. A range that is exactly one whole UTC day, ISO week or
// calendar month of a metric whose devices send window flags (window_selection.h) is read from
// the window's first reports: each device active in the window counted once, so
// TopValues.devices is devices, not reports (docs/statistics.md section 11.7). Any other range
// sums every report in it. Thread-safe (the registry and storage are).
#ifndef DENIABLE_SERVER_CORE_HEAVY_HITTERS_QUERY_H_
#define DENIABLE_SERVER_CORE_HEAVY_HITTERS_QUERY_H_

#include "absl/status/statusor.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/storage/storage.h"

namespace deniable::server {

class HeavyHittersQuery {
 public:
  // `registry` and `storage` outlive the query.
  HeavyHittersQuery(MetricRegistry* registry, Storage* storage)
      : registry_(registry), storage_(storage) {}

  // Errors: INVALID_ARGUMENT naming "metric", "start_time_seconds", "end_time_seconds",
  // "confidence_level" or "max_prefixes"; NOT_FOUND (no such metric); FAILED_PRECONDITION
  // naming "metric" (not a heavy-hitters metric) or when a group has no reports yet; storage
  // errors.
  absl::StatusOr<v1::TopValues> Top(const v1::GetTopValuesRequest& request);
  // Errors: as Top, and INVALID_ARGUMENT naming "values" (none, or more than 10 000) or
  // "values[i]" (too long, a NUL byte).
  absl::StatusOr<v1::TopValues> Frequencies(const v1::GetFrequenciesRequest& request);

 private:
  MetricRegistry* registry_;
  Storage* storage_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_HEAVY_HITTERS_QUERY_H_
