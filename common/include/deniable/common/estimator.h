// Debiased prevalence from randomized reports (statistics.md section 3).
//
// With y "yes" bits out of n reports randomized through the channel (a, b):
//   lambda_hat = y / n
//   pi_hat     = (lambda_hat - b) / (a - b)                     unbiased; may leave [0, 1]
//   Var(pi_hat) = lambda (1 - lambda) / (n (a - b)^2)           estimated with lambda_hat
// (Warner 1965, eq. 5-6; for the two-coin scheme pi_hat = 2 lambda_hat - 1/2, seed 002.)
//
// Example:
//   absl::StatusOr<deniable::PrevalenceEstimate> e =
//       deniable::EstimatePrevalence(deniable::Design::TwoCoin().channel(), 120, 200);
//   e->unbiased;  // 2 * 0.6 - 0.5 = 0.7
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_ESTIMATOR_H_
#define DENIABLE_COMMON_ESTIMATOR_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "deniable/common/design.h"

namespace deniable {

struct PrevalenceEstimate {
  int64_t n = 0;                   // reports
  int64_t yes_count = 0;           // reports with r = 1
  double yes_share = 0;            // lambda_hat = y / n, in [0, 1]
  double unbiased = 0;             // pi_hat, may fall outside [0, 1]
  double clipped = 0;              // pi_hat clipped to [0, 1] (the constrained MLE)
  double variance = 0;             // estimated Var(pi_hat)
  double standard_error = 0;       // sqrt(variance)
  double estimated_yes_count = 0;  // n * pi_hat (true "yes" answers), may be negative
};

// The unbiased estimate of the prevalence pi and its estimated variance.
// REQUIRES: 0 <= yes_count <= n, n > 0, a valid channel.
// Errors: INVALID_ARGUMENT naming "n", "yes_count", "a" or "b".
absl::StatusOr<PrevalenceEstimate> EstimatePrevalence(const Channel& channel, int64_t yes_count,
                                                      int64_t n);

// Maps a value of lambda = P(r = 1) to the prevalence: (lambda - b) / (a - b). Unclipped.
// REQUIRES: a != b.
double PrevalenceFromYesShare(const Channel& channel, double lambda);

// lambda = pi a + (1 - pi) b: the probability of a "yes" bit at prevalence pi.
double YesShareFromPrevalence(const Channel& channel, double pi);

}  // namespace deniable

#endif  // DENIABLE_COMMON_ESTIMATOR_H_
