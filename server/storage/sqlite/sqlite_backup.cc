#include "server/storage/sqlite/sqlite_backup.h"

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
#include "server/storage/sqlite/database_lock.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/sqlite/sqlite_statement.h"

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

// Copies every page of `source` into `dest` in one step, inside the read transaction the
// source connection has open (BeginPairSnapshot), retrying while the source is busy for up to
// 10 s.
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

// Opens one read transaction on the database (`db`) and one on its keyed file (`keyed`) such
// that the pair they read is the two files as they were at one instant (header comment of
// sqlite_backup.h):
//
//   T0: v0 = PRAGMA data_version on `keyed` (a read of the keyed file's latest snapshot);
//   T1: BEGIN on `db` and a read: the database's snapshot D is fixed;
//   T2: BEGIN on `keyed` and v1 = PRAGMA data_version: the keyed snapshot K is fixed.
//
// data_version changes between two reads of one connection exactly when another connection
// committed to the file in between (SQLite's documentation; a read transaction that finds a
// new WAL header bumps it). v0 == v1 means no keyed commit in (T0, T2), so K is also the keyed
// file at T1: (D, K) are both files at T1. Otherwise both transactions end and it tries again
// (a move commits to the keyed file every few milliseconds at most; T0..T2 takes microseconds).
// Errors: UNAVAILABLE when no attempt succeeds within 10 s; as SqliteError.
absl::Status BeginPairSnapshot(sqlite3* db, sqlite3* keyed, int* attempts) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  for (*attempts = 1;; ++*attempts) {
    DENIABLE_ASSIGN_OR_RETURN(int64_t before, QueryInt(keyed, "PRAGMA data_version"));
    DENIABLE_RETURN_IF_ERROR(SqliteExec(db, "BEGIN"));
    absl::StatusOr<int64_t> pin = QueryInt(db, "SELECT count(*) FROM sqlite_master");
    absl::Status s = pin.status();
    if (s.ok()) s = SqliteExec(keyed, "BEGIN");
    absl::StatusOr<int64_t> after = s.ok() ? QueryInt(keyed, "PRAGMA data_version") : -1;
    if (s.ok()) s = after.status();
    if (s.ok() && *after == before) return absl::OkStatus();
    for (sqlite3* c : {db, keyed}) {
      if (!sqlite3_get_autocommit(c)) SqliteExec(c, "ROLLBACK").IgnoreError();
    }
    if (!s.ok()) return s;
    if (absl::Now() >= deadline) {
      return absl::UnavailableError(
          absl::StrCat("backup: the keyed reports file changed during each of ", *attempts,
                       " attempts to read it at the same instant as the database; try again"));
    }
    absl::SleepFor(absl::Microseconds(200));
  }
}

// The first metric-hour whose counts (sum of counts.n) differ from its visible reports (the
// view stored_reports, which AttachKeyedReports made on `db`), among metrics the database has; ""
// when there is none. An hour with counts and no reports is allowed only for a metric with a
// retention (DROP_REPORTS_KEEP_COUNTS keeps its counts; docs/operations.md, "Retention").
absl::StatusOr<std::string> FirstCountMismatch(sqlite3* db) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(db, R"sql(
WITH seen(metric_id, event_time, k) AS (
  SELECT metric_id, event_time, count(*) FROM stored_reports GROUP BY 1, 2),
counted(metric_id, event_time, n) AS (
  SELECT metric_id, event_time, sum(n) FROM counts GROUP BY 1, 2)
SELECT m.name, s.event_time, s.k, coalesce(c.n, 0) FROM seen s JOIN metrics m ON m.id = s.metric_id
  LEFT JOIN counted c USING (metric_id, event_time) WHERE s.k != coalesce(c.n, 0)
UNION ALL
SELECT m.name, c.event_time, 0, c.n FROM counted c JOIN metrics m ON m.id = c.metric_id
  WHERE m.retention_days = 0 AND c.n != 0 AND NOT EXISTS (SELECT 1 FROM seen s WHERE
    s.metric_id = c.metric_id AND s.event_time = c.event_time)
LIMIT 1)sql"));
  DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return std::string();
  return absl::StrCat("metric \"", st.ColumnText(0), "\" hour ", st.ColumnInt64(1), " has ",
                      st.ColumnInt64(2), " stored reports but counts ", st.ColumnInt64(3));
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

