#include "server/auth/token_store.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

const char* RoleName(Role role) { return role == Role::kReporter ? "reporter" : "analyst"; }

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  if (name == "reporter") return Role::kReporter;
  if (name == "analyst") return Role::kAnalyst;
  return absl::InvalidArgumentError(
      absl::StrCat("role: must be reporter or analyst, but is \"", absl::CEscape(name), "\""));
}

TokenHash HashToken(absl::string_view token) {
  TokenHash hash{};
  unsigned int size = 0;
  EVP_Digest(token.data(), token.size(), hash.data(), &size, EVP_sha256(), nullptr);
  return hash;
}

absl::StatusOr<NewToken> NewRandomToken(Role role, absl::string_view label, absl::Time now) {
  if (label.size() > 64 ||
      !std::all_of(label.begin(), label.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
    return absl::InvalidArgumentError("label: at most 64 printable ASCII characters");
  }
  unsigned char random[32];
  if (RAND_bytes(random, sizeof(random)) != 1) {
    return absl::InternalError("token: the OpenSSL random generator failed");
  }
  NewToken out;
  out.token = absl::StrCat("dn_", absl::WebSafeBase64Escape(absl::string_view(
                                      reinterpret_cast<const char*>(random), sizeof(random))));
  out.record.role = role;
  out.record.label = std::string(label);
  out.record.hash = HashToken(out.token);
  out.record.created_time_seconds = absl::ToUnixSeconds(now);
  return out;
}

}  // namespace deniable::server
