// The randomized-response mechanism: the one place a true answer is turned into a report bit.
//
// The true answer enters, only the randomized bit r leaves:
//     P(r = 1 | x = 1) = a,   P(r = 1 | x = 0) = b        (statistics.md section 1)
// The generator is injected so that production passes a cryptographically secure generator
// (deniable::client::SecureBitGen) and tests pass a seeded engine or absl::MockingBitGen.
//
// Example:
//   deniable::client::SecureBitGen gen;
//   bool bit = deniable::RandomizeAnswer(design.channel(), /*true_answer=*/true, gen);
//
// Thread-compatible: safe to call concurrently with distinct generators; the generator itself
// must not be shared between threads without external locking.
#ifndef DENIABLE_COMMON_RANDOMIZER_H_
#define DENIABLE_COMMON_RANDOMIZER_H_

#include "absl/random/bit_gen_ref.h"
#include "deniable/common/design.h"
#include "deniable/common/draws.h"

namespace deniable {

// Draws the randomized bit for a true answer: 1 with probability a if `true_answer`, else with
// probability b. REQUIRES: ValidateChannel(channel).ok().
bool RandomizeAnswer(const Channel& channel, bool true_answer, absl::BitGenRef gen);
// The same with explicit draws (draws.h): one Bernoulli draw. The golden vectors run it on a
// stream of uniform numbers; the generator form above is this on BitGenDraws.
bool RandomizeAnswer(const Channel& channel, bool true_answer, Draws& draws);

}  // namespace deniable

#endif  // DENIABLE_COMMON_RANDOMIZER_H_
