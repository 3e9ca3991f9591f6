// Randomized-response designs as 2x2 channels (statistics.md section 1).
//
// A respondent's true answer is x in {0, 1}; the device sends a randomized bit r. Every binary
// design is fixed by the channel
//     a = P(r = 1 | x = 1),   b = P(r = 1 | x = 0),   a != b.
// `Design` keeps the analyst's native parameters (p and q, P and pi_B, epsilon, ...) and derives
// the channel; everything downstream (randomizer, estimator, intervals, privacy figures) uses
// only the channel.
//
// Example:
//   absl::StatusOr<deniable::Design> d = deniable::Design::ForcedResponse(0.5, 0.5);
//   if (!d.ok()) return d.status();
//   d->channel().a;            // 0.75
//   deniable::Epsilon(d->channel());  // ln 3 = 1.0986 nats
//
// All functions here are pure and thread-compatible; `Design` is an immutable value type.
#ifndef DENIABLE_COMMON_DESIGN_H_
#define DENIABLE_COMMON_DESIGN_H_

#include <string>

#include "absl/status/statusor.h"

namespace deniable {

// The 2x2 channel. Probabilities in [0, 1].
struct Channel {
  double a = 0;  // P(r = 1 | x = 1)
  double b = 0;  // P(r = 1 | x = 0)
};

// The family a design was created from (statistics.md section 1 table, one row each).
enum class DesignKind {
  kSymmetricEpsilon,   // epsilon
  kForcedResponse,     // p, q
  kTwoCoin,            // (forced response p = q = 1/2)
  kTailsSaysYes,       // (forced response p = 1/2, q = 1)
  kUnrelatedQuestion,  // P, pi_B
  kMirroredQuestion,   // P (Warner 1965)
  kTruthWithGamma,     // gamma
};

// The smallest |a - b| a design may have. The estimator's variance is
// lambda (1 - lambda) / (n (a - b)^2) (statistics.md section 3), so a design with |a - b| below
// this needs more than 10^6 times the reports of a direct question for the same precision, and
// one with a == b in double precision (forced response p = 1e-300, mirrored P = 0.5 + 1e-16,
// gamma = 1e-300) can never give a prevalence. The factories below refuse such designs with
// INVALID_ARGUMENT naming the parameter. For symmetric epsilon it means epsilon >= 0.002.
inline constexpr double kMinChannelGap = 1e-3;
// The largest symmetric epsilon accepted, in nats. Past about 37 nats the channel is (1, 0) in
// double precision (every report reveals its answer); above this maximum the parameter is
// refused as meaningless (e.g. 1000 or 1e308) rather than rounded.
inline constexpr double kMaxSymmetricEpsilon = 50.0;

// A short, stable, lower-case name for a kind ("forced_response", "two_coin", ...).
const char* DesignKindName(DesignKind kind);

// A randomized-response design: native parameters plus the derived channel.
// Immutable value type; thread-safe to share once constructed.
class Design {
 public:
  // Symmetric randomized response by privacy budget: a = e^eps / (1 + e^eps), b = 1 - a.
  // `epsilon` in nats, in [0.002, kMaxSymmetricEpsilon] (0.002 gives |a - b| = kMinChannelGap).
  // Errors: INVALID_ARGUMENT naming "epsilon" (NaN, infinite, <= 0, too small or too large).
  static absl::StatusOr<Design> SymmetricEpsilon(double epsilon);
  // Forced response (truth with probability p, else "yes" with probability q):
  // a = p + (1 - p) q, b = (1 - p) q. REQUIRES p in (0, 1], q in [0, 1].
  // Errors: INVALID_ARGUMENT naming "p" or "q" (NaN, outside [0, 1], or p < kMinChannelGap so
  // a - b = p is too small).
  static absl::StatusOr<Design> ForcedResponse(double p, double q);
  // The two-coin scheme: a = 3/4, b = 1/4, epsilon = ln 3 (seed 000, 002).
  static Design TwoCoin();
  // "Tails says yes": a = 1, b = 1/2; epsilon is infinite (a "no" reveals the truth) (seed 000).
  static Design TailsSaysYes();
  // Unrelated question (seed 001): a = P + (1 - P) pi_B, b = (1 - P) pi_B.
  // REQUIRES big_p in [kMinChannelGap, 1] (a - b = P), pi_b in [0, 1].
  // Errors: INVALID_ARGUMENT naming "P" or "pi_B".
  static absl::StatusOr<Design> UnrelatedQuestion(double big_p, double pi_b);
  // Warner's mirrored question (Warner 1965): a = P, b = 1 - P. REQUIRES big_p in [0, 1],
  // |2 P - 1| >= kMinChannelGap. Errors: INVALID_ARGUMENT naming "P".
  static absl::StatusOr<Design> MirroredQuestion(double big_p);
  // Truth with probability 1/2 + gamma (seed 003): a = 1/2 + gamma, b = 1/2 - gamma.
  // REQUIRES gamma in [-1/2, 1/2], |2 gamma| >= kMinChannelGap.
  // Errors: INVALID_ARGUMENT naming "gamma".
  static absl::StatusOr<Design> TruthWithGamma(double gamma);

  DesignKind kind() const { return kind_; }
  const Channel& channel() const { return channel_; }
  // Native parameters; only those of kind() are meaningful, the others are 0.
  double epsilon_parameter() const { return epsilon_; }  // kSymmetricEpsilon
  double p() const { return p_; }                        // kForcedResponse (and coin schemes)
  double q() const { return q_; }                        // kForcedResponse (and coin schemes)
  double big_p() const { return big_p_; }                // kUnrelatedQuestion, kMirroredQuestion
  double pi_b() const { return pi_b_; }                  // kUnrelatedQuestion
  double gamma() const { return gamma_; }                // kTruthWithGamma

  // "forced_response(p=0.5, q=0.5)" and the like, for logs and tables.
  std::string ToString() const;

 private:
  Design(DesignKind kind, Channel channel) : kind_(kind), channel_(channel) {}

  DesignKind kind_;
  Channel channel_;
  double epsilon_ = 0, p_ = 0, q_ = 0, big_p_ = 0, pi_b_ = 0, gamma_ = 0;
};

// Checks a channel: a and b finite, in [0, 1], and a != b.
// Errors: INVALID_ARGUMENT naming "a" or "b".
absl::Status ValidateChannel(const Channel& channel);

// True when every report reveals its true answer: (a, b) = (1, 0) or (0, 1), i.e. forced
// response or unrelated question with P = 1, mirrored P = 1 or 0, gamma = +-1/2, or symmetric
// epsilon above about 37 nats. Such a design offers no privacy at all: the collector refuses it
// at metric creation unless the analyst allows it explicitly (allow_no_privacy).
bool RevealsEveryAnswer(const Channel& channel);

// Local differential privacy of one report (statistics.md section 2):
//   epsilon = max(|ln(a / b)|, |ln((1 - a) / (1 - b))|), in nats.
// Returns +infinity when a ratio has a zero denominator or numerator (some report reveals x).
// REQUIRES: ValidateChannel(channel).ok().
double Epsilon(const Channel& channel);

}  // namespace deniable

#endif  // DENIABLE_COMMON_DESIGN_H_
