// The numeric mechanisms (mechanism.h) of numeric designs (numeric.h): 1BitMean and dBitFlip of
// Ding, Kulkarni and Yekhanin, NeurIPS 2017 (DKY17). Immutable and thread-safe.
//
// The value Randomize takes is the LEVEL of numeric.h (LevelOf of the clipped value), not the
// value itself, so that a device memoizes per level.
//
// ONE_BIT_MEAN: one coordinate, counter vector [n, ones], channel (e^eps/(e^eps+1),
//   1/(e^eps+1)) of the Bernoulli((x - lo)/(hi - lo)) draw: its figures are the yes/no ones of
//   the symmetric design Design::SymmetricEpsilon(eps) on the share scale pi = (mean - lo) / m,
//   m = hi - lo (EstimateMean maps them to the value scale). Plan: a PlanTarget with
//   value_half_width > 0 asks for the mean within +/- value_half_width (value units), that is
//   the share within +/- value_half_width / m.
// D_BIT_FLIP: 2k coordinates, counter vector [n, s_0 .. s_{k-1}, y_0 .. y_{k-1}]: s_j counts the
//   reports that sampled bucket j, y_j those whose bit for bucket j is 1. ChannelOf(j) for j < k
//   is the sampling (d/k, d/k), which does not depend on the value (a == b: no binary estimate);
//   ChannelOf(k + j) is bucket j's channel (a/(a+1), 1/(a+1)), a = e^(eps/2), whose trials are
//   the s_j reports. Estimate returns k coordinates (the bucket shares, numeric.h
//   EstimateHistogram), each with `trials` = s_j. Plan: every bucket share within +/- half_width
//   simultaneously (share scale).
#ifndef DENIABLE_COMMON_NUMERIC_MECHANISM_H_
#define DENIABLE_COMMON_NUMERIC_MECHANISM_H_

#include <cstdint>
#include <span>
#include <string>

#include "deniable/common/design.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"

namespace deniable {

class NumericReportMechanism final : public Mechanism {
 public:
  explicit NumericReportMechanism(const NumericDesign& design);

  const NumericDesign& design() const { return design_; }

  ReportKind kind() const override { return ReportKind::kNumeric; }
  std::string ToString() const override { return design_.ToString(); }
  std::string CoordinatesKey() const override;
  CounterLayout Layout() const override;
  Channel ChannelOf(int j) const override;
  // ONE_BIT_MEAN: eps. D_BIT_FLIP: the largest log-ratio of a report's probabilities between two
  // values: eps when d >= 2 (both values' buckets sampled, two bits flip their odds by a each),
  // eps / 2 when d = 1, 0 when k = 1.
  double Epsilon() const override;
  // ONE_BIT_MEAN: 2 / (e^eps + 1) (every value's output is a mixture of the two extreme
  // Bernoullis, so BinaryCloneProbability of the extreme channel applies); D_BIT_FLIP:
  // e^(-Epsilon()) (shuffle.h GenericCloneProbability).
  double CloneProbability() const override;
  using Mechanism::Randomize;
  // `value` is the level: [0, k] for ONE_BIT_MEAN, [0, k) for D_BIT_FLIP.
  // Errors: INVALID_ARGUMENT naming "level".
  absl::StatusOr<WireAnswer> Randomize(int32_t value, Draws& draws) const override;
  absl::StatusOr<MechanismPrivacy> Privacy(const PrivacyQuestion& question) const override;
  absl::StatusOr<MechanismEstimate> Estimate(
      std::span<const int64_t> counters, const MechanismEstimateOptions& options) const override;
  absl::StatusOr<MechanismPlan> Plan(const PlanTarget& target) const override;
  // ONE_BIT_MEAN: the yes/no coverage at truth = {pi} on the share scale. D_BIT_FLIP with d = k:
  // the simultaneous coverage of the k buckets' intervals for n devices of which n f_j are in
  // bucket j (truth = the k shares f_j; the buckets' counts are then independent, so it is the
  // product of their exact coverages). Errors: INVALID_ARGUMENT naming "n" (d_bit_flip: not in
  // [1, 5000]), "shares" / "shares[j]" (not k shares with n f_j an integer); FAILED_PRECONDITION
  // for d < k (simulate instead).
  absl::StatusOr<double> ExactCoverage(int64_t n, std::span<const double> truth,
                                       const MechanismEstimateOptions& options) const override;

 private:
  // Errors: INVALID_ARGUMENT naming "<field>.categorical", "<field>.numeric",
  // "<field>.numeric.buckets", "<field>.numeric.bits" or "<field>.bit".
  absl::StatusOr<CounterIncrements> ValidateKind(const WireAnswer& answer, absl::string_view field,
                                                 absl::string_view metric) const override;
  NumericDesign design_;
  Design share_design_;  // ONE_BIT_MEAN: SymmetricEpsilon(eps), the bit's channel
};

// A ONE_BIT_MEAN share estimate (Estimate's or EstimateVersions' coordinate 0 over n reports)
// on the value scale: mean = lo + m * unbiased, its SE m times the share's, the interval mapped,
// the total n times each (numeric.h MeanEstimate). For one version it equals EstimateMean.
// REQUIRES: a ONE_BIT_MEAN design.
MeanEstimate MeanFromShare(const NumericDesign& design, int64_t n, const CoordinateEstimate& share,
                           IntervalMethod method);

}  // namespace deniable

#endif  // DENIABLE_COMMON_NUMERIC_MECHANISM_H_
