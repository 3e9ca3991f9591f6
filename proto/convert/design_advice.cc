#include "deniable/convert/design_advice.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/categorical.h"
#include "deniable/common/categorical_planner.h"
#include "deniable/common/categorical_privacy.h"
#include "deniable/common/echo.h"
#include "deniable/common/interval.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/categorical_convert.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/heavy_hitters_advice.h"
#include "deniable/convert/heavy_hitters_convert.h"
#include "deniable/convert/numeric_advice.h"

namespace deniable {
namespace {

absl::Status Prefixed(const absl::Status& s, absl::string_view field) {
  return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
}

// A categorical design given by parameters, with its category names ("0" .. "k-1" when only k
// is given).
struct NamedCategoricalDesign {
  CategoricalDesign design;
  std::vector<std::string> names;
};

// k from `k` and/or `categories` (DescribeDesignRequest, PlanSurveyRequest), then the design.
// nullopt when `parameters` is a yes/no design and neither k nor categories is set.
template <typename Request>
absl::StatusOr<std::optional<NamedCategoricalDesign>> CategoricalFromRequest(
    const Request& request) {
  const bool categorical = request.design().has_categorical();
  const bool sized = request.k() != 0 || request.categories_size() > 0;
  if (!categorical) {
    if (!sized) return std::nullopt;
    return absl::InvalidArgumentError(
        "k, categories: only for a categorical design (design.categorical), but a yes/no design "
        "is given");
  }
  if (!sized) {
    return absl::InvalidArgumentError(absl::StrCat(
        "k: a categorical design given by parameters needs its number of categories, k (",
        kMinCategories, " to ", kMaxCategories, "), or their names in categories"));
  }
  std::vector<std::string> names(request.categories().begin(), request.categories().end());
  if (!names.empty()) {
    DENIABLE_RETURN_IF_ERROR(ValidateCategories(request.categories()));
    if (request.k() != 0 && request.k() != names.size()) {
      return absl::InvalidArgumentError(absl::StrCat("k: is ", request.k(),
                                                     " but categories names ", names.size(),
                                                     "; give one or make them agree"));
    }
  } else {
    if (request.k() < static_cast<uint32_t>(kMinCategories) ||
        request.k() > static_cast<uint32_t>(kMaxCategories)) {
      return absl::InvalidArgumentError(absl::StrCat("k: must be between ", kMinCategories, " and ",
                                                     kMaxCategories, ", but is ", request.k()));
    }
    for (uint32_t j = 0; j < request.k(); ++j) names.push_back(absl::StrCat(j));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      CategoricalDesign design,
      CategoricalDesignFromProto(request.design(), static_cast<int>(names.size()), "design"));
  return NamedCategoricalDesign{design, std::move(names)};
}

// The yes/no figures of one coordinate's channel at `prior` into `out` (for a categorical design:
// one category against the rest through the support channel).
void SetBinaryFigures(const PrivacyFigures& f, double prior, v1::DesignDescription* out) {
  out->set_prior(prior);
  out->set_posterior_given_yes(f.posterior_given_yes);
  out->set_posterior_given_no(f.posterior_given_no);
  out->set_entropy_bits(f.prior_entropy_bits);
  out->set_conditional_entropy_bits(f.conditional_entropy_bits);
  out->set_mutual_information_bits(f.mutual_information_bits);
}

void SetCategoricalFigures(const CategoricalDesign& design, const CategoricalPrivacyFigures& f,
                           const std::vector<std::string>& names, v1::DesignDescription* out) {
  for (const std::string& name : names) out->add_categories(name);
  for (double p : f.prior) out->add_category_prior(p);
  out->set_channel(CategoricalChannelKindName(f.channel));
  for (size_t r = 0; r < f.reported.size(); ++r) {
    v1::ReportedCategory* reported = out->add_reported();
    reported->set_category(names[r]);
    reported->set_probability(f.reported[r].probability);
    for (double p : f.reported[r].posterior) reported->add_posterior(p);
    reported->set_mutual_information_bits(f.reported[r].mutual_information_bits);
  }
  out->set_categorical_entropy_bits(f.entropy_bits);
  out->set_categorical_conditional_entropy_bits(f.conditional_entropy_bits);
  out->set_categorical_mutual_information_bits(f.mutual_information_bits);
  if (f.channel == CategoricalChannelKind::kReport) {
    out->set_channel_note(
        "k-RR: a report is one category r; posterior = P(true = j | report = r) and "
        "categorical_mutual_information_bits = I(x; r) of the k x k channel");
  } else {
    out->set_channel_note(absl::StrCat(
        CategoricalMechanismName(design.mechanism()),
        ": a report supports a set of categories, so the figures are of the per-category support "
        "channel (p*, q*): posterior = P(true = j | report supports r), mutual_information_bits "
        "of each r = I(x; report supports r); no I(x; report) is computed",
        design.mechanism() == CategoricalMechanism::kOptimizedUnaryEncoding
            ? " (for OUE it is at most the sum over r: the bits are independent given x)"
            : ""));
  }
}

// DesignDescription.central_* for n reports of a design with local epsilon `eps0` and clone
// probability `gamma` (common/shuffle.h).
absl::Status SetCentralPrivacy(double eps0, double gamma, int64_t n, v1::DesignDescription* out) {
  absl::StatusOr<CentralPrivacy> c = AmplifiedEpsilon(eps0, gamma, n, kDefaultCentralDelta);
  if (!c.ok()) return Prefixed(c.status(), "n");
  out->set_central_epsilon(c->epsilon);
  out->set_central_delta(c->delta);
  out->set_central_n(c->n);
  out->set_central_method(c->method);
  out->set_central_note(c->amplified
                            ? "against an analyst who sees only the counts of these n reports, "
                              "each device contributing one (docs/privacy.md)"
                            : c->note);
  return absl::OkStatus();
}

// The figures of `out.design()` (categorical: `categorical`, with `names`) at the request's
// priors, computed by the design's mechanism.
absl::StatusOr<v1::DesignDescription> Figures(const v1::DescribeDesignRequest& request,
                                              v1::DesignDescription out,
                                              const std::optional<CategoricalDesign>& categorical,
                                              const std::vector<std::string>& names) {
  const double prior = request.prior();
  if (categorical.has_value()) {
    // One category v against the rest, through the support channel (p*, q*): the prior is
    // P(x = v), "yes" is "the report supports v" (for k-RR: reports v).
    const std::shared_ptr<const Mechanism> mechanism = MechanismFor(*categorical);
    PrivacyQuestion question{prior,
                             {request.category_prior().begin(), request.category_prior().end()}};
    DENIABLE_ASSIGN_OR_RETURN(MechanismPrivacy figures, mechanism->Privacy(question));
    SetBinaryFigures(figures.binary, prior, &out);
    SetCategoricalFigures(*categorical, *figures.categorical, names, &out);
    if (request.n() > 0) {
      DENIABLE_RETURN_IF_ERROR(
          SetCentralPrivacy(figures.epsilon, figures.clone_probability, request.n(), &out));
    }
    return out;
  }
  if (request.category_prior_size() > 0) {
    return absl::InvalidArgumentError(
        "category_prior: only for a categorical design; a yes/no design takes prior");
  }
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromWire(out.design()));
  const std::shared_ptr<const Mechanism> mechanism = MechanismFor(design);
  absl::StatusOr<MechanismPrivacy> figures = mechanism->Privacy(PrivacyQuestion{prior, {}});
  if (!figures.ok()) return Prefixed(figures.status(), "prior");
  SetBinaryFigures(figures->binary, prior, &out);
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
  if (request.n() > 0) {
    const double eps0 = out.design().epsilon_infinite() ? std::numeric_limits<double>::infinity()
                                                        : out.design().epsilon();
    DENIABLE_RETURN_IF_ERROR(
        SetCentralPrivacy(eps0, figures->clone_probability, request.n(), &out));
  }
  return out;
}

absl::StatusOr<v1::SurveyPlan> PlanCategorical(const v1::PlanSurveyRequest& request,
                                               const CategoricalDesign& design,
                                               const std::vector<std::string>& names) {
  const double level = request.confidence_level() == 0.0 ? 0.95 : request.confidence_level();
  SimultaneousMethod method = SimultaneousMethod::kSidak;
  switch (request.simultaneous()) {
    case v1::SIMULTANEOUS_METHOD_UNSPECIFIED:
    case v1::SIDAK:
      break;
    case v1::BONFERRONI:
      method = SimultaneousMethod::kBonferroni;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "simultaneous: must be SIDAK or BONFERRONI, but is ", request.simultaneous()));
  }
  PlanTarget target;
  target.half_width = request.half_width();
  target.confidence_level = level;
  target.simultaneous = method;
  target.assumed_shares.assign(request.assumed_shares().begin(), request.assumed_shares().end());
  DENIABLE_ASSIGN_OR_RETURN(MechanismPlan planned, MechanismFor(design)->Plan(target));
  const CategoricalPlan& plan = *planned.categorical;
  v1::SurveyPlan out;
  CategoricalDesignToProto(design, 0, out.mutable_design());
  out.set_reports_needed(plan.reports_needed);
  out.set_reports_needed_worst_case(plan.reports_needed_worst_case);
  out.set_half_width(plan.half_width);
  out.set_confidence_level(plan.confidence_level);
  for (const std::string& name : names) out.add_categories(name);
  out.set_simultaneous_method(method == SimultaneousMethod::kSidak ? v1::SIDAK : v1::BONFERRONI);
  out.set_per_category_level(plan.per_category_level);
  out.set_reports_needed_simultaneous(plan.reports_needed_simultaneous);
  out.set_reports_needed_simultaneous_worst_case(plan.reports_needed_simultaneous_worst_case);
  for (size_t v = 0; v < plan.categories.size(); ++v) {
    v1::CategoryPlan* c = out.add_category_plans();
    c->set_category(names[v]);
    c->set_assumed_share(plan.categories[v].assumed_share);
    c->set_reports_needed(plan.categories[v].reports_needed);
    c->set_reports_needed_simultaneous(plan.categories[v].reports_needed_simultaneous);
  }
  out.set_assumption(absl::StrCat(
      target.assumed_shares.empty() ? "worst case over the category shares"
                                    : "at the assumed shares (the largest n over the categories)",
      "; n = ceil(z^2 lambda (1 - lambda) / (h^2 (p* - q*)^2)), lambda = q* + (p* - q*) f "
      "(Wang, Blocki, Li, Jha 2017, Theorem 2; docs/statistics.md section 8.2), normal "
      "approximation; simultaneous: each share at level ",
      plan.per_category_level, " (", SimultaneousMethodName(method), ")"));
  return out;
}

}  // namespace

