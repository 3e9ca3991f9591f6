#include "deniable/client/secure_bit_gen.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

namespace deniable::client {

SecureBitGen::~SecureBitGen() { OPENSSL_cleanse(buffer_.data(), sizeof(buffer_)); }

void SecureBitGen::Refill() {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(buffer_.data()),
                 static_cast<int>(sizeof(buffer_))) != 1) {
    std::fputs("deniable: RAND_bytes failed; refusing to randomize with weak noise\n", stderr);
    std::abort();
  }
  next_ = 0;
}

SecureBitGen::result_type SecureBitGen::operator()() {
  if (next_ == kBufferWords) Refill();
  const uint64_t value = buffer_[next_];
  buffer_[next_++] = 0;  // a used word is not kept in memory
  return value;
}

}  // namespace deniable::client
