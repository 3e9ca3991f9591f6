#include "deniable/common/categorical_coverage.h"

#include <cmath>
#include <limits>
#include <random>

#include "absl/random/distributions.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/coverage.h"
#include "deniable/common/method_choice.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

absl::Status CheckArguments(const CategoricalDesign& design, int64_t n,
                            std::span<const double> shares, double level) {
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  if (shares.size() != static_cast<size_t>(design.k())) {
    return absl::InvalidArgumentError(
        absl::StrCat("shares must hold k = ", design.k(), " values, but holds ", shares.size()));
  }
  double sum = 0;
  for (size_t v = 0; v < shares.size(); ++v) {
    if (!(shares[v] >= 0.0 && shares[v] <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("shares[", v, "] must be in [0, 1], but is ", shares[v]));
    }
    sum += shares[v];
  }
  if (std::abs(sum - 1.0) > 1e-9) {
    return absl::InvalidArgumentError(absl::StrCat("shares must sum to 1, but sum to ", sum));
  }
  if (!(level > 0.0 && level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1 - 1e-12], but is ", level));
  }
  return absl::OkStatus();
}

// covered[v][c]: whether the interval at count c covers shares[v], for c = 0..n.
absl::StatusOr<std::vector<std::vector<bool>>> CoverageTable(
    const CategoricalDesign& design, int64_t n, std::span<const double> shares, double level,
    std::optional<IntervalMethod> method, std::optional<SimultaneousMethod> simultaneous) {
  const Channel channel = design.SupportChannel();
  const IntervalMethod m = method.has_value() ? *method : DefaultIntervalMethod(channel).method;
  const double per =
      simultaneous.has_value() ? PerCategoryLevel(design, level, *simultaneous) : level;
  std::vector<std::vector<bool>> covered(shares.size(), std::vector<bool>(n + 1));
  for (int64_t c = 0; c <= n; ++c) {
    DENIABLE_ASSIGN_OR_RETURN(PrevalenceInterval ci, MakePrevalenceInterval(channel, c, n, per, m));
    for (size_t v = 0; v < shares.size(); ++v) {
      covered[v][c] =
          ci.lower - kCoverageTolerance <= shares[v] && shares[v] <= ci.upper + kCoverageTolerance;
    }
  }
  return covered;
}

double LogPoisson(int64_t c, double mean) {
  if (mean == 0.0) return c == 0 ? 0.0 : -std::numeric_limits<double>::infinity();
  const double x = static_cast<double>(c);
  return x * std::log(mean) - mean - std::lgamma(x + 1.0);
}

}  // namespace

absl::StatusOr<double> ExactSimultaneousCoverage(const CategoricalDesign& design, int64_t n,
                                                 std::span<const double> shares,
                                                 double confidence_level,
                                                 std::optional<IntervalMethod> method,
                                                 std::optional<SimultaneousMethod> simultaneous) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(design, n, shares, confidence_level));
  if (n > kMaxExactCategoricalN) {
    return absl::InvalidArgumentError(absl::StrCat("n must be at most ", kMaxExactCategoricalN,
                                                   " for the exact computation, but is ", n));
  }
  if (design.mechanism() != CategoricalMechanism::kDirectEncoding) {
    return absl::FailedPreconditionError(
        absl::StrCat("exact simultaneous coverage needs multinomial counts (k_rr); ",
                     CategoricalMechanismName(design.mechanism()),
                     " counts are not: use SimulateCategoricalCoverage"));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      auto covered, CoverageTable(design, n, shares, confidence_level, method, simultaneous));
  const Channel ch = design.SupportChannel();
  const double nd = static_cast<double>(n);
  std::vector<double> acc;
  for (size_t v = 0; v < shares.size(); ++v) {
    const double mean = nd * (ch.b + (ch.a - ch.b) * shares[v]);
    std::vector<double> masked(n + 1);
    for (int64_t c = 0; c <= n; ++c) {
      masked[c] = covered[v][c] ? std::exp(LogPoisson(c, mean)) : 0.0;
    }
    if (v == 0) {
      acc = std::move(masked);
      continue;
    }
    std::vector<double> next(n + 1, 0.0);
    for (int64_t a = 0; a <= n; ++a) {
      if (acc[a] == 0.0) continue;
      for (int64_t c = 0; a + c <= n; ++c) next[a + c] += acc[a] * masked[c];
    }
    acc = std::move(next);
  }
  return std::clamp(acc[n] / std::exp(LogPoisson(n, nd)), 0.0, 1.0);
}

absl::StatusOr<SimulatedCoverage> SimulateCategoricalCoverage(
    const CategoricalDesign& design, int64_t n, std::span<const double> shares,
    double confidence_level, std::optional<IntervalMethod> method,
    std::optional<SimultaneousMethod> simultaneous, int64_t trials, uint64_t seed) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(design, n, shares, confidence_level));
  if (trials <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("trials must be > 0, but is ", trials));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      auto covered, CoverageTable(design, n, shares, confidence_level, method, simultaneous));
  const int k = design.k();
  std::vector<double> cumulative(k);
  double sum = 0;
  for (int v = 0; v < k; ++v) cumulative[v] = (sum += shares[v]);
  std::mt19937_64 gen(seed);
  SimulatedCoverage out;
  out.trials = trials;
  out.marginal.assign(k, 0.0);
  int64_t all = 0;
  std::vector<int64_t> counts(k);
  for (int64_t t = 0; t < trials; ++t) {
    std::fill(counts.begin(), counts.end(), 0);
    for (int64_t i = 0; i < n; ++i) {
      const double u = absl::Uniform(gen, 0.0, sum);
      int x = 0;
      while (x < k - 1 && u >= cumulative[x]) ++x;
      DENIABLE_ASSIGN_OR_RETURN(CategoricalReport r, RandomizeCategory(design, x, gen));
      AddSupport(design, r, &counts);
    }
    bool every = true;
    for (int v = 0; v < k; ++v) {
      if (covered[v][counts[v]]) {
        out.marginal[v] += 1.0;
      } else {
        every = false;
      }
    }
    if (every) ++all;
  }
  const double td = static_cast<double>(trials);
  for (double& m : out.marginal) m /= td;
  out.simultaneous = static_cast<double>(all) / td;
  out.standard_error = std::sqrt(out.simultaneous * (1.0 - out.simultaneous) / td);
  return out;
}

}  // namespace deniable
