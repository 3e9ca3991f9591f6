// The default interval method for a design, chosen from the exact coverage table (docs/coverage.md,
// written by tools/coverage/coverage_table.cc; statistics.md section 3).
//
// Discrete binomial intervals dip below their level where lambda = P(report yes) is close to 0 or 1
// (Brown, Cai & DasGupta 2001, "Interval Estimation for a Binomial Proportion", Statistical Science
// 16(2), section 4.1.1: Wilson's lower end at y = 1 is about 0.18 / n, so for n lambda < 0.18 the
// interval misses lambda whenever y = 1, and its coverage falls to about 84 %). How close lambda
// can come to an edge is fixed by the design: lambda ranges over [min(a, b), max(a, b)], so the
// design's "edge" is min(a, b, 1 - a, 1 - b). The rule:
//   edge >= kWilsonMinEdge  ->  Wilson
//   otherwise               ->  Agresti-Coull
// In docs/coverage.md (n = 20 ... 10000, pi on a grid refined where n lambda or n (1 - lambda) is
// small), Wilson's worst coverage is 92.9 % at n = 20 rising to 94.5 % at n = 1000 in designs whose
// lambda stays away from the edges; where lambda can come within 0.025 of 0 or 1 it falls to
// 86.0 % at every n (91.2 % at edge 0.025). Agresti-Coull, which adds z^2 / 2 successes and
// failures and so is wider at the edges (BCD 2001 section 4.1.2, their recommendation for
// n >= 40), keeps in those designs the profile Wilson has in the others: worst 92.9 % at n = 20,
// 93.5 % at 50, 93.9 % at 100, 94.4 % at 1000. Clopper-Pearson (never below the level, wider
// still) is used only when requested.
//
// Example:
//   deniable::MethodChoice c =
//   deniable::DefaultIntervalMethod(deniable::Design::TailsSaysYes().channel()); c.method;  //
//   kAgrestiCoull c.reason;  // "default for this design: P(report yes) can come within 0 of 1 ..."
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_METHOD_CHOICE_H_
#define DENIABLE_COMMON_METHOD_CHOICE_H_

#include <string>

#include "deniable/common/design.h"
#include "deniable/common/interval.h"

namespace deniable {

// Designs whose lambda stays at least this far from 0 and 1 get Wilson by default. Chosen from
// docs/coverage.md: at edge >= 0.047 (symmetric eps = 3 and milder) Wilson's worst coverage over
// n = 20 ... 10000 is 92.5 % or more (92.9 % for designs centred at 1/2); at edge <= 0.025
// (unrelated question with pi_B = 1/12 or smaller, symmetric eps = 5, b = 0 or a = 1) it falls
// to 86-91 %.
inline constexpr double kWilsonMinEdge = 0.04;

// The rule above, one sentence, for docs and the coverage table.
extern const char kDefaultMethodRule[];

// min(a, b, 1 - a, 1 - b): how close P(report yes) can come to 0 or 1. In [0, 1/2].
double ChannelEdge(const Channel& channel);

struct MethodChoice {
  IntervalMethod method = IntervalMethod::kWilson;
  std::string reason;  // one sentence naming the design's edge and the table it comes from
};

// The default method for `channel` by the rule above, and why.
// REQUIRES: ValidateChannel(channel).ok().
MethodChoice DefaultIntervalMethod(const Channel& channel);

}  // namespace deniable

#endif  // DENIABLE_COMMON_METHOD_CHOICE_H_
