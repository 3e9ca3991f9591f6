// The keyed reports file: the collector's `reports` table (keyed by metric, hour and report id),
// in a SQLite file of its own beside the collector database (schema version 8).
//
// Why a second file: every report of a metric-hour is appended to `recent_reports` and later
// moved (copied in id order) into `reports`. In one file both writes share SQLite's one writer,
// so a hot metric-hour that moves as fast as it is appended ingests at about a third of its
// first rate (docs/performance.md, "The hot metric-hour"). With `reports` in its own file the
// move writes it on its own connection (and the second core) while appends go on.
//
// Files: "<db>-reports" (and its "-wal" and "-shm"), beside the database: KeyedReportsPath.
// Both files belong together: the database's table keyed_file and the keyed file's table
// keyed_file hold the same random 16-byte pair id, and opening a database whose keyed file is
// missing, or holds another pair id, is refused (DATA_LOSS) rather than deduplicating against
// an empty or a foreign file. Back up, copy and move both (docs/operations.md).
//
// Generations: the keyed file's keyed_file.generation grows by one in each move transaction that
// copies rows (and advances a watermark); the database's keyed_file.keyed_generation is set, in
// each transaction that deletes recent rows behind a watermark, to the keyed generation
// committed before it. So at every instant keyed generation >= the database's: a keyed file
// whose generation is lower is older than what the database relies on (an older copy with the
// same pair id, or a keyed file whose -wal was lost after a SIGKILL) and lacks reports the
// database has deleted; the open refuses it (DATA_LOSS, naming both files) instead of starting
// with those reports gone (CheckGenerations).
//
// The other way round: the database's keyed_file.db_generation grows by one in a transaction of
// its own before a move's copies (when the database committed anything since the last) and after
// each DeleteMetric's delete; it is durable before the keyed file relies on it (under
// durability=normal, the fsync of the database's WAL at a move's mark and before DeleteMetric's
// keyed step). Each keyed transaction that relies on the database (a move's copy chunk, the
// delete of a deleted metric's keyed rows) records in the keyed file's keyed_file.db_generation
// the database generation it relied on. So at every instant, and after a power loss, the
// database's db_generation >= the keyed file's: a database whose generation is lower is older
// than what the keyed file relies on (an older copy with the same pair id, or a database whose
// -wal was lost after a SIGKILL) and lacks reports or deletes the keyed file holds (reports its
// counts miss, or keyed rows of a metric it still has gone); the open refuses it (DATA_LOSS,
// naming both files: CheckDatabaseGeneration). A database that lost only commits the keyed file
// does not rely on (appends not moved yet) opens, without those reports.
//
// Schema of the keyed file (application_id kKeyedReportsApplicationId, user_version 3):
//   reports(metric_id, event_time, report_id, version, bit, labelset_id, support, firsts)
//       WITHOUT ROWID, PRIMARY KEY (metric_id, event_time, report_id)
//   watermarks(metric_id, event_time, moved_seq, last_seq, last_id)  WITHOUT ROWID: for each
//       metric-hour that has moved, which of the database's recent rows are already here: those
//       with seq <= moved_seq (finished moves), and, while a move copies, those with
//       seq <= last_seq and report_id <= last_id. It only grows while the metric-hour exists,
//       and it is written in the same transaction as the rows it covers.
//   keyed_file(pair_id, generation, db_generation)   (version 1 had no generation, version 2
//       no db_generation: migrated at open)
//
// Exactly once across two files: WAL commits are atomic per file only. A move commits rows and
// watermark here first and deletes the recent copies from the database afterwards; a reader
// that reads the database first and this file second (AttachKeyedReports' view, in one read
// transaction, touches `main` before `keyed`) counts every report once: a recent row it sees is
// either not yet covered by the watermark it reads later (and not here) or covered (and here),
// and a recent row gone by the time it read the database was committed here before.
//
// Thread-compatible functions; each takes the connection it works on.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_KEYED_FILE_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_KEYED_FILE_H_

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace deniable::server {

inline constexpr int32_t kKeyedReportsApplicationId = 0x444E5231;  // "DNR1"
inline constexpr int kKeyedReportsVersion = 3;

// "<db_path>-reports", with db_path's symlinks resolved first (a database opened through a
// symlink finds the keyed file beside the real file).
std::string KeyedReportsPath(const std::string& db_path);

// The TEMP view stored_reports (every stored report once: the keyed file's reports and the
// recent rows not behind a watermark) on a connection whose `main` is the collector database
// and which has the keyed file attached as `keyed`.
inline constexpr char kStoredReportsViewSql[] = R"sql(
CREATE TEMP VIEW IF NOT EXISTS stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts
    FROM keyed.reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts
    FROM main.recent_reports r WHERE NOT EXISTS (SELECT 1 FROM keyed.watermarks w WHERE
      w.metric_id = r.metric_id AND w.event_time = r.event_time AND (r.seq <= w.moved_seq OR
      (r.seq <= w.last_seq AND r.report_id <= w.last_id)));
)sql";

