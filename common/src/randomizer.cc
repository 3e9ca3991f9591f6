#include "deniable/common/randomizer.h"

namespace deniable {

bool RandomizeAnswer(const Channel& channel, bool true_answer, Draws& draws) {
  return draws.Bernoulli(true_answer ? channel.a : channel.b);
}

bool RandomizeAnswer(const Channel& channel, bool true_answer, absl::BitGenRef gen) {
  BitGenDraws draws(gen);
  return RandomizeAnswer(channel, true_answer, draws);
}

}  // namespace deniable
