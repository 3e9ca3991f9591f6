// Exact coverage of the prevalence intervals (statistics.md section 3; docs/statistics.md).
//
// For n reports through the channel (a, b) at true prevalence pi, the number y of "yes" bits is
// Binomial(n, lambda) with lambda = pi a + (1 - pi) b, so the probability that an interval method
// covers pi is the finite sum
//     coverage(pi) = sum over y of Binomial(y; n, lambda) [pi in CI(y)],
// with CI(y) = MakePrevalenceInterval(channel, y, n, level, method) (mapped and clipped to [0, 1]).
// No simulation: the result is exact up to floating point and the tail cut below.
//
// Speed: each CI(y) is computed once per call and reused for every pi. For each pi only the y in
// [k_lo, k_hi] are summed, where the Chernoff bound P(Y >= k) <= exp(-n D(k/n || lambda)) (and its
// mirror for the lower tail; D the Kullback-Leibler divergence of Bernoulli laws) puts at most
// e^-40 = 4.2e-18 of probability beyond each end (Hoeffding 1963, eq. 2.1). The bound actually
// used is reported in CoverageCurve::neglected_mass_bound.
//
// Ties: pi counts as covered when lower - 1e-12 <= pi <= upper + 1e-12 (kCoverageTolerance), so
// that an end that equals pi up to rounding (pi = 0 or 1 against a clipped end, or an exact
// Clopper-Pearson end) is not lost to floating point.
//
// Example:
//   auto d = deniable::Design::SymmetricEpsilon(std::log(3.0));
//   std::vector<double> grid = deniable::CoverageGrid(100);  // 0, 0.01, ..., 1
//   absl::StatusOr<deniable::CoverageCurve> c = deniable::ExactCoverage(
//       d->channel(), /*n=*/100, /*confidence_level=*/0.95, deniable::IntervalMethod::kWilson,
//       grid);
//   c->worst, c->mean
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_COVERAGE_H_
#define DENIABLE_COMMON_COVERAGE_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/design.h"
#include "deniable/common/interval.h"

namespace deniable {

// Slack when testing pi in [lower, upper]; see the file comment.
inline constexpr double kCoverageTolerance = 1e-12;

struct CoverageCurve {
  std::vector<double> pi;           // the grid, as passed in
  std::vector<double> coverage;     // coverage probability at each pi, in [0, 1]
  double worst = 0;                 // min of `coverage`
  double worst_pi = 0;              // the (first) pi where the min is reached
  double mean = 0;                  // arithmetic mean of `coverage` over the grid
  double neglected_mass_bound = 0;  // max over pi of the probability left out by the tail cut
};

// `points` + 1 equally spaced values i / points, i = 0..points, from 0 to 1 inclusive.
// REQUIRES: points >= 1.
std::vector<double> CoverageGrid(int points);

// Expected "yes" (or "no") counts n * lambda at which EdgeRefinedGrid adds a point: where a
// discrete interval's coverage dips (Wilson's lower end at y = 1 is about 0.18 / n, so it misses
// lambda below that whenever y = 1; Brown, Cai & DasGupta 2001, section 4.1.1 and figure 5).
inline constexpr double kEdgeCounts[] = {0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5,
                                         1.0,  1.5,  2.0, 3.0,  5.0, 8.0};

// CoverageGrid(points) plus, for each c in kEdgeCounts, the pi at which n * lambda = c and the pi
// at which n * (1 - lambda) = c, when lambda(pi) can reach that value (lambda ranges over [min(a,
// b), max(a, b)]). A 0.01 grid misses the dips of designs where lambda can come close to 0 or 1 (a
// or b at 0 or 1, or a near-extreme epsilon); these points find them. Sorted, without duplicates.
// REQUIRES: points >= 1, n > 0, a valid channel.
std::vector<double> EdgeRefinedGrid(const Channel& channel, int64_t n, int points);

// Exact coverage of the method's prevalence interval at each pi of `pis`, as above.
// Cost: n + 1 intervals at most, plus O(sqrt(n)) terms per pi.
// Errors: INVALID_ARGUMENT naming "n" (<= 0), "confidence_level" (not in (0, 1)), "pi" (a grid
// value NaN or outside [0, 1]), "pis" (empty), or "a" / "b".
absl::StatusOr<CoverageCurve> ExactCoverage(const Channel& channel, int64_t n,
                                            double confidence_level, IntervalMethod method,
                                            std::span<const double> pis);

}  // namespace deniable

#endif  // DENIABLE_COMMON_COVERAGE_H_
