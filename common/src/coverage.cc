#include "deniable/common/coverage.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/math/special_functions/gamma.hpp"
#include "deniable/common/estimator.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

// Tail cut: at most e^-kTailNats of probability beyond each end of the summed range.
constexpr double kTailNats = 40.0;

// n D(k / n || lambda) for Bernoulli laws, in nats, with 0 log 0 = 0. REQUIRES 0 < lambda < 1.
double ChernoffExponent(int64_t n, int64_t k, double lambda) {
  const double nn = static_cast<double>(n);
  const double t = static_cast<double>(k) / nn;
  double d = 0.0;
  if (t > 0.0) d += t * std::log(t / lambda);
  if (t < 1.0) d += (1.0 - t) * std::log((1.0 - t) / (1.0 - lambda));
  return nn * d;
}

struct Window {
  int64_t lo = 0;
  int64_t hi = 0;
  double neglected_bound = 0;  // Chernoff bound on the mass outside [lo, hi]
};

// The y range to sum for Binomial(n, lambda). The exponent grows as k moves away from n lambda,
// so each end is found by bisection.
Window SummationWindow(int64_t n, double lambda) {
  if (lambda <= 0.0) return Window{0, 0, 0.0};
  if (lambda >= 1.0) return Window{n, n, 0.0};
  const double center = static_cast<double>(n) * lambda;
  Window w{0, n, 0.0};
  // Upper end: smallest k >= center with exponent >= kTailNats; P(Y > k) <= P(Y >= k).
  int64_t lo = static_cast<int64_t>(std::ceil(center));
  if (ChernoffExponent(n, n, lambda) >= kTailNats) {
    int64_t hi = n;  // invariant: exponent(hi) >= kTailNats
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (ChernoffExponent(n, mid, lambda) >= kTailNats) {
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    w.hi = hi;
    w.neglected_bound += std::exp(-kTailNats);
  }
  // Lower end: largest k <= center with exponent >= kTailNats; P(Y < k) <= P(Y <= k).
  int64_t hi = static_cast<int64_t>(std::floor(center));
  if (ChernoffExponent(n, 0, lambda) >= kTailNats) {
    int64_t l = 0;  // invariant: exponent(l) >= kTailNats
    while (l < hi) {
      const int64_t mid = l + (hi - l + 1) / 2;
      if (ChernoffExponent(n, mid, lambda) >= kTailNats) {
        l = mid;
      } else {
        hi = mid - 1;
      }
    }
    w.lo = l;
    w.neglected_bound += std::exp(-kTailNats);
  }
  return w;
}

}  // namespace

std::vector<double> CoverageGrid(int points) {
  std::vector<double> grid;
  grid.reserve(static_cast<size_t>(points) + 1);
  for (int i = 0; i <= points; ++i) grid.push_back(static_cast<double>(i) / points);
  return grid;
}

std::vector<double> EdgeRefinedGrid(const Channel& channel, int64_t n, int points) {
  std::vector<double> grid = CoverageGrid(points);
  const double lo = std::min(channel.a, channel.b), hi = std::max(channel.a, channel.b);
  const double nn = static_cast<double>(n);
  for (double c : kEdgeCounts) {
    for (double lambda : {c / nn, 1.0 - c / nn}) {
      if (lambda > lo && lambda < hi) grid.push_back(PrevalenceFromYesShare(channel, lambda));
    }
  }
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

absl::StatusOr<CoverageCurve> ExactCoverage(const Channel& channel, int64_t n,
                                            double confidence_level, IntervalMethod method,
                                            std::span<const double> pis) {
  DENIABLE_RETURN_IF_ERROR(ValidateChannel(channel));
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  if (!(confidence_level > 0.0 && confidence_level < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1), but is ", confidence_level));
  }
  if (pis.empty()) return absl::InvalidArgumentError("pis must not be empty");
  for (double pi : pis) {
    if (!(pi >= 0.0 && pi <= 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat("pi must be in [0, 1], but is ", pi));
    }
  }

  // Summation windows first, so that intervals are computed only for the y that matter.
  std::vector<Window> windows;
  windows.reserve(pis.size());
  int64_t y_min = n, y_max = 0;
  for (double pi : pis) {
    windows.push_back(SummationWindow(n, YesShareFromPrevalence(channel, pi)));
    y_min = std::min(y_min, windows.back().lo);
    y_max = std::max(y_max, windows.back().hi);
  }

  // CI(y) and log C(n, y) once per y.
  const size_t count = static_cast<size_t>(y_max - y_min + 1);
  std::vector<PrevalenceInterval> intervals(count);
  std::vector<double> log_choose(count);
  const double log_n_factorial = boost::math::lgamma(static_cast<double>(n) + 1.0);
  for (int64_t y = y_min; y <= y_max; ++y) {
    const size_t i = static_cast<size_t>(y - y_min);
    DENIABLE_ASSIGN_OR_RETURN(intervals[i],
                              MakePrevalenceInterval(channel, y, n, confidence_level, method));
    log_choose[i] = log_n_factorial - boost::math::lgamma(static_cast<double>(y) + 1.0) -
                    boost::math::lgamma(static_cast<double>(n - y) + 1.0);
  }

  CoverageCurve curve;
  curve.pi.assign(pis.begin(), pis.end());
  curve.coverage.reserve(pis.size());
  for (size_t j = 0; j < pis.size(); ++j) {
    const double pi = pis[j];
    const double lambda = YesShareFromPrevalence(channel, pi);
    const Window& w = windows[j];
    double covered = 0.0;
    for (int64_t y = w.lo; y <= w.hi; ++y) {
      const size_t i = static_cast<size_t>(y - y_min);
      const PrevalenceInterval& ci = intervals[i];
      if (pi < ci.lower - kCoverageTolerance || pi > ci.upper + kCoverageTolerance) continue;
      double pmf;
      if (lambda <= 0.0) {
        pmf = y == 0 ? 1.0 : 0.0;
      } else if (lambda >= 1.0) {
        pmf = y == n ? 1.0 : 0.0;
      } else {
        pmf = std::exp(log_choose[i] + static_cast<double>(y) * std::log(lambda) +
                       static_cast<double>(n - y) * std::log1p(-lambda));
      }
      covered += pmf;
    }
    covered = std::clamp(covered, 0.0, 1.0);
    curve.coverage.push_back(covered);
    curve.neglected_mass_bound = std::max(curve.neglected_mass_bound, w.neglected_bound);
  }
  curve.worst = curve.coverage[0];
  curve.worst_pi = curve.pi[0];
  double sum = 0.0;
  for (size_t j = 0; j < curve.coverage.size(); ++j) {
    sum += curve.coverage[j];
    if (curve.coverage[j] < curve.worst) {
      curve.worst = curve.coverage[j];
      curve.worst_pi = curve.pi[j];
    }
  }
  curve.mean = sum / static_cast<double>(curve.coverage.size());
  return curve;
}

}  // namespace deniable
