// Bearer tokens and their roles: the records, the hashing and drawing of tokens, and the
// TokenStore interface that keeps them. The stores are storage's (no SQL here): SqliteTokenStore
// (server/storage/sqlite/sqlite_token_store.h, table auth_tokens beside the collector's tables) and
// PostgresTokenStore (server/storage/postgres/postgres_token_store.h, shared by every collector on
// the database); OpenBackend (server/storage/backend.h) opens the one --db names. Only
// SHA-256(token) is stored; the token itself is shown once, by Add, and never again.
//
// Example (what `deniable-server tokens add --role=reporter` does):
//   auto store = OpenTokenStore("deniable.db");  // server/storage/backend.h
//   auto added = (*store)->Add(Role::kReporter, "android-app", absl::Now());
//   std::cout << added->token;  // "dn_..." -- give it to the app, it cannot be read back
#ifndef DENIABLE_SERVER_AUTH_TOKEN_STORE_H_
#define DENIABLE_SERVER_AUTH_TOKEN_STORE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace deniable::server {

// reporter: GetDesign, SubmitReports, StreamReports. analyst: GetDesign, QueryService,
// AdminService. Neither role includes the other.
enum class Role { kReporter, kAnalyst };

// "reporter" or "analyst".
const char* RoleName(Role role);
// Errors: INVALID_ARGUMENT "role: ..." for any other text.
absl::StatusOr<Role> ParseRole(absl::string_view name);

using TokenHash = std::array<uint8_t, 32>;

// SHA-256 of the token's bytes (OpenSSL EVP).
TokenHash HashToken(absl::string_view token);

struct TokenRecord {
  int64_t id = 0;
  Role role = Role::kReporter;
  std::string label;  // free text for operators ("android-app"); never a secret
  TokenHash hash{};
  int64_t created_time_seconds = 0;
  std::optional<int64_t> revoked_time_seconds;  // set once revoked
};

struct NewToken {
  TokenRecord record;
  std::string token;  // "dn_" + 43 base64url characters (32 random bytes from OpenSSL RAND_bytes)
};

// Draws a new random token and its record (id 0, not stored); shared by the token stores.
// Errors: INVALID_ARGUMENT "label: ..." (at most 64 printable ASCII characters); INTERNAL if the
// random generator fails.
absl::StatusOr<NewToken> NewRandomToken(Role role, absl::string_view label, absl::Time now);

// Where tokens are kept. Implementations are thread-safe.
class TokenStore {
 public:
  virtual ~TokenStore() = default;

  // Draws a new random token, stores its hash and returns it (the only time it is visible).
  // `label` is at most 64 printable ASCII characters. Errors: INVALID_ARGUMENT "label: ...";
  // INTERNAL if the random generator fails; storage errors.
  virtual absl::StatusOr<NewToken> Add(Role role, absl::string_view label, absl::Time now) = 0;

  // Marks the token revoked; the running server stops accepting it within its reload interval.
  // Errors: NOT_FOUND "id: ..." if no such token or already revoked; storage errors.
  virtual absl::Status Revoke(int64_t id, absl::Time now) = 0;

  // Every token ever added (revoked ones included), ordered by id.
  virtual absl::StatusOr<std::vector<TokenRecord>> List() = 0;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_AUTH_TOKEN_STORE_H_
