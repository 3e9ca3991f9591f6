// Anytime-valid intervals (confidence sequences) for the prevalence behind a binary randomized-
// response channel (docs/statistics.md section 10).
//
// A fixed-n interval (interval.h) covers the truth with probability >= the level at ONE look,
// decided before the data. Looked at again and again as reports arrive (a dashboard refreshed
// every hour), it misses at some look far more often. A confidence sequence covers the truth at
// every look at once:  P(for all t: pi in CS_t) >= level.
//
// Construction (two-sided normal mixture; Robbins 1970; Howard, Ramdas, McAuliffe and Sekhon,
// "Time-uniform, nonparametric, nonasymptotic confidence sequences", Annals of Statistics 49(2),
// 2021, section 3.2 and eq. (3.7)): report i has bit r_i through the channel (a_i, b_i) of its
// design version, and the debiased value z_i = (r_i - b_i) / (a_i - b_i) has mean pi and lies in
// an interval of length 1 / |a_i - b_i|, so it is sub-Gaussian with sigma_i = 1 / (2 |a_i - b_i|)
// (Hoeffding). With S_t = sum z_i, V_t = sum sigma_i^2 over the first t reports and rho > 0,
//   M_t = sqrt(rho / (V_t + rho)) exp((S_t - t pi)^2 / (2 (V_t + rho)))
// is a nonnegative supermartingale with M_0 = 1 (the mixture of exp(l (S_t - t pi) - l^2 V_t / 2)
// over l ~ N(0, 1/rho)), so by Ville's inequality P(exists t: M_t >= 1/alpha) <= alpha, i.e.
//   |S_t - t pi| < sqrt((V_t + rho) log((V_t + rho) / (rho alpha^2)))   for every t at once.
// The interval is S_t / t -/+ that boundary / t, clipped to [0, 1].
//
// rho sets where the boundary is tightest: rho = x*(alpha) V*, with V* = tuned_reports sigma^2
// of the reference channel and x*(alpha) the minimiser of (1 + x) (log(1 + 1/x) + 2 log(1/alpha))
// (NormalMixtureOptimalRatio). It must be fixed before looking (never from the data).
//
// Assumptions: reports independent given their design versions (one report per device and
// period, or a device's first report in a calendar window), each report's design version fixed
// before its bit is drawn; a "look" is any computation of the interval, at any time, as often as
// wanted, for a selection that only grows (fixed start, moving end).
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_CONFIDENCE_SEQUENCE_H_
#define DENIABLE_COMMON_CONFIDENCE_SEQUENCE_H_

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "deniable/common/design.h"

namespace deniable {

// Reports at which the boundary is tightest when a query does not say (a query option).
inline constexpr int64_t kDefaultAnytimeTunedReports = 10000;

// x*(alpha) = argmin over x > 0 of (1 + x) (log(1 + 1/x) + 2 log(1/alpha)): the root of
// log(1 + 1/x) + 2 log(1/alpha) - 1/x (increasing in x), found by bisection to 1e-12 relative.
// alpha = 0.05 gives 0.12177. REQUIRES: alpha in (0, 1).
double NormalMixtureOptimalRatio(double alpha);

// The boundary sqrt((v + rho) log((v + rho) / (rho alpha^2))) on the sum scale.
// REQUIRES: v >= 0, rho > 0, alpha in (0, 1).
double NormalMixtureBoundary(double variance_proxy, double rho, double alpha);

// The sub-Gaussian scale of one debiased report: 1 / (2 |a - b|). REQUIRES: a valid channel.
double DebiasedReportSigma(const Channel& channel);

// One block of independent reports through one channel (one design version): `successes` of
// `trials` reports have bit 1.
struct AnytimeBlock {
  Channel channel;
  int64_t successes = 0;
  int64_t trials = 0;
};

struct AnytimeOptions {
  double confidence_level = 0.95;  // in (0, kMaxConfidenceLevel]
  // Reports at which the boundary is tightest, > 0 (with sigma of reference_channel).
  int64_t tuned_reports = kDefaultAnytimeTunedReports;
  // The channel whose sigma scales rho (a metric's newest design); must not depend on the data.
  Channel reference_channel = Channel{0.75, 0.25};
};

struct AnytimeInterval {
  int64_t trials = 0;         // t, the reports of all blocks
  double center = 0;          // S_t / t: the report-weighted unbiased estimate, may leave [0, 1]
  double half_width = 0;      // boundary / t, on the prevalence scale
  double lower = 0;           // in [0, 1]
  double upper = 0;           // in [0, 1], >= lower
  bool clipped = false;       // an end of center -/+ half_width fell outside [0, 1]
  double variance_proxy = 0;  // V_t = sum trials sigma^2
  double rho = 0;             // the mixture's precision, fixed by the options
};

// The anytime interval for the prevalence from blocks of reports, at every look at once.
// Blocks with 0 trials are skipped.
// Errors: INVALID_ARGUMENT naming "confidence_level", "tuned_reports", "blocks[i].trials",
// "blocks[i].successes", "blocks[i].channel" or "reference_channel" (an invalid channel), and
// "blocks" when they hold no reports.
absl::StatusOr<AnytimeInterval> AnytimePrevalenceInterval(std::span<const AnytimeBlock> blocks,
                                                          const AnytimeOptions& options);

// The same for one channel (reference_channel = channel): y of n reports have bit 1.
// Errors: as above ("blocks[0]..." fields).
absl::StatusOr<AnytimeInterval> AnytimePrevalenceInterval(const Channel& channel, int64_t yes_count,
                                                          int64_t n, double confidence_level,
                                                          int64_t tuned_reports);

// The level of each of k intervals so that all k hold at once (Bonferroni): 1 - (1 - level) / k.
// REQUIRES: k >= 1.
double BonferroniLevel(double confidence_level, int k);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CONFIDENCE_SEQUENCE_H_
