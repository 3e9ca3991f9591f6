// Combining the estimates of several design versions (statistics.md section 3; docs/statistics.md).
//
// When one metric is collected under several design versions (say epsilon was changed), each
// version's reports are estimated on their own with that version's channel, and the per-version
// unbiased estimates pi_hat_i with variances v_i are combined by inverse-variance weighting:
//     w_i = 1 / v_i,   pi_hat = sum w_i pi_hat_i / sum w_i,   Var(pi_hat) = 1 / sum w_i.
// This is the minimum-variance unbiased linear combination of independent unbiased estimates when
// the v_i are known (Cochran 1954, "The combination of estimates from different experiments",
// Biometrics 10(1)). Here the v_i are estimated from each version's own data, so the weights are
// slightly correlated with the estimates; with the sample sizes of telemetry (hundreds of reports
// per version and more) the effect is negligible.
//
// Example:
//   std::vector<deniable::PrevalenceEstimate> parts = {*v1_estimate, *v2_estimate};
//   absl::StatusOr<deniable::CombinedEstimate> c = deniable::CombineByInverseVariance(parts);
//   c->unbiased, c->standard_error
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_COMBINE_H_
#define DENIABLE_COMMON_COMBINE_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "deniable/common/estimator.h"

namespace deniable {

struct CombinedEstimate {
  int64_t n = 0;              // total reports over all parts
  double unbiased = 0;        // inverse-variance weighted mean of the parts' unbiased estimates
  double clipped = 0;         // `unbiased` clipped to [0, 1]
  double variance = 0;        // 1 / sum of the weights
  double standard_error = 0;  // sqrt(variance)
};

// Combines independent per-version estimates (from EstimatePrevalence) by inverse-variance
// weighting, as above. For a single part the result equals that part (up to rounding).
// Errors: INVALID_ARGUMENT if `parts` is empty; FAILED_PRECONDITION naming the part if a variance
// is 0 or not finite (all reports "yes" or all "no": the estimated variance is 0 and the weight
// would be infinite; merge such a version with another or report it separately).
absl::StatusOr<CombinedEstimate> CombineByInverseVariance(
    std::span<const PrevalenceEstimate> parts);

}  // namespace deniable

#endif  // DENIABLE_COMMON_COMBINE_H_
