// Debiased prevalence with confidence intervals, read from the maintained counts: over a time
// range (optionally grouped by one label), as a series of time buckets, and as the difference
// between two selections (statistics.md section 3).
//
// Reads only the counts table (one row per metric, hour, design version and label set), never
// the reports, so a query's cost does not grow with the number of reports.
//
// Devices counted once per calendar window (window_selection.h, docs/statistics.md section 4.4):
// a selection (or series bucket) that is exactly whole UTC days, ISO weeks or calendar months is
// estimated from the windows' first reports when the metric's devices send window flags, and a
// reporting_once metric's selections as independent devices; Prevalence.window and explanation
// say so. The rest of this comment describes the reporting-period form, which every other
// selection keeps.
//
// Reporting periods: counts are grouped by the metric's reporting period
// (Metric.reporting_period_seconds, 0 meaning 86400; periods aligned to the Unix epoch). A device
// sends at most one report per metric and period, so within one period n counts devices and the
// usual binomial variance holds. A selection spanning several periods holds the same devices once
// per period (identical bits under memoization): each period is estimated on its own and the
// estimate is the mean of the period estimates with weights w_t = n_t / N, its standard error
// sum w_t se_t (Minkowski: an upper bound on the standard deviation whatever the correlation of one
// device's reports across periods), and its interval ends the w_t-weighted means of the period
// intervals' ends (for Wald period intervals, exactly the normal interval with that standard
// error; for identical periods, exactly the period's interval). Prevalence.estimand, periods and
// variance_bound say which case applies (docs/statistics.md section 4).
//
// Several design versions in one period: each version gets its own unbiased estimate and variance;
// they are combined by their report counts (default; the period's share) or, on request, by
// inverse variance (common/combine.h), and the period's interval is the normal (Wald) interval
// around the combined estimate, clipped to [0, 1] (method = WALD). A version whose estimated
// variance is 0 (all bits equal) is given the variance at lambda = (y + 1) / (n + 2).
//
// Interval method: the requested one, or the design's default from the exact coverage table
// (common/method_choice.h; the strictest over the versions present), with Prevalence.method_reason.
//
// Categorical metrics (Metric.categories): the same rules per category through the design's
// support channel, served as Prevalence.shares with simultaneous intervals (categorical_query.h);
// the yes/no fields are then 0.
//
// Numeric metrics (Metric.range): Prevalence.numeric (numeric_query.h): ONE_BIT_MEAN's mean and
// total from the bit's estimate by these same rules, D_BIT_FLIP's histogram per bucket as for
// categories, and its quantiles at GetPrevalenceRequest.quantiles.
//
// Anytime-valid intervals (GetPrevalenceRequest.interval = ANYTIME, anytime_estimate.h): the
// estimate as above, its intervals replaced by confidence sequences (docs/statistics.md section
// 10); only for a selection (each group, each series bucket) within one reporting period or
// calendar window, with BY_REPORTS. Prevalence.interval_kind says which intervals a response
// carries.
//
// Small groups: a selection with fewer reports than the metric's min_reports (or, when that is
// 0, QueryOptions::default_min_reports) is never estimated: GetPrevalence answers
// FAILED_PRECONDITION with the count needed; groups and series buckets are returned with n only
// and `suppressed` set.
//
// Thread-safe. Does not own its arguments, which must outlive it.
#ifndef DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_
#define DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/combine.h"
#include "deniable/common/interval.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct QueryOptions {
  // Reports a selection needs before its prevalence is served, for metrics created with
  // min_reports = 0.
  int64_t default_min_reports = 50;
  // Largest number of buckets one GetSeries may span.
  int64_t max_series_buckets = 10000;
};

// Counts of one selection, per design version: version -> (n, yes).
using VersionCounts = std::map<uint32_t, std::pair<int64_t, int64_t>>;
// Counts of one selection per reporting period: period start (Unix seconds) -> versions.
using PeriodCounts = std::map<int64_t, VersionCounts>;
// The summed counter vectors (CountRow.counters) per reporting period and design version; a
// vector may be shorter than the layout when its last counters are 0. Mechanisms of several
// coordinates (categorical_query.h, numeric_query.h) read these; PeriodCounts' second member
// is counter 0, the binary channel of a one-coordinate mechanism (yes/no, 1BitMean).
using PeriodSupport = std::map<int64_t, std::map<uint32_t, std::vector<int64_t>>>;

// Sets Prevalence.kind from `metric`: yes_no, categorical (with k) or numeric (left as the
// numeric estimate filled it).
void SetEstimateKind(const MetricInfo& metric, v1::Prevalence* p);

// Adds one count row's n and counters to the cell of its period and version: `count` gets
// (n, counters[0]) and `sums`, unless null (a layout of one coordinate, whose estimator reads
// only `count`), the whole vector. Kind-blind: the estimator chosen by the metric's mechanism
// reads what it needs.
void AddCounterSums(int64_t n, const SparseCounters& counters, std::pair<int64_t, int64_t>& count,
                    std::vector<int64_t>* sums);

