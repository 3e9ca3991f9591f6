// The estimators of numeric designs (numeric.h): EstimateMean (ONE_BIT_MEAN), EstimateHistogram
// and PlanHistogramSurvey (D_BIT_FLIP). docs/statistics.md section 9.
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/design.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/numeric.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

absl::Status CheckLevel(double confidence_level) {
  if (!(confidence_level > 0.0 && confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1 - 1e-12], but is ", confidence_level));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<MeanEstimate> EstimateMean(const NumericDesign& design, int64_t n, int64_t ones,
                                          double confidence_level, IntervalMethod method) {
  if (design.mechanism() != NumericMechanism::kOneBitMean) {
    return absl::FailedPreconditionError(
        absl::StrCat("EstimateMean needs a one_bit_mean design, not ", design.ToString()));
  }
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  if (ones < 0 || ones > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("ones must be in [0, n = ", n, "], but is ", ones));
  }
  DENIABLE_RETURN_IF_ERROR(CheckLevel(confidence_level));
  DENIABLE_ASSIGN_OR_RETURN(Design share, Design::SymmetricEpsilon(design.epsilon()));
  DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e, EstimatePrevalence(share.channel(), ones, n));
  DENIABLE_ASSIGN_OR_RETURN(PrevalenceInterval i, MakePrevalenceInterval(share.channel(), ones, n,
                                                                         confidence_level, method));
  const double lo = design.lo();
  const double m = design.hi() - design.lo();
  const double devices = static_cast<double>(n);
  MeanEstimate out;
  out.n = n;
  out.ones = ones;
  out.method = method;
  out.mean = lo + m * e.unbiased;
  out.standard_error = m * e.standard_error;
  out.ci_lower = lo + m * i.lower;
  out.ci_upper = lo + m * i.upper;
  out.total = out.mean * devices;
  out.total_standard_error = out.standard_error * devices;
  out.total_ci_lower = out.ci_lower * devices;
  out.total_ci_upper = out.ci_upper * devices;
  return out;
}

absl::StatusOr<HistogramEstimate> EstimateHistogram(const NumericDesign& design,
                                                    std::span<const int64_t> counters,
                                                    double confidence_level, IntervalMethod method,
                                                    SimultaneousMethod simultaneous) {
  if (design.mechanism() != NumericMechanism::kDBitFlip) {
    return absl::FailedPreconditionError(
        absl::StrCat("EstimateHistogram needs a d_bit_flip design, not ", design.ToString()));
  }
  const int k = design.buckets();
  const size_t length = 1 + 2 * static_cast<size_t>(k);
  if (counters.size() != length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counters: a d_bit_flip design with k = ", k, " buckets has ", length,
        " counters [n, s_0 .. s_k-1, y_0 .. y_k-1], but ", counters.size(), " are given"));
  }
  const int64_t n = counters[0];
  if (n < 0) return absl::InvalidArgumentError(absl::StrCat("counters: n is negative: ", n));
  for (int j = 0; j < k; ++j) {
    const int64_t s = counters[1 + static_cast<size_t>(j)];
    const int64_t y = counters[1 + static_cast<size_t>(k + j)];
    if (s < 0 || s > n) {
      return absl::InvalidArgumentError(absl::StrCat("counters: s_", j,
                                                     " (reports sampling bucket ", j,
                                                     ") must be in [0, n = ", n, "], but is ", s));
    }
    if (y < 0 || y > s) {
      return absl::InvalidArgumentError(
          absl::StrCat("counters: y_", j, " must be in [0, s_", j, " = ", s, "], but is ", y));
    }
  }
  DENIABLE_RETURN_IF_ERROR(CheckLevel(confidence_level));
  const Channel channel = DBitFlipChannel(design);
  HistogramEstimate out;
  out.n = n;
  out.confidence_level = confidence_level;
  out.method = method;
  out.per_bucket_level =
      k == 1 ? confidence_level : PerCategoryLevel(confidence_level, k, simultaneous);
  std::vector<double> unbiased(static_cast<size_t>(k), 0.0);
  for (int j = 0; j < k; ++j) {
    const size_t u = static_cast<size_t>(j);
    BucketEstimate b;
    b.lower = design.edges()[u];
    b.upper = design.edges()[u + 1];
    b.sampled = counters[1 + u];
    b.ones = counters[1 + static_cast<size_t>(k) + u];
    if (b.sampled == 0) {
      b.unbiased = b.standard_error = std::numeric_limits<double>::quiet_NaN();
      b.ci_lower = b.simultaneous_lower = 0.0;
      b.ci_upper = b.simultaneous_upper = 1.0;
    } else {
      DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                                EstimatePrevalence(channel, b.ones, b.sampled));
      DENIABLE_ASSIGN_OR_RETURN(
          PrevalenceInterval i,
          MakePrevalenceInterval(channel, b.ones, b.sampled, confidence_level, method));
      DENIABLE_ASSIGN_OR_RETURN(
          PrevalenceInterval joint,
          MakePrevalenceInterval(channel, b.ones, b.sampled, out.per_bucket_level, method));
      b.unbiased = e.unbiased;
      b.standard_error = e.standard_error;
      b.ci_lower = i.lower;
      b.ci_upper = i.upper;
      b.simultaneous_lower = joint.lower;
      b.simultaneous_upper = joint.upper;
      unbiased[u] = e.unbiased;
    }
    out.buckets.push_back(b);
  }
  const std::vector<double> consistent = NormSub(unbiased);
  for (size_t u = 0; u < out.buckets.size(); ++u) out.buckets[u].consistent = consistent[u];
  return out;
}

