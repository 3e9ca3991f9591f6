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
#include "deniable/convert/numeric_advice.h"

namespace deniable::server {

absl::StatusOr<v1::DesignDescription> DesignAdvisor::Describe(
    const v1::DescribeDesignRequest& request) {
  if (request.has_design() || request.metric().empty()) return DescribeDesign(request);
  DENIABLE_RETURN_IF_ERROR(ValidateDescribeRequest(request));
  if (registry_ == nullptr) {
    return absl::FailedPreconditionError("metric: no metric registry here (a local call)");
  }
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> metric,
                            registry_->Find(request.metric()));
  if (metric->numeric()) {
    return DescribeNumericDesign(request, *metric->current().numeric, metric->current().wire);
  }
  const std::vector<std::string> categories(metric->proto.categories().begin(),
                                            metric->proto.categories().end());
  return DescribeStoredDesign(request, metric->current().wire, categories);
}

absl::StatusOr<v1::SurveyPlan> DesignAdvisor::Plan(const v1::PlanSurveyRequest& request) {
  return PlanSurvey(request);
}

}  // namespace deniable::server
