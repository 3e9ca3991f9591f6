// Human-readable tables of the deniable tool for metrics with categories (issue 14): the k
// shares of a prevalence, series and difference, and a categorical replay beside the truth.
// --json prints the same responses as protobuf JSON instead (Prevalence.shares, ...).
#ifndef DENIABLE_TOOLS_CLI_CATEGORICAL_OUTPUT_H_
#define DENIABLE_TOOLS_CLI_CATEGORICAL_OUTPUT_H_

#include <string>

#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {

// True for a result of a metric with categories (shares, or a categorical design).
bool IsCategorical(const v1::Prevalence& prevalence);
// "k_rr v1 (k = 4, p* = 0.5, q* = 0.166667), epsilon = 1.0986 nats"; OLH adds "g = 4 buckets".
// REQUIRES: design.categories() > 0 or design.parameters() is categorical.
std::string FormatCategoricalDesign(const v1::Design& design);
// The metric's categories, "Y, N, U, A" (empty for a yes/no metric).
std::string CategoryList(const v1::Metric& metric);
// A header (metric, design, n, categories, central epsilon, what the shares and intervals are)
// and one row per category: support count, unbiased and consistent (norm_sub) estimates,
// standard error, the interval of that category alone and the simultaneous interval; then one
// such table per group when grouped (or "(too few reports)").
std::string FormatCategoricalPrevalence(const v1::Prevalence& prevalence);
// `deniable design` for a categorical design: the design, categories and prior, H(x), for k-RR
// I(x; r) of the k x k channel, then per reported (k-RR) or supported (OUE, OLH) category r:
// P(r), the posterior P(true = j | r) (a column per category when k <= 8; else P(true = r | r)
// and the largest other one) and I(x; r) of that category; then the central epsilon with --n.
std::string FormatCategoricalDescription(const v1::DesignDescription& description);
// `deniable plan` for a categorical design: reports needed for one share alone and for all k
// together (worst case, and at --shares per category), with the formula's assumption.
std::string FormatCategoricalPlan(const v1::SurveyPlan& plan);
// One block per bucket: start (UTC), n, and per category the estimate and simultaneous interval.
std::string FormatCategoricalSeries(const v1::Series& series);
// Per category: the two unbiased estimates, their difference and its Wald interval, in
// percentage points.
std::string FormatCategoricalDifference(const v1::Difference& difference);
// The replay summary of a metric with categories: what was sent, the prevalence table, then each
// share's estimate and simultaneous interval beside the true share of the replayed respondents
// (ReplayResult::true_categories) and how many intervals cover it.
std::string FormatCategoricalReplay(const ReplayResult& result, const SurveySpec& spec,
                                    const v1::Prevalence& prevalence);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CATEGORICAL_OUTPUT_H_
