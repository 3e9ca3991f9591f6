// The composition root's storage step: from --db (a SQLite file or a PostgreSQL URI) and the
// options, everything the collector keeps in its database, opened once, so that the server's
// main asks which backend it has in one place (BackendTraits) instead of testing the URI again
// at each setting that differs.
//
//   BackendOptions options;
//   options.sqlite.durability = Durability::kFull;
//   absl::StatusOr<Backend> backend = OpenBackend("deniable.db", options);
//   if (!backend.ok()) ...;  // the message says what could not be opened
//   auto server = CollectorServer::Start(std::move(backend->storage), clock, server_options);
//
// SQLite: SqliteStorage and SqliteTokenStore on the file, buckets in the process.
// PostgreSQL: PostgresStorage (a count shard of its own), PostgresTokenStore, and, when a rate
// limit is on, PostgresRateBuckets (a token's limit holds over all collectors on the database).
//
// Not thread-safe (call it once at start); what it returns is (see each class).
#ifndef DENIABLE_SERVER_STORAGE_BACKEND_H_
#define DENIABLE_SERVER_STORAGE_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/auth/shared_rate_buckets.h"
#include "server/auth/token_store.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage.h"

namespace deniable::server {

enum class BackendKind { kSqlite, kPostgres };

// Which backend `uri` names: PostgreSQL for a libpq URI ("postgresql://...", "postgres://..."),
// else a SQLite file. The one place the server tells them apart (IsPostgresUri).
BackendKind BackendKindOf(absl::string_view uri);

// What differs between the backends, for the steps after opening.
struct BackendTraits {
  BackendKind kind = BackendKind::kSqlite;
  // The database for logs: the file, or the URI without its password (RedactedConninfo).
  std::string db_for_log;
  // The SQLite file (its size goes to /metrics); empty for PostgreSQL.
  std::string sqlite_path;
  // Transactions group commit keeps going at once (GroupCommitOptions::committers): one per
  // writing session of PostgresStorage, one for SQLite's single writer.
  int group_committers = 1;
  // How long a metric's design may be cached (ServerOptions::metric_cache_age): infinite when
  // this process is the database's only writer (SQLite); BackendOptions::metric_cache_age when
  // other collectors may add design versions (PostgreSQL).
  absl::Duration metric_cache_age = absl::InfiniteDuration();
};

struct BackendOptions {
  // SQLite's settings (durability, caches, label caps); `path` is ignored (the uri is used).
  // PostgreSQL takes the label caps from here too.
  SqliteOptions sqlite;
  // Open shared rate-limit buckets (PostgreSQL only; SQLite's limit lives in the process).
  bool shared_rate_limit = false;
  // See BackendTraits::metric_cache_age.
  absl::Duration metric_cache_age = absl::Seconds(5);
};

struct Backend {
  std::unique_ptr<Storage> storage;
  std::shared_ptr<TokenStore> tokens;
  // Null unless PostgreSQL with BackendOptions::shared_rate_limit.
  std::shared_ptr<SharedRateBuckets> rate_buckets;
  BackendTraits traits;
};

// Opens the storage, the token store and the shared rate-limit buckets of `uri`; logs
// event=postgres with the database (password removed) and the storage's count shard.
// Errors: those of the stores' Open, the message prefixed with what failed: "cannot open the
// database[ <db>]: ...", "cannot open the token table: ...", "cannot open the rate-limit
// table: ..." (the code is the store's).
absl::StatusOr<Backend> OpenBackend(const std::string& uri, const BackendOptions& options);

// Only the token store of `uri` (SqliteTokenStore or PostgresTokenStore), for the tokens
// subcommands. `must_exist`: a SQLite file is not created (tokens list and revoke), NOT_FOUND
// naming it instead. Errors: as the store's Open.
absl::StatusOr<std::unique_ptr<TokenStore>> OpenTokenStore(const std::string& uri,
                                                           bool must_exist = false);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_BACKEND_H_
