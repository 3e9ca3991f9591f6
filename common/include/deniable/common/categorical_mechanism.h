// The categorical mechanism (mechanism.h) of k-RR, OUE and OLH designs (categorical.h): k
// coordinates, counter vector [n, support_0 .. support_{k-1}], each coordinate through the
// support channel (p*, q*). Its figures are those of categorical_estimate.h,
// categorical_privacy.h, categorical_planner.h and categorical_coverage.h. Immutable and
// thread-safe.
#ifndef DENIABLE_COMMON_CATEGORICAL_MECHANISM_H_
#define DENIABLE_COMMON_CATEGORICAL_MECHANISM_H_

#include <cstdint>
#include <span>
#include <string>

#include "deniable/common/categorical.h"
#include "deniable/common/mechanism.h"

namespace deniable {

class CategoricalReportMechanism final : public Mechanism {
 public:
  explicit CategoricalReportMechanism(const CategoricalDesign& design) : design_(design) {}

  const CategoricalDesign& design() const { return design_; }

  ReportKind kind() const override { return ReportKind::kCategorical; }
  std::string ToString() const override { return design_.ToString(); }
  CounterLayout Layout() const override { return CounterLayout{design_.k()}; }
  Channel ChannelOf(int /*j*/) const override { return design_.SupportChannel(); }
  double Epsilon() const override { return design_.epsilon(); }
  double CloneProbability() const override { return design_.CloneProbability(); }
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
  CategoricalDesign design_;
};

}  // namespace deniable

#endif  // DENIABLE_COMMON_CATEGORICAL_MECHANISM_H_