absl::Status ValidateDescribeRequest(const v1::DescribeDesignRequest& request) {
  const double prior = request.prior();
  if (!(prior >= 0.0 && prior <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("prior: must be in [0, 1], but is ", prior));
  }
  if (request.n() < 0 || request.n() > kMaxDescribedReports) {
    return absl::InvalidArgumentError(absl::StrCat("n: must be in [0, ", kMaxDescribedReports,
                                                   "] (reports; 0 = no central epsilon), but is ",
                                                   request.n()));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::DesignDescription> DescribeDesign(const v1::DescribeDesignRequest& request) {
  DENIABLE_RETURN_IF_ERROR(ValidateDescribeRequest(request));
  if (!request.has_design()) {
    if (!request.metric().empty()) {
      return absl::FailedPreconditionError("metric: no metric registry here (a local call)");
    }
    return absl::InvalidArgumentError("design, metric: set one of them");
  }
  if (request.design().has_numeric()) return DescribeNumericParameters(request);
  if (request.design().has_heavy_hitters()) {
    DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign design,
                              HeavyHittersDesignFromProto(request.design(), "design"));
    v1::Design wire;
    HeavyHittersDesignToProto(design, 0, &wire);
    return DescribeHeavyHittersDesign(request, wire);
  }
  if (request.has_range()) {
    return absl::InvalidArgumentError("range: only for a numeric design (design.numeric)");
  }
  v1::DesignDescription out;
  std::optional<CategoricalDesign> categorical;
  std::vector<std::string> names;
  DENIABLE_ASSIGN_OR_RETURN(std::optional<NamedCategoricalDesign> named,
                            CategoricalFromRequest(request));
  if (named.has_value()) {
    categorical = named->design;
    names = std::move(named->names);
    CategoricalDesignToProto(*categorical, 0, out.mutable_design());
  } else {
    DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromProto(request.design(), "design"));
    DesignToProto(design, 0, out.mutable_design());
  }
  return Figures(request, std::move(out), categorical, names);
}

