// Category shares from categorical reports: unbiased estimates, a consistent estimate on the
// simplex, per-category and simultaneous confidence intervals (statistics.md section 5).
//
// With c_v of n reports supporting category v (categorical.h: AddSupport) and the design's
// support channel (p*, q*):
//   lambda_hat_v = c_v / n
//   f_hat_v      = (lambda_hat_v - q*) / (p* - q*)                 unbiased; may leave [0, 1]
//   Var(f_hat_v) = lambda_v (1 - lambda_v) / (n (p* - q*)^2)       estimated with lambda_hat_v
// (WBLJ = Wang, Blocki, Li, Jha, USENIX Security 2017, eq. 2 and Theorem 2; statistics.md 5).
// For k-RR the f_hat_v sum to 1; for OUE and OLH they need not.
//
// Consistent estimate ("norm_sub"): Norm-Sub of Wang, Lopuhaä-Zwiers, Jha and Li, "Locally
// Differentially Private Frequency Estimation with Consistency" (NDSS 2020, section IV-B): negative
// estimates become 0 and one common amount is added to (or subtracted from) the positive ones until
// the shares are non-negative and sum to 1. It is the Euclidean projection of f_hat onto the
// probability simplex, computed exactly by sorting (Duchi, Shalev-Shwartz, Singer and Chandra,
// ICML 2008, figure 1). Biased (towards 0 for small shares), but never outside [0, 1]; labelled as
// such wherever it is shown.
//
// Intervals. Each c_v is Binomial(n, lambda_v) for every mechanism (each device's report supports
// v independently with probability lambda_v), so category v's interval is the binary one
// (interval.h: MakePrevalenceInterval) on the support channel, mapped and clipped to [0, 1]; the
// default method is the binary default for that channel (method_choice.h).
// Simultaneous intervals, meant to cover all k shares at once with probability >= the level, use
// each category's interval at a higher per-category level:
//   kBonferroni  1 - (1 - level) / k      (Bonferroni inequality; Goodman 1965, "On simultaneous
//                                          confidence intervals for multinomial proportions",
//                                          Technometrics 7, uses it for the multinomial)
//   kSidak       level^(1 / k)            (Sidak 1967, "Rectangular confidence regions for the
//   means
//                                          of multivariate normal distributions", JASA 62: for a
//                                          normal vector with ANY correlations, P(all |Z_v| <= c_v)
//                                          >= product of P(|Z_v| <= c_v))
// Sidak is the better (narrower) one and the default: the debiased estimates are a linear map of
// the count vector, which is asymptotically normal (multinomial for k-RR, a sum of independent
// per-device vectors for OUE and OLH), so Sidak's inequality holds in the limit whatever the
// correlations between categories (negative for k-RR, zero for OUE given the answers). At small n
// the discrete intervals' own slack decides; the exact (k-RR) and seeded (OUE, OLH) coverage in
// categorical_coverage.h and docs/coverage.md measure it.
//
// Example:
//   auto d = deniable::CategoricalDesign::Create(deniable::CategoricalMechanism::kDirectEncoding,
//                                                4, std::log(3.0));
//   std::vector<int64_t> counts = {900, 700, 500, 400};  // supports per category, n = 2500
//   absl::StatusOr<deniable::CategoricalEstimate> e = deniable::EstimateCategories(
//       *d, counts, 2500, 0.95, std::nullopt, deniable::SimultaneousMethod::kSidak);
//   e->categories[0].unbiased, e->categories[0].simultaneous.lower
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_CATEGORICAL_ESTIMATE_H_
#define DENIABLE_COMMON_CATEGORICAL_ESTIMATE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/categorical.h"
#include "deniable/common/interval.h"

namespace deniable {

enum class SimultaneousMethod { kBonferroni, kSidak };

// "bonferroni", "sidak".
const char* SimultaneousMethodName(SimultaneousMethod method);
// Parses SimultaneousMethodName's output. Errors: INVALID_ARGUMENT listing the known names.
absl::StatusOr<SimultaneousMethod> ParseSimultaneousMethod(absl::string_view name);

// The level each of k intervals gets so that all k hold at `level` (see the file comment).
// REQUIRES: level in (0, 1), k >= 1.
double PerCategoryLevel(double level, int k, SimultaneousMethod method);

// Whether the k shares' intervals cover or miss together, so that simultaneous intervals need
// no adjustment: k-RR with k = 2. There every report supports exactly one of the two
// categories (c_1 = n - c_0) and a + b = 1 (p* = e^eps / (e^eps + 1), q* = 1 - p*), so the
// second share's estimate is 1 - the first's and, since every interval method of interval.h is
// symmetric under c -> n - c, its interval is the first's reflected: both cover or both miss.
// Not so for OUE or OLH (two independent bits, or a hashed bucket, per report).
bool SharesCoverTogether(const CategoricalDesign& design);

// The level each category's interval gets for simultaneous coverage at `level` with `design`:
// `level` itself when SharesCoverTogether(design), else PerCategoryLevel(level, k, method).
// REQUIRES: level in (0, 1).
double PerCategoryLevel(const CategoricalDesign& design, double level, SimultaneousMethod method);

// Norm-Sub: the Euclidean projection of `estimates` onto {f : f_v >= 0, sum f_v = 1} (see the file
// comment). Empty in, empty out. REQUIRES: finite values.
std::vector<double> NormSub(std::span<const double> estimates);

struct CategoryEstimate {
  int64_t support_count = 0;        // c_v: reports supporting v
  double support_share = 0;         // lambda_hat_v = c_v / n
  double unbiased = 0;              // f_hat_v, may fall outside [0, 1]
  double consistent = 0;            // Norm-Sub share, in [0, 1]; the shares sum to 1
  double variance = 0;              // estimated Var(f_hat_v)
  double standard_error = 0;        // sqrt(variance)
  PrevalenceInterval interval;      // this category alone, at the confidence level
  PrevalenceInterval simultaneous;  // all k at once, at the per-category level
};

struct CategoricalEstimate {
  int64_t n = 0;                                    // reports
  double confidence_level = 0;                      // in (0, 1)
  IntervalMethod method = IntervalMethod::kWilson;  // per-category method used
  SimultaneousMethod simultaneous_method = SimultaneousMethod::kSidak;
  double per_category_level = 0;             // level of each simultaneous one
  std::vector<CategoryEstimate> categories;  // k entries, by category index
};

// All of the above from the support counts of n reports.
// `method`: nullopt for the binary default of the support channel.
// Errors: INVALID_ARGUMENT naming "n" (<= 0), "support_counts" (size != k), "support_counts[v]"
// (outside [0, n]; for k-RR also when the counts do not sum to n) or "confidence_level" (not in
// (0, kMaxConfidenceLevel]).
absl::StatusOr<CategoricalEstimate> EstimateCategories(const CategoricalDesign& design,
                                                       std::span<const int64_t> support_counts,
                                                       int64_t n, double confidence_level,
                                                       std::optional<IntervalMethod> method,
                                                       SimultaneousMethod simultaneous);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CATEGORICAL_ESTIMATE_H_
