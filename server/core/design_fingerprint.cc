#include "server/core/design_fingerprint.h"

#include <openssl/evp.h>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"

namespace deniable::server {
namespace {

// Appends `value` as 8 bytes, big-endian.
void AppendInt(std::string* out, uint64_t value) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(value >> shift));
}

// Appends `bytes` prefixed by its length, so that no two field lists encode alike.
void AppendBytes(std::string* out, absl::string_view bytes) {
  AppendInt(out, bytes.size());
  out->append(bytes.data(), bytes.size());
}

}  // namespace

uint64_t DesignFingerprint(const StoredMetric& metric, const StoredDesign& design) {
  std::string input;
  AppendBytes(&input, "deniable.design_fingerprint.v1");
  AppendInt(&input, static_cast<uint64_t>(metric.id));
  AppendBytes(&input, metric.name);
  AppendInt(&input, static_cast<uint64_t>(metric.created_time_seconds));
  AppendInt(&input, design.version);
  AppendInt(&input, static_cast<uint64_t>(design.created_time_seconds));
  AppendBytes(&input, design.parameters);
  // Categorical metrics only (yes/no fingerprints stay what they were): the category names, so a
  // metric recreated with other names does not match.
  if (!metric.categories.empty()) {
    AppendInt(&input, metric.categories.size());
    for (const std::string& c : metric.categories) AppendBytes(&input, c);
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(input.data(), input.size(), digest, &size, EVP_sha256(), nullptr);
  uint64_t fingerprint = 0;
  for (int i = 0; i < 8; ++i) fingerprint = (fingerprint << 8) | digest[i];
  return fingerprint == 0 ? 1 : fingerprint;
}

std::string FingerprintHex(uint64_t fingerprint) { return absl::StrFormat("%016x", fingerprint); }

}  // namespace deniable::server
