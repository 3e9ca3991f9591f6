#include "server/storage/backend.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/postgres_rate_buckets.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/postgres/postgres_token_store.h"
#include "server/storage/sqlite/sqlite_token_store.h"

namespace deniable::server {
namespace {

// `status` with `what` before its text ("cannot open ...: INVALID_ARGUMENT: ...").
absl::Status Prefixed(absl::string_view what, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(what, ": ", status.ToString()));
}

absl::StatusOr<Backend> OpenPostgres(const std::string& uri, const BackendOptions& options) {
  Backend backend;
  backend.traits.kind = BackendKind::kPostgres;
  backend.traits.db_for_log = RedactedConninfo(uri);
  backend.traits.group_committers = PostgresStorage::kWriteConnections;
  backend.traits.metric_cache_age = options.metric_cache_age;
  auto storage = PostgresStorage::Open({.uri = uri,
                                        .max_label_values = options.sqlite.max_label_values,
                                        .max_label_keys = options.sqlite.max_label_keys});
  if (!storage.ok()) {
    return Prefixed(absl::StrCat("cannot open the database ", backend.traits.db_for_log),
                    storage.status());
  }
  spdlog::info("event=postgres db={} shard={}", backend.traits.db_for_log, (*storage)->shard());
  backend.storage = *std::move(storage);
  auto tokens = PostgresTokenStore::Open(uri);
  if (!tokens.ok()) return Prefixed("cannot open the token table", tokens.status());
  backend.tokens = *std::move(tokens);
  if (options.shared_rate_limit) {
    auto buckets = PostgresRateBuckets::Open(uri);
    if (!buckets.ok()) return Prefixed("cannot open the rate-limit table", buckets.status());
    backend.rate_buckets = *std::move(buckets);
  }
  return backend;
}

absl::StatusOr<Backend> OpenSqlite(const std::string& path, const BackendOptions& options) {
  Backend backend;
  backend.traits.db_for_log = path;  // SQLite's other traits are BackendTraits' defaults
  backend.traits.sqlite_path = path;
  SqliteOptions sqlite = options.sqlite;
  sqlite.path = path;
  auto storage = SqliteStorage::Open(sqlite);
  if (!storage.ok()) return Prefixed("cannot open the database", storage.status());
  backend.storage = *std::move(storage);
  auto tokens = SqliteTokenStore::Open(path);
  if (!tokens.ok()) return Prefixed("cannot open the token table", tokens.status());
  backend.tokens = *std::move(tokens);
  return backend;
}

}  // namespace

BackendKind BackendKindOf(absl::string_view uri) {
  return IsPostgresUri(uri) ? BackendKind::kPostgres : BackendKind::kSqlite;
}

absl::StatusOr<Backend> OpenBackend(const std::string& uri, const BackendOptions& options) {
  return BackendKindOf(uri) == BackendKind::kPostgres ? OpenPostgres(uri, options)
                                                      : OpenSqlite(uri, options);
}

absl::StatusOr<std::unique_ptr<TokenStore>> OpenTokenStore(const std::string& uri,
                                                           bool must_exist) {
  if (BackendKindOf(uri) == BackendKind::kPostgres) return PostgresTokenStore::Open(uri);
  return SqliteTokenStore::Open(uri, must_exist);
}

}  // namespace deniable::server
