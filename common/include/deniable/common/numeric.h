// Numeric telemetry in one bit: 1BitMean (means and totals) and dBitFlip (histograms and
// quantiles), after Ding, Kulkarni and Yekhanin, "Collecting Telemetry Data Privately", NeurIPS
// 2017 (DKY17), with alpha-point rounding for memoization (DKY17 section 3) and confidence
// intervals (docs/statistics.md section 9).
//
// The device's path (the SDKs mirror it; tests/golden/randomizer_vectors.json holds them to it):
//   1. ClipValue: a value outside [lo, hi] becomes the nearest end (the SDK counts it).
//   2. LevelOf: the clipped value becomes an integer level, the one thing memoized:
//      - ONE_BIT_MEAN: alpha-point rounding to the grid `edges` (k + 1 points). With x in
//        [e_L, e_{L+1}] and r = (x - e_L) / (e_{L+1} - e_L), the level is L + 1 when r > alpha,
//        else L. alpha in [0, 1) is drawn once per (device, metric) and kept in the device
//        store, so E_alpha[edge of the level] = x (unbiased) and a device whose value stays
//        inside one grid cell keeps one level (and one memoized bit).
//      - D_BIT_FLIP: the bucket j with e_j <= x < e_{j+1} (x = hi: the last bucket); alpha unused.
//   3. The mechanism (MechanismFor(NumericDesign), mechanism.h) randomizes the level:
//      - ONE_BIT_MEAN: one Bernoulli(1/(e^eps + 1) + t (e^eps - 1)/(e^eps + 1)) draw with
//        t = (e_level - lo) / (hi - lo) (DKY17 equation 1); wire: Report.bit.
//      - D_BIT_FLIP: d distinct buckets drawn with Below: the i-th draw (i = 0 .. d-1) is
//        Below(k - i) indexing the buckets not yet drawn in ascending order; then, for each
//        sampled bucket in ascending order, one Bernoulli(a/(a + 1)) when it is the level's
//        bucket, else Bernoulli(1/(a + 1)), a = e^(eps/2); wire: Report.numeric (buckets
//        ascending, one bit each).
// The server's counters (mechanism.h CounterLayout):
//   - ONE_BIT_MEAN: [n, ones] (coordinates 1), as a yes/no design;
//   - D_BIT_FLIP: [n, s_0 .. s_{k-1}, y_0 .. y_{k-1}] (coordinates 2k): s_j reports that sampled
//     bucket j, y_j those whose bit for j is 1.
//
// All functions are pure and thread-safe.
#ifndef DENIABLE_COMMON_NUMERIC_H_
#define DENIABLE_COMMON_NUMERIC_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/design.h"
#include "deniable/common/interval.h"
#include "deniable/common/privacy.h"

namespace deniable {

enum class NumericMechanism {
  kOneBitMean,  // "one_bit_mean"
  kDBitFlip,    // "d_bit_flip"
};

const char* NumericMechanismName(NumericMechanism mechanism);
// Errors: INVALID_ARGUMENT naming "mechanism" (not one of the names above).
absl::StatusOr<NumericMechanism> ParseNumericMechanism(absl::string_view name);

// A numeric design: immutable value type, thread-safe to share once constructed.
class NumericDesign {
 public:
  // edges: k + 1 finite ascending distinct values (1 <= k <= 256); edges.front() is the metric's
  // lo, edges.back() its hi. sampled_buckets: D_BIT_FLIP's d in [1, k] (0 means k); must be 0
  // for ONE_BIT_MEAN. epsilon: nats, finite, in (0, kMaxSymmetricEpsilon] (design.h), with the
  // channel's gap at least kMinChannelGap: tanh(eps / 2) for ONE_BIT_MEAN (eps >~ 0.002),
  // tanh(eps / 4) for D_BIT_FLIP (eps >~ 0.004).
  // Errors: INVALID_ARGUMENT naming "epsilon", "bucket_edges" or "sampled_buckets".
  static absl::StatusOr<NumericDesign> Create(NumericMechanism mechanism, double epsilon,
                                              std::vector<double> edges, int sampled_buckets);
  // k equal-width buckets over [lo, hi] (k = 0: 1 for ONE_BIT_MEAN, 10 for D_BIT_FLIP).
  // Errors: as Create, and "range" (lo >= hi or not finite), "buckets" (k > 256).
  static absl::StatusOr<NumericDesign> EqualWidth(NumericMechanism mechanism, double epsilon,
                                                  double lo, double hi, int buckets,
                                                  int sampled_buckets);

