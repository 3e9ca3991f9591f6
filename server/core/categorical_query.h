// Category shares of a categorical metric from its support counts (docs/statistics.md section 5,
// "What the collector serves").
//
// Each category v is a binary question through the design's support channel (p*, q*)
// (categorical.h: SupportChannel): a report "says yes" to v when it supports v. So every binary
// rule of prevalence_query.h applies to one category as it is: the unbiased estimate, its
// standard error and interval per version, design versions combined by reports (or inverse
// variance), reporting periods combined with weights n_t / N (Minkowski bound), the default
// interval method of the channel. Per category the collector serves that estimate and interval at
// the confidence level, and a simultaneous interval: the same construction at the per-category
// level of Sidak (default) or Bonferroni (categorical_estimate.h: PerCategoryLevel), so that all k
// intervals cover their shares together with probability >= the level. The consistent estimate is
// Norm-Sub of the k unbiased estimates (non-negative, summing to 1).
//
// Thread-safe (pure functions).
#ifndef DENIABLE_SERVER_CORE_CATEGORICAL_QUERY_H_
#define DENIABLE_SERVER_CORE_CATEGORICAL_QUERY_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"

namespace deniable::server {

// The simultaneous method of a request: UNSPECIFIED means Sidak.
// Errors: INVALID_ARGUMENT "simultaneous: unknown simultaneous method N".
absl::StatusOr<SimultaneousMethod> SimultaneousFromProto(v1::SimultaneousMethod method);

// The Prevalence of categorical `metric` for one selection: `counts` (n per period and version)
// and `support` (support counts per period, version and category). Fills shares,
// simultaneous_method, per_category_level, consistent_method, and the selection-wide fields of
// EstimateFromPeriods (n, design, epsilon, versions (with n, a = p*, b = q*, weight), method,
// interval_construction, estimand, periods, ...); the yes/no fields stay 0.
// Errors: as EstimateFromPeriods; INVALID_ARGUMENT for a metric without categories.
absl::StatusOr<v1::Prevalence> EstimateSharesFromPeriods(const MetricInfo& metric,
                                                         const PeriodCounts& counts,
                                                         const PeriodSupport& support,
                                                         const EstimateOptions& options,
                                                         SimultaneousMethod simultaneous);

// first - second per category (unbiased estimates; se = sqrt(se1^2 + se2^2); Wald interval in
// [-1, 1]) into `out`. Errors: INVALID_ARGUMENT "second.metric: ..." when the two have other
// categories.
absl::Status FillShareDifferences(const v1::Prevalence& first, const v1::Prevalence& second,
                                  v1::Difference* out);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_CATEGORICAL_QUERY_H_
