// Bounded echo of untrusted input in status messages and log lines.
//
// Example:
//   return absl::NotFoundError(absl::StrCat("metric: unknown metric ", EchoValue(name)));
//
// Thread-safe (a pure function).
#ifndef DENIABLE_COMMON_ECHO_H_
#define DENIABLE_COMMON_ECHO_H_

#include <cstddef>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace deniable {

// Bytes of an untrusted value that a message or log line repeats.
inline constexpr size_t kMaxEchoBytes = 64;

// `value` as it may be echoed: its first kMaxEchoBytes bytes C-escaped and in quotes, followed by
// its length when it was truncated. For example `"abc"`, or for 1.9 MB of junk
// `"\001\001..."... (1900000 bytes)`. The result is at most 4 * kMaxEchoBytes + 40 bytes
// whatever the input (C-escaping at most quadruples a byte), so hostile input cannot grow a status
// or a log line.
inline std::string EchoValue(absl::string_view value) {
  if (value.size() <= kMaxEchoBytes) return absl::StrCat("\"", absl::CEscape(value), "\"");
  return absl::StrCat("\"", absl::CEscape(value.substr(0, kMaxEchoBytes)), "\"... (", value.size(),
                      " bytes)");
}

}  // namespace deniable

#endif  // DENIABLE_COMMON_ECHO_H_
