#include "deniable/common/categorical_planner.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/categorical_privacy.h"
#include "deniable/common/interval.h"
#include "deniable/common/planner.h"
#include "deniable/common/status_macros.h"

namespace deniable {

absl::StatusOr<CategoricalPlan> PlanCategoricalSurvey(const CategoricalDesign& design,
                                                      double half_width, double confidence_level,
                                                      SimultaneousMethod method,
                                                      std::span<const double> assumed_shares) {
  if (!(half_width > 0.0 && half_width <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("half_width: must be in (0, 1], but is ", half_width));
  }
  if (!(confidence_level > 0.0 && confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1 - 1e-12], but is ", confidence_level));
  }
  if (!assumed_shares.empty()) {
    DENIABLE_RETURN_IF_ERROR(ValidateShares(assumed_shares, design.k(), "assumed_shares"));
  }
  const Channel support = design.SupportChannel();
  CategoricalPlan plan;
  plan.half_width = half_width;
  plan.confidence_level = confidence_level;
  plan.method = method;
  plan.per_category_level = PerCategoryLevel(design, confidence_level, method);
  DENIABLE_ASSIGN_OR_RETURN(plan.reports_needed_worst_case,
                            WorstCaseSampleSize(support, half_width, confidence_level));
  DENIABLE_ASSIGN_OR_RETURN(plan.reports_needed_simultaneous_worst_case,
                            WorstCaseSampleSize(support, half_width, plan.per_category_level));
  if (assumed_shares.empty()) {
    plan.reports_needed = plan.reports_needed_worst_case;
    plan.reports_needed_simultaneous = plan.reports_needed_simultaneous_worst_case;
    return plan;
  }
  for (double share : assumed_shares) {
    CategorySamplePlan c;
    c.assumed_share = share;
    DENIABLE_ASSIGN_OR_RETURN(c.reports_needed,
                              RequiredSampleSize(support, half_width, confidence_level, share));
    DENIABLE_ASSIGN_OR_RETURN(
        c.reports_needed_simultaneous,
        RequiredSampleSize(support, half_width, plan.per_category_level, share));
    plan.reports_needed = std::max(plan.reports_needed, c.reports_needed);
    plan.reports_needed_simultaneous =
        std::max(plan.reports_needed_simultaneous, c.reports_needed_simultaneous);
    plan.categories.push_back(c);
  }
  return plan;
}

}  // namespace deniable
