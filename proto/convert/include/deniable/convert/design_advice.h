// A design's privacy figures and survey plan as the wire messages DescribeDesign and PlanSurvey
// answer with: pure arithmetic over the design's mechanism (common/mechanism.h), shared by the
// server's DesignAdvisor (server/core/design_advisor.h, which adds the metric lookup) and the
// CLI's local `deniable design` / `deniable plan` (which link no server code).
//
// Pure functions, thread-safe.
#ifndef DENIABLE_CONVERT_DESIGN_ADVICE_H_
#define DENIABLE_CONVERT_DESIGN_ADVICE_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable {

// The largest n a description computes a central epsilon for: the numerical shuffle bound's cost
// grows with n (about 1 s at 10^10, minutes at 10^14), and a billion reports in one selection is
// beyond any deployment this collector serves.
inline constexpr int64_t kMaxDescribedReports = 1'000'000'000;

// Checks the request's prior and n. Errors: INVALID_ARGUMENT naming "prior" (outside [0, 1]) or
// "n" (< 0 or > kMaxDescribedReports).
absl::Status ValidateDescribeRequest(const v1::DescribeDesignRequest& request);

// The description of the design given by parameters (request.design, with k or categories for
// a categorical design); see DesignAdvisor::Describe for the fields. Errors: those of
// ValidateDescribeRequest; INVALID_ARGUMENT naming "design...", "k", "categories[i]",
// "category_prior..." or "n"; FAILED_PRECONDITION naming "metric" when only a metric is named
// (no registry here); INVALID_ARGUMENT "design, metric" when neither is set. A heavy-hitters
// design (design.heavy_hitters) is described by DescribeHeavyHittersDesign
// (heavy_hitters_advice.h), with its errors.
absl::StatusOr<v1::DesignDescription> DescribeDesign(const v1::DescribeDesignRequest& request);

// The description of a stored design (a metric's current v1::Design) with the metric's category
// names (empty for a yes/no metric; a heavy-hitters design: DescribeHeavyHittersDesign). Errors:
// as DescribeDesign, and those of reading `wire` back.
absl::StatusOr<v1::DesignDescription> DescribeStoredDesign(const v1::DescribeDesignRequest& request,
                                                           const v1::Design& wire,
                                                           std::span<const std::string> categories);

// Reports needed for a target half-width; see DesignAdvisor::Plan. Errors: INVALID_ARGUMENT
// naming "design...", "k", "categories[i]", "half_width", "confidence_level",
// "assumed_prevalence", "assumed_shares" / "assumed_shares[v]", "simultaneous" or
// "design.heavy_hitters" (planned by PlanHeavyHitters, heavy_hitters_advice.h); OUT_OF_RANGE
// naming "half_width" when n exceeds int64.
// With request.window (day, week, month or once): the plan in devices active in the window
// (SurveyPlan.devices_needed, reports_sent = devices x reports_per_device; docs/statistics.md
// section 4.4); INVALID_ARGUMENT naming "window" or "reports_per_device" (< 1 or not finite).
absl::StatusOr<v1::SurveyPlan> PlanSurvey(const v1::PlanSurveyRequest& request);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_DESIGN_ADVICE_H_
