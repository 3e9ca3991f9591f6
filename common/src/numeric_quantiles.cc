// Quantiles from a D_BIT_FLIP histogram (numeric.h EstimateQuantiles; docs/statistics.md 9.4).
//
// The band: C_j = f_0 + .. + f_{j-1}, the share of values below edge j, is estimated from the
// side with fewer buckets (j <= k - j: the sum of the first j unbiased shares, else 1 - the sum
// of the last k - j), with the sum of those buckets' variances (the buckets' bits are
// independent given the devices' values when d = k; nearly so when d < k); the k - 1 interior
// edges get Wald intervals at the Sidak level confidence^(1/(k-1)), clipped to [0, 1] and made
// monotone. When every C_j lies in its band, every quantile lies in [e_lower, e_upper] with
// lower = the last edge whose upper band is below the level, upper = the first edge whose lower
// band reaches it.
#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/interval.h"
#include "deniable/common/numeric.h"

namespace deniable {
namespace {

struct Band {
  std::vector<double> lower;  // k + 1 entries: C_0 = 0 .. C_k = 1
  std::vector<double> upper;
};

Band CumulativeBand(const HistogramEstimate& h) {
  const size_t k = h.buckets.size();
  Band band{std::vector<double>(k + 1, 0.0), std::vector<double>(k + 1, 1.0)};
  band.upper[0] = 0.0;
  band.lower[k] = 1.0;
  if (k >= 2) {
    const double level =
        PerCategoryLevel(h.confidence_level, static_cast<int>(k - 1), SimultaneousMethod::kSidak);
    const double z = TwoSidedNormalQuantile(level);
    for (size_t j = 1; j < k; ++j) {
      const bool from_below = j <= k - j;
      const size_t first = from_below ? 0 : j;
      const size_t last = from_below ? j : k;
      double sum = 0.0, variance = 0.0;
      for (size_t i = first; i < last; ++i) {
        sum += h.buckets[i].unbiased;
        variance += h.buckets[i].standard_error * h.buckets[i].standard_error;
      }
      if (!std::isfinite(sum) || !std::isfinite(variance)) continue;  // a bucket nobody sampled
      const double estimate = from_below ? sum : 1.0 - sum;
      const double half = z * std::sqrt(variance);
      band.lower[j] = std::clamp(estimate - half, 0.0, 1.0);
      band.upper[j] = std::clamp(estimate + half, 0.0, 1.0);
    }
  }
  // C is non-decreasing: a lower bound holds for every later edge, an upper one for every earlier.
  for (size_t j = 1; j <= k; ++j) band.lower[j] = std::max(band.lower[j], band.lower[j - 1]);
  for (size_t j = k; j-- > 0;) band.upper[j] = std::min(band.upper[j], band.upper[j + 1]);
  return band;
}

}  // namespace

absl::StatusOr<std::vector<QuantileEstimate>> EstimateQuantiles(const NumericDesign& design,
                                                                const HistogramEstimate& histogram,
                                                                std::span<const double> levels) {
  const size_t k = static_cast<size_t>(design.buckets());
  if (histogram.buckets.size() != k) {
    return absl::InvalidArgumentError(
        absl::StrCat("histogram: has ", histogram.buckets.size(), " buckets, the design ", k));
  }
  for (size_t i = 0; i < levels.size(); ++i) {
    if (!(levels[i] > 0.0 && levels[i] < 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("levels[", i, "] must be in (0, 1), but is ", levels[i]));
    }
  }
  const std::vector<double>& e = design.edges();
  const Band band = CumulativeBand(histogram);
  std::vector<double> cumulative(k + 1, 0.0);  // of the consistent shares
  for (size_t j = 0; j < k; ++j) {
    cumulative[j + 1] = cumulative[j] + histogram.buckets[j].consistent;
  }
  std::vector<QuantileEstimate> out;
  for (double q : levels) {
    QuantileEstimate r;
    r.level = q;
    // The point: linear inside the bucket where the consistent cumulative share reaches q.
    r.value = e[k];
    for (size_t j = 0; j < k; ++j) {
      if (cumulative[j + 1] >= q && histogram.buckets[j].consistent > 0.0) {
        const double inside = (q - cumulative[j]) / histogram.buckets[j].consistent;
        r.value = e[j] + std::clamp(inside, 0.0, 1.0) * (e[j + 1] - e[j]);
        break;
      }
    }
    size_t lower = 0;
    for (size_t j = 0; j <= k; ++j) {
      if (band.upper[j] < q) lower = j;
    }
    size_t upper = k;
    for (size_t j = k + 1; j-- > 0;) {
      if (band.lower[j] >= q) upper = j;
    }
    r.ci_lower = e[lower];
    r.ci_upper = e[upper];
    out.push_back(r);
  }
  return out;
}

}  // namespace deniable
