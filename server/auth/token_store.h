// Bearer tokens and their roles, stored hashed in the server's SQLite database.
//
// Table (created on open, beside the collector's tables; its own connection):
//   auth_tokens(id INTEGER PRIMARY KEY, hash BLOB UNIQUE, role TEXT, label TEXT,
//               created_time_seconds INTEGER, revoked_time_seconds INTEGER NULL)
// Only SHA-256(token) is stored; the token itself is shown once, by Add, and never again.
//
// Example (what `deniable-server tokens add --role=reporter` does):
//   auto store = TokenStore::Open("deniable.db");
//   auto added = (*store)->Add(Role::kReporter, "android-app", absl::Now());
//   std::cout << added->token;  // "dn_..." -- give it to the app, it cannot be read back
//
// Thread-safe (one mutex around the connection).
#ifndef DENIABLE_SERVER_AUTH_TOKEN_STORE_H_
#define DENIABLE_SERVER_AUTH_TOKEN_STORE_H_

#include <sqlite3.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
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

class TokenStore {
 public:
  // Opens (creating if needed) the database file and the auth_tokens table.
  // Errors: INVALID_ARGUMENT for an empty path; INTERNAL / UNAVAILABLE if SQLite fails.
  static absl::StatusOr<std::unique_ptr<TokenStore>> Open(const std::string& path);
  ~TokenStore();

  // Draws a new random token, stores its hash and returns it (the only time it is visible).
  // `label` is at most 64 printable ASCII characters. Errors: INVALID_ARGUMENT "label: ...";
  // INTERNAL if the random generator fails; storage errors.
  absl::StatusOr<NewToken> Add(Role role, absl::string_view label, absl::Time now);

  // Marks the token revoked; the running server stops accepting it within its reload interval.
  // Errors: NOT_FOUND "id: ..." if no such token or already revoked; storage errors.
  absl::Status Revoke(int64_t id, absl::Time now);

  // Every token ever added (revoked ones included), ordered by id.
  absl::StatusOr<std::vector<TokenRecord>> List();

 private:
  TokenStore() = default;
  absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_AUTH_TOKEN_STORE_H_
