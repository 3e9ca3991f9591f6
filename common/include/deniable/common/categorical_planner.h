// Survey planning for categorical designs (issue 14): how many reports bring every category share
// within +/- h, one at a time and all k together (statistics.md section 5; planner.h for bits).
//
// Category v's unbiased share f_hat_v = (c_v / n - q*) / (p* - q*) has variance
//     Var(f_hat_v) = lambda_v (1 - lambda_v) / (n (p* - q*)^2),    lambda_v = q* + (p* - q*) f_v
// (Wang, Blocki, Li and Jha, USENIX Security 2017, Theorem 2; categorical.h), the binary variance
// of the support channel (p*, q*). The normal-approximation half-width at level L is z_L times the
// standard error, z_L the (1 + L) / 2 normal quantile, so
//     n_v(L) = ceil( z_L^2 lambda_v (1 - lambda_v) / (h^2 (p* - q*)^2) )
// (planner.h's RequiredSampleSize on the support channel at pi = f_v). All k intervals at the
// per-category level L_k of categorical_estimate.h (Sidak: level^(1/k); Bonferroni:
// 1 - (1 - level) / k) hold together with probability >= level, so
//     simultaneous n = max over v of n_v(L_k).
// Worst case over shares: lambda (1 - lambda) at its largest for lambda in [q*, p*], i.e. 1/4
// when p* >= 1/2 >= q* (k-RR with e^eps >= k - 1, OUE's p* = 1/2), else at lambda = p* (f_v = 1;
// k-RR with many categories). One share can always be at that worst value, so the worst-case
// simultaneous n is the worst-case n of one share at L_k.
//
// Example (k-RR, k = 4, eps = ln 3: p* = 1/2, q* = 1/6; +/- 5 points for all 4 at 95 %, Sidak):
//   auto d = deniable::CategoricalDesign::Create(deniable::CategoricalMechanism::kDirectEncoding,
//                                                4, std::log(3.0));
//   absl::StatusOr<deniable::CategoricalPlan> plan = deniable::PlanCategoricalSurvey(
//       *d, 0.05, 0.95, deniable::SimultaneousMethod::kSidak, {});
//   plan->reports_needed_simultaneous;  // ceil(2.49092^2 * 0.25 / (0.05^2 / 9)) = 5585
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_CATEGORICAL_PLANNER_H_
#define DENIABLE_COMMON_CATEGORICAL_PLANNER_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/categorical.h"
#include "deniable/common/categorical_estimate.h"

namespace deniable {

struct CategorySamplePlan {
  double assumed_share = 0;                 // f_v as given
  int64_t reports_needed = 0;               // n_v(level): this share alone
  int64_t reports_needed_simultaneous = 0;  // n_v(L_k)
};

struct CategoricalPlan {
  double half_width = 0;        // h, on the share scale
  double confidence_level = 0;  // level, in (0, 1)
  SimultaneousMethod method = SimultaneousMethod::kSidak;
  double per_category_level = 0;  // L_k
  // One share alone at `level`, and all k together: at the assumed shares (the largest n_v),
  // or the worst case when none were given.
  int64_t reports_needed = 0;
  int64_t reports_needed_simultaneous = 0;
  // The same, worst case over all shares (always set).
  int64_t reports_needed_worst_case = 0;
  int64_t reports_needed_simultaneous_worst_case = 0;
  std::vector<CategorySamplePlan> categories;  // k entries at the assumed shares; else empty
};

// The plan above for `design`, target half-width `half_width` (in (0, 1]; 0.05 = +/- 5
// percentage points) on every share at `confidence_level`, with `method` for the simultaneous
// target. `assumed_shares`: k shares summing to 1, or empty for the worst case.
// Errors: INVALID_ARGUMENT naming "half_width", "confidence_level" (not in (0, 1 - 1e-12]),
// "assumed_shares" or "assumed_shares[v]" (categorical_privacy.h: ValidateShares);
// OUT_OF_RANGE naming "half_width" if n exceeds int64.
absl::StatusOr<CategoricalPlan> PlanCategoricalSurvey(const CategoricalDesign& design,
                                                      double half_width, double confidence_level,
                                                      SimultaneousMethod method,
                                                      std::span<const double> assumed_shares);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CATEGORICAL_PLANNER_H_
