#include "server/storage/postgres/postgres_token_store.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/postgres/postgres_schema.h"

namespace deniable::server {

absl::StatusOr<std::unique_ptr<PostgresTokenStore>> PostgresTokenStore::Open(
    const std::string& uri) {
  auto store = std::unique_ptr<PostgresTokenStore>(new PostgresTokenStore());
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Connect(uri));
  DENIABLE_RETURN_IF_ERROR(EnsurePostgresSchema(*conn));
  absl::MutexLock lock(&store->mu_);
  store->conn_ = std::move(conn);
  return store;
}

absl::StatusOr<NewToken> PostgresTokenStore::Add(Role role, absl::string_view label,
                                                 absl::Time now) {
  DENIABLE_ASSIGN_OR_RETURN(NewToken out, NewRandomToken(role, label, now));
  absl::MutexLock lock(&mu_);
  const TokenHash& h = out.record.hash;
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec(
          "INSERT INTO auth_tokens(hash, role, label, created_time_seconds) "
          "VALUES ($1, $2, $3, $4) RETURNING id",
          {PgBytea(absl::string_view(reinterpret_cast<const char*>(h.data()), h.size())),
           RoleName(role), std::string(label), absl::StrCat(out.record.created_time_seconds)}));
  out.record.id = r.Int64(0, 0);
  return out;
}

absl::Status PostgresTokenStore::Revoke(int64_t id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r, conn_->Exec("UPDATE auth_tokens SET revoked_time_seconds = $1 "
                              "WHERE id = $2 AND revoked_time_seconds IS NULL",
                              {absl::StrCat(absl::ToUnixSeconds(now)), absl::StrCat(id)}));
  if (r.AffectedRows() == 0) {
    return absl::NotFoundError(absl::StrCat("id: no active token has id ", id));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TokenRecord>> PostgresTokenStore::List() {
  absl::MutexLock lock(&mu_);
  DENIABLE_ASSIGN_OR_RETURN(PgResult r,
                            conn_->Exec("SELECT id, role, label, hash, created_time_seconds, "
                                        "revoked_time_seconds FROM auth_tokens ORDER BY id"));
  std::vector<TokenRecord> out;
  for (int i = 0; i < r.rows(); ++i) {
    TokenRecord t;
    t.id = r.Int64(i, 0);
    DENIABLE_ASSIGN_OR_RETURN(t.role, ParseRole(r.Text(i, 1)));
    t.label = r.Text(i, 2);
    const std::string hash = r.Bytes(i, 3);
    if (hash.size() != t.hash.size()) {
      return absl::InternalError(absl::StrCat("auth_tokens: token ", t.id, " has a bad hash"));
    }
    std::copy(hash.begin(), hash.end(), t.hash.begin());
    t.created_time_seconds = r.Int64(i, 4);
    if (!r.IsNull(i, 5)) t.revoked_time_seconds = r.Int64(i, 5);
    out.push_back(std::move(t));
  }
  return out;
}

absl::StatusOr<bool> PostgresTokenStore::Import(const TokenRecord& record) {
  absl::MutexLock lock(&mu_);
  const TokenHash& h = record.hash;
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r,
      conn_->Exec("INSERT INTO auth_tokens(hash, role, label, created_time_seconds, "
                  "revoked_time_seconds) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (hash) DO NOTHING",
                  {PgBytea(absl::string_view(reinterpret_cast<const char*>(h.data()), h.size())),
                   RoleName(record.role), record.label, absl::StrCat(record.created_time_seconds),
                   record.revoked_time_seconds.has_value()
                       ? PgParam(absl::StrCat(*record.revoked_time_seconds))
                       : std::nullopt}));
  return r.AffectedRows() == 1;
}

}  // namespace deniable::server
