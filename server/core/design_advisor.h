// Privacy figures of a design and survey planning (statistics.md sections 2 and 3), for the
// DescribeDesign and PlanSurvey calls. Pure computation over common/privacy.h and
// common/planner.h; reads a metric's design from the registry when asked by name.
//
// Thread-safe. Does not own the registry.
#ifndef DENIABLE_SERVER_CORE_DESIGN_ADVISOR_H_
#define DENIABLE_SERVER_CORE_DESIGN_ADVISOR_H_

#include "absl/status/statusor.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"

namespace deniable::server {

class DesignAdvisor {
 public:
  explicit DesignAdvisor(MetricRegistry* registry) : registry_(registry) {}

  // Epsilon, posteriors P(x = 1 | r), H(x), H(x | r) and I(x; r) in bits at the prior, and for an
  // unrelated-question design the pi_B that makes a "yes" uninformative (or why none exists).
  // For a categorical metric named by `metric`: the same figures for one category v against the
  // others through the support channel (p*, q*): prior = P(x = v), posterior_given_yes =
  // P(x = v | the report supports v), posterior_given_no = P(x = v | it does not), and H, I of
  // the pair (x = v, report supports v). A categorical design given by parameters is refused
  // (INVALID_ARGUMENT: its k is not known).
  // Errors: INVALID_ARGUMENT naming "design..." or "prior" (must be in [0, 1]); NOT_FOUND for an
  // unknown metric.
  absl::StatusOr<v1::DesignDescription> Describe(const v1::DescribeDesignRequest& request);

  // Reports needed for a target half-width; variance inflation against a direct question.
  // Errors: INVALID_ARGUMENT naming "design...", "half_width", "confidence_level" or
  // "assumed_prevalence".
  absl::StatusOr<v1::SurveyPlan> Plan(const v1::PlanSurveyRequest& request);

 private:
  MetricRegistry* const registry_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_DESIGN_ADVISOR_H_
