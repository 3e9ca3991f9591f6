// A cryptographically secure uniform random bit generator for the randomizer.
//
// Draws from OpenSSL's RAND_bytes (a CSPRNG seeded by the operating system) into a 4 KiB
// buffer, so one RAND_bytes call serves 512 draws of 64 bits. Satisfies the C++
// UniformRandomBitGenerator requirements, so it can be passed as an absl::BitGenRef:
//
//   deniable::client::SecureBitGen gen;
//   bool bit = deniable::RandomizeAnswer(channel, answer, gen);
//
// If RAND_bytes ever fails the process aborts: continuing with predictable noise would break
// the privacy guarantee silently.
//
// Thread-compatible: use one generator per thread, or lock around it (Reporter does).
#ifndef DENIABLE_CLIENT_SECURE_BIT_GEN_H_
#define DENIABLE_CLIENT_SECURE_BIT_GEN_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace deniable::client {

class SecureBitGen {
 public:
  using result_type = uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  SecureBitGen() = default;
  SecureBitGen(const SecureBitGen&) = delete;
  SecureBitGen& operator=(const SecureBitGen&) = delete;
  ~SecureBitGen();  // wipes the unused buffer

  // 64 uniformly random bits.
  result_type operator()();

 private:
  static constexpr size_t kBufferWords = 512;
  void Refill();
  std::array<uint64_t, kBufferWords> buffer_{};
  size_t next_ = kBufferWords;  // empty: the first call fills the buffer
};

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_SECURE_BIT_GEN_H_
