// One libpq connection to PostgreSQL that reconnects by itself, results as RAII values, and the
// mapping of PostgreSQL errors (SQLSTATE) to absl status codes.
//
// Example:
//   auto conn = PgConnection::Connect("postgresql://deniable@db.internal/deniable");
//   DENIABLE_ASSIGN_OR_RETURN(PgResult r, (*conn)->Exec("SELECT $1::bigint + 1", {"41"}));
//   r.Int64(0, 0);  // 42
//
// Parameters and results travel in libpq's text format. NOT thread-safe: one thread at a time
// (PostgresStorage guards each connection with a mutex).
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_CONNECTION_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_CONNECTION_H_

#include <libpq-fe.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// Whether `db` names a PostgreSQL database (a libpq URI: "postgresql://..." or "postgres://...")
// rather than a SQLite file.
bool IsPostgresUri(absl::string_view db);

// The connection string without its password, for logs: "postgresql://user@host:port/dbname"
// (host may be a socket directory). Never contains a password, also when `conninfo` is malformed
// (then "postgresql://(unparsable URI)").
std::string RedactedConninfo(const std::string& conninfo);

// Maps a failed result to a status (SQLSTATE classes, PostgreSQL manual appendix A):
//   08xxx connection, 57P01-57P05 shutdown / cannot connect now, 57014 statement cancelled,
//   40001 serialization failure, 40P01 deadlock, 53xxx insufficient resources (disk full),
//   55P03 lock not available, 58xxx system (I/O) error, and a result without SQLSTATE (the
//   connection broke)                                           -> UNAVAILABLE (retry later)
//   XX001 data corrupted, XX002 index corrupted                 -> DATA_LOSS
//   23505 unique violation (expected by CreateMetric and AddDesignVersion only)
//                                                               -> ALREADY_EXISTS
//   anything else (bad SQL, type errors): a bug                 -> INTERNAL
// A StorageFailure (storage_error.h): the message is a summary, then `what`, the server's
// message and SQLSTATE for the log; a client sees the summary only (ClientVisibleStatus).
absl::Status PostgresError(absl::string_view sqlstate, absl::string_view detail,
                           absl::string_view what);

// A query result; owns the PGresult. Row and column indexes are 0-based.
class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, &PQclear) {}
  PGresult* get() const { return result_.get(); }
  int rows() const { return PQntuples(result_.get()); }
  bool IsNull(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  std::string Text(int row, int col) const { return PQgetvalue(result_.get(), row, col); }
  int64_t Int64(int row, int col) const;
  double Double(int row, int col) const;
  bool Bool(int row, int col) const { return Text(row, col) == "t"; }
  // A bytea column (hex output format, "\x0a1b...") as raw bytes.
  std::string Bytes(int row, int col) const;
  // The number of rows an INSERT/UPDATE/DELETE affected.
  int64_t AffectedRows() const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

// A parameter in text format; std::nullopt is SQL NULL.
using PgParam = std::optional<std::string>;

class PgConnection {
 public:
  // Connects to `conninfo` (a libpq URI or key=value string; the password from the URI,
  // PGPASSFILE or PGPASSWORD). Defaults that the URI may override: connect_timeout=5,
  // application_name=deniable-server, TCP keepalives after 10 s idle.
  // Errors: UNAVAILABLE naming the redacted URI when the server cannot be reached or refuses.
  static absl::StatusOr<std::unique_ptr<PgConnection>> Connect(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one statement with text parameters $1..$n. Reconnects first when the connection was
  // lost (a statement never silently re-runs after a failure: the caller sees the error).
  // Errors: PostgresError's codes; UNAVAILABLE when the connection is lost or cannot be rebuilt.
  absl::StatusOr<PgResult> Exec(absl::string_view sql, const std::vector<PgParam>& params = {});

  // As Exec, as a prepared statement named `name` on this session: prepared (PQprepare) at its
  // first use and again after a reconnect, then only bound and run (PQexecPrepared), so a hot
  // statement is parsed and planned once per session instead of per call (PostgreSQL manual,
  // "PREPARE": a generic plan after five custom ones when it costs no more). REQUIRES: every
  // call with one `name` passes the same `sql` with the same number of parameters.
  // Errors: as Exec.
  absl::StatusOr<PgResult> ExecPrepared(absl::string_view name, absl::string_view sql,
                                        const std::vector<PgParam>& params);

  // COPY ... FROM STDIN with `data` in COPY's text format (rows end with '\n', columns separated
  // by '\t', see CopyText). Errors: as Exec.
  absl::Status CopyIn(absl::string_view copy_sql, absl::string_view data);

  // Runs `sql` once per parameter set in libpq's pipeline mode (PostgreSQL 14+): the statements
  // go out without waiting for each answer, synchronised every `per_sync` statements (so neither
  // side's socket buffer fills while the other writes). Returns one result per parameter set, in
  // order. Inside a transaction the syncs do not commit. Errors: as Exec, for the first failure.
  absl::StatusOr<std::vector<PgResult>> ExecPipelined(absl::string_view sql,
                                                      const std::vector<std::vector<PgParam>>& sets,
                                                      int per_sync = 256);

  // BEGIN; body; COMMIT. On any error: ROLLBACK (when the connection still lives) and the error.
  // A failed COMMIT leaves the outcome unknown to the caller, which only sees UNAVAILABLE: a
  // caller whose writes are idempotent (report ids) may retry.
  absl::Status Transaction(const std::function<absl::Status()>& body);

  // Whether the connection is up (no round trip).
  bool ok() const { return PQstatus(conn_) == CONNECTION_OK; }
  // Times the connection was rebuilt after a loss.
  int64_t reconnects() const { return reconnects_; }

 private:
  PgConnection(std::string conninfo, PGconn* conn) : conninfo_(std::move(conninfo)), conn_(conn) {}
  absl::Status EnsureConnected();
  // Takes `raw`: the result when it succeeded (a command or rows), else its error (ResultError).
  absl::StatusOr<PgResult> Finish(PGresult* raw, absl::string_view sql);
  absl::Status ResultError(PGresult* raw, absl::string_view sql);
  static PGconn* Open(const std::string& conninfo);

  std::string conninfo_;
  PGconn* conn_;
  int64_t reconnects_ = 0;
  // Statements prepared on the current session (a reconnect starts a session without them).
  absl::flat_hash_set<std::string> prepared_;
};

// Text-format array literals for `unnest($1::T[])`: "{1,2,3}" and, for text, each element
// double-quoted with '"' and '\' escaped.
std::string PgIntArray(const std::vector<int64_t>& values);
std::string PgTextArray(const std::vector<std::string>& values);
// One value in COPY's text format: '\\', '\t', '\n' and '\r' escaped.
std::string CopyText(absl::string_view value);
// A bytea parameter in hex input format ("\x0a1b...").
std::string PgBytea(absl::string_view bytes);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_CONNECTION_H_
