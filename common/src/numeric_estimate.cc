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

// P(Binomial(n, r) < m), r in (0, 1), summed down from m - 1 in logs (below the mean the
// terms fall geometrically; the sum stops when they no longer count).
// Beyond a million reports per bucket, the Chernoff bound exp(-n KL(m / n || r)) instead, an
// upper bound on that probability (so the plan stays on the safe side).
double BinomialBelow(int64_t n, double r, int64_t m) {
  if (m <= 0) return 0.0;
  if (m > n) return 1.0;
  if (m > 1'000'000) {
    const double t = static_cast<double>(m) / static_cast<double>(n);
    if (t >= r) return 1.0;
    return std::exp(-static_cast<double>(n) *
                    (t * std::log(t / r) + (1.0 - t) * std::log((1.0 - t) / (1.0 - r))));
  }
  const double log_r = std::log(r), log_1r = std::log1p(-r);
  const double ln = std::lgamma(static_cast<double>(n) + 1.0);
  double sum = 0.0;
  for (int64_t c = m - 1; c >= 0; --c) {
    const double x = static_cast<double>(c);
    const double term =
        std::exp(ln - std::lgamma(x + 1.0) - std::lgamma(static_cast<double>(n - c) + 1.0) +
                 x * log_r + static_cast<double>(n - c) * log_1r);
    sum += term;
    if (term < 1e-17 * sum && x < static_cast<double>(n) * r) break;
  }
  return std::min(1.0, sum);
}

// The fewest reports n >= m k / d for which every bucket is sampled by at least m of them with
// probability >= kHistogramPlanSamplingProbability: each s_j ~ Binomial(n, d / k), and
// k P(s_j < m) <= 1 - that probability (the union bound over the k buckets).
int64_t ReportsSamplingEveryBucket(int64_t m, int k, int d) {
  if (d >= k) return m;  // every report samples every bucket: s_j = n
  const double r = static_cast<double>(d) / static_cast<double>(k);
  const double allowed = (1.0 - kHistogramPlanSamplingProbability) / static_cast<double>(k);
  auto enough = [&](int64_t n) { return BinomialBelow(n, r, m) <= allowed; };
  int64_t lo = static_cast<int64_t>(std::ceil(static_cast<double>(m) / r));
  if (enough(lo)) return lo;
  int64_t hi = lo;
  do {
    lo = hi;
    hi = hi + std::max<int64_t>(1, hi / 8);
  } while (!enough(hi));
  while (hi - lo > 1) {  // enough(hi), !enough(lo)
    const int64_t mid = lo + (hi - lo) / 2;
    (enough(mid) ? hi : lo) = mid;
  }
  return hi;
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
  // m reports sampling a bucket give it the half-width; n such that every bucket gets m with
  // probability kHistogramPlanSamplingProbability (not m on average: issue 38).
  const auto needed = [&](double lambda_spread) -> absl::StatusOr<int64_t> {
    const double m = z * z * lambda_spread / (half_width * half_width * gap * gap);
    const double rounded = std::max(1.0, std::ceil(m));
    if (!(rounded * per_report < 9.2e18 / 2)) {
      return absl::OutOfRangeError(absl::StrCat("half_width: the required number of reports (",
                                                m * per_report, ") does not fit in int64"));
    }
    return ReportsSamplingEveryBucket(static_cast<int64_t>(rounded), k, design.sampled_buckets());
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
