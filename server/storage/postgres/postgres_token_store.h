// The TokenStore (server/auth/token_store.h) in PostgreSQL (table auth_tokens of
// postgres_schema.h), so that every collector on the database accepts the same tokens: the same
// operations and guarantees as SqliteTokenStore.
//
//   auto store = PostgresTokenStore::Open("postgresql://deniable@db/deniable");
//   auto added = (*store)->Add(Role::kReporter, "android-app", absl::Now());
//
// Thread-safe (one mutex around the connection); reconnects by itself after a lost connection.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_TOKEN_STORE_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_TOKEN_STORE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/auth/token_store.h"
#include "server/storage/postgres/postgres_connection.h"

namespace deniable::server {

class PostgresTokenStore final : public TokenStore {
 public:
  // Connects and creates or migrates the schema. Errors: as PostgresStorage::Open.
  static absl::StatusOr<std::unique_ptr<PostgresTokenStore>> Open(const std::string& uri);

  // As TokenStore::Add: the token is returned once; only its SHA-256 is stored.
  absl::StatusOr<NewToken> Add(Role role, absl::string_view label, absl::Time now) override;
  // As TokenStore::Revoke. Errors: NOT_FOUND "id: ..."; storage errors.
  absl::Status Revoke(int64_t id, absl::Time now) override;
  // As TokenStore::List: every token, revoked ones included, by id.
  absl::StatusOr<std::vector<TokenRecord>> List() override;
  // Inserts a record as it is (hash, role, label, times) unless its hash is stored already;
  // used by `deniable-server migrate`. Returns whether it was inserted.
  absl::StatusOr<bool> Import(const TokenRecord& record);

 private:
  PostgresTokenStore() = default;
  absl::Mutex mu_;
  std::unique_ptr<PgConnection> conn_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_TOKEN_STORE_H_