// Sets the manipulation bounds (common/manipulation.h, docs/security.md) of an estimate filled by
// EstimateFromPeriods, EstimateSharesFromPeriods or EstimateNumericFromPeriods: `manipulation`
// (yes/no, and the bit of ONE_BIT_MEAN), each share's, the mean's (ONE_BIT_MEAN, in the values'
// unit) and each D_BIT_FLIP bucket's (over the reports that sampled it), for `fake_reports`
// fakes, or 1 % of n (rounded up) when it is 0. The per-report range [lo, hi] is the widest over
// the design versions present. Leaves suppressed estimates, those without versions, and
// INVERSE_VARIANCE combinations (whose weights are not the reports') without bounds.
// Errors: INVALID_ARGUMENT naming "manipulation_reports" when fake_reports < 0.
absl::Status SetManipulationBounds(int64_t fake_reports, v1::Prevalence* p);

// How to estimate one selection.
struct EstimateOptions {
  double level = 0.95;                   // confidence level, in (0, 1)
  std::optional<IntervalMethod> method;  // nullopt: the design's default (method_choice.h)
  VersionCombination combination = VersionCombination::kByReports;
};

// The start of the reporting period holding `event_time_seconds`: periods of `period_seconds`
// (0 meaning 86400) aligned to the Unix epoch. REQUIRES: period_seconds >= 0.
int64_t PeriodStart(int64_t event_time_seconds, int64_t period_seconds);

class PrevalenceQuery {
 public:
  PrevalenceQuery(MetricRegistry* registry, Storage* storage, QueryOptions options = {});

  // The prevalence of "yes" for request.metric over [start, end), with `groups` when
  // request.group_by names a label.
  // Errors: NOT_FOUND for an unknown metric; INVALID_ARGUMENT naming "metric",
  // "start_time_seconds", "end_time_seconds", "confidence_level", "method", "combination" or
  // "group_by", "interval" or "anytime_tuned_reports";
  // FAILED_PRECONDITION when the range holds fewer reports than the metric's minimum, and, with
  // interval = ANYTIME, naming "interval" (several periods or windows), "combination"
  // (INVERSE_VARIANCE) or "quantiles" (quantiles asked).
  absl::StatusOr<v1::Prevalence> Get(const v1::GetPrevalenceRequest& request);

  // One prevalence per bucket (hour, day, or week from Monday 00:00 UTC) holding reports.
  // Errors: as Get; INVALID_ARGUMENT when start or end is missing, or the range spans more than
  // max_series_buckets buckets.
  absl::StatusOr<v1::Series> Series(const v1::GetSeriesRequest& request);

  // first - second with the standard error sqrt(se1^2 + se2^2) and a Wald interval. The two
  // selections must not overlap: different metrics, or disjoint time ranges of one metric. In the
  // latter case the same devices report in both ranges; their two estimates are then
  // non-negatively correlated (identical bits under memoization, independent draws under fresh
  // randomization), so Var(first - second) <= se1^2 + se2^2 and the interval is conservative.
  // Errors: as Get for each selection (messages prefixed "first." / "second."); INVALID_ARGUMENT
  // when the selections of one metric overlap.
  absl::StatusOr<v1::Difference> Difference(const v1::GetDifferenceRequest& request);

 private:
  struct Selection;
  struct Tally;
  // The estimate for one selection (yes/no or categorical), without suppression.
  static absl::StatusOr<v1::Prevalence> Estimate(const Selection& s, const Tally& counts);
  // The estimate for one group or bucket, or only its n with `suppressed` below min_reports.
  static absl::StatusOr<v1::Prevalence> EstimateOrSuppress(const Selection& s, const Tally& counts);
  static Tally NewTally(const Selection& s, int64_t start, int64_t end,
                        const std::vector<const CountRow*>& rows);
  absl::StatusOr<Selection> Select(const std::string& metric, int64_t start, int64_t end,
                                   double level, v1::IntervalMethod method,
                                   v1::VersionCombination combination,
                                   v1::SimultaneousMethod simultaneous, v1::IntervalKind kind,
                                   int64_t tuned_reports);

  MetricRegistry* const registry_;
  Storage* const storage_;
  const QueryOptions options_;
};

// The estimate for `counts` (one selection: reporting periods, each with its design versions)
// under `metric`'s designs, as described at the top of this file. Fills n (reports: devices in one
// period, device-periods over several), yes_count, yes_share, the estimates, standard error,
// interval, method, method_reason, interval_construction, level, design (the newest version
// present), epsilon (the largest of the versions present, per report), versions, combination,
// estimand, periods, reporting_period_seconds and variance_bound.
// Errors: FAILED_PRECONDITION when the counts hold no reports; DATA_LOSS naming a design version
// the metric does not have; INVALID_ARGUMENT for a level outside (0, 1).
absl::StatusOr<v1::Prevalence> EstimateFromPeriods(const MetricInfo& metric,
                                                   const PeriodCounts& counts,
                                                   const EstimateOptions& options);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_PREVALENCE_QUERY_H_