// Opens the copy afresh and checks it (header comment of sqlite_backup.h); `source_version`
// kAnyVersion accepts any schema version.
constexpr int kAnyVersion = -1;
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
  if (application_id != kCollectorApplicationId ||
      (source_version != kAnyVersion && version != source_version)) {
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
  // Counts and reports agree (every appended report counted once and visible once): what a
  // snapshot of both files at one instant guarantees, and what a copy of two instants breaks.
  DENIABLE_ASSIGN_OR_RETURN(std::string mismatch, FirstCountMismatch(db.get()));
  if (!mismatch.empty()) {
    return absl::DataLossError(
        absl::StrCat("backup: the copy's counts and stored reports disagree: ", mismatch,
                     " (not a consistent snapshot of the database and its keyed file; a "
                     "retention run in progress also shows it: try again)"));
  }
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

  // Its keyed reports file (schema version 8), read at the same instant (BeginPairSnapshot).
  const std::string keyed_path = KeyedReportsPath(db_path);
  DENIABLE_ASSIGN_OR_RETURN(DbPtr keyed_source, OpenDb(keyed_path, SQLITE_OPEN_READONLY));

  const std::string partial = out_path + ".partial";
  const std::string keyed_partial = partial + "-reports";
  std::remove(partial.c_str());
  std::remove(keyed_partial.c_str());
  BackupSummary summary;
  absl::Status status = [&]() -> absl::Status {
    {
      // Both snapshots first, then both copies, each inside its read transaction.
      DENIABLE_RETURN_IF_ERROR(
          BeginPairSnapshot(source.get(), keyed_source.get(), &summary.snapshot_attempts));
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

namespace {

constexpr const char* kPairSuffixes[] = {"",         "-wal",         "-shm",
                                         "-reports", "-reports-wal", "-reports-shm"};

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

// Copies the bytes of `from` into the new file `to`, then syncs it. Errors: NOT_FOUND "from: ...";
// INTERNAL / RESOURCE_EXHAUSTED "db: ..." (naming the file and errno's text).
absl::Status CopyFile(const std::string& from, const std::string& to) {
  const int in = open(from.c_str(), O_RDONLY);
  if (in < 0) {
    return absl::NotFoundError(
        absl::StrCat("from: cannot open \"", from, "\": ", std::strerror(errno)));
  }
  const int out = open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (out < 0) {
    const int err = errno;
    close(in);
    return absl::InternalError(
        absl::StrCat("db: cannot create \"", to, "\": ", std::strerror(err)));
  }
  char buffer[1 << 16];
  int err = 0;
  while (true) {
    const ssize_t n = read(in, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n < 0) err = errno;
      break;
    }
    for (ssize_t done = 0; done < n && err == 0;) {
      const ssize_t w = write(out, buffer + done, static_cast<size_t>(n - done));
      if (w < 0 && errno != EINTR) err = errno;
      if (w > 0) done += w;
    }
    if (err != 0) break;
  }
  if (err == 0 && fsync(out) != 0) err = errno;
  close(in);
  if (close(out) != 0 && err == 0) err = errno;
  if (err != 0) {
    const std::string text = absl::StrCat("db: cannot write \"", to, "\": ", std::strerror(err));
    return err == ENOSPC || err == EDQUOT ? absl::ResourceExhaustedError(text)
                                          : absl::InternalError(text);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RestoreSummary> RestoreSqlite(const std::string& from_path,
                                             const std::string& db_path) {
  if (from_path.empty()) return absl::InvalidArgumentError("from: give the backup, --from=FILE");
  if (db_path.empty()) return absl::InvalidArgumentError("db: give the database, --db=FILE");
  if (from_path == db_path) return absl::InvalidArgumentError("from: must differ from --db");
  for (const std::string& file : {from_path, from_path + "-reports"}) {
    if (!Exists(file)) {
      return absl::NotFoundError(
          absl::StrCat("from: \"", file,
                       "\" does not exist; a backup is two files, OUT and OUT-reports "
                       "(deniable-server backup writes both): copy both"));
    }
  }
  for (const std::string& wal : {from_path + "-wal", from_path + "-reports-wal"}) {
    struct stat st {};
    if (stat(wal.c_str(), &st) == 0 && st.st_size > 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("from: \"", wal, "\" exists: \"", from_path,
                       "\" is in use or was not closed, so it is not a finished backup"));
    }
  }
  RestoreSummary summary;
  if (Exists(db_path)) {
    // No server may run on it (FAILED_PRECONDITION naming its pid otherwise).
    DENIABLE_ASSIGN_OR_RETURN(DatabaseLock lock, DatabaseLock::Acquire(db_path));
    // Every file of the pair goes aside under one new name, so that the old pair stays a pair
    // (its WAL beside it) and no stale WAL is applied to the restored file.
    std::string aside =
        absl::StrCat(db_path, ".before-restore-",
                     absl::FormatTime("%Y%m%dT%H%M%S", absl::Now(), absl::UTCTimeZone()));
    for (int i = 2; Exists(aside); ++i) aside = absl::StrCat(aside, "-", i);
    summary.moved_aside = aside;
    for (const char* suffix : kPairSuffixes) {
      const std::string file = db_path + suffix;
      if (!Exists(file)) continue;
      if (std::rename(file.c_str(), (aside + suffix).c_str()) != 0) {
        return absl::InternalError(absl::StrCat("db: cannot move \"", file, "\" aside to \"", aside,
                                                suffix, "\": ", std::strerror(errno)));
      }
    }
  } else {
    for (const char* suffix : kPairSuffixes) {
      if (Exists(db_path + suffix)) {
        return absl::FailedPreconditionError(
            absl::StrCat("db: \"", db_path, suffix, "\" exists without \"", db_path,
                         "\": move it away first (a stale WAL would be applied to the restored "
                         "file)"));
      }
    }
  }
  const std::string partial = db_path + ".partial";
  const std::string keyed_partial = partial + "-reports";
  for (const char* suffix : kPairSuffixes) std::remove((partial + suffix).c_str());
  absl::Status status = [&]() -> absl::Status {
    DENIABLE_RETURN_IF_ERROR(CopyFile(from_path, partial));
    DENIABLE_RETURN_IF_ERROR(CopyFile(from_path + "-reports", keyed_partial));
    DENIABLE_RETURN_IF_ERROR(Verify(partial, kAnyVersion, &summary.copy));
    struct stat st {};
    for (const std::string& file : {partial, keyed_partial}) {
      if (stat(file.c_str(), &st) == 0) summary.copy.bytes += st.st_size;
    }
    for (const auto& [from, to] :
         {std::pair(keyed_partial, db_path + "-reports"), std::pair(partial, db_path)}) {
      if (std::rename(from.c_str(), to.c_str()) != 0) {
        return absl::InternalError(absl::StrCat("db: cannot rename \"", from, "\" to \"", to,
                                                "\": ", std::strerror(errno)));
      }
    }
    const size_t slash = db_path.rfind('/');
    return SyncPath(slash == std::string::npos ? "." : db_path.substr(0, slash + 1));
  }();
  if (!status.ok()) {
    for (const char* suffix : kPairSuffixes) std::remove((partial + suffix).c_str());
    return status;
  }
  return summary;
}

}  // namespace deniable::server
