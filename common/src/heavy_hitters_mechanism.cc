#include "deniable/common/heavy_hitters_mechanism.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/privacy.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

absl::Status AnswersAreLists(absl::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat(what,
                   ": a heavy-hitters metric answers top-values and frequency queries "
                   "(GetTopValues, GetFrequencies), not per-coordinate estimates"));
}

}  // namespace

std::string HeavyHittersMechanism::ToString() const {
  return absl::StrFormat("heavy_hitters(eps=%.4f, max_length=%d, %dx%d, holdout=%.2f)",
                         design_.epsilon, design_.max_length, design_.rows, design_.width,
                         design_.holdout_share);
}

std::string HeavyHittersMechanism::CoordinatesKey() const {
  return absl::StrCat("heavy_hitters:", design_.salt, ":", design_.max_length, ":", design_.rows,
                      "x", design_.width);
}

CounterLayout HeavyHittersMechanism::Layout() const {
  CounterLayout layout;
  layout.coordinates = static_cast<int>(HeavyHittersCounterCount(design_));
  return layout;
}

Channel HeavyHittersMechanism::ChannelOf(int j) const {
  const double a = HeavyHittersKeepProbability(design_);
  return Channel{a, 1 - a};
}

double HeavyHittersMechanism::CloneProbability() const {
  // Two distinct values can share a Hadamard entry at a report's place (the same cell, or two
  // cells agreeing at the coefficient) while a third's differs: R(x) = (1 - a) P against
  // R(x0) + R(x1) = 2 a P, so gamma = (1 - a) / a = e^-eps, the general bound.
  return GenericCloneProbability(design_.epsilon);
}

absl::StatusOr<WireAnswer> HeavyHittersMechanism::Randomize(int32_t value, Draws& draws) const {
  return absl::FailedPreconditionError(
      "value: a heavy_hitters metric takes a string (RandomizeString), not a number");
}

absl::Status HeavyHittersMechanism::AnsweredByPrevalence(absl::string_view metric) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "metric: \"", metric,
      "\" is a heavy-hitters metric (its values are strings): ask for its top values "
      "(GetTopValues, `deniable top`) or the frequency of given values (GetFrequencies, "
      "`deniable frequency`)"));
}

uint32_t HeavyHittersMechanism::DrawDeviceGroup(Draws& draws) const {
  return DrawHeavyHittersGroup(design_, draws);
}

absl::StatusOr<WireAnswer> HeavyHittersMechanism::RandomizeString(absl::string_view value,
                                                                  uint32_t group,
                                                                  Draws& draws) const {
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersReport report,
                            RandomizeHeavyHitter(design_, value, group, draws));
  WireAnswer out;
  out.bit = report.bit ? 1 : 0;
  out.has_heavy_hitters = true;
  out.heavy_hitters = report;
  return out;
}

absl::StatusOr<CounterIncrements> HeavyHittersMechanism::ValidateKind(
    const WireAnswer& answer, absl::string_view field, absl::string_view metric) const {
  if (answer.has_categorical || answer.has_numeric || !answer.has_heavy_hitters) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".heavy_hitters: metric \"", metric,
        "\" is a heavy-hitters metric: a report must carry its heavy_hitters place and `bit`"));
  }
  if (answer.bit > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".bit: must be 0 or 1, but is ", answer.bit));
  }
  HeavyHittersReport report = answer.heavy_hitters;
  report.bit = answer.bit == 1;
  DENIABLE_ASSIGN_OR_RETURN(
      auto increments,
      HeavyHittersIncrements(design_, report, absl::StrCat(field, ".heavy_hitters")));
  CounterIncrements out;
  // Coordinates are the layout's indices minus n: y_j is counter 1 + j.
  out.ones.push_back(static_cast<uint32_t>(increments[0]));
  if (increments[1] >= 0) out.ones.push_back(static_cast<uint32_t>(increments[1]));
  return out;
}

absl::StatusOr<MechanismPrivacy> HeavyHittersMechanism::Privacy(
    const PrivacyQuestion& question) const {
  MechanismPrivacy out;
  out.epsilon = Epsilon();
  out.clone_probability = CloneProbability();
  const double a = HeavyHittersKeepProbability(design_);
  DENIABLE_ASSIGN_OR_RETURN(out.binary, ComputePrivacyFigures(Channel{a, 1 - a}, question.prior));
  return out;
}

absl::StatusOr<MechanismEstimate> HeavyHittersMechanism::Estimate(
    std::span<const int64_t> counters, const MechanismEstimateOptions& options) const {
  return AnswersAreLists("counters");
}

absl::StatusOr<MechanismPlan> HeavyHittersMechanism::Plan(const PlanTarget& target) const {
  return AnswersAreLists("half_width");
}

absl::StatusOr<double> HeavyHittersMechanism::ExactCoverage(
    int64_t n, std::span<const double> truth, const MechanismEstimateOptions& options) const {
  return AnswersAreLists("n");
}

}  // namespace deniable