// Attaches the keyed file of the collector database open on `db` (whose path is `db_path`) as
// `keyed` and creates the TEMP view stored_reports. For tools and tests that read reports; the
// view reads `main` first (see above) when read in one transaction. Errors: NOT_FOUND naming
// the keyed file when it does not exist; as SqliteError otherwise.
absl::Status AttachKeyedReports(sqlite3* db, const std::string& db_path);

// Creates the keyed file's schema on `keyed` (an empty file) with `pair_id`, or checks an
// existing one (migrating versions 1 and 2: the generation columns, 0): FAILED_PRECONDITION naming
// `path` when the file is not a keyed reports file; DATA_LOSS naming `path` when its pair id is not
// `pair_id`. Errors: as SqliteError.
absl::Status EnsureKeyedSchema(sqlite3* keyed, const std::string& path, const std::string& pair_id);

// The pair id in the table keyed_file of `db` (either file), or "" when there is none.
absl::StatusOr<std::string> ReadPairId(sqlite3* db);

// The generation column of keyed_file: `generation` of a keyed file, `keyed_generation` of a
// collector database (0 when the table has no row). Errors: as SqliteError.
absl::StatusOr<int64_t> ReadGeneration(sqlite3* db, bool keyed);

// keyed_file.db_generation of `db` (either file): the database's generation, or the one the
// keyed file relies on (0 when the table has no row). Errors: as SqliteError.
absl::StatusOr<int64_t> ReadDatabaseGeneration(sqlite3* db);

// Refuses a database older than its keyed file: DATA_LOSS naming `db_path` and `keyed_path`
// when `db_generation` < `relied` (the keyed file's record; see above); OK otherwise.
absl::Status CheckDatabaseGeneration(const std::string& db_path, int64_t db_generation,
                                     const std::string& keyed_path, int64_t relied);

// Refuses a keyed file older than its database: DATA_LOSS naming `keyed_path` and `db_path` when
// `keyed_generation` < `db_generation` (see above); OK otherwise.
absl::Status CheckGenerations(const std::string& db_path, int64_t db_generation,
                              const std::string& keyed_path, int64_t keyed_generation);

// Copies the reports of the database's legacy_reports (schema version 8's rename of a version
// 7 `reports`) into the keyed file open on `keyed`: the metric-hours in key order, each in id
// order, `chunk_rows` rows per transaction, each with the hour's watermark row (moved_seq 0);
// `after_commit` runs after each commit (the caller's checkpoint, which keeps the keyed WAL
// bounded: the keyed writer's WAL hook replaces SQLite's autocheckpoint). `db_path` names the
// database, attached meanwhile. Resumes a copy cut short (a crash, a full disk) of the same
// legacy table into the same keyed file: it goes on in the last metric-hour with a watermark,
// after the largest id copied there (rows already copied are kept; INSERT OR IGNORE). Errors:
// as SqliteError (SQLITE_FULL: RESOURCE_EXHAUSTED), what was committed kept.
absl::Status CopyLegacyReports(sqlite3* keyed, const std::string& db_path, int64_t chunk_rows,
                               const std::function<void()>& after_commit);

// The pair id of the keyed file a migration of legacy_reports copies into, as the database's
// table legacy_copy(pair_id) records it ("" when there is none: no copy started, or the
// database is not migrating). Errors: as SqliteError.
absl::StatusOr<std::string> ReadLegacyCopyPairId(sqlite3* db);

// Whether the file at `keyed_path` exists and is a keyed reports file holding `pair_id` (false
// when it cannot be opened or read).
bool KeyedFileHasPairId(const std::string& keyed_path, const std::string& pair_id);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_KEYED_FILE_H_
