#include "server/storage/sqlite_backup.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"
#include "server/storage/sqlite_keyed_file.h"
#include "server/storage/sqlite_schema.h"
#include "server/storage/sqlite_statement.h"

namespace deniable::server {
namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, CloseDb>;

absl::StatusOr<DbPtr> OpenDb(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  DbPtr db(raw);
  if (rc != SQLITE_OK) {
    return absl::NotFoundError(
        absl::StrCat("db: cannot open \"", path,
                     "\": ", raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(db.get(), 10000);
  return db;
}

absl::StatusOr<int64_t> QueryInt(sqlite3* db, const char* sql) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement statement, SqliteStatement::Prepare(db, sql));
  DENIABLE_ASSIGN_OR_RETURN(bool row, statement.Step());
  return row ? statement.ColumnInt64(0) : 0;
}

// Copies every page of `source` into `dest` in one step (one read transaction on the source),
// retrying while the source is busy (WAL recovery by another connection) for up to 10 s.
absl::Status CopyPages(sqlite3* source, sqlite3* dest, int64_t* pages) {
  sqlite3_backup* backup = sqlite3_backup_init(dest, "main", source, "main");
  if (backup == nullptr) return SqliteError(dest, sqlite3_errcode(dest), "backup: init");
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  int rc = SQLITE_OK;
  do {
    rc = sqlite3_backup_step(backup, -1);
    if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(50));
    }
  } while ((rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && absl::Now() < deadline);
  *pages = sqlite3_backup_pagecount(backup);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) return SqliteError(dest, rc, "backup: copying pages");
  return absl::OkStatus();
}

// Flushes `path` to disk (the file's data, or a directory's entries). Errors: INTERNAL.
absl::Status SyncPath(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0 || fsync(fd) != 0) {
    const int err = errno;
    if (fd >= 0) close(fd);
    return absl::InternalError(
        absl::StrCat("out: cannot sync \"", path, "\": ", std::strerror(err)));
  }
  close(fd);
  return absl::OkStatus();
}

