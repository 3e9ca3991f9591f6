// Debiased prevalence with confidence intervals, read from the maintained counts: over a time
// range (optionally grouped by one label), as a series of time buckets, and as the difference
// between two selections (statistics.md section 3).
//
// Reads only the counts table (one row per metric, hour, design version and label set), never
// the reports, so a query's cost does not grow with the number of reports.
//
// Several design versions in one selection: each version gets its own unbiased estimate and
// variance; they are combined by inverse-variance weighting (common/combine.h), and the
// interval is the normal (Wald) interval around the combined estimate, clipped to [0, 1]
// (Prevalence.combination = "inverse_variance", method = WALD). A version whose estimated
// variance is 0 (all bits equal) is weighted with the variance at lambda = (y + 1) / (n + 2).
//
// Small groups: a selection with fewer reports than the metric's min_reports (or, when that is
// 0, QueryOptions::default_min_reports) is never estimated: GetPrevalence answers
// FAILED_PRECONDITION with the count needed; groups and series buckets are returned with n only
// and `suppressed` set.
//
// Thread-safe. Does not own its arguments, which must outlive it.
#ifndef DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_
#define DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_

#include <cstdint>
#include <map>

#include "absl/status/statusor.h"
#include "deniable/common/interval.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct QueryOptions {
  // Reports a selection needs before its prevalence is served, for metrics created with
  // min_reports = 0.
  int64_t default_min_reports = 50;
  // Largest number of buckets one GetSeries may span.
  int64_t max_series_buckets = 10000;
};

// Counts of one selection, per design version: version -> (n, yes).
using VersionCounts = std::map<uint32_t, std::pair<int64_t, int64_t>>;

class PrevalenceQuery {
 public:
  PrevalenceQuery(MetricRegistry* registry, Storage* storage, QueryOptions options = {});

  // The prevalence of "yes" for request.metric over [start, end), with `groups` when
  // request.group_by names a label.
  // Errors: NOT_FOUND for an unknown metric; INVALID_ARGUMENT naming "metric",
  // "start_time_seconds", "end_time_seconds", "confidence_level", "method" or "group_by";
  // FAILED_PRECONDITION when the range holds fewer reports than the metric's minimum.
  absl::StatusOr<v1::Prevalence> Get(const v1::GetPrevalenceRequest& request);

  // One prevalence per bucket (hour, day, or week from Monday 00:00 UTC) holding reports.
  // Errors: as Get; INVALID_ARGUMENT when start or end is missing, or the range spans more than
  // max_series_buckets buckets.
  absl::StatusOr<v1::Series> Series(const v1::GetSeriesRequest& request);

  // first - second with the standard error sqrt(se1^2 + se2^2) and a Wald interval. The two
  // selections must be independent: different metrics, or disjoint time ranges of one metric.
  // Errors: as Get for each selection (messages prefixed "first." / "second."); INVALID_ARGUMENT
  // when the selections of one metric overlap.
  absl::StatusOr<v1::Difference> Difference(const v1::GetDifferenceRequest& request);

 private:
  struct Selection;
  // The estimate for one group or bucket, or only its n with `suppressed` below min_reports.
  static absl::StatusOr<v1::Prevalence> EstimateOrSuppress(const Selection& s,
                                                           const VersionCounts& counts);
  absl::StatusOr<Selection> Select(const std::string& metric, int64_t start, int64_t end,
                                   double level, v1::IntervalMethod method);

  MetricRegistry* const registry_;
  Storage* const storage_;
  const QueryOptions options_;
};

// The estimate for `counts` (all design versions of one selection) under `metric`'s designs.
// Fills n, yes_count, yes_share, the estimates, standard error, interval, method, level, design
// (the newest version present), epsilon (the largest of the versions present), versions and
// combination. REQUIRES: counts non-empty with n > 0 in total.
absl::StatusOr<v1::Prevalence> EstimateFromCounts(const MetricInfo& metric,
                                                  const VersionCounts& counts, double level,
                                                  IntervalMethod method);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_
