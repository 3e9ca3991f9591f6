// Online backup of a collector's SQLite database and its keyed reports file (FILE-reports,
// sqlite_keyed_file.h) while deniable-server runs on them (`deniable-server backup --db=FILE
// --out=FILE` writes OUT and OUT-reports; docs/deploy.md "Backup and restore").
//
// Uses SQLite's online backup API (sqlite3_backup_init/step/finish) on READ-ONLY connections:
// it takes neither the server's one-writer lock (FILE.lock) nor a write lock, so the server
// keeps acknowledging reports and moving them during the copy, and the writer is never blocked
// (a checkpoint only waits to move past the snapshots).
//
// One snapshot of both files. A move copies a metric-hour's recent rows (database) into the
// keyed file and commits there, then deletes them from the database; an append writes recent
// rows and counts in one database transaction. So the two files as they are at any one instant
// (what a SIGKILL leaves) hold every appended report once, visibly, and counts equal to them
// (docs/storage.md); copying the database at one instant and the keyed file at a later one does
// not: reports appended after the first copy and moved before the second were in the copy's
// keyed file but not in its counts. The backup therefore opens a read transaction on each file
// first, checking with PRAGMA data_version that no keyed commit came between them (else it tries
// again), so both read the same instant, and copies each file in one step inside its
// transaction. Every report acknowledged before the backup started is in the copy; the restored
// pair's first open finishes a move the instant caught half way (sqlite_storage.h).
//
// The copy is written to OUT.partial (and OUT.partial-reports), then verified by opening it
// afresh: PRAGMA integrity_check must answer "ok", its application_id must be the collector's and
// its schema version the source's, its tables must be readable (metrics, design versions,
// reports, count rows and the reports they count), and every metric-hour's counts (sum of
// counts.n) must equal its visible reports (stored_reports; an hour with counts and no reports
// only for a metric with a retention). Only then are they renamed to OUT-reports and OUT (atomic
// on one file system; OUT last); on any failure the partial files are removed and OUT never
// appears.
//
// Example:
//   absl::StatusOr<BackupSummary> s = BackupSqlite("deniable.db", "backup.db");
//
// Thread-compatible (a function of its arguments; it opens its own connections).
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_BACKUP_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_BACKUP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace deniable::server {

// What the verified copy holds.
struct BackupSummary {
  int schema_version = 0;
  int64_t pages = 0;            // database pages copied
  int64_t bytes = 0;            // size of the copy
  int64_t metrics = 0;          // rows of metrics
  int64_t design_versions = 0;  // rows of designs
  int64_t reports = 0;          // stored reports (the dedup record)
  int64_t count_rows = 0;       // rows of counts
  int64_t counted_reports = 0;  // sum of n over the count rows (what queries see)
  int snapshot_attempts = 0;    // tries to read both files at one instant (1 unless moves ran)
};

// Copies the collector database `db_path` into `out_path` and verifies the copy (see above).
// Errors: INVALID_ARGUMENT "out: ..." when out_path is empty, equals db_path or already exists
// (or OUT-reports does; nothing is overwritten); NOT_FOUND "db: ..." when db_path or its keyed
// file cannot be opened;
// FAILED_PRECONDITION "db: ..." when it is not a collector database (application_id);
// DATA_LOSS "backup: ..." when the copy fails verification (integrity_check's first message, or
// the first metric-hour whose counts and stored reports disagree); UNAVAILABLE "backup: ..." when
// the keyed file changed at every attempt for 10 s;
// UNAVAILABLE / INTERNAL / RESOURCE_EXHAUSTED (disk full) from SQLite. On any error OUT does not
// exist and OUT.partial was removed.
absl::StatusOr<BackupSummary> BackupSqlite(const std::string& db_path, const std::string& out_path);

// What RestoreSqlite did.
struct RestoreSummary {
  BackupSummary copy;       // what the restored database holds (verified as a backup is)
  std::string moved_aside;  // where the files that were at db_path went ("": there were none)
};

// Restores the backup `from_path` (and from_path-reports, as BackupSqlite wrote them) as the
// database `db_path` (`deniable-server restore --from=BACKUP --db=FILE`; docs/deploy.md "Restore").
// The server must be stopped. The files of the pair at db_path (FILE, FILE-wal, FILE-shm,
// FILE-reports and its -wal and -shm), if any, are renamed to FILE.before-restore-<UTC time>
// with the same suffixes (a stale WAL beside a restored file would be applied to it); then both
// backup files are copied to FILE.partial and FILE.partial-reports, synced, verified as a backup
// is (integrity_check, counts = stored reports), and renamed to FILE-reports and FILE (FILE
// last). The backup itself is only read (it may be on a read-only mount).
// Errors: INVALID_ARGUMENT "from: ..." / "db: ..." for an empty or equal path; NOT_FOUND "from:
// ..." when the backup or its -reports file is missing; FAILED_PRECONDITION when the backup has a
// WAL (in use, not a finished backup), when FILE is in use by a running server (DatabaseLock:
// naming its pid), or when a FILE-wal or FILE-reports is there without FILE; DATA_LOSS
// "backup: ..." when the copy fails verification (nothing renamed to FILE then; the old files
// stay aside); INTERNAL / RESOURCE_EXHAUSTED naming the file for I/O errors.
absl::StatusOr<RestoreSummary> RestoreSqlite(const std::string& from_path,
                                             const std::string& db_path);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_BACKUP_H_
