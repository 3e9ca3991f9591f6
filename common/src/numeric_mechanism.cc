#include "deniable/common/numeric_mechanism.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/coverage.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/method_choice.h"
#include "deniable/common/planner.h"
#include "deniable/common/privacy.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"
#include "deniable/common/yes_no_mechanism.h"

namespace deniable {
namespace {

bool IsMean(const NumericDesign& design) {
  return design.mechanism() == NumericMechanism::kOneBitMean;
}

// The ONE_BIT_MEAN bit's share design: SymmetricEpsilon(eps) (NumericDesign::Create checked the
// range).
Design ShareDesign(const NumericDesign& design) {
  absl::StatusOr<Design> d = Design::SymmetricEpsilon(design.epsilon());
  return d.ok() ? *d : Design::TwoCoin();
}

// The distribution of Binomial(c, p) + Binomial(n - c, q).
std::vector<double> TwoBinomials(int64_t n, int64_t c, double p, double q) {
  const auto binomial = [](int64_t m, double r) {
    std::vector<double> pmf = {1.0};
    for (int64_t i = 0; i < m; ++i) {
      std::vector<double> next(pmf.size() + 1, 0.0);
      for (size_t y = 0; y < pmf.size(); ++y) {
        next[y] += pmf[y] * (1.0 - r);
        next[y + 1] += pmf[y] * r;
      }
      pmf = std::move(next);
    }
    return pmf;
  };
  const std::vector<double> in = binomial(c, p), out = binomial(n - c, q);
  std::vector<double> sum(static_cast<size_t>(n) + 1, 0.0);
  for (size_t i = 0; i < in.size(); ++i) {
    for (size_t j = 0; j < out.size(); ++j) sum[i + j] += in[i] * out[j];
  }
  return sum;
}

// d = k: every report has one independent bit per bucket given the devices' values, so with
// c_j = n f_j devices in bucket j the y_j are independent, y_j ~ Binomial(c_j, p) +
// Binomial(n - c_j, q), and the simultaneous coverage is the product of the buckets' coverages.
absl::StatusOr<double> DBitFlipExactCoverage(const NumericDesign& design, int64_t n,
                                             std::span<const double> truth,
                                             const MechanismEstimateOptions& options) {
  constexpr int64_t kMaxExactReports = 5000;
  if (n < 1 || n > kMaxExactReports) {
    return absl::InvalidArgumentError(absl::StrCat("n must be in [1, ", kMaxExactReports,
                                                   "] for exact d_bit_flip coverage, but is ", n));
  }
  const int k = design.buckets();
  if (truth.size() != static_cast<size_t>(k)) {
    return absl::InvalidArgumentError(
        absl::StrCat("shares: must hold k = ", k, " shares, but hold ", truth.size()));
  }
  const Channel c = DBitFlipChannel(design);
  const IntervalMethod method =
      options.method.has_value() ? *options.method : DefaultIntervalMethod(c).method;
  const double level = k == 1 ? options.confidence_level
                              : PerCategoryLevel(options.confidence_level, k, options.simultaneous);
  double coverage = 1.0;
  for (size_t j = 0; j < truth.size(); ++j) {
    const double devices = truth[j] * static_cast<double>(n);
    const double rounded = std::round(devices);
    if (!(truth[j] >= 0.0 && truth[j] <= 1.0) || std::fabs(devices - rounded) > 1e-9 * n) {
      return absl::InvalidArgumentError(
          absl::StrCat("shares[", j, "]: must be a share of the n = ", n,
                       " devices (n times it an integer in [0, n]), but is ", truth[j]));
    }
    const std::vector<double> pmf = TwoBinomials(n, static_cast<int64_t>(rounded), c.a, c.b);
    double covered = 0.0;
    for (size_t y = 0; y < pmf.size(); ++y) {
      absl::StatusOr<PrevalenceInterval> i =
          MakePrevalenceInterval(c, static_cast<int64_t>(y), n, level, method);
      if (!i.ok()) return i.status();
      if (i->lower <= truth[j] + 1e-12 && truth[j] <= i->upper + 1e-12) covered += pmf[y];
    }
    coverage *= covered;
  }
  return coverage;
}

}  // namespace

NumericReportMechanism::NumericReportMechanism(const NumericDesign& design)
    : design_(design), share_design_(ShareDesign(design)) {}

std::string NumericReportMechanism::CoordinatesKey() const {
  if (IsMean(design_)) return "share";
  return absl::StrCat("buckets:", absl::StrJoin(design_.edges(), ","));
}

CounterLayout NumericReportMechanism::Layout() const {
  return CounterLayout{IsMean(design_) ? 1 : 2 * design_.buckets()};
}

Channel NumericReportMechanism::ChannelOf(int j) const {
  if (IsMean(design_)) return share_design_.channel();
  if (j < design_.buckets()) {
    const double sampled =
        static_cast<double>(design_.sampled_buckets()) / static_cast<double>(design_.buckets());
    return Channel{sampled, sampled};
  }
  return DBitFlipChannel(design_);
}

double NumericReportMechanism::Epsilon() const {
  if (IsMean(design_)) return design_.epsilon();
  if (design_.buckets() == 1) return 0.0;
  return design_.sampled_buckets() >= 2 ? design_.epsilon() : design_.epsilon() / 2.0;
}

double NumericReportMechanism::CloneProbability() const {
  if (IsMean(design_)) return BinaryCloneProbability(share_design_.channel());
  return GenericCloneProbability(Epsilon());
}

absl::StatusOr<WireAnswer> NumericReportMechanism::Randomize(int32_t value, Draws& draws) const {
  const int k = design_.buckets();
  WireAnswer out;
  if (IsMean(design_)) {
    if (value < 0 || value > k) {
      return absl::InvalidArgumentError(absl::StrCat(
          "level: a one_bit_mean level is a grid point in [0, ", k, "], but is ", value));
    }
    const double t = (design_.edges()[static_cast<size_t>(value)] - design_.lo()) /
                     (design_.hi() - design_.lo());
    out.bit = draws.Bernoulli(OneBitMeanProbability(design_.epsilon(), t)) ? 1 : 0;
    return out;
  }
  if (value < 0 || value >= k) {
    return absl::InvalidArgumentError(
        absl::StrCat("level: a d_bit_flip level is a bucket in [0, ", k, "), but is ", value));
  }
  std::vector<uint32_t> remaining(static_cast<size_t>(k));
  std::iota(remaining.begin(), remaining.end(), 0u);
  out.has_numeric = true;
  const int d = design_.sampled_buckets();
  for (int i = 0; i < d; ++i) {
    const uint32_t pick = draws.Below(static_cast<uint32_t>(k - i));
    out.numeric.buckets.push_back(remaining[pick]);
    remaining.erase(remaining.begin() + pick);
  }
  std::sort(out.numeric.buckets.begin(), out.numeric.buckets.end());
  const Channel c = DBitFlipChannel(design_);
  for (uint32_t j : out.numeric.buckets) {
    out.numeric.bits.push_back(draws.Bernoulli(static_cast<int32_t>(j) == value ? c.a : c.b));
  }
  return out;
}

absl::StatusOr<CounterIncrements> NumericReportMechanism::ValidateKind(
    const WireAnswer& answer, absl::string_view field, absl::string_view metric) const {
  if (answer.has_categorical) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".categorical: metric \"", metric,
                     "\" is a numeric metric: its reports carry no categorical report"));
  }
  CounterIncrements out;
  if (IsMean(design_)) {
    if (answer.has_numeric) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".numeric: metric \"", metric,
          "\" has a one_bit_mean design: its reports carry `bit` and no numeric report"));
    }
    if (answer.bit > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".bit: must be 0 or 1, but is ", answer.bit));
    }
    if (answer.bit == 1) out.ones.push_back(0);
    return out;
  }
  const int k = design_.buckets();
  const size_t d = static_cast<size_t>(design_.sampled_buckets());
  if (!answer.has_numeric) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".numeric: metric \"", metric, "\" has a d_bit_flip design (k = ", k,
                     ", d = ", d, "): a report must carry its numeric report (and bit 0)"));
  }
  if (answer.bit != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".bit: must be 0 in a report of d_bit_flip metric \"", metric,
                     "\" (the answer is in ", field, ".numeric)"));
  }
  const WireNumeric& r = answer.numeric;
  if (r.buckets.size() != d) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".numeric.buckets: must hold d = ", d,
                                                   " buckets, but holds ", r.buckets.size()));
  }
  if (r.bits.size() != d) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".numeric.bits: must hold d = ", d,
                                                   " bits (one per bucket), but holds ",
                                                   r.bits.size()));
  }
  for (size_t i = 0; i < d; ++i) {
    if (r.buckets[i] >= static_cast<uint32_t>(k)) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".numeric.buckets[", i, "]: must be in [0, ", k, "), but is ", r.buckets[i]));
    }
    if (i > 0 && r.buckets[i] <= r.buckets[i - 1]) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".numeric.buckets[", i, "]: the buckets must be distinct and ascending, but ",
          r.buckets[i], " follows ", r.buckets[i - 1]));
    }
  }
  for (uint32_t j : r.buckets) out.ones.push_back(j);
  for (size_t i = 0; i < d; ++i) {
    if (r.bits[i]) out.ones.push_back(static_cast<uint32_t>(k) + r.buckets[i]);
  }
  return out;
}

