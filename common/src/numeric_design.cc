// NumericDesign, the value path of a device (ClipValue, LevelOf) and the mechanism names
// (numeric.h).
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/design.h"
#include "deniable/common/numeric.h"

namespace deniable {
namespace {

constexpr int kMaxNumericBuckets = 256;
constexpr int kDefaultHistogramBuckets = 10;

}  // namespace

const char* NumericMechanismName(NumericMechanism mechanism) {
  switch (mechanism) {
    case NumericMechanism::kOneBitMean:
      return "one_bit_mean";
    case NumericMechanism::kDBitFlip:
      return "d_bit_flip";
  }
  return "unknown";
}

absl::StatusOr<NumericMechanism> ParseNumericMechanism(absl::string_view name) {
  for (NumericMechanism m : {NumericMechanism::kOneBitMean, NumericMechanism::kDBitFlip}) {
    if (name == NumericMechanismName(m)) return m;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("mechanism must be one_bit_mean or d_bit_flip, but is \"", name, "\""));
}

absl::StatusOr<NumericDesign> NumericDesign::Create(NumericMechanism mechanism, double epsilon,
                                                    std::vector<double> edges,
                                                    int sampled_buckets) {
  if (!(epsilon > 0.0 && epsilon <= kMaxSymmetricEpsilon)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "epsilon must be finite and in (0, ", kMaxSymmetricEpsilon, "] nats, but is ", epsilon));
  }
  // The channel's gap: tanh(eps / 2) for the bit of ONE_BIT_MEAN, tanh(eps / 4) for a bucket's
  // bit of D_BIT_FLIP (a = e^(eps/2)); below kMinChannelGap nothing useful can be estimated.
  const double gap = std::tanh(epsilon / (mechanism == NumericMechanism::kOneBitMean ? 2.0 : 4.0));
  if (!(gap >= kMinChannelGap)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "epsilon is too small for ", NumericMechanismName(mechanism), ": the channel's gap ", gap,
        " is below ", kMinChannelGap, " (the variance grows as 1 / gap^2), but is ", epsilon));
  }
  if (edges.size() < 2 || edges.size() > static_cast<size_t>(kMaxNumericBuckets) + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("bucket_edges must hold k + 1 edges with 1 <= k <= ", kMaxNumericBuckets,
                     ", but holds ", edges.size()));
  }
  for (size_t i = 0; i < edges.size(); ++i) {
    if (!std::isfinite(edges[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("bucket_edges[", i, "] must be finite, but is ", edges[i]));
    }
    if (i > 0 && !(edges[i] > edges[i - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("bucket_edges[", i, "] must be greater than bucket_edges[", i - 1,
                       "] (the edges ascend and are distinct), but is ", edges[i]));
    }
  }
  const int k = static_cast<int>(edges.size()) - 1;
  if (!std::isfinite(edges.back() - edges.front())) {
    return absl::InvalidArgumentError("bucket_edges: hi - lo must be finite");
  }
  if (mechanism == NumericMechanism::kOneBitMean) {
    if (sampled_buckets != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("sampled_buckets must be 0 for one_bit_mean (it sends one bit), but is ",
                       sampled_buckets));
    }
  } else {
    if (sampled_buckets == 0) sampled_buckets = k;
    if (sampled_buckets < 1 || sampled_buckets > k) {
      return absl::InvalidArgumentError(absl::StrCat("sampled_buckets must be in [1, k = ", k,
                                                     "] (0: k), but is ", sampled_buckets));
    }
  }
  NumericDesign d;
  d.mechanism_ = mechanism;
  d.epsilon_ = epsilon;
  d.edges_ = std::move(edges);
  d.sampled_buckets_ = sampled_buckets;
  return d;
}

absl::StatusOr<NumericDesign> NumericDesign::EqualWidth(NumericMechanism mechanism, double epsilon,
                                                        double lo, double hi, int buckets,
                                                        int sampled_buckets) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi) || !std::isfinite(hi - lo)) {
    return absl::InvalidArgumentError(
        absl::StrCat("range must have finite lo < hi, but is [", lo, ", ", hi, "]"));
  }
  if (buckets == 0)
    buckets = mechanism == NumericMechanism::kOneBitMean ? 1 : kDefaultHistogramBuckets;
  if (buckets < 1 || buckets > kMaxNumericBuckets) {
    return absl::InvalidArgumentError(absl::StrCat("buckets must be in [1, ", kMaxNumericBuckets,
                                                   "] (0: the default), but is ", buckets));
  }
  std::vector<double> edges(static_cast<size_t>(buckets) + 1);
  for (int i = 0; i <= buckets; ++i) {
    edges[static_cast<size_t>(i)] = lo + (hi - lo) * static_cast<double>(i) / buckets;
  }
  edges.front() = lo;
  edges.back() = hi;
  return Create(mechanism, epsilon, std::move(edges), sampled_buckets);
}

std::string NumericDesign::ToString() const {
  if (mechanism_ == NumericMechanism::kOneBitMean) {
    return absl::StrFormat("one_bit_mean(eps=%.5g, [%g, %g], %d cell%s)", epsilon_, lo(), hi(),
                           buckets(), buckets() == 1 ? "" : "s");
  }
  return absl::StrFormat("d_bit_flip(k=%d, d=%d, eps=%.5g, [%g, %g])", buckets(), sampled_buckets_,
                         epsilon_, lo(), hi());
}

ClippedValue ClipValue(const NumericDesign& design, double value) {
  if (std::isnan(value)) return {design.lo(), true};
  if (value < design.lo()) return {design.lo(), true};
  if (value > design.hi()) return {design.hi(), true};
  return {value, false};
}

double OneBitMeanProbability(double epsilon, double t) {
  const double e = std::exp(epsilon);
  return 1.0 / (e + 1.0) + t * (e - 1.0) / (e + 1.0);
}

Channel DBitFlipChannel(const NumericDesign& design) {
  const double a = std::exp(design.epsilon() / 2.0);
  return Channel{a / (a + 1.0), 1.0 / (a + 1.0)};
}

int LevelOf(const NumericDesign& design, double clipped_value, double alpha) {
  const std::vector<double>& e = design.edges();
  const int k = design.buckets();
  // The cell L with e_L <= x < e_{L+1} (x = hi: the last cell).
  const auto it = std::upper_bound(e.begin(), e.end(), clipped_value);
  const int cell = std::clamp(static_cast<int>(it - e.begin()) - 1, 0, k - 1);
  if (design.mechanism() == NumericMechanism::kDBitFlip) return cell;
  const size_t l = static_cast<size_t>(cell);
  const double r = (clipped_value - e[l]) / (e[l + 1] - e[l]);
  return r > alpha ? cell + 1 : cell;
}

}  // namespace deniable
