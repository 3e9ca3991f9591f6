// Confidence intervals for the prevalence (statistics.md section 3).
//
// An interval [L, U] for lambda = P(r = 1) is built from (y, n) by a binomial-proportion method,
// each end is mapped through (lambda - b) / (a - b) (ends swapped if a < b), and the result is
// clipped to [0, 1]. Methods (Brown, Cai & DasGupta 2001, "Interval Estimation for a Binomial
// Proportion", Statistical Science 16(2)):
//   kWald            lambda_hat -/+ z sqrt(lambda_hat (1 - lambda_hat) / n)      (eq. 1)
//   kWilson          Wilson score interval (1927)                                (eq. 4)
//   kAgrestiCoull    Wald around (y + z^2/2) / (n + z^2)                         (eq. 5)
//   kJeffreys        Beta(y + 1/2, n - y + 1/2) quantiles, ends 0 / 1 at y = 0 / n (sec. 4.1.2)
//   kClopperPearson  exact: Beta(y, n - y + 1) and Beta(y + 1, n - y) quantiles (1934)
// z is the standard normal 1 - alpha/2 quantile. The server's default method per design is in
// method_choice.h.
//
// Example:
//   auto ci = deniable::MakePrevalenceInterval(deniable::Design::TwoCoin().channel(), 120, 200,
//                                              0.95, deniable::IntervalMethod::kWilson);
//   ci->lower, ci->upper  // in [0, 1]
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_INTERVAL_H_
#define DENIABLE_COMMON_INTERVAL_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/design.h"

namespace deniable {

enum class IntervalMethod { kWald, kWilson, kAgrestiCoull, kJeffreys, kClopperPearson };

// "wald", "wilson", "agresti_coull", "jeffreys", "clopper_pearson".
const char* IntervalMethodName(IntervalMethod method);
// Parses IntervalMethodName's output. Errors: INVALID_ARGUMENT listing the known names.
absl::StatusOr<IntervalMethod> ParseIntervalMethod(absl::string_view name);

struct Interval {
  double lower = 0;
  double upper = 0;
};

// The largest confidence level accepted anywhere (1 - 1e-12): above it the normal and beta
// quantiles lose their meaning in double precision (0.9999999999999999 makes 1 - alpha/2 == 1).
// Callers refuse levels outside (0, kMaxConfidenceLevel] with INVALID_ARGUMENT.
inline constexpr double kMaxConfidenceLevel = 1.0 - 1e-12;

// The standard normal quantile z with P(Z <= z) = 1 - (1 - confidence_level) / 2, computed with
// a non-throwing Boost policy (a level outside the range gives +-infinity or NaN, never an
// exception).
// REQUIRES: confidence_level in (0, kMaxConfidenceLevel] (checked by the callers below).
double TwoSidedNormalQuantile(double confidence_level);

// An interval for the binomial proportion lambda from y successes of n, within [0, 1].
// Errors: INVALID_ARGUMENT naming "n", "yes_count" or "confidence_level" (must be in (0, 1)).
absl::StatusOr<Interval> YesShareInterval(IntervalMethod method, int64_t yes_count, int64_t n,
                                          double confidence_level);

struct PrevalenceInterval {
  double lower = 0;      // in [0, 1]
  double upper = 0;      // in [0, 1], >= lower
  bool clipped = false;  // true if an end of the mapped interval fell outside [0, 1]
};

// The interval for the prevalence: YesShareInterval mapped back through the channel and clipped.
// Errors: those of YesShareInterval, and INVALID_ARGUMENT for an invalid channel.
absl::StatusOr<PrevalenceInterval> MakePrevalenceInterval(const Channel& channel, int64_t yes_count,
                                                          int64_t n, double confidence_level,
                                                          IntervalMethod method);

}  // namespace deniable

#endif  // DENIABLE_COMMON_INTERVAL_H_
