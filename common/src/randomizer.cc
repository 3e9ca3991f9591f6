#include "deniable/common/randomizer.h"

#include "absl/random/distributions.h"

namespace deniable {

bool RandomizeAnswer(const Channel& channel, bool true_answer, absl::BitGenRef gen) {
  return absl::Bernoulli(gen, true_answer ? channel.a : channel.b);
}

}  // namespace deniable