  NumericMechanism mechanism() const { return mechanism_; }
  double epsilon() const { return epsilon_; }
  const std::vector<double>& edges() const { return edges_; }
  int buckets() const { return static_cast<int>(edges_.size()) - 1; }  // k
  int sampled_buckets() const { return sampled_buckets_; }             // d (0: ONE_BIT_MEAN)
  double lo() const { return edges_.front(); }
  double hi() const { return edges_.back(); }
  // "one_bit_mean(eps=1.0986, [0, 100], 1 cell)", "d_bit_flip(k=10, d=10, eps=1.0986, [0, 100])".
  std::string ToString() const;

 private:
  NumericDesign() = default;
  NumericMechanism mechanism_ = NumericMechanism::kOneBitMean;
  double epsilon_ = 0;
  std::vector<double> edges_;
  int sampled_buckets_ = 0;
};

struct ClippedValue {
  double value = 0;      // in [lo, hi]
  bool clipped = false;  // the value was outside the range (or NaN: then lo, and clipped)
};
ClippedValue ClipValue(const NumericDesign& design, double value);

// The level of a value already in [lo, hi] (step 2 above). REQUIRES: alpha in [0, 1).
// Returns a level in [0, k] (ONE_BIT_MEAN: a grid point) or [0, k) (D_BIT_FLIP: a bucket).
int LevelOf(const NumericDesign& design, double clipped_value, double alpha);

// ONE_BIT_MEAN's probability of bit 1 at t = (x - lo) / (hi - lo) in [0, 1]:
// 1/(e^eps + 1) + t (e^eps - 1)/(e^eps + 1) (DKY17 equation 1).
double OneBitMeanProbability(double epsilon, double t);

// D_BIT_FLIP's channel of one sampled bucket: (a/(a + 1), 1/(a + 1)), a = e^(eps/2): bit 1 with
// probability a/(a + 1) when the value is in the bucket, 1/(a + 1) when not (DKY17 section 2.2).
Channel DBitFlipChannel(const NumericDesign& design);

// The privacy figures of a whole D_BIT_FLIP report (the d sampled buckets and their d bits),
// not of one sampled bucket's bit, for x = [the value is in bucket j]: P(x = 1) = prior and,
// when x = 0, the value in each of the other k - 1 buckets alike (the figures are the same for
// every j). Computed exactly, summed over the report space (C(k, d) 2^d reports, in O(d) classes
// of reports with equal likelihoods):
//   posterior_given_yes  max over reports r of P(x = 1 | r): the report most telling of x = 1
//   posterior_given_no   min over reports r of P(x = 1 | r): the report most telling of x = 0
//   prior_entropy_bits   H(x); conditional_entropy_bits H(x | r); mutual_information_bits
//   I(x; r) = H(x) - H(x | r); epsilon the report's (eps, or eps / 2 for d = 1, 0 for k = 1).
// At k = d = 4, eps = 2, prior 1/2: 88.08 % (e^eps / (1 + e^eps)) and 0.2135 bits, where one
// bucket's bit gives 73.11 % and 0.1601 bits (ComputePrivacyFigures(DBitFlipChannel, prior)).
// Errors: INVALID_ARGUMENT naming "prior" (NaN or outside [0, 1]); FAILED_PRECONDITION for a
// ONE_BIT_MEAN design.
absl::StatusOr<PrivacyFigures> DBitFlipReportPrivacy(const NumericDesign& design, double prior);

// The probability with which a D_BIT_FLIP plan with d < k has every bucket sampled by the
// reports its half-width needs (PlanHistogramSurvey).
inline constexpr double kHistogramPlanSamplingProbability = 0.95;

// D_BIT_FLIP's planner: reports n so that every bucket share's simultaneous Wald interval
// (level `confidence_level` over the k buckets by `simultaneous`) has half-width <= half_width.
// A bucket sampled by s_j reports has it when s_j >= m = ceil(z^2 lambda (1 - lambda) / (h^2
// (p - q)^2)), lambda = q + f (p - q) at the largest assumed share's lambda (1 - lambda), or
// lambda = 1/2 (worst case) when `assumed_shares` is empty. d = k: n = m (s_j = n). d < k: s_j
// ~ Binomial(n, d / k), and n is the fewest reports with k P(s_j < m) <= 1 -
// kHistogramPlanSamplingProbability (the binomial lower tail, exactly, with the union bound over
// the buckets), so every bucket reaches m, and the half-width h, with probability >= 95 %; not
// n = m k / d, which sampled a bucket by m reports only on average (issue 38: 7 of 12 replays
// missed h).
// Errors: INVALID_ARGUMENT naming "half_width" (not in (0, 1]), "confidence_level",
// "assumed_shares" (not k shares in [0, 1]); OUT_OF_RANGE when n exceeds int64;
// FAILED_PRECONDITION for a ONE_BIT_MEAN design.
struct HistogramPlan {
  int64_t reports_needed = 0;             // at the assumed shares (or the worst case)
  int64_t reports_needed_worst_case = 0;  // lambda = 1/2
  double per_bucket_level = 0;
};
absl::StatusOr<HistogramPlan> PlanHistogramSurvey(const NumericDesign& design, double half_width,
                                                  double confidence_level,
                                                  SimultaneousMethod simultaneous,
                                                  std::span<const double> assumed_shares);

// ONE_BIT_MEAN's mean and total from n reports with `ones` bits 1, at `level`, with `method`
// (interval.h) on the bit's debiased share pi_hat, mapped by lo + (hi - lo) * pi (clipped to
// [lo, hi]). total = mean * n ("over the n reporting devices"), its SE and interval n times the
// mean's. Errors: INVALID_ARGUMENT naming "n", "ones", "confidence_level"; FAILED_PRECONDITION
// for a D_BIT_FLIP design.
struct MeanEstimate {
  int64_t n = 0;
  int64_t ones = 0;
  double mean = 0;  // lo + (hi - lo) * pi_hat (unclipped: unbiased)
  double standard_error = 0;
  double ci_lower = 0;
  double ci_upper = 0;
  double total = 0;
  double total_standard_error = 0;
  double total_ci_lower = 0;
  double total_ci_upper = 0;
  IntervalMethod method = IntervalMethod::kWilson;
};
absl::StatusOr<MeanEstimate> EstimateMean(const NumericDesign& design, int64_t n, int64_t ones,
                                          double confidence_level, IntervalMethod method);

// D_BIT_FLIP's histogram from its counter vector [n, s_0..s_{k-1}, y_0..y_{k-1}]. Bucket j's
// share: (y_j / s_j - 1/(a+1)) / ((a-1)/(a+1)), its SE from the binomial of s_j, its interval by
// `method` through the binary channel (a/(a+1), 1/(a+1)) and simultaneous intervals (Sidak or
// Bonferroni over the k buckets); consistent shares by norm_sub. A bucket nobody sampled (s_j
// = 0) has NaN estimate and the trivial interval [0, 1].
// Errors: INVALID_ARGUMENT naming "counters" (length is not 1 + 2k, or s_j > n, y_j > s_j),
// "confidence_level"; FAILED_PRECONDITION for a ONE_BIT_MEAN design.
struct BucketEstimate {
  double lower = 0;  // edges[j]
  double upper = 0;  // edges[j + 1]
  int64_t sampled = 0;
  int64_t ones = 0;
  double unbiased = 0;
  double consistent = 0;
  double standard_error = 0;
  double ci_lower = 0;
  double ci_upper = 0;
  double simultaneous_lower = 0;
  double simultaneous_upper = 0;
};
struct HistogramEstimate {
  int64_t n = 0;
  double confidence_level = 0;
  double per_bucket_level = 0;  // each simultaneous interval's level
  IntervalMethod method = IntervalMethod::kWilson;
  std::vector<BucketEstimate> buckets;
};
absl::StatusOr<HistogramEstimate> EstimateHistogram(const NumericDesign& design,
                                                    std::span<const int64_t> counters,
                                                    double confidence_level, IntervalMethod method,
                                                    SimultaneousMethod simultaneous);

// Quantiles from a histogram (docs/statistics.md section 9.4): the value where the cumulative
// consistent share reaches `level` (linear inside the bucket), and an interval from a
// simultaneous band on the cumulative shares: each interior edge's cumulative share C_j from the
// side with fewer buckets, Wald at the Sidak level confidence^(1/(k-1)), made monotone; the
// interval is [the last edge whose upper band is below the level, the first edge whose lower
// band reaches it], so it ends on bucket edges and holds for every level at once whenever the
// band does. `histogram` must come from EstimateHistogram for `design`.
// Errors: INVALID_ARGUMENT naming "levels[i]" (outside (0, 1)) or "histogram" (not k buckets).
struct QuantileEstimate {
  double level = 0;
  double value = 0;
  double ci_lower = 0;
  double ci_upper = 0;
};
absl::StatusOr<std::vector<QuantileEstimate>> EstimateQuantiles(const NumericDesign& design,
                                                                const HistogramEstimate& histogram,
                                                                std::span<const double> levels);

}  // namespace deniable

#endif  // DENIABLE_COMMON_NUMERIC_H_
