// The yes/no mechanism (mechanism.h) of every binary design of design.h: one coordinate, counter
// vector [n, yes bits], channel (a, b). Its figures are those of estimator.h, interval.h,
// privacy.h, planner.h and coverage.h for the design's channel. Immutable and thread-safe.
#ifndef DENIABLE_COMMON_YES_NO_MECHANISM_H_
#define DENIABLE_COMMON_YES_NO_MECHANISM_H_

#include <cstdint>
#include <span>
#include <string>

#include "deniable/common/design.h"
#include "deniable/common/mechanism.h"

namespace deniable {

class YesNoMechanism final : public Mechanism {
 public:
  explicit YesNoMechanism(const Design& design) : design_(design) {}

  const Design& design() const { return design_; }

  ReportKind kind() const override { return ReportKind::kYesNo; }
  std::string ToString() const override { return design_.ToString(); }
  CounterLayout Layout() const override { return CounterLayout{1}; }
  Channel ChannelOf(int /*j*/) const override { return design_.channel(); }
  double Epsilon() const override;
  double CloneProbability() const override;
  using Mechanism::Randomize;
  absl::StatusOr<WireAnswer> Randomize(int32_t value, Draws& draws) const override;
  absl::StatusOr<MechanismPrivacy> Privacy(const PrivacyQuestion& question) const override;
  absl::StatusOr<MechanismEstimate> Estimate(
      std::span<const int64_t> counters, const MechanismEstimateOptions& options) const override;
  absl::StatusOr<MechanismPlan> Plan(const PlanTarget& target) const override;
  absl::StatusOr<double> ExactCoverage(int64_t n, std::span<const double> truth,
                                       const MechanismEstimateOptions& options) const override;

 private:
  absl::StatusOr<CounterIncrements> ValidateKind(const WireAnswer& answer, absl::string_view field,
                                                 absl::string_view metric) const override;
  Design design_;
};

}  // namespace deniable

#endif  // DENIABLE_COMMON_YES_NO_MECHANISM_H_