absl::StatusOr<HistogramPlan> PlanHistogramSurvey(const NumericDesign& design, double half_width,
                                                  double confidence_level,
                                                  SimultaneousMethod simultaneous,
                                                  std::span<const double> assumed_shares) {
  if (design.mechanism() != NumericMechanism::kDBitFlip) {
    return absl::FailedPreconditionError(
        absl::StrCat("PlanHistogramSurvey needs a d_bit_flip design, not ", design.ToString()));
  }
  if (!(half_width > 0.0 && half_width <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("half_width must be in (0, 1], but is ", half_width));
  }
  DENIABLE_RETURN_IF_ERROR(CheckLevel(confidence_level));
  const int k = design.buckets();
  if (!assumed_shares.empty() && assumed_shares.size() != static_cast<size_t>(k)) {
    return absl::InvalidArgumentError(absl::StrCat("assumed_shares must hold k = ", k,
                                                   " shares, but holds ", assumed_shares.size()));
  }
  const Channel c = DBitFlipChannel(design);
  double spread = 0.0;  // the largest lambda (1 - lambda) over the buckets
  for (size_t j = 0; j < assumed_shares.size(); ++j) {
    const double f = assumed_shares[j];
    if (!(f >= 0.0 && f <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("assumed_shares[", j, "] must be in [0, 1], but is ", f));
    }
    const double lambda = c.b + f * (c.a - c.b);
    spread = std::max(spread, lambda * (1.0 - lambda));
  }
  HistogramPlan out;
  out.per_bucket_level =
      k == 1 ? confidence_level : PerCategoryLevel(confidence_level, k, simultaneous);
  const double z = TwoSidedNormalQuantile(out.per_bucket_level);
  const double gap = c.a - c.b;
  const double per_report = static_cast<double>(k) / static_cast<double>(design.sampled_buckets());
  const auto needed = [&](double lambda_spread) -> absl::StatusOr<int64_t> {
    const double n = per_report * z * z * lambda_spread / (half_width * half_width * gap * gap);
    const double rounded = std::max(1.0, std::ceil(n));
    if (!(rounded < 9.2e18)) {
      return absl::OutOfRangeError(absl::StrCat("half_width: the required number of reports (", n,
                                                ") does not fit in int64"));
    }
    return static_cast<int64_t>(rounded);
  };
  DENIABLE_ASSIGN_OR_RETURN(out.reports_needed_worst_case, needed(0.25));
  if (assumed_shares.empty()) {
    out.reports_needed = out.reports_needed_worst_case;
  } else {
    DENIABLE_ASSIGN_OR_RETURN(out.reports_needed, needed(spread));
  }
  return out;
}

}  // namespace deniable