absl::StatusOr<v1::DesignDescription> DescribeStoredDesign(
    const v1::DescribeDesignRequest& request, const v1::Design& wire,
    std::span<const std::string> categories) {
  DENIABLE_RETURN_IF_ERROR(ValidateDescribeRequest(request));
  if (wire.parameters().has_heavy_hitters()) return DescribeHeavyHittersDesign(request, wire);
  v1::DesignDescription out;
  *out.mutable_design() = wire;
  std::optional<CategoricalDesign> categorical;
  if (!categories.empty()) {
    DENIABLE_ASSIGN_OR_RETURN(categorical, CategoricalDesignFromWire(wire));
  }
  return Figures(request, std::move(out), categorical,
                 std::vector<std::string>(categories.begin(), categories.end()));
}

namespace {
absl::StatusOr<v1::SurveyPlan> PlanReports(const v1::PlanSurveyRequest& request);
}  // namespace

absl::StatusOr<v1::SurveyPlan> PlanSurvey(const v1::PlanSurveyRequest& request) {
  const std::string& window = request.window();
  if (!window.empty() && window != "day" && window != "week" && window != "month" &&
      window != "once") {
    return absl::InvalidArgumentError(absl::StrCat(
        "window: must be day, week, month, once or empty, but is ", EchoValue(window)));
  }
  const double per_device = request.reports_per_device() == 0 ? 1 : request.reports_per_device();
  if (!std::isfinite(per_device) || per_device < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reports_per_device: must be >= 1 (0 means 1), but is ", request.reports_per_device()));
  }
  DENIABLE_ASSIGN_OR_RETURN(v1::SurveyPlan plan, PlanReports(request));
  if (window.empty()) return plan;
  // A whole-window query counts each active device once (one first report each), so the n that
  // gives the half-width is devices; the reports they send do not narrow it.
  const int64_t devices =
      plan.categories_size() > 0 ? plan.reports_needed_simultaneous() : plan.reports_needed();
  plan.set_window(window);
  plan.set_reports_per_device(window == "once" ? 1 : per_device);
  plan.set_devices_needed(devices);
  plan.set_reports_sent(static_cast<int64_t>(
      std::ceil(static_cast<double>(devices) * plan.reports_per_device() - 1e-9)));
  return plan;
}

