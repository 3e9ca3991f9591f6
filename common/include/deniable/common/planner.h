// Survey planning: how many reports a design needs (statistics.md section 3, "Planning").
//
// The normal-approximation half-width of a level 1 - alpha interval for pi is
//     z sqrt(lambda (1 - lambda) / n) / |a - b|,      lambda = pi a + (1 - pi) b,
// so the n that brings it down to h is
//     n = ceil( z^2 lambda (1 - lambda) / (h^2 (a - b)^2) ),
// and at worst (lambda = 1/2) z^2 / (4 h^2 (a - b)^2). Against asking the question directly, the
// variance of the estimate grows by the factor lambda (1 - lambda) / ((a - b)^2 pi (1 - pi))
// (Warner 1965, section 4; seed 001: Var = pi_C (1 - pi_C) / (n P^2) against pi_A (1 - pi_A) / n).
//
// Example:
//   // Two coins, +/- 5 points at 95 %, nothing known about pi:
//   absl::StatusOr<int64_t> n = deniable::WorstCaseSampleSize(
//       deniable::Design::TwoCoin().channel(), /*half_width=*/0.05, /*confidence_level=*/0.95);
//   // *n == 1537  (1.95996^2 / (4 * 0.05^2 * 0.5^2), rounded up)
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_PLANNER_H_
#define DENIABLE_COMMON_PLANNER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "deniable/common/design.h"

namespace deniable {

// The number of reports n for which the normal-approximation interval for pi has half-width at
// most `half_width` at level `confidence_level`, if the true prevalence is `assumed_pi`:
// ceil(z^2 lambda (1 - lambda) / (h^2 (a - b)^2)), and at least 1.
// `half_width` is on the prevalence scale (0.05 = +/- 5 percentage points); probabilities in [0,
// 1]. Errors: INVALID_ARGUMENT naming "half_width" (NaN, <= 0 or > 1), "confidence_level" (not in
// (0, 1)), "pi" (NaN or outside [0, 1]), or "a" / "b"; OUT_OF_RANGE if n exceeds int64.
absl::StatusOr<int64_t> RequiredSampleSize(const Channel& channel, double half_width,
                                           double confidence_level, double assumed_pi);

// The same with the worst case over all prevalences pi in [0, 1]: the largest lambda (1 - lambda)
// for lambda between b and a. That is lambda = 1/2, n = ceil(z^2 / (4 h^2 (a - b)^2)), whenever
// 1/2 lies between a and b (every symmetric design and both coin schemes); otherwise the end of
// [min(a, b), max(a, b)] nearest 1/2.
// Errors: as RequiredSampleSize, without "pi".
absl::StatusOr<int64_t> WorstCaseSampleSize(const Channel& channel, double half_width,
                                            double confidence_level);

// The factor by which randomization multiplies the variance of the prevalence estimate against a
// direct (unrandomized) question at the same n: lambda (1 - lambda) / ((a - b)^2 pi (1 - pi)).
// Always >= 1.
// Errors: INVALID_ARGUMENT naming "pi" (must be in (0, 1): at 0 or 1 the direct variance is 0),
// or "a" / "b".
absl::StatusOr<double> VarianceInflation(const Channel& channel, double pi);

}  // namespace deniable

#endif  // DENIABLE_COMMON_PLANNER_H_
