#include "server/storage/sqlite/sqlite_token_store.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/sqlite/sqlite_statement.h"

namespace deniable::server {
namespace {

constexpr char kTokenSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS auth_tokens(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  role TEXT NOT NULL,
  label TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  revoked_time_seconds INTEGER);
)sql";

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteTokenStore>> SqliteTokenStore::Open(const std::string& path,
                                                                         bool must_exist) {
  if (path.empty()) return absl::InvalidArgumentError("db: the database path is empty");
  std::unique_ptr<SqliteTokenStore> store(new SqliteTokenStore());
  absl::MutexLock lock(&store->mu_);
  const int rc =
      sqlite3_open_v2(path.c_str(), &store->db_,
                      SQLITE_OPEN_READWRITE | (must_exist ? 0 : SQLITE_OPEN_CREATE), nullptr);
  if (rc == SQLITE_CANTOPEN && must_exist && access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
    return absl::NotFoundError(absl::StrCat("db: \"", path,
                                            "\" does not exist (a mistyped path? `tokens add` "
                                            "or the server creates the database)"));
  }
  if (rc != SQLITE_OK) {
    return SqliteError(store->db_, rc, absl::StrCat("opening database \"", path, "\""));
  }
  sqlite3_busy_timeout(store->db_, 5000);
  DENIABLE_RETURN_IF_ERROR(SqliteExec(store->db_, "PRAGMA journal_mode=WAL"));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(store->db_, "PRAGMA synchronous=FULL"));
  // The token table lives in the collector's database: check (create, migrate) its schema, so
  // `tokens add` refuses a device store or a foreign file as the server does.
  DENIABLE_RETURN_IF_ERROR(EnsureCollectorSchema(store->db_, path));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(store->db_, kTokenSchema));
  return store;
}

SqliteTokenStore::~SqliteTokenStore() {
  absl::MutexLock lock(&mu_);
  sqlite3_close(db_);
}

absl::StatusOr<NewToken> SqliteTokenStore::Add(Role role, absl::string_view label, absl::Time now) {
  DENIABLE_ASSIGN_OR_RETURN(NewToken out, NewRandomToken(role, label, now));
  absl::MutexLock lock(&mu_);
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db_,
                               "INSERT INTO auth_tokens(hash, role, label, created_time_seconds) "
                               "VALUES(?, ?, ?, ?)"));
  st.BindBlob(1, out.record.hash.data(), static_cast<int>(out.record.hash.size()));
  st.BindText(2, RoleName(role));
  st.BindText(3, label);
  st.BindInt64(4, out.record.created_time_seconds);
  DENIABLE_RETURN_IF_ERROR(st.Run());
  out.record.id = sqlite3_last_insert_rowid(db_);
  return out;
}

absl::Status SqliteTokenStore::Revoke(int64_t id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db_,
                               "UPDATE auth_tokens SET revoked_time_seconds = ? "
                               "WHERE id = ? AND revoked_time_seconds IS NULL"));
  st.BindInt64(1, absl::ToUnixSeconds(now));
  st.BindInt64(2, id);
  DENIABLE_RETURN_IF_ERROR(st.Run());
  if (sqlite3_changes(db_) == 0) {
    return absl::NotFoundError(absl::StrCat("id: no active token has id ", id));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TokenRecord>> SqliteTokenStore::List() {
  absl::MutexLock lock(&mu_);
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db_,
                               "SELECT id, role, label, hash, created_time_seconds, "
                               "revoked_time_seconds FROM auth_tokens ORDER BY id"));
  std::vector<TokenRecord> out;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    TokenRecord r;
    r.id = st.ColumnInt64(0);
    DENIABLE_ASSIGN_OR_RETURN(r.role, ParseRole(st.ColumnText(1)));
    r.label = st.ColumnText(2);
    const std::string hash = st.ColumnBlob(3);
    if (hash.size() != r.hash.size()) {
      return absl::InternalError(absl::StrCat("auth_tokens: token ", r.id, " has a bad hash"));
    }
    std::copy(hash.begin(), hash.end(), r.hash.begin());
    r.created_time_seconds = st.ColumnInt64(4);
    const std::string revoked = st.ColumnText(5);
    if (!revoked.empty()) r.revoked_time_seconds = st.ColumnInt64(5);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace deniable::server
