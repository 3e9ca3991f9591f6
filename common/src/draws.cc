#include "deniable/common/draws.h"

#include <algorithm>
#include <cmath>

#include "absl/random/distributions.h"

namespace deniable {

bool BitGenDraws::Bernoulli(double p) { return absl::Bernoulli(gen_, p); }

uint32_t BitGenDraws::Below(uint32_t n) { return absl::Uniform<uint32_t>(gen_, 0u, n); }

uint32_t BitGenDraws::Between(uint32_t lo, uint32_t hi) {
  return absl::Uniform(absl::IntervalClosedClosed, gen_, lo, hi);
}

double UniformDraws::Next() {
  if (next_ >= uniforms_.size()) {
    exhausted_ = true;
    return 0.0;
  }
  return uniforms_[next_++];
}

bool UniformDraws::Bernoulli(double p) { return Next() < p; }

uint32_t UniformDraws::Below(uint32_t n) {
  const double scaled = std::floor(Next() * static_cast<double>(n));
  return static_cast<uint32_t>(std::min(scaled, static_cast<double>(n - 1)));
}

uint32_t UniformDraws::Between(uint32_t lo, uint32_t hi) { return lo + Below(hi - lo + 1); }

}  // namespace deniable
