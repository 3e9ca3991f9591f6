// Human-readable tables of the deniable tool for numeric metrics (issue 28): the mean and total
// (one_bit_mean), the histogram and quantiles (d_bit_flip) of a prevalence, series and
// difference, and a numeric replay beside the truth. --json prints the same responses as
// protobuf JSON instead (Prevalence.numeric, ...).
#ifndef DENIABLE_TOOLS_CLI_NUMERIC_OUTPUT_H_
#define DENIABLE_TOOLS_CLI_NUMERIC_OUTPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {

// True for a result of a numeric metric (Prevalence.numeric, or a numeric design).
bool IsNumeric(const v1::Prevalence& prevalence);
// "one_bit_mean v1 (epsilon = 1.0986 nats, values in [18, 90] years)";
// "d_bit_flip v1 (k = 7 buckets, d = 7 sampled per report, epsilon = 1.0986 nats, values in
// [0, 200000] pesos)". REQUIRES: design.parameters() is numeric.
std::string FormatNumericDesign(const v1::Design& design);
// A value of a metric whose range is `width` wide, with as many decimals as the width calls for
// (4 significant digits of the width: 2 decimals for a range of 72 years, none for 200000 pesos).
std::string NumericValue(double value, double width);
// "median (0.5)", "p90 (0.9)", "p99.9 (0.999)".
std::string QuantileName(double level);
// one_bit_mean: n, the mean with its standard error and interval, the total over the n
// reporting devices with its own, the bit's counts. d_bit_flip: n, one row per bucket (sampled,
// ones, unbiased and consistent shares, standard error, its own and the simultaneous interval)
// and one per quantile (value and interval). Then what is estimated and the central epsilon;
// with groups, one row (one_bit_mean: mean and interval) or line (d_bit_flip: the quantiles) per
// group.
std::string FormatNumericPrevalence(const v1::Prevalence& prevalence);
// one_bit_mean: one row per time bucket (start, n, mean, interval); d_bit_flip: one block per
// time bucket (the histogram with simultaneous intervals and the quantiles).
std::string FormatNumericSeries(const v1::Series& series);
// one_bit_mean: the two means, the change (second minus first) in the metric's unit with its
// words, its standard error sqrt(se1^2 + se2^2) and Wald interval. d_bit_flip: per bucket the
// two unbiased shares and their change with its Wald interval (percentage points).
std::string FormatNumericDifference(const v1::Difference& difference);

// What a replay knows and the server never sees: the replayed (acknowledged) respondents' true
// values, clipped to the metric's range as their devices clip them.
struct NumericTruth {
  int64_t devices = 0;
  int64_t clipped = 0;  // values outside [lo, hi], counted at the nearest end
  double mean = 0;      // of the clipped values
  // d_bit_flip: the share of the values in each of the result's buckets, and the true quantile
  // (the smallest value with at least `level` of the values at or below it) of each level.
  std::vector<double> bucket_shares;
  std::vector<double> quantiles;
};
// The truth of `values` for the numeric result `prevalence` (its range, buckets and quantile
// levels).
NumericTruth ComputeNumericTruth(const std::vector<double>& values,
                                 const v1::Prevalence& prevalence);
// The replay summary of a numeric metric: what was sent, the prevalence table, then the
// estimate beside the truth: one_bit_mean's mean with its interval and the true mean (and
// whether the interval covers it); d_bit_flip's shares with simultaneous intervals beside the
// true shares (and how many cover them), and each quantile's interval beside the true quantile.
std::string FormatNumericReplay(const ReplayResult& result, const SurveySpec& spec,
                                const v1::Prevalence& prevalence, const NumericTruth& truth);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_NUMERIC_OUTPUT_H_
