// Privacy figures of a design and survey planning (statistics.md sections 2 and 3), for the
// DescribeDesign and PlanSurvey calls. The arithmetic is proto/convert/design_advice.h's (the
// design's mechanism, common/mechanism.h), which the CLI also uses; the advisor adds reading a
// metric's design from the registry when asked by name.
//
// Thread-safe. Does not own the registry.
#ifndef DENIABLE_SERVER_CORE_DESIGN_ADVISOR_H_
#define DENIABLE_SERVER_CORE_DESIGN_ADVISOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "deniable/convert/design_advice.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"

namespace deniable::server {

// The largest n DescribeDesign computes a central epsilon for (proto/convert/design_advice.h).
using ::deniable::kMaxDescribedReports;

class DesignAdvisor {
 public:
  explicit DesignAdvisor(MetricRegistry* registry) : registry_(registry) {}

  // Epsilon, posteriors P(x = 1 | r), H(x), H(x | r) and I(x; r) in bits at the prior, and for an
  // unrelated-question design the pi_B that makes a "yes" uninformative (or why none exists).
  // Categorical designs, by parameters (design.categorical with k or the names in categories;
  // mechanism UNSPECIFIED picks the one of least variance) or a metric with categories: the
  // yes/no fields hold one category v against the others through the support channel (p*, q*)
  // (prior = P(x = v), posterior_given_yes = P(x = v | the report supports v), ...), and the
  // categorical fields the figures of common/categorical_privacy.h at category_prior (uniform
  // when empty): per reported (k-RR) or supported (OUE, OLH) category r, P(r) and P(x = j | r);
  // H(x) over the k categories and, for k-RR, I(x; r) of the k x k channel.
  // With n > 0: the shuffle-amplified epsilon for n reports (common/shuffle.h; the clone
  // probability of the binary channel, or CategoricalDesign::CloneProbability) at delta =
  // kDefaultCentralDelta.
  // Errors: INVALID_ARGUMENT naming "design..." (e.g. "design.categorical.epsilon",
  // "design.categorical.mechanism"), "k" (missing for a categorical design, outside [2, 256], or
  // disagreeing with categories; or given with a yes/no design), "categories[i]", "prior" (must be
  // in [0, 1]), "category_prior" / "category_prior[j]" or "n" (< 0 or > kMaxDescribedReports);
  // NOT_FOUND for an unknown metric; FAILED_PRECONDITION for a metric without a registry (the CLI's
  // local use).
  absl::StatusOr<v1::DesignDescription> Describe(const v1::DescribeDesignRequest& request);

  // Reports needed for a target half-width; variance inflation against a direct question.
  // Categorical designs (k or categories as in Describe): for every category share, one alone
  // and all k together (Sidak or Bonferroni), at the assumed shares or the worst case over
  // shares (common/categorical_planner.h; assumed_prevalence is not used).
  // Errors: INVALID_ARGUMENT naming "design...", "k", "categories[i]", "half_width",
  // "confidence_level", "assumed_prevalence", "assumed_shares" / "assumed_shares[v]" or
  // "simultaneous"; OUT_OF_RANGE naming "half_width" when n exceeds int64.
  absl::StatusOr<v1::SurveyPlan> Plan(const v1::PlanSurveyRequest& request);

 private:
  MetricRegistry* const registry_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_DESIGN_ADVISOR_H_
