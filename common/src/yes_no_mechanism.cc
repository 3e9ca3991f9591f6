#include "deniable/common/yes_no_mechanism.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/coverage.h"
#include "deniable/common/estimator.h"
#include "deniable/common/method_choice.h"
#include "deniable/common/planner.h"
#include "deniable/common/privacy.h"
#include "deniable/common/randomizer.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"

namespace deniable {

double YesNoMechanism::Epsilon() const { return deniable::Epsilon(design_.channel()); }

double YesNoMechanism::CloneProbability() const {
  return BinaryCloneProbability(design_.channel());
}

absl::StatusOr<WireAnswer> YesNoMechanism::Randomize(int32_t value, Draws& draws) const {
  if (value != 0 && value != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("value: a yes/no answer must be 0 or 1, but is ", value));
  }
  WireAnswer out;
  out.bit = RandomizeAnswer(design_.channel(), value == 1, draws) ? 1 : 0;
  return out;
}

absl::StatusOr<CounterIncrements> YesNoMechanism::ValidateKind(const WireAnswer& answer,
                                                               absl::string_view field,
                                                               absl::string_view metric) const {
  if (answer.has_categorical) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".categorical: metric \"", metric,
                     "\" is a yes/no metric: its reports carry `bit` and no categorical report"));
  }
  if (answer.has_numeric) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".numeric: metric \"", metric,
                     "\" is not numeric (it has no range); send a bit or a categorical report"));
  }
  if (answer.bit > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".bit: must be 0 or 1, but is ", answer.bit));
  }
  CounterIncrements out;
  if (answer.bit == 1) out.ones.push_back(0);
  return out;
}

absl::StatusOr<MechanismPrivacy> YesNoMechanism::Privacy(const PrivacyQuestion& question) const {
  MechanismPrivacy out;
  out.epsilon = Epsilon();
  out.clone_probability = CloneProbability();
  DENIABLE_ASSIGN_OR_RETURN(out.binary, ComputePrivacyFigures(design_.channel(), question.prior));
  return out;
}

absl::StatusOr<MechanismEstimate> YesNoMechanism::Estimate(
    std::span<const int64_t> counters, const MechanismEstimateOptions& options) const {
  if (counters.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counters: a yes/no design's vector is [n, yes], 2 counters, but has ", counters.size()));
  }
  const Channel& channel = design_.channel();
  const int64_t n = counters[0];
  const int64_t yes = counters[1];
  DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e, EstimatePrevalence(channel, yes, n));
  const IntervalMethod method =
      options.method.has_value() ? *options.method : DefaultIntervalMethod(channel).method;
  DENIABLE_ASSIGN_OR_RETURN(
      PrevalenceInterval interval,
      MakePrevalenceInterval(channel, yes, n, options.confidence_level, method));
  MechanismEstimate out;
  out.n = n;
  out.confidence_level = options.confidence_level;
  out.method = method;
  out.per_coordinate_level = options.confidence_level;
  CoordinateEstimate c;
  c.successes = yes;
  c.trials = n;
  c.success_share = e.yes_share;
  c.unbiased = e.unbiased;
  c.clipped = e.clipped;
  c.variance = e.variance;
  c.standard_error = e.standard_error;
  c.interval = interval;
  c.simultaneous = interval;
  out.coordinates.push_back(c);
  return out;
}

absl::StatusOr<MechanismPlan> YesNoMechanism::Plan(const PlanTarget& target) const {
  const Channel& channel = design_.channel();
  MechanismPlan out;
  DENIABLE_ASSIGN_OR_RETURN(
      out.reports_needed_worst_case,
      WorstCaseSampleSize(channel, target.half_width, target.confidence_level));
  if (target.assumed_prevalence >= 0.0) {
    DENIABLE_ASSIGN_OR_RETURN(
        out.reports_needed, RequiredSampleSize(channel, target.half_width, target.confidence_level,
                                               target.assumed_prevalence));
    absl::StatusOr<double> inflation = VarianceInflation(channel, target.assumed_prevalence);
    if (inflation.ok()) out.variance_inflation = *inflation;
  } else {
    out.reports_needed = out.reports_needed_worst_case;
  }
  return out;
}

absl::StatusOr<double> YesNoMechanism::ExactCoverage(
    int64_t n, std::span<const double> truth, const MechanismEstimateOptions& options) const {
  if (truth.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pi: a yes/no design's truth is one prevalence, but ", truth.size(), " values are given"));
  }
  const Channel& channel = design_.channel();
  const IntervalMethod method =
      options.method.has_value() ? *options.method : DefaultIntervalMethod(channel).method;
  DENIABLE_ASSIGN_OR_RETURN(
      CoverageCurve curve,
      deniable::ExactCoverage(channel, n, options.confidence_level, method, truth));
  return curve.coverage[0];
}

}  // namespace deniable