// Opens the copy afresh and checks it (header comment of sqlite_backup.h).
absl::Status Verify(const std::string& path, int source_version, BackupSummary* summary) {
  DENIABLE_ASSIGN_OR_RETURN(DbPtr db, OpenDb(path, SQLITE_OPEN_READWRITE));
  // The keyed file's copy beside it: integrity_check checks it too, stored_reports reads it.
  DENIABLE_RETURN_IF_ERROR(AttachKeyedReports(db.get(), path));
  {
    DENIABLE_ASSIGN_OR_RETURN(SqliteStatement check,
                              SqliteStatement::Prepare(db.get(), "PRAGMA integrity_check"));
    DENIABLE_ASSIGN_OR_RETURN(bool row, check.Step());
    const std::string first = row ? check.ColumnText(0) : "no answer";
    if (first != "ok") {
      return absl::DataLossError(
          absl::StrCat("backup: the copy fails PRAGMA integrity_check: ", first));
    }
  }
  int32_t application_id = 0;
  int version = 0;
  DENIABLE_RETURN_IF_ERROR(ReadSchemaVersion(db.get(), &application_id, &version));
  if (application_id != kCollectorApplicationId || version != source_version) {
    return absl::DataLossError(absl::StrCat("backup: the copy has application_id ", application_id,
                                            " and schema version ", version, ", the source ",
                                            kCollectorApplicationId, " and ", source_version));
  }
  summary->schema_version = version;
  DENIABLE_ASSIGN_OR_RETURN(summary->metrics, QueryInt(db.get(), "SELECT count(*) FROM metrics"));
  DENIABLE_ASSIGN_OR_RETURN(summary->design_versions,
                            QueryInt(db.get(), "SELECT count(*) FROM designs"));
  DENIABLE_ASSIGN_OR_RETURN(summary->reports,
                            QueryInt(db.get(), "SELECT count(*) FROM stored_reports"));
  DENIABLE_ASSIGN_OR_RETURN(summary->count_rows, QueryInt(db.get(), "SELECT count(*) FROM counts"));
  DENIABLE_ASSIGN_OR_RETURN(summary->counted_reports,
                            QueryInt(db.get(), "SELECT coalesce(sum(n), 0) FROM counts"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BackupSummary> BackupSqlite(const std::string& db_path,
                                           const std::string& out_path) {
  if (out_path.empty()) return absl::InvalidArgumentError("out: give the backup file, --out=FILE");
  if (out_path == db_path) {
    return absl::InvalidArgumentError("out: must differ from the database file");
  }
  struct stat st;
  for (const std::string& out : {out_path, out_path + "-reports"}) {
    if (stat(out.c_str(), &st) == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("out: \"", out, "\" already exists; a backup never overwrites a file"));
    }
  }
  // Read-only: no write lock, no one-writer lock (the server holds it), no -journal.
  DENIABLE_ASSIGN_OR_RETURN(DbPtr source, OpenDb(db_path, SQLITE_OPEN_READONLY));
  int32_t application_id = 0;
  int version = 0;
  if (absl::Status s = ReadSchemaVersion(source.get(), &application_id, &version); !s.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("db: \"", db_path, "\" is not a readable SQLite database: ", s.message()));
  }
  if (application_id != kCollectorApplicationId) {
    return absl::FailedPreconditionError(absl::StrCat(
        "db: \"", db_path, "\" is not a collector database (application_id ", application_id,
        "); a database from before schema versions: start the server on it once to migrate it"));
  }

  // Its keyed reports file (schema version 8), copied second: the copy of the database is the
  // older snapshot, so every report is in exactly one of the two copies once the restored pair
  // is opened (sqlite_keyed_file.h).
  const std::string keyed_path = KeyedReportsPath(db_path);
  DENIABLE_ASSIGN_OR_RETURN(DbPtr keyed_source, OpenDb(keyed_path, SQLITE_OPEN_READONLY));

  const std::string partial = out_path + ".partial";
  const std::string keyed_partial = partial + "-reports";
  std::remove(partial.c_str());
  std::remove(keyed_partial.c_str());
  BackupSummary summary;
  absl::Status status = [&]() -> absl::Status {
    {
      DENIABLE_ASSIGN_OR_RETURN(DbPtr dest,
                                OpenDb(partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
      DENIABLE_RETURN_IF_ERROR(CopyPages(source.get(), dest.get(), &summary.pages));
    }
    {
      DENIABLE_ASSIGN_OR_RETURN(DbPtr dest,
                                OpenDb(keyed_partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE));
      int64_t keyed_pages = 0;
      DENIABLE_RETURN_IF_ERROR(CopyPages(keyed_source.get(), dest.get(), &keyed_pages));
      summary.pages += keyed_pages;
    }
    source.reset();
    keyed_source.reset();
    DENIABLE_RETURN_IF_ERROR(Verify(partial, version, &summary));
    summary.bytes = 0;
    for (const std::string& file : {partial, keyed_partial}) {
      if (stat(file.c_str(), &st) == 0) summary.bytes += st.st_size;
      DENIABLE_RETURN_IF_ERROR(SyncPath(file));
    }
    // The keyed file first: the database's name appears last, once both are complete.
    for (const auto& [from, to] :
         {std::pair(keyed_partial, out_path + "-reports"), std::pair(partial, out_path)}) {
      if (std::rename(from.c_str(), to.c_str()) != 0) {
        return absl::InternalError(absl::StrCat("out: cannot rename \"", from, "\" to \"", to,
                                                "\": ", std::strerror(errno)));
      }
    }
    const size_t slash = out_path.rfind('/');
    return SyncPath(slash == std::string::npos ? "." : out_path.substr(0, slash + 1));
  }();
  if (!status.ok()) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal", "-reports", "-reports-wal",
                               "-reports-shm", "-reports-journal"}) {
      std::remove((partial + suffix).c_str());
    }
    return status;
  }
  return summary;
}

}  // namespace deniable::server
