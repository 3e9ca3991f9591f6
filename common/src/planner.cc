#include "deniable/common/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

absl::Status CheckPlan(const Channel& channel, double half_width, double confidence_level) {
  DENIABLE_RETURN_IF_ERROR(ValidateChannel(channel));
  if (!(half_width > 0.0 && half_width <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("half_width must be in (0, 1], but is ", half_width));
  }
  if (!(confidence_level > 0.0 && confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1 - 1e-12], but is ", confidence_level));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SampleSizeFor(const Channel& channel, double half_width,
                                      double confidence_level, double lambda) {
  const double z = TwoSidedNormalQuantile(confidence_level);
  const double gap = channel.a - channel.b;
  const double n = z * z * lambda * (1.0 - lambda) / (half_width * half_width * gap * gap);
  const double rounded = std::max(1.0, std::ceil(n));
  if (!(rounded < 9.2e18)) {
    return absl::OutOfRangeError(
        absl::StrCat("half_width: the required number of reports (", n, ") does not fit in int64"));
  }
  return static_cast<int64_t>(rounded);
}

}  // namespace

absl::StatusOr<int64_t> RequiredSampleSize(const Channel& channel, double half_width,
                                           double confidence_level, double assumed_pi) {
  DENIABLE_RETURN_IF_ERROR(CheckPlan(channel, half_width, confidence_level));
  if (!(assumed_pi >= 0.0 && assumed_pi <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("pi must be in [0, 1], but is ", assumed_pi));
  }
  return SampleSizeFor(channel, half_width, confidence_level,
                       YesShareFromPrevalence(channel, assumed_pi));
}

absl::StatusOr<int64_t> WorstCaseSampleSize(const Channel& channel, double half_width,
                                            double confidence_level) {
  DENIABLE_RETURN_IF_ERROR(CheckPlan(channel, half_width, confidence_level));
  const double lambda =
      std::clamp(0.5, std::min(channel.a, channel.b), std::max(channel.a, channel.b));
  return SampleSizeFor(channel, half_width, confidence_level, lambda);
}

absl::StatusOr<double> VarianceInflation(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(ValidateChannel(channel));
  if (!(pi > 0.0 && pi < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pi must be in (0, 1) (the direct variance is 0 at the ends), but is ", pi));
  }
  const double lambda = YesShareFromPrevalence(channel, pi);
  const double gap = channel.a - channel.b;
  return lambda * (1.0 - lambda) / (gap * gap * pi * (1.0 - pi));
}

}  // namespace deniable
