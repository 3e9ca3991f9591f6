// The heavy-hitters mechanism (mechanism.h) of a HeavyHittersDesign (heavy_hitters.h).
// Immutable and thread-safe.
//
// Values are strings: RandomizeString(value, group) with the device's group (DrawDeviceGroup,
// kept with the device's state); Randomize(int) fails. Layout: HeavyHittersCounterCount(design)
// coordinates, y_{2 cell} counting the reports at a sketch cell and y_{2 cell + 1} those with
// bit 1 (heavy_hitters.h), so one report adds 1 to n and to one or two coordinates.
// ChannelOf(j) is the bit's channel (a, 1 - a), a = e^eps / (1 + e^eps), for every j. The answers
// are not coordinate estimates: Estimate, Plan and ExactCoverage fail with FAILED_PRECONDITION
// pointing to the top and frequency queries (heavy_hitters_estimate.h).
#ifndef DENIABLE_COMMON_HEAVY_HITTERS_MECHANISM_H_
#define DENIABLE_COMMON_HEAVY_HITTERS_MECHANISM_H_

#include <cstdint>
#include <span>
#include <string>

#include "deniable/common/heavy_hitters.h"
#include "deniable/common/mechanism.h"

namespace deniable {

class HeavyHittersMechanism final : public Mechanism {
 public:
  // REQUIRES: ValidateHeavyHittersDesign(design).ok().
  explicit HeavyHittersMechanism(const HeavyHittersDesign& design) : design_(design) {}

  const HeavyHittersDesign& design() const { return design_; }

  ReportKind kind() const override { return ReportKind::kHeavyHitters; }
  // "heavy_hitters(eps=1.0986, max_length=32, 16x1024, holdout=0.25)".
  std::string ToString() const override;
  // The salt and sketch shape: versions combine only when they hash alike.
  std::string CoordinatesKey() const override;
  CounterLayout Layout() const override;
  Channel ChannelOf(int j) const override;
  double Epsilon() const override { return design_.epsilon; }
  // e^-eps, the general bound (shuffle.h), not the 2 / (e^eps + 1) of a symmetric yes/no bit:
  // two distinct values x0, x1 can share the Hadamard entry at a report's place while a third
  // value's differs, so R(x) >= gamma/2 (R(x0) + R(x1)) holds only for gamma <= (1 - a) / a.
  double CloneProbability() const override;
  using Mechanism::Randomize;
  // Errors: FAILED_PRECONDITION naming "value" (values of this kind are strings).
  absl::StatusOr<WireAnswer> Randomize(int32_t value, Draws& draws) const override;
  bool TakesStrings() const override { return true; }
  // Errors: FAILED_PRECONDITION naming "metric": its values are strings, asked for by top values
  // (GetTopValues, `deniable top`) or the frequency of given values (GetFrequencies).
  absl::Status AnsweredByPrevalence(absl::string_view metric) const override;
  uint32_t DrawDeviceGroup(Draws& draws) const override;
  absl::StatusOr<WireAnswer> RandomizeString(absl::string_view value, uint32_t group,
                                             Draws& draws) const override;
  // epsilon; `binary` at the prior: the posterior that a device holds a candidate value after
  // one report is at most prior e^eps / (prior e^eps + 1 - prior) (the bit's likelihood ratio).
  absl::StatusOr<MechanismPrivacy> Privacy(const PrivacyQuestion& question) const override;
  absl::StatusOr<MechanismEstimate> Estimate(
      std::span<const int64_t> counters, const MechanismEstimateOptions& options) const override;
  absl::StatusOr<MechanismPlan> Plan(const PlanTarget& target) const override;
  absl::StatusOr<double> ExactCoverage(int64_t n, std::span<const double> truth,
                                       const MechanismEstimateOptions& options) const override;

 private:
  // Errors: INVALID_ARGUMENT naming "<field>.heavy_hitters" (absent, or a categorical or numeric
  // report instead), "<field>.bit", "<field>.heavy_hitters.group", ".row" or ".coefficient".
  absl::StatusOr<CounterIncrements> ValidateKind(const WireAnswer& answer, absl::string_view field,
                                                 absl::string_view metric) const override;
  HeavyHittersDesign design_;
};

}  // namespace deniable

#endif  // DENIABLE_COMMON_HEAVY_HITTERS_MECHANISM_H_
