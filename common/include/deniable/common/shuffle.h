// Privacy amplification by shuffling: the epsilon an analyst who sees only aggregate counts faces.
//
// Each report is epsilon0-LDP (the local epsilon, design.h / categorical.h): that is all the
// operator who sees connections gets. The collector stores no device identifier and queries
// return only counts, so to anyone who sees only query results the n reports of a selection are
// an unordered multiset: the shuffle model. Feldman, McMillan and Talwar, "Hiding Among the
// Clones: A Simple and Nearly Optimal Analysis of Privacy Amplification by Shuffling" (FOCS 2021,
// arXiv:2012.12803) show that the multiset is (epsilon, delta)-DP with epsilon far below epsilon0.
//
// Their reduction (section 3): every other device's report is, with probability gamma (the clone
// probability), a "clone" of the target device's report: a draw from Q0 or Q1 with probability
// 1/2 each, where the target's two possible report laws are R(x0) = alpha Q0 + (1 - alpha) Q1 and
// R(x1) = (1 - alpha) Q0 + alpha Q1, alpha = e^eps0 / (e^eps0 + 1). The shuffled output is then a
// post-processing of one draw from the pair
//     P = (A + D, C - A + 1 - D)      Q = (A + 1 - D, C - A + D)
//     C ~ Binomial(n - 1, gamma),  A ~ Binomial(C, 1/2),  D ~ Bernoulli(alpha),
// so it is (epsilon, delta)-DP whenever P and Q are (eps, delta)-indistinguishable.
// For any epsilon0-LDP randomizer gamma = e^-eps0 (their Lemma 3.3). A known channel can give a
// larger gamma (the largest with R(x) >= gamma/2 (R(x0) + R(x1)) for every input x and pair x0,
// x1): 2 / (e^eps0 + 1) for symmetric binary and k-ary randomized response (BinaryCloneProbability,
// categorical.h), which amplifies more.
//
// Two bounds:
//  - ClosedFormShuffleEpsilon: their Theorem 3.1,
//        epsilon <= log(1 + (e^eps0 - 1)/(e^eps0 + 1) (8 sqrt(e^eps0 log(4/delta)) / sqrt(n)
//                          + 8 e^eps0 / n)),
//    valid only when eps0 <= log(n / (16 log(2/delta))). n = 1e5, eps0 = 4, delta = 1e-6: 0.535.
//  - NumericalShuffleEpsilon: the hockey-stick divergence of (P, Q) computed numerically and
//    inverted by bisection, their Appendix E (the method of Apple's ml-shuffling-amplification;
//    implemented here from the paper, see shuffle.cc). Valid for every n >= 1 and eps0 > 0; it
//    never exceeds eps0 (then nothing is gained). n = 1e5, eps0 = 4, delta = 1e-6: about 0.17.
//
// Example:
//   absl::StatusOr<deniable::CentralPrivacy> c = deniable::AmplifiedEpsilon(
//       std::log(3.0), deniable::BinaryCloneProbability(deniable::Design::TwoCoin().channel()),
//       /*n=*/2532, deniable::kDefaultCentralDelta);
//   c->epsilon;  // against an analyst who sees only the counts of these 2532 reports
//
// Assumption (docs/privacy.md): each device contributes one report to the counts the analyst
// sees. Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_SHUFFLE_H_
#define DENIABLE_COMMON_SHUFFLE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "deniable/common/design.h"

namespace deniable {

// The delta the server reports the central epsilon at (a probability; well below 1/n for any
// deployment of fewer than a million devices per selection).
inline constexpr double kDefaultCentralDelta = 1e-6;

// The clone probability of an arbitrary epsilon0-LDP randomizer: e^-eps0 (FMT21 Lemma 3.3).
// REQUIRES: eps0 >= 0 (+infinity gives 0).
double GenericCloneProbability(double eps0);

// The clone probability of a binary channel (a, b): the largest gamma with R(x) >= gamma/2 (R(0) +
// R(1)) for x in {0, 1}, i.e. min(2 min(a, b) / (a + b), 2 min(1 - a, 1 - b) / (2 - a - b)).
// Symmetric randomized response with epsilon gives 2 / (e^eps + 1) (two coins: 1/2), never less
// than e^-eps. 0 when some report reveals its answer (infinite epsilon).
// REQUIRES: ValidateChannel(channel).ok().
double BinaryCloneProbability(const Channel& channel);

// FMT21 Theorem 3.1 (closed form), in nats. `eps0` in nats, `n` reports, `delta` in (0, 1).
// Errors: INVALID_ARGUMENT naming "eps0" (NaN, <= 0 or infinite), "n" (< 1) or "delta" (not in
// (0, 1)); FAILED_PRECONDITION when eps0 > log(n / (16 log(2 / delta))), outside the theorem's
// range (large eps0 or small n), with that limit in the message.
absl::StatusOr<double> ClosedFormShuffleEpsilon(double eps0, int64_t n, double delta);

// An upper bound on the delta at which (P, Q) above are (eps, delta)-indistinguishable:
// sum over c of P(C = c) max(0, hockey-stick_{e^eps}(P | Q, C = c)), with the tails of C beyond
// 12 standard deviations and up to 128 blocks of neighbouring c each bounded by its largest term
// (the divergence falls as c grows: one more clone is a post-processing). A probability in [0, 1];
// 0 for eps >= eps0. Errors: INVALID_ARGUMENT naming "eps0", "clone_probability" (not in (0, 1]),
// "n" or "eps" (NaN or < 0).
absl::StatusOr<double> NumericalShuffleDelta(double eps0, double clone_probability, int64_t n,
                                             double eps);

// The smallest eps (to within a relative 1e-4, rounded up) with NumericalShuffleDelta <= delta:
// the tighter bound, in nats, in (0, eps0]. Cost: about 15 bisection steps of 128 incomplete beta
// functions (under 10 ms at n = 10^5).
// Errors: INVALID_ARGUMENT naming "eps0", "clone_probability", "n" or "delta" (not in (0, 1)).
absl::StatusOr<double> NumericalShuffleEpsilon(double eps0, double clone_probability, int64_t n,
                                               double delta);

// What an analyst who sees only the counts of n reports can learn about one device's answer.
struct CentralPrivacy {
  double epsilon = 0;        // nats; = local_epsilon when not amplified (+infinity if that is)
  double delta = 0;          // the delta epsilon holds at (0 when not amplified: pure LDP)
  int64_t n = 0;             // reports the bound counts on
  double local_epsilon = 0;  // eps0, what each report gives on its own
  bool amplified = false;    // epsilon < local_epsilon
  std::string method;        // "shuffle_numerical" or "local_only"
  std::string note;          // why not amplified, empty otherwise
};

// The numerical shuffle bound when it is at most 0.99 eps0 (a smaller gain is not worth giving
// up pure eps0-DP for a delta), else the local epsilon with delta = 0 and a note (infinite eps0;
// or n too small / eps0 too large for a gain).
// Errors: INVALID_ARGUMENT naming "eps0" (NaN or <= 0), "clone_probability", "n" (< 1) or
// "delta".
absl::StatusOr<CentralPrivacy> AmplifiedEpsilon(double eps0, double clone_probability, int64_t n,
                                                double delta);

}  // namespace deniable

#endif  // DENIABLE_COMMON_SHUFFLE_H_
