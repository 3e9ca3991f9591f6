#include "server/core/design_advisor.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/interval.h"
#include "deniable/common/planner.h"
#include "deniable/common/privacy.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/design_convert.h"

namespace deniable::server {
namespace {

absl::Status Prefixed(const absl::Status& s, absl::string_view field) {
  return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
}

}  // namespace

absl::StatusOr<v1::DesignDescription> DesignAdvisor::Describe(
    const v1::DescribeDesignRequest& request) {
  const double prior = request.prior();
  if (!(prior >= 0.0 && prior <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("prior: must be in [0, 1], but is ", prior));
  }
  v1::DesignDescription out;
  if (request.has_design()) {
    DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromProto(request.design(), "design"));
    DesignToProto(design, 0, out.mutable_design());
  } else if (!request.metric().empty()) {
    DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> metric,
                              registry_->Find(request.metric()));
    *out.mutable_design() = metric->current().wire;
    if (metric->categorical()) {
      // One category v against the rest, through the support channel (p*, q*): the prior is
      // P(x = v), "yes" is "the report supports v" (for k-RR: reports v).
      absl::StatusOr<PrivacyFigures> f =
          ComputePrivacyFigures(metric->current().design.channel(), prior);
      if (!f.ok()) return Prefixed(f.status(), "prior");
      out.set_prior(prior);
      out.set_posterior_given_yes(f->posterior_given_yes);
      out.set_posterior_given_no(f->posterior_given_no);
      out.set_entropy_bits(f->prior_entropy_bits);
      out.set_conditional_entropy_bits(f->conditional_entropy_bits);
      out.set_mutual_information_bits(f->mutual_information_bits);
      return out;
    }
  } else {
    return absl::InvalidArgumentError("design, metric: set one of them");
  }
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromWire(out.design()));
  absl::StatusOr<PrivacyFigures> f = ComputePrivacyFigures(design.channel(), prior);
  if (!f.ok()) return Prefixed(f.status(), "prior");
  out.set_prior(prior);
  out.set_posterior_given_yes(f->posterior_given_yes);
  out.set_posterior_given_no(f->posterior_given_no);
  out.set_entropy_bits(f->prior_entropy_bits);
  out.set_conditional_entropy_bits(f->conditional_entropy_bits);
  out.set_mutual_information_bits(f->mutual_information_bits);
  if (design.kind() == DesignKind::kUnrelatedQuestion) {
    absl::StatusOr<double> pi_b = UninformativeInnocuousShare(design.big_p(), prior);
    if (pi_b.ok()) {
      out.set_uninformative_pi_b(*pi_b);
      out.set_uninformative_pi_b_note(absl::StrCat(
          "with pi_B = ", *pi_b, " a \"yes\" report leaves P(x = 1 | yes) = 1/2 at prior ", prior));
    } else {
      out.set_uninformative_pi_b_note(std::string(pi_b.status().message()));
    }
  }
  return out;
}

absl::StatusOr<v1::SurveyPlan> DesignAdvisor::Plan(const v1::PlanSurveyRequest& request) {
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromProto(request.design(), "design"));
  const double level = request.confidence_level() == 0.0 ? 0.95 : request.confidence_level();
  if (!(level > 0.0 && level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1 - 1e-12] or 0 for 0.95, but is ", level));
  }
  if (!(request.half_width() > 0.0 && request.half_width() <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("half_width: must be in (0, 1], but is ", request.half_width()));
  }
  const double pi = request.assumed_prevalence();
  if (std::isnan(pi) || pi > 1.0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "assumed_prevalence: must be in [0, 1], or negative for unknown, but is ", pi));
  }
  v1::SurveyPlan out;
  DesignToProto(design, 0, out.mutable_design());
  absl::StatusOr<int64_t> worst =
      WorstCaseSampleSize(design.channel(), request.half_width(), level);
  if (!worst.ok()) return worst.status();
  out.set_reports_needed_worst_case(*worst);
  if (pi >= 0.0) {
    DENIABLE_ASSIGN_OR_RETURN(
        int64_t n, RequiredSampleSize(design.channel(), request.half_width(), level, pi));
    out.set_reports_needed(n);
    absl::StatusOr<double> inflation = VarianceInflation(design.channel(), pi);
    if (inflation.ok()) out.set_variance_inflation(*inflation);
  } else {
    out.set_reports_needed(*worst);
  }
  out.set_half_width(request.half_width());
  out.set_confidence_level(level);
  return out;
}

}  // namespace deniable::server
