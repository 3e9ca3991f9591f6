// LEB128 varints for storage's compact blobs (a report's support, storage.h EncodeCounters; the
// counter chunks, counter_chunks.h). Pure functions; thread-safe.
#ifndef DENIABLE_SERVER_STORAGE_VARINT_H_
#define DENIABLE_SERVER_STORAGE_VARINT_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace deniable::server {

// Appends `v`, 7 bits a byte, low first, the high bit set on every byte but the last.
inline void AppendVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// Reads one varint of at most 10 bytes at *pos (advanced past it); false when truncated or too
// long.
inline bool ReadVarint(absl::string_view in, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < in.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in[(*pos)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_VARINT_H_
