// HeavyHittersValueKey (device_store.h): the string memo's key, a hash of the value.
#include <openssl/sha.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "deniable/client/device_store.h"

namespace deniable::client {
namespace {

void AppendLittleEndian(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

std::string HeavyHittersValueKey(const std::string& metric, uint32_t design_version, uint64_t salt,
                                 absl::string_view value) {
  std::string input = "deniable.hh.memo.v1";
  AppendLittleEndian(metric.size(), 4, &input);
  input += metric;
  AppendLittleEndian(design_version, 4, &input);
  AppendLittleEndian(salt, 8, &input);
  input.append(value.data(), value.size());
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(input.data()), input.size(), digest);
  // The input held the value: wiped before it is freed.
  std::fill(input.begin(), input.end(), '\0');
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

}  // namespace deniable::client
