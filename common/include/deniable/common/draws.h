// The random draws a randomizer makes, as one small interface, so that the same randomizer runs
// on a secure generator in production and on a fixed stream of uniform numbers in the golden
// vectors that hold the three SDKs (C++, Python, JS) to one contract
// (tests/golden/randomizer_vectors.json, docs/architecture.md).
//
// The contract of a uniform stream u_1, u_2, ... in [0, 1) (UniformDraws; the Python and JS SDKs
// implement the same two rules):
//   Bernoulli(p)      = u < p                       (one number)
//   Below(n)          = min(floor(u * n), n - 1)    (one number), an integer in [0, n)
//   Between(lo, hi)   = lo + Below(hi - lo + 1)     (one number)
// BitGenDraws makes the same draws from an absl generator with absl::Bernoulli and absl::Uniform
// (exact, no modulo bias), as the randomizers always have.
//
// Example:
//   const std::vector<double> uniforms = {0.3, 0.9};
//   deniable::UniformDraws draws(uniforms);
//   bool bit = deniable::RandomizeAnswer(deniable::Design::TwoCoin().channel(), true, draws);
//   // bit == true (0.3 < a = 0.75); draws.used() == 1
//
// Not thread-safe: one Draws per thread.
#ifndef DENIABLE_COMMON_DRAWS_H_
#define DENIABLE_COMMON_DRAWS_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/random/bit_gen_ref.h"

namespace deniable {

class Draws {
 public:
  virtual ~Draws() = default;
  // True with probability p (p in [0, 1]).
  virtual bool Bernoulli(double p) = 0;
  // A uniform integer in [0, n). REQUIRES: n >= 1.
  virtual uint32_t Below(uint32_t n) = 0;
  // A uniform integer in [lo, hi]. REQUIRES: lo <= hi, hi - lo < 2^32 - 1.
  virtual uint32_t Between(uint32_t lo, uint32_t hi) = 0;
};

// Draws from an absl generator (production: client::SecureBitGen).
class BitGenDraws final : public Draws {
 public:
  explicit BitGenDraws(absl::BitGenRef gen) : gen_(gen) {}
  bool Bernoulli(double p) override;
  uint32_t Below(uint32_t n) override;
  uint32_t Between(uint32_t lo, uint32_t hi) override;

 private:
  absl::BitGenRef gen_;
};

// Draws from a fixed stream of uniform numbers in [0, 1), for golden vectors. Past the end of the
// stream every draw returns as if u = 0 and exhausted() becomes true.
class UniformDraws final : public Draws {
 public:
  explicit UniformDraws(std::span<const double> uniforms) : uniforms_(uniforms) {}
  bool Bernoulli(double p) override;
  uint32_t Below(uint32_t n) override;
  uint32_t Between(uint32_t lo, uint32_t hi) override;
  // How many numbers the draws used.
  size_t used() const { return next_; }
  bool exhausted() const { return exhausted_; }

 private:
  double Next();
  std::span<const double> uniforms_;
  size_t next_ = 0;
  bool exhausted_ = false;
};

}  // namespace deniable

#endif  // DENIABLE_COMMON_DRAWS_H_
