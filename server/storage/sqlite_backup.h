// Online backup of a collector's SQLite database and its keyed reports file (FILE-reports,
// sqlite_keyed_file.h) while deniable-server runs on them (`deniable-server backup --db=FILE
// --out=FILE` writes OUT and OUT-reports; docs/deploy.md "Backup and restore").
//
// Uses SQLite's online backup API (sqlite3_backup_init/step/finish) on a READ-ONLY connection:
// it takes neither the server's one-writer lock (FILE.lock) nor a write lock, so the server
// keeps acknowledging reports during the copy. The whole copy is made in one backup step, i.e.
// inside one read transaction: in WAL mode that is a consistent snapshot of the database as of
// the step's start (every report acknowledged before then is in it), and the writer is never
// blocked (a checkpoint only waits to move past the snapshot).
//
// The database is copied first and the keyed file second, each in one step: the keyed file's
// snapshot is the later one, which is what makes the pair exact (every report in one of them
// once the restored pair opens; sqlite_keyed_file.h).
//
// The copy is written to OUT.partial (and OUT.partial-reports), then verified by opening it
// afresh: PRAGMA
// integrity_check must answer "ok", its application_id must be the collector's and its schema
// version the source's, and its tables must be readable (metrics, design versions, reports,
// count rows and the reports they count). Only then are they renamed to OUT-reports and OUT
// (atomic on one file system; OUT last); on any failure the partial files are removed and OUT
// never appears.
//
// Example:
//   absl::StatusOr<BackupSummary> s = BackupSqlite("deniable.db", "backup.db");
//
// Thread-compatible (a function of its arguments; it opens its own connections).
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_BACKUP_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_BACKUP_H_

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
};

// Copies the collector database `db_path` into `out_path` and verifies the copy (see above).
// Errors: INVALID_ARGUMENT "out: ..." when out_path is empty, equals db_path or already exists
// (or OUT-reports does; nothing is overwritten); NOT_FOUND "db: ..." when db_path or its keyed
// file cannot be opened;
// FAILED_PRECONDITION "db: ..." when it is not a collector database (application_id);
// DATA_LOSS "backup: ..." when the copy fails verification (integrity_check's first message);
// UNAVAILABLE / INTERNAL / RESOURCE_EXHAUSTED (disk full) from SQLite. On any error OUT does not
// exist and OUT.partial was removed.
absl::StatusOr<BackupSummary> BackupSqlite(const std::string& db_path, const std::string& out_path);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_BACKUP_H_
