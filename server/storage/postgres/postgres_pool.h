// A bounded pool of PostgreSQL connections for reads: queries (counts, metrics, health) run on
// their own sessions, so concurrent queries do not queue behind one connection and never behind
// the writer that group commit keeps busy.
//
// Connections are made on demand, up to `size`; a caller finding all of them busy waits for one.
// Reads are idempotent, so Read retries a statement once on a fresh session when the connection
// was lost (a PostgreSQL restart, an operator's pg_terminate_backend), instead of answering
// UNAVAILABLE for every idle session the restart broke.
//
// Example:
//   DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgPool> pool, PgPool::Open(uri, 4));
//   DENIABLE_ASSIGN_OR_RETURN(PgResult r, pool->Read("SELECT count(*) FROM metrics"));
//
// Thread-safe. Owns its connections.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_POOL_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_POOL_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/storage/postgres/postgres_connection.h"

namespace deniable::server {

class PgPool {
 public:
  // Connects once (so that an unreachable server is reported at start) and keeps that session.
  // REQUIRES: size >= 1. Errors: UNAVAILABLE as PgConnection::Connect.
  static absl::StatusOr<std::unique_ptr<PgPool>> Open(const std::string& conninfo, int size);

  // Runs `body` on a connection of its own (waiting while all `size` are busy; connecting a new
  // one while fewer exist) and returns the connection to the pool. When `body` fails with
  // UNAVAILABLE because the connection was lost, runs it once more on the rebuilt session, so
  // `body` must be a read (or otherwise safe to run twice). Errors: `body`'s; UNAVAILABLE when
  // no connection can be made.
  absl::Status Run(const std::function<absl::Status(PgConnection&)>& body);

  // One statement through Run. Errors: as PgConnection::Exec.
  absl::StatusOr<PgResult> Read(absl::string_view sql, const std::vector<PgParam>& params = {});

  // One prepared statement through Run (PgConnection::ExecPrepared: prepared once per session).
  // Errors: as PgConnection::Exec.
  absl::StatusOr<PgResult> ReadPrepared(absl::string_view name, absl::string_view sql,
                                        const std::vector<PgParam>& params);

  // Connections made so far (idle or busy), at most `size`.
  int connections() const;

 private:
  PgPool(std::string conninfo, int size) : conninfo_(std::move(conninfo)), size_(size) {}
  // One statement's result through Run (Read and ReadPrepared).
  absl::StatusOr<PgResult> RunOne(
      const std::function<absl::StatusOr<PgResult>(PgConnection&)>& statement);
  absl::StatusOr<std::unique_ptr<PgConnection>> Acquire();
  void Release(std::unique_ptr<PgConnection> conn);

  const std::string conninfo_;
  const int size_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<PgConnection>> idle_ ABSL_GUARDED_BY(mu_);
  int made_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_POOL_H_
