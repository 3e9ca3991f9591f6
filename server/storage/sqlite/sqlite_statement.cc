#include "server/storage/sqlite/sqlite_statement.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/storage/storage_error.h"

namespace deniable::server {

absl::Status SqliteError(sqlite3* db, int code, absl::string_view what) {
  const int primary = code & 0xff;
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  const std::string message = absl::StrCat(what, ": ", detail, " (sqlite code ", code, ")");
  auto failure = [&message](absl::StatusCode status_code, absl::string_view summary) {
    return StorageFailure(status_code, summary, message);
  };
  switch (primary) {
    // A uniqueness constraint: callers that expect one (a metric name taken) say so; anywhere
    // else it is a broken invariant (ClientVisibleStatus makes it INTERNAL).
    case SQLITE_CONSTRAINT:
      return failure(absl::StatusCode::kAlreadyExists, "storage: a database constraint failed");
    // Conditions of the machine or of other processes, which may pass: retry later.
    case SQLITE_FULL:
      return failure(absl::StatusCode::kUnavailable, kDiskFullSummary);
    case SQLITE_IOERR:
      return failure(absl::StatusCode::kUnavailable,
                     "storage: an I/O error on the database, retry later");
    case SQLITE_CANTOPEN:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
    case SQLITE_NOLFS:
    case SQLITE_INTERRUPT:
    case SQLITE_ABORT:
    case SQLITE_SCHEMA:
      return failure(absl::StatusCode::kUnavailable,
                     "storage: the database cannot be written now, retry later");
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return failure(absl::StatusCode::kUnavailable, "storage: the database is busy, retry later");
    // The file is damaged: not a bug of the server, and not something a retry fixes soon.
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return failure(absl::StatusCode::kDataLoss, "storage: the database is damaged");
    // SQLITE_ERROR (bad SQL), SQLITE_MISUSE, SQLITE_RANGE, SQLITE_MISMATCH, ...: a bug.
    default:
      return failure(absl::StatusCode::kInternal, "storage: a server fault stopped the operation");
  }
}

bool TurnOffSqliteMemoryStatistics() {
  return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
}

absl::Status SqliteExec(sqlite3* db, absl::string_view sql) {
  const std::string owned(sql);
  const int rc = sqlite3_exec(db, owned.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, absl::StrCat("executing \"", sql, "\""));
  return absl::OkStatus();
}

absl::StatusOr<SqliteStatement> SqliteStatement::Prepare(sqlite3* db, absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, absl::StrCat("preparing \"", sql, "\""));
  return SqliteStatement(db, stmt);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)) {}

SqliteStatement& SqliteStatement::operator=(SqliteStatement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
  }
  return *this;
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(stmt_); }

void SqliteStatement::BindInt64(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
}
void SqliteStatement::BindDouble(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
}
void SqliteStatement::BindText(int index, absl::string_view value) {
  sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
}
void SqliteStatement::BindBlob(int index, const void* data, int size) {
  sqlite3_bind_blob(stmt_, index, data, size, SQLITE_TRANSIENT);
}

void SqliteStatement::BindNull(int index) { sqlite3_bind_null(stmt_, index); }

absl::StatusOr<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  const absl::Status status = SqliteError(db_, rc, "step");
  Reset();
  return status;
}

absl::Status SqliteStatement::Run() {
  absl::StatusOr<bool> r = Step();
  Reset();
  return r.status();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t SqliteStatement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double SqliteStatement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}
std::string SqliteStatement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text),
                                       static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}
bool SqliteStatement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::string SqliteStatement::ColumnBlob(int column) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  return blob == nullptr ? std::string()
                         : std::string(static_cast<const char*>(blob),
                                       static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

}  // namespace deniable::server
