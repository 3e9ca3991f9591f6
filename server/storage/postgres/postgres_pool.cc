#include "server/storage/postgres/postgres_pool.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::StatusOr<std::unique_ptr<PgPool>> PgPool::Open(const std::string& conninfo, int size) {
  auto pool = std::unique_ptr<PgPool>(new PgPool(conninfo, size < 1 ? 1 : size));
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> first, PgConnection::Connect(conninfo));
  absl::MutexLock lock(&pool->mu_);
  pool->idle_.push_back(std::move(first));
  pool->made_ = 1;
  return pool;
}

absl::StatusOr<std::unique_ptr<PgConnection>> PgPool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    auto available = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || made_ < size_;
    };
    mu_.Await(absl::Condition(&available));
    if (!idle_.empty()) {
      std::unique_ptr<PgConnection> conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    ++made_;  // reserved; connected below without the lock
  }
  absl::StatusOr<std::unique_ptr<PgConnection>> conn = PgConnection::Connect(conninfo_);
  if (!conn.ok()) {
    absl::MutexLock lock(&mu_);
    --made_;
  }
  return conn;
}

void PgPool::Release(std::unique_ptr<PgConnection> conn) {
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(conn));
}

absl::Status PgPool::Run(const std::function<absl::Status(PgConnection&)>& body) {
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, Acquire());
  absl::Status s = body(*conn);
  // A lost session: the next Exec on it reconnects (PgConnection::EnsureConnected).
  if (absl::IsUnavailable(s) && !conn->ok()) s = body(*conn);
  Release(std::move(conn));
  return s;
}

absl::StatusOr<PgResult> PgPool::Read(absl::string_view sql, const std::vector<PgParam>& params) {
  return RunOne([&](PgConnection& conn) { return conn.Exec(sql, params); });
}

absl::StatusOr<PgResult> PgPool::ReadPrepared(absl::string_view name, absl::string_view sql,
                                              const std::vector<PgParam>& params) {
  return RunOne([&](PgConnection& conn) { return conn.ExecPrepared(name, sql, params); });
}

absl::StatusOr<PgResult> PgPool::RunOne(
    const std::function<absl::StatusOr<PgResult>(PgConnection&)>& statement) {
  std::optional<PgResult> out;
  DENIABLE_RETURN_IF_ERROR(Run([&](PgConnection& conn) -> absl::Status {
    DENIABLE_ASSIGN_OR_RETURN(PgResult r, statement(conn));
    out.emplace(std::move(r));
    return absl::OkStatus();
  }));
  return std::move(*out);
}

int PgPool::connections() const {
  absl::MutexLock lock(&mu_);
  return made_;
}

}  // namespace deniable::server
