// The TokenStore (server/auth/token_store.h) in the collector's SQLite database.
//
// Table (created on open, beside the collector's tables, whose schema Open checks as the server
// does; its own connection):
//   auth_tokens(id INTEGER PRIMARY KEY, hash BLOB UNIQUE, role TEXT, label TEXT,
//               created_time_seconds INTEGER, revoked_time_seconds INTEGER NULL)
//
//   auto store = SqliteTokenStore::Open("deniable.db");
//   auto added = (*store)->Add(Role::kReporter, "android-app", absl::Now());
//
// Thread-safe (one mutex around the connection).
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_TOKEN_STORE_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_TOKEN_STORE_H_

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/auth/token_store.h"

namespace deniable::server {

class SqliteTokenStore final : public TokenStore {
 public:
  // Opens the database file (creating it if needed, unless `must_exist`) and the auth_tokens
  // table. `must_exist` is for the commands that read or change tokens already made (tokens
  // list, tokens revoke): a mistyped path then fails instead of leaving an empty database.
  // Errors: INVALID_ARGUMENT for an empty path; NOT_FOUND "db: ... does not exist" naming the
  // file when `must_exist` and there is none; FAILED_PRECONDITION for a file that is not a
  // collector's database (EnsureCollectorSchema); INTERNAL / UNAVAILABLE if SQLite fails.
  static absl::StatusOr<std::unique_ptr<SqliteTokenStore>> Open(const std::string& path,
                                                                bool must_exist = false);
  ~SqliteTokenStore() override;

  // See TokenStore.
  absl::StatusOr<NewToken> Add(Role role, absl::string_view label, absl::Time now) override;
  absl::Status Revoke(int64_t id, absl::Time now) override;
  absl::StatusOr<std::vector<TokenRecord>> List() override;

 private:
  SqliteTokenStore() = default;
  absl::Mutex mu_;
  sqlite3* db_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_TOKEN_STORE_H_
