#include "tools/cli/numeric_plan.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/convert/numeric_advice.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/numeric_output.h"

namespace deniable::tools {

absl::StatusOr<NumericPlan> PlanNumeric(const v1::Numeric& design, const v1::NumericRange& range,
                                        double half_width, double confidence_level,
                                        v1::SimultaneousMethod simultaneous) {
  if (!(confidence_level > 0 && confidence_level < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--level must be in (0, 1), but is ", confidence_level));
  }
  // The arithmetic is the server's PlanSurvey (proto/convert/numeric_advice.h), so `plan` and
  // the API answer alike; its field names become the flags' here.
  v1::PlanSurveyRequest request;
  *request.mutable_design()->mutable_numeric() = design;
  *request.mutable_range() = range;
  request.set_half_width(half_width);
  request.set_confidence_level(confidence_level);
  request.set_simultaneous(simultaneous);
  absl::StatusOr<v1::SurveyPlan> planned = PlanNumericSurvey(request);
  if (!planned.ok()) {
    std::string message(planned.status().message());
    for (const auto& [field, flag] :
         {std::pair<std::string, std::string>{"half_width", "--half_width"},
          {"design.numeric.epsilon", "--epsilon"},
          {"design.numeric.buckets", "--buckets"},
          {"design.numeric.bucket_edges", "--bucket_edges"},
          {"design.numeric.sampled_buckets", "--sampled_buckets"},
          {"range", "--range"}}) {
      if (absl::StartsWith(message, field)) {
        message = flag + message.substr(field.size());
        break;
      }
    }
    return absl::Status(planned.status().code(), message);
  }
  const v1::Numeric& chosen = planned->design().parameters().numeric();
  NumericPlan plan;
  plan.epsilon = chosen.epsilon();
  plan.lo = range.lo();
  plan.hi = range.hi();
  plan.unit = range.unit();
  plan.confidence_level = planned->confidence_level();
  plan.half_width = half_width;
  plan.devices_needed = planned->reports_needed();
  plan.assumption = planned->assumption();
  if (chosen.mechanism() == v1::D_BIT_FLIP) {
    plan.mechanism = "d_bit_flip";
    plan.buckets = static_cast<int>(chosen.buckets());
    plan.sampled_buckets = static_cast<int>(chosen.sampled_buckets());
    plan.simultaneous = planned->simultaneous_method() == v1::BONFERRONI ? "bonferroni" : "sidak";
    plan.per_bucket_level = planned->per_category_level();
  } else {
    plan.mechanism = "one_bit_mean";
  }
  return plan;
}

std::string FormatNumericPlan(const NumericPlan& p) {
  const std::string unit = p.unit.empty() ? "" : " " + p.unit;
  const std::string level = LevelLabel(p.confidence_level);
  if (p.mechanism == "one_bit_mean") {
    return absl::StrFormat(
        "design                      one_bit_mean (epsilon = %.4f nats, values in [%g, %g]%s)\n"
        "target                      the mean within +/- %s%s at %s %%\n"
        "devices needed              %d, one report each\n"
        "assumption                  %s\n",
        p.epsilon, p.lo, p.hi, unit, NumericValue(p.half_width, p.hi - p.lo), unit, level,
        p.devices_needed, p.assumption);
  }
  return absl::StrFormat(
      "design                      d_bit_flip (k = %d buckets, d = %d sampled per report, epsilon "
      "= %.4f nats, values in [%g, %g]%s)\n"
      "target                      every bucket share within +/- %.2f percentage points, all %d "
      "together at %s %% (%s, each at %.4f %%)\n"
      "devices needed              %d, one report each\n"
      "assumption                  %s\n",
      p.buckets, p.sampled_buckets, p.epsilon, p.lo, p.hi, unit, 100 * p.half_width, p.buckets,
      level, p.simultaneous, 100 * p.per_bucket_level, p.devices_needed, p.assumption);
}

}  // namespace deniable::tools