namespace {
// The plan in reports (PlanSurvey without a window).
absl::StatusOr<v1::SurveyPlan> PlanReports(const v1::PlanSurveyRequest& request) {
  if (request.design().has_numeric()) return PlanNumericSurvey(request);
  if (request.design().has_heavy_hitters()) {
    return absl::InvalidArgumentError(
        "design.heavy_hitters: a heavy-hitters design is planned by the share to find and the "
        "probability of finding it, not by half_width (deniable plan --design=heavy_hitters "
        "--find_share=S [--find_probability=P])");
  }
  if (request.has_range()) {
    return absl::InvalidArgumentError("range: only for a numeric design (design.numeric)");
  }
  DENIABLE_ASSIGN_OR_RETURN(std::optional<NamedCategoricalDesign> named,
                            CategoricalFromRequest(request));
  if (named.has_value()) return PlanCategorical(request, named->design, named->names);
  if (request.assumed_shares_size() > 0) {
    return absl::InvalidArgumentError(
        "assumed_shares: only for a categorical design; a yes/no design takes "
        "assumed_prevalence");
  }
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
  // -1 is the one spelling of "unknown": any other negative or non-finite value is a mistake
  // (a sign slip, an overflow), not a request for the worst case.
  if (!(pi == -1.0 || (pi >= 0.0 && pi <= 1.0))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "assumed_prevalence: must be in [0, 1], or -1 for unknown (worst case), but is ", pi));
  }
  PlanTarget target;
  target.half_width = request.half_width();
  target.confidence_level = level;
  target.assumed_prevalence = pi;
  DENIABLE_ASSIGN_OR_RETURN(MechanismPlan planned, MechanismFor(design)->Plan(target));
  v1::SurveyPlan out;
  DesignToProto(design, 0, out.mutable_design());
  out.set_reports_needed_worst_case(planned.reports_needed_worst_case);
  out.set_reports_needed(planned.reports_needed);
  if (planned.variance_inflation.has_value()) {
    out.set_variance_inflation(*planned.variance_inflation);
  }
  out.set_half_width(request.half_width());
  out.set_confidence_level(level);
  return out;
}

}  // namespace
}  // namespace deniable
