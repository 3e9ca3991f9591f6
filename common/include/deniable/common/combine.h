// Combining the estimates of several design versions (statistics.md section 3; docs/statistics.md).
//
// When one metric is collected under several design versions (say epsilon was changed), each
// version's reports are estimated on their own with that version's channel, and the per-version
// unbiased estimates pi_hat_i (n_i reports, variances v_i) are combined. Two ways:
//
// By reports (the default; statistics.md section 4): the window's share of "yes" among all N
// reports, whatever version each was randomized with,
//     pi_hat = sum n_i pi_hat_i / N,   Var(pi_hat) = sum n_i^2 v_i / N^2.
// Unbiased for sum n_i pi_i / N (pi_i the prevalence behind version i's reports) for any pi_i, so
// it stays right when the prevalence moves between versions (stratified estimation with strata
// weights n_i / N; Cochran 1977, "Sampling Techniques", eq. 5.1-5.3).
//
// By inverse variance (only on request): w_i = 1 / v_i, pi_hat = sum w_i pi_hat_i / sum w_i,
// Var(pi_hat) = 1 / sum w_i. The minimum-variance unbiased linear combination of independent
// unbiased estimates of ONE common value (Cochran 1954, "The combination of estimates from
// different experiments", Biometrics 10(1)). If the pi_i differ, it estimates a precision-weighted
// mix of them, not the window's share: a version with a larger epsilon gets more weight whatever
// its share of the reports (issue 16: -4.6 standard errors on a survey replay with drift).
// Both use variances estimated from each version's own data.
//
// Example:
//   std::vector<deniable::PrevalenceEstimate> parts = {*v1_estimate, *v2_estimate};
//   absl::StatusOr<deniable::CombinedEstimate> c = deniable::CombineByReports(parts);
//   c->unbiased, c->standard_error, c->weights
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_COMBINE_H_
#define DENIABLE_COMMON_COMBINE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/estimator.h"

namespace deniable {

// How several design versions are combined.
enum class VersionCombination {
  kByReports,        // sum n_i pi_hat_i / N: the window's share (default)
  kInverseVariance,  // precision-weighted: only for a prevalence constant across versions
};

// "by_reports", "inverse_variance".
const char* VersionCombinationName(VersionCombination combination);

struct CombinedEstimate {
  int64_t n = 0;                // total reports over all parts
  double unbiased = 0;          // weighted mean of the parts' unbiased estimates
  double clipped = 0;           // `unbiased` clipped to [0, 1]
  double variance = 0;          // estimated variance of `unbiased`
  double standard_error = 0;    // sqrt(variance)
  std::vector<double> weights;  // weight of each part, in [0, 1], summing to 1
};

// Combines independent per-version estimates (from EstimatePrevalence) by their report counts, as
// above. For a single part the result equals that part.
// Errors: INVALID_ARGUMENT if `parts` is empty, or naming the part whose n is <= 0 or whose
// variance is negative or not finite.
absl::StatusOr<CombinedEstimate> CombineByReports(std::span<const PrevalenceEstimate> parts);

// Combines independent per-version estimates (from EstimatePrevalence) by inverse-variance
// weighting, as above. For a single part the result equals that part (up to rounding).
// Errors: INVALID_ARGUMENT if `parts` is empty; FAILED_PRECONDITION naming the part if a variance
// is 0 or not finite (all reports "yes" or all "no": the estimated variance is 0 and the weight
// would be infinite; merge such a version with another or report it separately).
absl::StatusOr<CombinedEstimate> CombineByInverseVariance(
    std::span<const PrevalenceEstimate> parts);

// CombineByReports or CombineByInverseVariance, by `combination`, with their errors.
absl::StatusOr<CombinedEstimate> CombineVersions(std::span<const PrevalenceEstimate> parts,
                                                 VersionCombination combination);

}  // namespace deniable

#endif  // DENIABLE_COMMON_COMBINE_H_
