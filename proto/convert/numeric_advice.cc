#include "deniable/convert/numeric_advice.h"

#include <cmath>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/interval.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/common/numeric_mechanism.h"
#include "deniable/common/privacy.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/numeric_convert.h"

namespace deniable {
namespace {

bool IsHistogram(const NumericDesign& design) {
  return design.mechanism() == NumericMechanism::kDBitFlip;
}

}  // namespace

absl::StatusOr<v1::DesignDescription> DescribeNumericDesign(
    const v1::DescribeDesignRequest& request, const NumericDesign& design, const v1::Design& wire) {
  const double prior = request.prior();
  if (!(prior >= 0.0 && prior <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("prior: must be in [0, 1], but is ", prior));
  }
  if (request.category_prior_size() > 0) {
    return absl::InvalidArgumentError(
        "category_prior: only for a categorical design; a numeric design takes prior");
  }
  const NumericReportMechanism mechanism(design);
  v1::DesignDescription out;
  *out.mutable_design() = wire;
  DENIABLE_ASSIGN_OR_RETURN(MechanismPrivacy figures,
                            mechanism.Privacy(PrivacyQuestion{prior, {}}));
  out.set_prior(prior);
  // dBitFlip: the figures of the whole report (its d sampled buckets and bits, issue 38), not
  // of one bucket's bit, which the note gives beside them.
  PrivacyFigures shown = figures.binary;
  if (IsHistogram(design)) {
    DENIABLE_ASSIGN_OR_RETURN(shown, DBitFlipReportPrivacy(design, prior));
  }
  out.set_posterior_given_yes(shown.posterior_given_yes);
  out.set_posterior_given_no(shown.posterior_given_no);
  out.set_entropy_bits(shown.prior_entropy_bits);
  out.set_conditional_entropy_bits(shown.conditional_entropy_bits);
  out.set_mutual_information_bits(shown.mutual_information_bits);
  out.set_channel_note(absl::StrCat(
      design.ToString(),
      IsHistogram(design)
          ? absl::StrFormat(
                ": the figures are of the whole report (its %d sampled buckets and their bits), "
                "x = 1 meaning the value is in a given bucket (else in one of the other %d, "
                "alike): posterior_given_yes is P(x = 1 | the report most telling of it), "
                "posterior_given_no P(x = 1 | the report least telling of it); one sampled "
                "bucket's bit alone (a = e^(eps/2)) gives P(x = 1 | bit 1) = %.4f and I(x; bit) "
                "= %.4f bits",
                design.sampled_buckets(), design.buckets() - 1, figures.binary.posterior_given_yes,
                figures.binary.mutual_information_bits)
          : ": the binary figures are of the bit for a value at hi (x = 1) against lo (x = 0)"));
  if (request.n() > 0) {
    absl::StatusOr<CentralPrivacy> c = AmplifiedEpsilon(figures.epsilon, figures.clone_probability,
                                                        request.n(), kDefaultCentralDelta);
    if (!c.ok()) return absl::Status(c.status().code(), absl::StrCat("n: ", c.status().message()));
    out.set_central_epsilon(c->epsilon);
    out.set_central_delta(c->delta);
    out.set_central_n(c->n);
    out.set_central_method(c->method);
    out.set_central_note(c->note);
  }
  return out;
}

absl::StatusOr<v1::DesignDescription> DescribeNumericParameters(
    const v1::DescribeDesignRequest& request) {
  DENIABLE_ASSIGN_OR_RETURN(
      NumericDesign design,
      NumericDesignFromProto(request.design(), "design",
                             request.has_range() ? &request.range() : nullptr));
  v1::Design wire;
  NumericDesignToProto(design, 0, request.has_range() ? request.range().unit() : "", &wire);
  return DescribeNumericDesign(request, design, wire);
}

absl::StatusOr<v1::SurveyPlan> PlanNumericSurvey(const v1::PlanSurveyRequest& request) {
  if (!request.has_range()) {
    return absl::InvalidArgumentError(
        "range: a numeric design (design.numeric) is planned over its values' range: give "
        "range.lo < range.hi (and range.unit)");
  }
  DENIABLE_ASSIGN_OR_RETURN(NumericDesign design,
                            NumericDesignFromProto(request.design(), "design", &request.range()));
  const double level = request.confidence_level() == 0.0 ? 0.95 : request.confidence_level();
  if (!(level > 0.0 && level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1 - 1e-12] or 0 for 0.95, but is ", level));
  }
  if (request.assumed_prevalence() != 0.0 && request.assumed_prevalence() != -1.0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "assumed_prevalence: a numeric plan is for the worst case over the values and takes "
        "none (0 or -1), but is ",
        request.assumed_prevalence()));
  }
  SimultaneousMethod method = SimultaneousMethod::kSidak;
  if (request.simultaneous() == v1::BONFERRONI) {
    method = SimultaneousMethod::kBonferroni;
  } else if (request.simultaneous() != v1::SIMULTANEOUS_METHOD_UNSPECIFIED &&
             request.simultaneous() != v1::SIDAK) {
    return absl::InvalidArgumentError(
        absl::StrCat("simultaneous: must be SIDAK or BONFERRONI, but is ", request.simultaneous()));
  }
  const double h = request.half_width();
  const bool histogram = IsHistogram(design);
  PlanTarget target;
  target.confidence_level = level;
  target.simultaneous = method;
  if (histogram) {
    if (!(h > 0.0 && h < 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "half_width: every bucket share's target half-width must be in (0, 1), but is ", h));
    }
    target.half_width = h;
    target.assumed_shares.assign(request.assumed_shares().begin(), request.assumed_shares().end());
  } else {
    if (!(h > 0.0) || !std::isfinite(h)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "half_width: the mean's target half-width, in the values' unit, must be > 0, but is ",
          h));
    }
    if (request.assumed_shares_size() > 0) {
      return absl::InvalidArgumentError(
          "assumed_shares: only for a histogram (d_bit_flip) or a categorical design");
    }
    target.value_half_width = h;
  }
  // The mechanism's errors name half_width, confidence_level or assumed_shares.
  const NumericReportMechanism mechanism(design);
  const absl::StatusOr<MechanismPlan> planned = mechanism.Plan(target);
  if (!planned.ok()) return planned.status();
  const int64_t needed = planned->reports_needed;
  const int64_t needed_worst = planned->reports_needed_worst_case;
  v1::SurveyPlan out;
  NumericDesignToProto(design, 0, request.range().unit(), out.mutable_design());
  out.set_reports_needed(needed);
  out.set_reports_needed_worst_case(needed_worst);
  out.set_half_width(h);
  out.set_confidence_level(level);
  const double e = std::exp(design.epsilon());
  if (histogram) {
    const int k = design.buckets();
    const double per_bucket = PerCategoryLevel(level, k, method);
    const double a = std::exp(design.epsilon() / 2);
    out.set_simultaneous_method(method == SimultaneousMethod::kSidak ? v1::SIDAK : v1::BONFERRONI);
    out.set_per_category_level(per_bucket);
    out.set_reports_needed_simultaneous(needed);
    out.set_reports_needed_simultaneous_worst_case(needed_worst);
    const int d = design.sampled_buckets();
    out.set_assumption(absl::StrFormat(
        "%s over the shares: each bucket's share from the s_j reports that sample it, Var <= 1 "
        "/ (4 s_j (p - q)^2), p - q = (a - 1) / (a + 1) = %.4f, a = e^(eps/2); all %d buckets "
        "within +/- h together, each at level %.6g (%s), %s; devices, one report each",
        target.assumed_shares.empty() ? "worst case" : "at the assumed shares", (a - 1) / (a + 1),
        k, per_bucket, SimultaneousMethodName(method),
        d >= k ? std::string("every report samples every bucket (s_j = n)")
               : absl::StrFormat("s_j ~ Binomial(n, %d / %d): n such that every bucket is "
                                 "sampled by enough reports with probability >= %g %% (its "
                                 "lower tail, not its mean n d / k)",
                                 d, k, 100 * kHistogramPlanSamplingProbability)));
  } else {
    out.set_assumption(absl::StrFormat(
        "worst case over the values: Var(mean) <= (hi - lo)^2 C^2 / (4 n), C = (e^eps + 1) / "
        "(e^eps - 1) = %.4f (Ding, Kulkarni, Yekhanin 2017, Theorem 1); h in the values' unit; "
        "devices, one report each",
        (e + 1) / (e - 1)));
  }
  return out;
}

}  // namespace deniable