absl::StatusOr<MechanismPrivacy> NumericReportMechanism::Privacy(
    const PrivacyQuestion& question) const {
  MechanismPrivacy out;
  out.epsilon = Epsilon();
  out.clone_probability = CloneProbability();
  // ONE_BIT_MEAN: the bit's channel between the range's ends; D_BIT_FLIP: one bucket's bit
  // against the others.
  const Channel channel = IsMean(design_) ? share_design_.channel() : DBitFlipChannel(design_);
  DENIABLE_ASSIGN_OR_RETURN(out.binary, ComputePrivacyFigures(channel, question.prior));
  return out;
}

absl::StatusOr<MechanismEstimate> NumericReportMechanism::Estimate(
    std::span<const int64_t> counters, const MechanismEstimateOptions& options) const {
  if (IsMean(design_)) {
    if (counters.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "counters: a one_bit_mean design's vector is [n, ones], 2 counters, but has ",
          counters.size()));
    }
    return YesNoMechanism(share_design_).Estimate(counters, options);
  }
  const IntervalMethod method = options.method.has_value()
                                    ? *options.method
                                    : DefaultIntervalMethod(DBitFlipChannel(design_)).method;
  DENIABLE_ASSIGN_OR_RETURN(
      HistogramEstimate h,
      EstimateHistogram(design_, counters, options.confidence_level, method, options.simultaneous));
  MechanismEstimate out;
  out.n = h.n;
  out.confidence_level = h.confidence_level;
  out.method = h.method;
  out.per_coordinate_level = h.per_bucket_level;
  for (const BucketEstimate& b : h.buckets) {
    CoordinateEstimate c;
    c.successes = b.ones;
    c.trials = b.sampled;
    c.success_share =
        b.sampled > 0 ? static_cast<double>(b.ones) / static_cast<double>(b.sampled) : 0.0;
    c.unbiased = b.unbiased;
    c.clipped = b.consistent;
    c.standard_error = b.standard_error;
    c.variance = b.standard_error * b.standard_error;
    c.interval = PrevalenceInterval{b.ci_lower, b.ci_upper, false};
    c.simultaneous = PrevalenceInterval{b.simultaneous_lower, b.simultaneous_upper, false};
    out.coordinates.push_back(c);
  }
  return out;
}

