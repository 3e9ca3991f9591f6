#include "server/core/design_advisor.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/design_advice.h"

namespace deniable::server {
namespace {

// A numeric metric's design (1BitMean, dBitFlip): epsilon of one report, the binary figures of
// one coordinate's channel at `prior` (1BitMean: the bit for x = hi against x = lo; dBitFlip: one
// sampled bucket's bit for "in the bucket" against "not"), and the central epsilon for n reports.
absl::StatusOr<v1::DesignDescription> DescribeNumeric(const v1::DescribeDesignRequest& request,
                                                      const MetricVersion& version) {
  v1::DesignDescription out;
  *out.mutable_design() = version.wire;
  DENIABLE_ASSIGN_OR_RETURN(MechanismPrivacy figures,
                            version.mechanism->Privacy(PrivacyQuestion{request.prior(), {}}));
  out.set_prior(request.prior());
  out.set_posterior_given_yes(figures.binary.posterior_given_yes);
  out.set_posterior_given_no(figures.binary.posterior_given_no);
  out.set_entropy_bits(figures.binary.prior_entropy_bits);
  out.set_conditional_entropy_bits(figures.binary.conditional_entropy_bits);
  out.set_mutual_information_bits(figures.binary.mutual_information_bits);
  out.set_channel_note(absl::StrCat(
      version.numeric->ToString(),
      version.numeric->mechanism() == NumericMechanism::kDBitFlip
          ? ": the binary figures are of one sampled bucket's bit (a = e^(eps/2)), x = 1 meaning "
            "the value is in that bucket; epsilon is of the whole report"
          : ": the binary figures are of the bit for a value at hi (x = 1) against lo (x = 0)"));
  if (request.n() > 0) {
    DENIABLE_ASSIGN_OR_RETURN(
        CentralPrivacy c, AmplifiedEpsilon(figures.epsilon, figures.clone_probability, request.n(),
                                           kDefaultCentralDelta));
    out.set_central_epsilon(c.epsilon);
    out.set_central_delta(c.delta);
    out.set_central_n(c.n);
    out.set_central_method(c.method);
    out.set_central_note(c.note);
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::DesignDescription> DesignAdvisor::Describe(
    const v1::DescribeDesignRequest& request) {
  if (request.has_design() || request.metric().empty()) return DescribeDesign(request);
  DENIABLE_RETURN_IF_ERROR(ValidateDescribeRequest(request));
  if (registry_ == nullptr) {
    return absl::FailedPreconditionError("metric: no metric registry here (a local call)");
  }
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> metric,
                            registry_->Find(request.metric()));
  if (metric->numeric()) return DescribeNumeric(request, metric->current());
  const std::vector<std::string> categories(metric->proto.categories().begin(),
                                            metric->proto.categories().end());
  return DescribeStoredDesign(request, metric->current().wire, categories);
}

absl::StatusOr<v1::SurveyPlan> DesignAdvisor::Plan(const v1::PlanSurveyRequest& request) {
  return PlanSurvey(request);
}

}  // namespace deniable::server
