#include "tools/cli/numeric_plan.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/interval.h"
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
  if (!(design.epsilon() > 0) || !std::isfinite(design.epsilon())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--epsilon: a numeric design needs a finite epsilon > 0, but it is ", design.epsilon()));
  }
  NumericPlan plan;
  plan.epsilon = design.epsilon();
  plan.lo = range.lo();
  plan.hi = range.hi();
  plan.unit = range.unit();
  plan.confidence_level = confidence_level;
  plan.half_width = half_width;
  const int k = design.bucket_edges_size() > 1 ? design.bucket_edges_size() - 1
                                               : static_cast<int>(design.buckets());
  // The server's pick for --design=numeric (design.proto): a histogram when buckets are asked.
  const bool histogram = design.mechanism() == v1::D_BIT_FLIP ||
                         (design.mechanism() == v1::NUMERIC_MECHANISM_UNSPECIFIED && k > 1);
  const double m = range.hi() - range.lo();
  if (!histogram) {
    if (!(half_width > 0) || !std::isfinite(half_width)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--half_width: the mean's target half-width, in the values' unit, must be > 0, but is ",
          half_width));
    }
    const double e = std::exp(design.epsilon());
    const double c = (e + 1) / (e - 1);
    const double z = TwoSidedNormalQuantile(confidence_level);
    plan.mechanism = "one_bit_mean";
    plan.devices_needed =
        static_cast<int64_t>(std::ceil(z * z * m * m * c * c / (4 * half_width * half_width)));
    plan.assumption = absl::StrFormat(
        "worst case over the values: Var(mean) <= (hi - lo)^2 C^2 / (4 n), C = (e^eps + 1) / "
        "(e^eps - 1) = %.4f; n = ceil(z^2 (hi - lo)^2 C^2 / (4 h^2)), z = %.4f",
        c, z);
    return plan;
  }
  if (!(half_width > 0 && half_width < 1)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--half_width: every bucket share's target half-width must be in (0, 1), but is ",
        half_width));
  }
  plan.mechanism = "d_bit_flip";
  plan.buckets = k > 0 ? k : 10;  // design.proto: 0 means 10 for D_BIT_FLIP
  plan.sampled_buckets =
      design.sampled_buckets() > 0 ? static_cast<int>(design.sampled_buckets()) : plan.buckets;
  const SimultaneousMethod method =
      simultaneous == v1::BONFERRONI ? SimultaneousMethod::kBonferroni : SimultaneousMethod::kSidak;
  plan.simultaneous = SimultaneousMethodName(method);
  plan.per_bucket_level = PerCategoryLevel(confidence_level, plan.buckets, method);
  const double z = TwoSidedNormalQuantile(plan.per_bucket_level);
  const double a = std::exp(design.epsilon() / 2);
  const double gap = (a - 1) / (a + 1);
  plan.devices_needed =
      static_cast<int64_t>(std::ceil(static_cast<double>(plan.buckets) / plan.sampled_buckets * z *
                                     z / (4 * half_width * half_width * gap * gap)));
  plan.assumption = absl::StrFormat(
      "worst case over the shares: each bucket's share from the n d / k reports that sample it, "
      "Var <= 1 / (4 (n d / k) (p - q)^2), p - q = (a - 1) / (a + 1) = %.4f, a = e^(eps/2); n = "
      "ceil((k / d) z^2 / (4 h^2 (p - q)^2)), z = %.4f at the per-bucket level",
      gap, z);
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