absl::StatusOr<MechanismPlan> NumericReportMechanism::Plan(const PlanTarget& target) const {
  if (IsMean(design_)) {
    PlanTarget share = target;
    if (target.value_half_width > 0.0) {
      share.half_width = target.value_half_width / (design_.hi() - design_.lo());
      if (!(share.half_width <= 1.0)) share.half_width = 1.0;
    }
    return YesNoMechanism(share_design_).Plan(share);
  }
  DENIABLE_ASSIGN_OR_RETURN(HistogramPlan plan,
                            PlanHistogramSurvey(design_, target.half_width, target.confidence_level,
                                                target.simultaneous, target.assumed_shares));
  MechanismPlan out;
  out.reports_needed = plan.reports_needed;
  out.reports_needed_worst_case = plan.reports_needed_worst_case;
  return out;
}

absl::StatusOr<double> NumericReportMechanism::ExactCoverage(
    int64_t n, std::span<const double> truth, const MechanismEstimateOptions& options) const {
  if (IsMean(design_)) return YesNoMechanism(share_design_).ExactCoverage(n, truth, options);
  if (design_.sampled_buckets() != design_.buckets()) {
    return absl::FailedPreconditionError(
        "d_bit_flip with d < k: no exact coverage (each report samples d of the k buckets, "
        "which couples the buckets' counts): simulate instead");
  }
  return DBitFlipExactCoverage(design_, n, truth, options);
}

MeanEstimate MeanFromShare(const NumericDesign& design, int64_t n, const CoordinateEstimate& share,
                           IntervalMethod method) {
  const double lo = design.lo();
  const double m = design.hi() - design.lo();
  const double devices = static_cast<double>(n);
  MeanEstimate out;
  out.n = n;
  out.ones = share.successes;
  out.method = method;
  out.mean = lo + m * share.unbiased;
  out.standard_error = m * share.standard_error;
  out.ci_lower = lo + m * share.interval.lower;
  out.ci_upper = lo + m * share.interval.upper;
  out.total = out.mean * devices;
  out.total_standard_error = out.standard_error * devices;
  out.total_ci_lower = out.ci_lower * devices;
  out.total_ci_upper = out.ci_upper * devices;
  return out;
}

}  // namespace deniable
