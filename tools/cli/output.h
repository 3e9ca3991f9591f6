// Human-readable tables printed by the deniable command-line tool.
#ifndef DENIABLE_TOOLS_CLI_OUTPUT_H_
#define DENIABLE_TOOLS_CLI_OUTPUT_H_

#include <grpcpp/support/status.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {

// "NOT_FOUND", "INVALID_ARGUMENT", ...
const char* StatusCodeName(grpc::StatusCode code);
// "two_coin (a = 0.75, b = 0.25), epsilon = 1.0986 nats"; "epsilon = infinite" with the warning.
std::string FormatDesign(const v1::Design& design);
// With categories (categorical_output.h) FormatDesign and FormatMetric show them. A metric of a
// kind registered in cli_kinds.h gets that kind's lines (CliKind::metric_lines): its
// randomization and its privacy lines after "design".
std::string FormatMetric(const v1::Metric& metric);
// A metric's retention in words: "keep forever", or "30 days, then drop reports, keep counts".
std::string RetentionText(const v1::Metric& metric);
std::string FormatMetricList(const v1::ListMetricsResponse& response);
// Three lines per alert rule (docs/alerts.md): the rule and whether it fires; the estimate with
// its anytime interval and the window's number and level; the status and the times (UTC).
// "no alert rules" when the list is empty.
std::string FormatAlerts(const v1::ListAlertsResponse& response);
// A table: n, yes reports, unbiased and clipped estimates, standard error, interval; then the
// per-version estimates when versions were combined, and one row per group when grouped. For a
// metric with categories: FormatCategoricalPrevalence (the same for series and difference).
std::string FormatPrevalence(const v1::Prevalence& prevalence);
// What the estimate is for, in words (Prevalence.estimand, periods, reporting period).
std::string EstimandText(const v1::Prevalence& prevalence);
// "central epsilon ..." of a result: the shuffle-amplified epsilon beside the local one, or why
// there is none (Prevalence.central_*).
std::string CentralText(const v1::Prevalence& prevalence);
// "manipulation bound   4 fake reports could have raised it by up to 0.66 % or lowered it by up
// to 1.36 % (honest reports' estimate in [...]; for any reports: 2.00 %)\n" (Prevalence.
// manipulation, docs/security.md); `format` prints one value on the estimate's scale. Empty when
// no bound was served.
std::string ManipulationText(const v1::ManipulationBound& bound,
                             const std::function<std::string(double)>& format);
// One row per bucket: start (UTC), n, estimate, interval.
std::string FormatSeries(const v1::Series& series);
// A difference as "second minus first" (the wire's Difference.difference is first minus second):
// the change in percentage points with its sign, its words, and its Wald interval, negated from
// the wire's. Categorical metrics: one row per category (FormatCategoricalDifference).
std::string FormatDifference(const v1::Difference& difference);
// The change from the first selection to the second in words, from `second_minus_first` as a
// share (0.0166 is 1.66 percentage points): "rose by 1.66 points", "fell by 1.66 points", or
// "unchanged (0.00 points)" when it rounds to 0.00. With the change's interval [lower, upper]
// (shares, second minus first) covering 0, " (the interval includes 0: no clear change)" is
// added, as the dashboard says it.
std::string ChangeWords(double second_minus_first, double lower = NAN, double upper = NAN);
// The suffix above for an interval [lower, upper] of a change: empty unless it covers 0.
std::string NoClearChange(double lower, double upper);
// The window a result covers, one line under `label` (padded to the figures' column):
// "time range           2026-11-24T10:00:00Z to 2026-12-01T10:00:00Z (UTC)", so that --start=-7d
// shows the start it resolved to; a start of 0 is "the first report (no start)", an end of 0
// "the latest report (no end)".
std::string TimeRangeLine(const char* label, const v1::Prevalence& prevalence);
// Rows of suppressed buckets and groups print this word where the estimate would be.
inline constexpr char kSuppressed[] = "suppressed";
// A share in [0, 1] as a percentage with two decimals: 0.1234 -> "12.34 %".
inline std::string Percent(double share) { return absl::StrFormat("%.2f %%", 100.0 * share); }
// The figures of DescribeDesign; a categorical design's by FormatCategoricalDescription; the
// design of a kind registered in cli_kinds.h by that kind (CliKind::describe). With
// central_n > 0 also the epsilon against an analyst who sees only the counts of that many reports
// (CentralPrivacyLine), beside the local one.
std::string FormatDesignDescription(const v1::DesignDescription& description);
// "central epsilon ..." of a description: the shuffle-amplified epsilon of central_n reports
// (common/shuffle.h, delta = 1e-6), or why there is none; empty when central_n is 0.
std::string CentralPrivacyLine(const v1::DesignDescription& description);
// PlanSurvey's answer; a categorical design's by FormatCategoricalPlan.
std::string FormatPlan(const v1::SurveyPlan& plan);

// Label value -> (respondents, true "yes"), known only to a replay of a survey.
using GroupTruth = std::map<std::string, std::pair<int64_t, int64_t>>;
// The replay summary: what was sent, the server's estimate and interval beside the true share,
// overall and per group (when the prevalence was grouped).
std::string FormatReplay(const ReplayResult& result, const SurveySpec& spec,
                         const v1::Prevalence& prevalence, const GroupTruth& truth);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_OUTPUT_H_
