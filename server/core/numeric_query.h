// The estimates of a numeric metric (issue 28; docs/statistics.md section 9) from its counts:
// Prevalence.numeric.
//
// ONE_BIT_MEAN: the bit is a yes/no question on the scale t = (x - lo)/(hi - lo), so every rule
// of prevalence_query.h applies to it as it is (unbiased estimate, interval method, design
// versions, reporting periods, windows); the mean is lo + (hi - lo) pi_hat with its standard
// error and interval mapped the same way, the total mean * n over the n counted reports (devices
// in one period or window).
//
// D_BIT_FLIP: bucket j is a yes/no question among the reports that sampled it: n_j = s_j, "yes" =
// y_j (the counters [n, s_0 .. s_{k-1}, y_0 .. y_{k-1}] of numeric.h, stored as category support
// j and k + j), through the bucket's channel (a/(a+1), 1/(a+1)), a = e^(eps/2). Per bucket the
// same rules as above give the unbiased share, its standard error and interval, and at the
// per-bucket level of Sidak or Bonferroni the simultaneous interval (as categorical_query.h does
// per category); consistent shares are Norm-Sub of the unbiased ones (a bucket nobody sampled
// counts 0 there, and has NaN estimates and the interval [0, 1]). Quantiles come from that
// histogram (numeric.h: EstimateQuantiles).
//
// Thread-safe (pure functions).
#ifndef DENIABLE_SERVER_CORE_NUMERIC_QUERY_H_
#define DENIABLE_SERVER_CORE_NUMERIC_QUERY_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/v1/query_service.pb.h"
#include "google/protobuf/repeated_field.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"

namespace deniable::server {

// The quantile levels of a request: each in (0, 1); none means 0.5, 0.9 and 0.99.
// Errors: INVALID_ARGUMENT naming "quantiles[i]".
absl::StatusOr<std::vector<double>> QuantileLevels(
    const google::protobuf::RepeatedField<double>& quantiles);

// The Prevalence of numeric `metric` for one selection: `counts` (n and the bit's ones per period
// and version) and `support` (dBitFlip: the counters s_j, y_j as category support). Fills
// `numeric` and the selection-wide fields of EstimateFromPeriods (n, design, epsilon, versions,
// method, estimand, periods, ...). ONE_BIT_MEAN keeps the yes/no fields (the bit on the scale of
// (x - lo)/(hi - lo)); D_BIT_FLIP sets them 0.
// Errors: as EstimateFromPeriods; INVALID_ARGUMENT for a metric that is not numeric; DATA_LOSS for
// counters that contradict each other (y_j > s_j or s_j > n).
absl::StatusOr<v1::Prevalence> EstimateNumericFromPeriods(const MetricInfo& metric,
                                                          const PeriodCounts& counts,
                                                          const PeriodSupport& support,
                                                          const EstimateOptions& options,
                                                          SimultaneousMethod simultaneous,
                                                          std::span<const double> quantiles);

// A suppressed group or bucket of a numeric metric: `numeric` with the range, the mechanism and
// `devices` = n, its estimates NaN and no buckets or quantiles.
void SetSuppressedNumeric(const MetricInfo& metric, v1::Prevalence* p);

// first - second for two numeric selections into `out`: ONE_BIT_MEAN, the difference of the means
// in the values' unit (difference, standard_error = sqrt(se1^2 + se2^2), Wald interval, not
// clipped); D_BIT_FLIP, the difference of each bucket's share in `shares` (category "[lo, hi)")
// with the yes/no fields 0. Errors: INVALID_ARGUMENT "second.metric: ..." when one selection is
// not numeric, the mechanisms differ, or (D_BIT_FLIP) the buckets differ.
absl::Status FillNumericDifference(const v1::Prevalence& first, const v1::Prevalence& second,
                                   v1::Difference* out);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_NUMERIC_QUERY_H_
