// RAII over sqlite3_stmt: prepared once, reset after each use.
//
// Example:
//   DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st,
//                             SqliteStatement::Prepare(db, "SELECT n FROM counts WHERE id = ?"));
//   st.BindInt64(1, id);
//   DENIABLE_ASSIGN_OR_RETURN(bool has_row, st.Step());
//
// Thread-compatible: a statement belongs to one connection and must be used by one thread at a
// time (callers hold the connection's mutex).
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STATEMENT_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STATEMENT_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// The one place where an SQLite result code becomes a status (docs/security.md, "Status codes"):
//   SQLITE_CONSTRAINT (expected by CreateMetric only)      -> ALREADY_EXISTS
//   failures that may pass: SQLITE_FULL (disk full), IOERR, CANTOPEN, NOMEM, PROTOCOL,
//   READONLY, PERM, AUTH, NOLFS, INTERRUPT, ABORT, SCHEMA, BUSY, LOCKED -> UNAVAILABLE
//   SQLITE_CORRUPT, SQLITE_NOTADB (a damaged file)         -> DATA_LOSS
//   anything else (bad SQL, misuse: a bug)                 -> INTERNAL
// Disk full is UNAVAILABLE, not RESOURCE_EXHAUSTED: it is the server's condition, not the
// caller's quota, and a client retries UNAVAILABLE with backoff.
// The message names `what` and carries sqlite3_errmsg(db) for the server's log; the status is a
// StorageFailure (storage_error.h), so a client sees only its summary, and an unexpected
// constraint failure as INTERNAL (ClientVisibleStatus).
absl::Status SqliteError(sqlite3* db, int code, absl::string_view what);

// Runs one or more SQL statements without results. Errors: as SqliteError.
absl::Status SqliteExec(sqlite3* db, absl::string_view sql);

// Turns off SQLite's memory statistics for the whole process (sqlite3_config
// SQLITE_CONFIG_MEMSTATUS, https://sqlite.org/c3ref/c_config_covering_index_scan.html). With them
// on, every sqlite3_malloc and sqlite3_free of every connection takes one global mutex: the
// writer, the mover and the readers then wait on each other's allocations (measured in
// docs/performance.md, "Allocations and cache misses"). The cost: sqlite3_memory_used(),
// sqlite3_memory_highwater(), sqlite3_status64() and the soft and hard heap limits stop working
// (https://sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus); Deniable
// uses none of them.
// Call once at process start, before any other SQLite call and before other threads use SQLite
// (sqlite3_config is not thread-safe). Returns false, changing nothing, if SQLite was already
// initialized.
bool TurnOffSqliteMemoryStatistics();

class SqliteStatement {
 public:
  // Errors: INTERNAL if the SQL does not compile; as SqliteError otherwise.
  static absl::StatusOr<SqliteStatement> Prepare(sqlite3* db, absl::string_view sql);

  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  ~SqliteStatement();

  // Parameter indexes start at 1. Blob and text values are copied (SQLITE_TRANSIENT).
  void BindInt64(int index, int64_t value);
  void BindDouble(int index, double value);
  void BindText(int index, absl::string_view value);
  void BindBlob(int index, const void* data, int size);
  void BindNull(int index);

  // Advances: true when a row is available, false when done. Errors: as SqliteError.
  absl::StatusOr<bool> Step();
  // Runs a statement that returns no rows, then resets it.
  absl::Status Run();
  // Resets the statement and clears its bindings for the next use.
  void Reset();

  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;
  bool ColumnIsNull(int column) const;

 private:
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STATEMENT_H_
