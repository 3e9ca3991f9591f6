// Coverage of the categorical intervals (categorical_estimate.h), measured as coverage.h does for
// bits.
//
// Per category: c_v ~ Binomial(n, lambda_v) for every mechanism, so one category's coverage is
// exactly coverage.h's ExactCoverage on the support channel at pi = f_v.
//
// All k at once (simultaneous coverage, the probability that every interval covers its share):
//  - k-RR, exact: the counts are Multinomial(n; lambda_1..lambda_k), lambda_v = q + (p - q) f_v.
//    By Levin's representation (B. Levin, "A representation for multinomial cumulative
//    distribution functions", Annals of Statistics 9, 1981) the multinomial is k independent
//    Poisson(n lambda_v) counts conditioned on their sum being n, so
//        P(all covered) = [conv over v of Pois(c; n lambda_v) 1{f_v in CI_v(c)}](n) / Pois(n; n)
//    with CI_v(c) the simultaneous interval at count c: k - 1 convolutions of length n + 1,
//    O(k n^2), exact up to floating point.
//  - OUE and OLH: a seeded Monte Carlo through the real randomizer (RandomizeCategory with a
//    std::mt19937_64 seeded from the argument), with its binomial standard error.
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_CATEGORICAL_COVERAGE_H_
#define DENIABLE_COMMON_CATEGORICAL_COVERAGE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/categorical.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/interval.h"

namespace deniable {

// The largest n ExactSimultaneousCoverage accepts (cost k n^2 / 2: 0.2 s at k = 4, n = 10^4).
inline constexpr int64_t kMaxExactCategoricalN = 20000;

// Exact probability that all k simultaneous intervals of a k-RR design cover their shares, n
// reports, true shares `shares` (k values in [0, 1] summing to 1 within 1e-9). `simultaneous`
// nullopt means the plain per-category intervals at `confidence_level` (no adjustment: the
// baseline that under-covers). `method` nullopt: the default for the support channel.
// Errors: INVALID_ARGUMENT naming "n" (<= 0 or > kMaxExactCategoricalN), "shares" (wrong size,
// out of range or not summing to 1) or "confidence_level"; FAILED_PRECONDITION for OUE and OLH
// (their counts are not multinomial: use SimulateCategoricalCoverage).
absl::StatusOr<double> ExactSimultaneousCoverage(const CategoricalDesign& design, int64_t n,
                                                 std::span<const double> shares,
                                                 double confidence_level,
                                                 std::optional<IntervalMethod> method,
                                                 std::optional<SimultaneousMethod> simultaneous);

struct SimulatedCoverage {
  int64_t trials = 0;
  double simultaneous = 0;       // share of trials where all k intervals covered
  double standard_error = 0;     // sqrt(s (1 - s) / trials)
  std::vector<double> marginal;  // per category: share of trials where its interval covered
};

// Seeded Monte Carlo of the same (any mechanism): `trials` surveys of n devices whose true
// categories are drawn from `shares`, each report through RandomizeCategory.
// Errors: as ExactSimultaneousCoverage (no FAILED_PRECONDITION), and "trials" (<= 0).
absl::StatusOr<SimulatedCoverage> SimulateCategoricalCoverage(
    const CategoricalDesign& design, int64_t n, std::span<const double> shares,
    double confidence_level, std::optional<IntervalMethod> method,
    std::optional<SimultaneousMethod> simultaneous, int64_t trials, uint64_t seed);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CATEGORICAL_COVERAGE_H_
