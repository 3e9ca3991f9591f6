// Privacy figures of one randomized report (statistics.md section 2).
//
// For a channel (a, b) and a prior prevalence pi = P(x = 1) in [0, 1]:
//   posterior after a "yes"   P(x=1 | r=1) = pi a / (pi a + (1 - pi) b)
//   posterior after a "no"    P(x=1 | r=0) = pi (1 - a) / (pi (1 - a) + (1 - pi) (1 - b))
//   prior entropy             H(x)     = h(pi), h the binary entropy, in bits
//   left uncertainty          H(x | r) = sum over r of P(r) h(P(x=1 | r)), in bits
//   mutual information        I(x; r)  = H(x) - H(x | r) >= 0, in bits
// (Bayes posteriors: seed 001 eq. 2-5 and seed 004; entropies: seed 001 section 2.) The local
// differential privacy epsilon (in nats) is deniable::Epsilon in design.h.
//
// Example:
//   absl::StatusOr<deniable::PrivacyFigures> f =
//       deniable::ComputePrivacyFigures(deniable::Design::TwoCoin().channel(), /*pi=*/0.366);
//   f->posterior_given_yes;  // 3 pi / (2 pi + 1) = 0.634
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_PRIVACY_H_
#define DENIABLE_COMMON_PRIVACY_H_

#include "absl/status/statusor.h"
#include "deniable/common/design.h"

namespace deniable {

// The binary entropy h(p) = -p log2 p - (1 - p) log2 (1 - p), in bits, with 0 log 0 = 0.
// REQUIRES: p in [0, 1] (not checked; NaN in gives NaN out).
double BinaryEntropyBits(double p);

// P(x = 1 | r = 1) = pi a / (pi a + (1 - pi) b), a probability in [0, 1] (Bayes; seed 001 eq. 4-5,
// seed 004: 3 pi / (2 pi + 1) for the two-coin scheme). A "yes" report that cannot occur
// (pi a + (1 - pi) b = 0, only possible at pi = 0 or pi = 1) leaves the prior unchanged: returns
// pi. Errors: INVALID_ARGUMENT naming "pi" (NaN or outside [0, 1]), or "a" / "b" for an invalid
// channel.
absl::StatusOr<double> PosteriorGivenYes(const Channel& channel, double pi);

// P(x = 1 | r = 0) = pi (1 - a) / (pi (1 - a) + (1 - pi) (1 - b)) (seed 001 eq. 2-3; seed 004:
// pi / (3 - 2 pi) for the two-coin scheme). A "no" that cannot occur returns pi, as above.
// Errors: as PosteriorGivenYes.
absl::StatusOr<double> PosteriorGivenNo(const Channel& channel, double pi);

// The prior entropy H(x) = h(pi), in bits (seed 001 section 2).
// Errors: INVALID_ARGUMENT naming "pi" (NaN or outside [0, 1]).
absl::StatusOr<double> PriorEntropyBits(double pi);

// The conditional entropy H(x | r) = P(r=1) h(P(x=1 | r=1)) + P(r=0) h(P(x=1 | r=0)), in bits: the
// uncertainty about x left after seeing one report (seed 001 section 2; statistics.md section 2).
// Always in [0, H(x)].
// Errors: as PosteriorGivenYes.
absl::StatusOr<double> ConditionalEntropyBits(const Channel& channel, double pi);

// The mutual information I(x; r) = H(x) - H(x | r), in bits: what one report reveals about x on
// average. Never negative (tiny negative rounding is returned as 0).
// Errors: as PosteriorGivenYes.
absl::StatusOr<double> MutualInformationBits(const Channel& channel, double pi);

// All of the above for one channel and prior, plus epsilon.
struct PrivacyFigures {
  double epsilon = 0;                   // nats; +infinity if some report reveals x
  double posterior_given_yes = 0;       // P(x = 1 | r = 1), in [0, 1]
  double posterior_given_no = 0;        // P(x = 1 | r = 0), in [0, 1]
  double prior_entropy_bits = 0;        // H(x)
  double conditional_entropy_bits = 0;  // H(x | r)
  double mutual_information_bits = 0;   // I(x; r)
};

// Errors: as PosteriorGivenYes.
absl::StatusOr<PrivacyFigures> ComputePrivacyFigures(const Channel& channel, double pi);

// Unrelated-question design (seed 001, section 3; statistics.md section 2): with the probability P
// of being asked the sensitive question fixed, the known "yes" share of the innocuous question
//     pi_B = P pi_A / ((1 - P) (1 - 2 pi_A))
// makes P(x = 0 | r = 1) = 1/2, i.e. a "yes" report leaves the maximum uncertainty (one bit) about
// x. `big_p` is P and `pi_a` the assumed prevalence pi_A of the sensitive attribute, both in [0,
// 1]. Errors:
//   INVALID_ARGUMENT naming "P" (NaN, outside (0, 1): at P = 1 no innocuous question is asked) or
//     "pi_A" (NaN or outside [0, 1]);
//   FAILED_PRECONDITION when no such pi_B exists: pi_A is not in (0, 1/2), or the formula gives a
//     value above 1 (P too large for this pi_A). The message says which.
absl::StatusOr<double> UninformativeInnocuousShare(double big_p, double pi_a);

}  // namespace deniable

#endif  // DENIABLE_COMMON_PRIVACY_H_
