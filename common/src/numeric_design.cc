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
#include "deniable/common/privacy.h"

namespace deniable {
namespace {

constexpr int kMaxNumericBuckets = 256;
constexpr int kDefaultHistogramBuckets = 10;

// P(Binomial(n, p) = c), 0 outside [0, n]; in logs, so n up to 256 neither overflows nor
// underflows before the end.
double BinomialPmf(int n, double p, int c) {
  if (c < 0 || c > n) return 0.0;
  if (p <= 0.0) return c == 0 ? 1.0 : 0.0;
  if (p >= 1.0) return c == n ? 1.0 : 0.0;
  return std::exp(std::lgamma(n + 1.0) - std::lgamma(c + 1.0) - std::lgamma(n - c + 1.0) +
                  c * std::log(p) + (n - c) * std::log1p(-p));
}

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

absl::StatusOr<PrivacyFigures> DBitFlipReportPrivacy(const NumericDesign& design, double prior) {
  if (design.mechanism() != NumericMechanism::kDBitFlip) {
    return absl::FailedPreconditionError(
        "design: the whole report's figures are of a d_bit_flip design; a one_bit_mean report "
        "is one bit (ComputePrivacyFigures)");
  }
  if (!(prior >= 0.0 && prior <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("prior: must be in [0, 1], but is ", prior));
  }
  const int k = design.buckets();
  const int d = design.sampled_buckets();
  const Channel c = DBitFlipChannel(design);  // a: bit 1 in the value's bucket, b: elsewhere
  PrivacyFigures out;
  out.epsilon = k == 1 ? 0.0 : d >= 2 ? design.epsilon() : design.epsilon() / 2.0;
  out.prior_entropy_bits = BinaryEntropyBits(prior);
  out.posterior_given_yes = prior;
  out.posterior_given_no = prior;
  if (k == 1) {  // the value is always in the one bucket: nothing to learn
    out.conditional_entropy_bits = out.prior_entropy_bits;
    return out;
  }
  double max_posterior = 0.0;
  double min_posterior = 1.0;
  double conditional = 0.0;
  // One class of reports: `mass1` and `mass0` are P(the class | x = 1) and P(the class | x = 0),
  // every report in it with the same posterior.
  auto add = [&](double mass1, double mass0) {
    const double mass = prior * mass1 + (1.0 - prior) * mass0;
    if (!(mass > 0.0)) return;
    const double posterior = prior * mass1 / mass;
    max_posterior = std::max(max_posterior, posterior);
    min_posterior = std::min(min_posterior, posterior);
    conditional += mass * BinaryEntropyBits(std::min(1.0, std::max(0.0, posterior)));
  };
  const double in_sample = static_cast<double>(d) / k;  // P(j among the d sampled)
  const double others = k - 1.0;
  // j sampled with bit t, c1 ones among the other d - 1 sampled buckets. Given x = 0 the value
  // is in one of those d - 1 (its bit 1 with a) or in one of the k - d unsampled (all d - 1
  // bits with b), each bucket with probability 1 / (k - 1).
  for (int t = 0; t <= 1; ++t) {
    const double bit_in = t == 1 ? c.a : 1.0 - c.a;
    const double bit_out = t == 1 ? c.b : 1.0 - c.b;
    for (int c1 = 0; c1 <= d - 1; ++c1) {
      const double mass1 = in_sample * bit_in * BinomialPmf(d - 1, c.b, c1);
      // sum over the value's bucket v != j of P(the d - 1 other bits | v), times C(d - 1, c1)
      const double others_given_sampled = c.a * (d - 1) * BinomialPmf(d - 2, c.b, c1 - 1) +
                                          (1.0 - c.a) * (d - 1) * BinomialPmf(d - 2, c.b, c1);
      const double others_given_unsampled = (k - d) * BinomialPmf(d - 1, c.b, c1);
      const double mass0 =
          in_sample * bit_out * (others_given_sampled + others_given_unsampled) / others;
      add(mass1, mass0);
    }
  }
  // j not sampled, c1 ones among the d sampled.
  if (d < k) {
    for (int c1 = 0; c1 <= d; ++c1) {
      const double mass1 = (1.0 - in_sample) * BinomialPmf(d, c.b, c1);
      const double sampled =
          c.a * d * BinomialPmf(d - 1, c.b, c1 - 1) + (1.0 - c.a) * d * BinomialPmf(d - 1, c.b, c1);
      const double unsampled = (k - d - 1) * BinomialPmf(d, c.b, c1);
      add(mass1, (1.0 - in_sample) * (sampled + unsampled) / others);
    }
  }
  out.posterior_given_yes = max_posterior;
  out.posterior_given_no = min_posterior;
  out.conditional_entropy_bits = std::min(out.prior_entropy_bits, std::max(0.0, conditional));
  out.mutual_information_bits =
      std::max(0.0, out.prior_entropy_bits - out.conditional_entropy_bits);
  return out;
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
