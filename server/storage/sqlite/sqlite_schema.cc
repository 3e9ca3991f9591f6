#include "server/storage/sqlite/sqlite_schema.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/label_values.h"
#include "server/storage/sqlite/sqlite_statement.h"

namespace deniable::server {
namespace {

// Every table of schema version 1, created if missing (the tables of the unversioned releases
// are a subset of these, with the same definitions).
constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS metrics(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  time_precision_seconds INTEGER NOT NULL,
  min_reports INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS designs(
  metric_id INTEGER NOT NULL,
  version INTEGER NOT NULL,
  parameters BLOB NOT NULL,
  a REAL NOT NULL,
  b REAL NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  PRIMARY KEY (metric_id, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS labelsets(
  id INTEGER PRIMARY KEY,
  canonical TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, report_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recent_reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS moving(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time)) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id FROM recent_reports;
CREATE TABLE IF NOT EXISTS counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  n INTEGER NOT NULL,
  yes INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS auth_tokens(
  id INTEGER PRIMARY KEY,
  hash BLOB NOT NULL UNIQUE,
  role TEXT NOT NULL,
  label TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  revoked_time_seconds INTEGER);
)sql";

// Forward migrations of the metrics table: columns added after the first release, each with
// the default that describes metrics created before it (a database written by an older server
// opens and keeps its meaning).
constexpr struct {
  const char* column;
  const char* definition;
} kMetricColumnsAdded[] = {
    {"reporting_period_seconds", "INTEGER NOT NULL DEFAULT 86400"},
    {"randomization", "INTEGER NOT NULL DEFAULT 1"},  // deniable.v1.MEMOIZED
};

// Adds the columns of kMetricColumnsAdded that the metrics table lacks.
absl::Status MigrateMetricsTable(sqlite3* db) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement info,
                            SqliteStatement::Prepare(db, "PRAGMA table_info(metrics)"));
  std::vector<std::string> present;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, info.Step());
    if (!row) break;
    present.push_back(info.ColumnText(1));
  }
  info.Reset();
  for (const auto& added : kMetricColumnsAdded) {
    if (std::find(present.begin(), present.end(), added.column) != present.end()) continue;
    DENIABLE_RETURN_IF_ERROR(SqliteExec(
        db, absl::StrCat("ALTER TABLE metrics ADD COLUMN ", added.column, " ", added.definition)));
  }
  return absl::OkStatus();
}

// Tables (and views) the unversioned releases wrote: a database with application_id 0 holding
// only these is a Deniable collector database of version 0.
constexpr const char* kKnownTables[] = {"metrics", "designs",        "labelsets",
                                        "reports", "recent_reports", "moving",
                                        "counts",  "auth_tokens",    "stored_reports"};

// Version 0 (unversioned) -> 1: every table, the metrics columns added since the first release.
absl::Status MigrateTo1(sqlite3* db) {
  DENIABLE_RETURN_IF_ERROR(SqliteExec(db, kSchema));
  return MigrateMetricsTable(db);
}

// Version 1 -> 2: categorical metrics. Metrics gain their category names (comma-separated;
// names never contain a comma; '' for the yes/no metrics that existed before); a report gains
// the categories it supports (a bitmap, storage.h EncodeCounters; NULL for yes/no reports, as
// for every report stored before), so that counts can be rebuilt and copied (sqlite_to_postgres);
// and the support count of each category lives beside the counts, keyed like them plus the
// category index. The yes/no rows are untouched.
constexpr char kSchema2[] = R"sql(
ALTER TABLE metrics ADD COLUMN categories TEXT NOT NULL DEFAULT '';
ALTER TABLE reports ADD COLUMN support BLOB;
ALTER TABLE recent_reports ADD COLUMN support BLOB;
DROP VIEW IF EXISTS stored_reports;
CREATE VIEW stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support FROM recent_reports;
CREATE TABLE IF NOT EXISTS category_counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  category INTEGER NOT NULL,
  support INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id, category)) WITHOUT ROWID;
)sql";

absl::Status MigrateTo2(sqlite3* db) { return SqliteExec(db, kSchema2); }

// Version 2 -> 3: retention and metric ids that are never reused. Metrics gain retention_days
// (0: keep everything, what every metric did before) and retention_policy (1:
// DROP_REPORTS_KEEP_COUNTS). Metric ids are never reused: Until version 2 metrics.id was a plain
// INTEGER PRIMARY KEY, which gives a new metric the largest id plus one: after DeleteMetric of the
// newest metric its id went to the next one, and a batch validated against the deleted metric but
// stored under its id would have been counted by the new metric. SQLite cannot add AUTOINCREMENT
// to a table, so the table is rebuilt (same columns and rows), and sqlite_sequence starts at the
// largest metric id found anywhere (so an id used by rows of a metric deleted before this
// migration is not given again either).
constexpr char kSchema3[] = R"sql(
CREATE TABLE metrics_v3(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  time_precision_seconds INTEGER NOT NULL,
  min_reports INTEGER NOT NULL DEFAULT 0,
  reporting_period_seconds INTEGER NOT NULL DEFAULT 86400,
  randomization INTEGER NOT NULL DEFAULT 1,
  categories TEXT NOT NULL DEFAULT '',
  retention_days INTEGER NOT NULL DEFAULT 0,
  retention_policy INTEGER NOT NULL DEFAULT 1);
INSERT INTO metrics_v3(id, name, description, created_time_seconds, time_precision_seconds,
                       min_reports, reporting_period_seconds, randomization, categories)
  SELECT id, name, description, created_time_seconds, time_precision_seconds, min_reports,
         reporting_period_seconds, randomization, categories FROM metrics;
DROP TABLE metrics;
ALTER TABLE metrics_v3 RENAME TO metrics;
INSERT INTO sqlite_sequence(name, seq)
  SELECT 'metrics', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'metrics');
UPDATE sqlite_sequence SET seq = max(seq,
    (SELECT coalesce(max(metric_id), 0) FROM designs),
    (SELECT coalesce(max(metric_id), 0) FROM counts),
    (SELECT coalesce(max(metric_id), 0) FROM reports),
    (SELECT coalesce(max(metric_id), 0) FROM recent_reports))
  WHERE name = 'metrics';
)sql";

absl::Status MigrateTo3(sqlite3* db) { return SqliteExec(db, kSchema3); }

// Version 3 -> 4: the cap on distinct label values (label_values.h). Each metric's stored
// (key, value) pairs, filled from the label sets its counts use (every stored report is counted,
// so these are all the values it has), so the cap counts the values stored before it existed.
absl::Status MigrateTo4(sqlite3* db) {
  DENIABLE_RETURN_IF_ERROR(SqliteExec(db, R"sql(
CREATE TABLE label_values(
  metric_id INTEGER NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (metric_id, key, value)) WITHOUT ROWID;
)sql"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement used,
      SqliteStatement::Prepare(db,
                               "SELECT DISTINCT c.metric_id, l.canonical FROM counts c JOIN "
                               "labelsets l ON l.id = c.labelset_id WHERE l.canonical <> ''"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert,
      SqliteStatement::Prepare(
          db, "INSERT OR IGNORE INTO label_values(metric_id, key, value) VALUES(?, ?, ?)"));
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, used.Step());
    if (!row) break;
    const int64_t metric_id = used.ColumnInt64(0);
    const std::string canonical = used.ColumnText(1);
    for (const auto& [key, value] : SplitLabels(canonical)) {
      insert.BindInt64(1, metric_id);
      insert.BindText(2, key);
      insert.BindText(3, value);
      DENIABLE_RETURN_IF_ERROR(insert.Run());
    }
  }
  used.Reset();
  return absl::OkStatus();
}

// Version 4 -> 5: window flags (sqlite_schema.h). Reports stored before carry no flags (NULL) and
// count as no window's first, so the estimates over their windows keep the period form.
constexpr char kSchema5[] = R"sql(
ALTER TABLE metrics ADD COLUMN window_firsts_off INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metrics ADD COLUMN reporting_once INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reports ADD COLUMN firsts INTEGER;
ALTER TABLE recent_reports ADD COLUMN firsts INTEGER;
DROP VIEW IF EXISTS stored_reports;
CREATE VIEW stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts
    FROM recent_reports;
CREATE TABLE first_counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  win INTEGER NOT NULL,
  category INTEGER NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id, win, category)) WITHOUT ROWID;
)sql";

absl::Status MigrateTo5(sqlite3* db) { return SqliteExec(db, kSchema5); }

// Version 5 -> 6: the move watermark (sqlite_storage.h). While a metric-hour moves, its recent
// rows with seq <= last_seq and report_id <= last_id have been copied into `reports` and are
// deleted later by seq range: they count as moved, so stored_reports leaves them out. A database
// of version 5 has no such rows (its moves delete each row as they copy it).
constexpr char kSchema6[] = R"sql(
CREATE TABLE move_watermarks(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  last_id BLOB,
  PRIMARY KEY (metric_id, event_time)) WITHOUT ROWID;
DROP VIEW IF EXISTS stored_reports;
CREATE VIEW stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id, support, firsts
    FROM recent_reports r WHERE NOT EXISTS (SELECT 1 FROM move_watermarks w WHERE
      w.metric_id = r.metric_id AND w.event_time = r.event_time AND r.seq <= w.last_seq AND
      r.report_id <= w.last_id);
)sql";

absl::Status MigrateTo6(sqlite3* db) { return SqliteExec(db, kSchema6); }

// Version 6 -> 7: one form of counts for every kind of report (issue 27): n and the counter
// vector a report's mechanism adds to (storage.h ReportRow::counters), with counter 0 beside n
// and counters 1 and up in counter_sums. Yes/no (and 1BitMean) counts keep their row (yes is
// counter 0); a categorical (or dBitFlip) row's support of category 0 moves from
// category_counts into counts.counter0, and the other categories keep their index as counter.
// first_counts.category becomes counter, -1 for the reports first in the window (was -2) and j
// for their counter j (yes was -1, category v was v), in two steps since the key is checked
// row by row, and in place (no table dropped). Stored reports keep their form: bit is
// counter 0 and support, where present, the bitmap of every counter (storage.h DecodeCounters
// reads rows of both versions).
constexpr char kSchema7[] = R"sql(
ALTER TABLE counts RENAME COLUMN yes TO counter0;
UPDATE counts SET counter0 = (SELECT c.support FROM category_counts c WHERE
    c.metric_id = counts.metric_id AND c.event_time = counts.event_time AND
    c.version = counts.version AND c.labelset_id = counts.labelset_id AND c.category = 0)
  WHERE EXISTS (SELECT 1 FROM category_counts c WHERE c.metric_id = counts.metric_id AND
    c.event_time = counts.event_time AND c.version = counts.version AND
    c.labelset_id = counts.labelset_id AND c.category = 0);
DELETE FROM category_counts WHERE category = 0;
ALTER TABLE category_counts RENAME TO counter_sums;
ALTER TABLE counter_sums RENAME COLUMN category TO counter;
ALTER TABLE counter_sums RENAME COLUMN support TO total;
ALTER TABLE first_counts RENAME COLUMN category TO counter;
UPDATE first_counts SET counter = counter - 10 WHERE counter < 0;
UPDATE first_counts SET counter = counter + 11 WHERE counter < -2;
)sql";

absl::Status MigrateTo7(sqlite3* db) { return SqliteExec(db, kSchema7); }

// Version 7 -> 8: the keyed reports leave this file for their own (sqlite_keyed_file.h), so
// that moves write them on a connection and a core of their own. Here, in this file's
// transaction: a move that a crash or a Close cut short is finished the way versions 6 and 7
// finish it at open (the recent rows behind its watermark, or, for a `moving` row of an older
// version without one, the recent copies of rows already in `reports`, are deleted); `reports`
// becomes `legacy_reports`, which SqliteStorage::Open copies into the keyed file and then drops
// (in that order, so a crash in between loses nothing: until the drop, this file still holds
// every report); `moving`, `move_watermarks` and the view `stored_reports` (a view here cannot
// name the other file; AttachKeyedReports makes it a TEMP view) go; `keyed_file` will hold the
// keyed file's pair id.
constexpr char kSchema8[] = R"sql(
DELETE FROM recent_reports WHERE EXISTS (SELECT 1 FROM move_watermarks w WHERE
    w.metric_id = recent_reports.metric_id AND w.event_time = recent_reports.event_time AND
    recent_reports.seq <= w.last_seq AND recent_reports.report_id <= w.last_id);
DELETE FROM recent_reports WHERE (metric_id, event_time) IN (SELECT metric_id, event_time
    FROM moving EXCEPT SELECT metric_id, event_time FROM move_watermarks) AND EXISTS (SELECT 1
    FROM reports r WHERE r.metric_id = recent_reports.metric_id AND r.event_time =
    recent_reports.event_time AND r.report_id = recent_reports.report_id);
DROP VIEW IF EXISTS stored_reports;
DROP TABLE moving;
DROP TABLE move_watermarks;
ALTER TABLE reports RENAME TO legacy_reports;
CREATE TABLE keyed_file(pair_id BLOB NOT NULL);
)sql";

absl::Status MigrateTo8(sqlite3* db) { return SqliteExec(db, kSchema8); }

// Version 8 -> 9: the keyed generation the database relies on (sqlite_keyed_file.h); 0 until
// the first move of this version, which every keyed file has reached.
absl::Status MigrateTo9(sqlite3* db) {
  return SqliteExec(
      db, "ALTER TABLE keyed_file ADD COLUMN keyed_generation INTEGER NOT NULL DEFAULT 0");
}

// Version 10 -> 11: the database's generation that the keyed file relies on
// (sqlite_keyed_file.h, "Generations"); 0, as the keyed file's record of it after its migration.
absl::Status MigrateTo11(sqlite3* db) {
  return SqliteExec(db,
                    "ALTER TABLE keyed_file ADD COLUMN db_generation INTEGER NOT NULL DEFAULT 0");
}

// Version 9 -> 10: counter sums in chunks (counter_chunks.h). Every counter_sums row (win -1) and
// every first_counts row of a counter >= 1 goes into the chunk row of its key, window and
// counter / kCounterChunkCounters, read in key order so that each chunk is written once.
absl::Status MigrateTo10(sqlite3* db) {
  DENIABLE_RETURN_IF_ERROR(SqliteExec(db, R"sql(
CREATE TABLE counter_chunks(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  win INTEGER NOT NULL,
  chunk INTEGER NOT NULL,
  sums BLOB NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id, win, chunk)) WITHOUT ROWID;
)sql"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement cells,
      SqliteStatement::Prepare(
          db,
          "SELECT metric_id, event_time, version, labelset_id, -1, counter, total, "
          "'counter_sums' FROM counter_sums UNION ALL SELECT metric_id, event_time, version, "
          "labelset_id, win, counter, count, 'first_counts' FROM first_counts WHERE counter >= 1 "
          "ORDER BY 1, 2, 3, 4, 5, 6"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert,
      SqliteStatement::Prepare(db,
                               "INSERT INTO counter_chunks(metric_id, event_time, version, "
                               "labelset_id, win, chunk, sums) VALUES(?, ?, ?, ?, ?, ?, ?)"));
  std::array<int64_t, 6> key{};  // metric, time, version, labelset, win, chunk
  std::vector<ChunkCell> chunk;
  auto flush = [&]() -> absl::Status {
    if (chunk.empty()) return absl::OkStatus();
    for (int i = 0; i < 6; ++i) insert.BindInt64(i + 1, key[static_cast<size_t>(i)]);
    const std::string blob = EncodeCounterChunk(chunk);
    insert.BindBlob(7, blob.data(), static_cast<int>(blob.size()));
    chunk.clear();
    return insert.Run();
  };
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, cells.Step());
    if (!row) break;
    const int64_t counter = cells.ColumnInt64(5);
    const int64_t total = cells.ColumnInt64(6);
    const int64_t win = cells.ColumnInt64(4);
    if (counter < 1 || counter >= kMaxCounterLayoutLength || total < 0 || win < -1 || win > 2) {
      return absl::DataLossError(absl::StrCat(
          cells.ColumnText(7), ": a row of metric ", cells.ColumnInt64(0), " has counter ", counter,
          ", window ", win, " and sum ", total, ", outside the stored ranges"));
    }
    if (total == 0) continue;
    const std::array<int64_t, 6> k{cells.ColumnInt64(0),
                                   cells.ColumnInt64(1),
                                   cells.ColumnInt64(2),
                                   cells.ColumnInt64(3),
                                   win,
                                   counter / kCounterChunkCounters};
    if (k != key) {
      DENIABLE_RETURN_IF_ERROR(flush());
      key = k;
    }
    chunk.emplace_back(static_cast<uint32_t>(counter % kCounterChunkCounters), total);
  }
  cells.Reset();
  DENIABLE_RETURN_IF_ERROR(flush());
  return SqliteExec(db, "DELETE FROM first_counts WHERE counter >= 1; DROP TABLE counter_sums;");
}

// Version 11 -> 12: table counter_deltas (counter_chunks.h), empty: the chunks hold every sum.
absl::Status MigrateTo12(sqlite3* db) {
  return SqliteExec(db, R"sql(
CREATE TABLE counter_deltas(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  win INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  sums BLOB NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id, win, seq)) WITHOUT ROWID;
)sql");
}

// Step i migrates version i to i + 1.
using Migration = absl::Status (*)(sqlite3*);
constexpr Migration kMigrations[] = {MigrateTo1, MigrateTo2,  MigrateTo3,  MigrateTo4,
                                     MigrateTo5, MigrateTo6,  MigrateTo7,  MigrateTo8,
                                     MigrateTo9, MigrateTo10, MigrateTo11, MigrateTo12};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == kCurrentSchemaVersion);

absl::StatusOr<int64_t> PragmaInt(sqlite3* db, const char* pragma) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(db, pragma));
  DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
  const int64_t value = row ? st.ColumnInt64(0) : 0;
  st.Reset();
  return value;
}

absl::StatusOr<std::vector<std::string>> TableNames(sqlite3* db) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db,
                               "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                               "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"));
  std::vector<std::string> names;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    names.push_back(st.ColumnText(0));
  }
  st.Reset();
  return names;
}

// The whole check and migration; runs inside the caller's transaction.
absl::Status CheckAndMigrate(sqlite3* db, absl::string_view path) {
  DENIABLE_ASSIGN_OR_RETURN(int64_t application_id, PragmaInt(db, "PRAGMA application_id"));
  DENIABLE_ASSIGN_OR_RETURN(int64_t version, PragmaInt(db, "PRAGMA user_version"));
  DENIABLE_ASSIGN_OR_RETURN(std::vector<std::string> tables, TableNames(db));
  if (application_id == kDeviceStoreApplicationId) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database \"", path,
        "\" is a Deniable device store (the SDK's file on a device), not a collector database: "
        "pass the collector's --db"));
  }
  if (application_id == 0) {
    for (const std::string& table : tables) {
      if (std::find(std::begin(kKnownTables), std::end(kKnownTables), table) ==
          std::end(kKnownTables)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "database \"", path, "\" is not a Deniable collector database (it has table \"", table,
            "\", which Deniable never wrote); nothing was changed"));
      }
    }
    if (version != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "database \"", path, "\" is not a Deniable collector database (user_version ", version,
          " without Deniable's application_id); nothing was changed"));
    }
  } else if (application_id != kCollectorApplicationId) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "database \"%s\" is not a Deniable collector database (application_id 0x%08x, expected "
        "0x%08x); nothing was changed",
        path, static_cast<uint32_t>(application_id), kCollectorApplicationId));
  }
  if (version > kCurrentSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database \"", path, "\" has schema version ", version,
        ", written by a newer deniable-server; this one knows versions up to ",
        kCurrentSchemaVersion, ": run the newer server, or restore a backup made with this one"));
  }
  if (version == kCurrentSchemaVersion) return absl::OkStatus();
  for (int64_t v = version; v < kCurrentSchemaVersion; ++v) {
    absl::Status step = kMigrations[v](db);
    if (!step.ok()) {
      return absl::Status(step.code(),
                          absl::StrCat("migrating database \"", path, "\" from schema version ", v,
                                       " to ", v + 1, ": ", step.message()));
    }
  }
  DENIABLE_RETURN_IF_ERROR(
      SqliteExec(db, absl::StrCat("PRAGMA application_id=", kCollectorApplicationId)));
  return SqliteExec(db, absl::StrCat("PRAGMA user_version=", kCurrentSchemaVersion));
}

}  // namespace

absl::Status EnsureCollectorSchema(sqlite3* db, absl::string_view path) {
  // The usual case, a database of the current version, needs no write lock: a running server's
  // writer (moves, commits) never makes `deniable-server tokens` or a restart wait for it.
  DENIABLE_ASSIGN_OR_RETURN(int64_t application_id, PragmaInt(db, "PRAGMA application_id"));
  DENIABLE_ASSIGN_OR_RETURN(int64_t version, PragmaInt(db, "PRAGMA user_version"));
  if (application_id == kCollectorApplicationId && version == kCurrentSchemaVersion) {
    return absl::OkStatus();
  }
  DENIABLE_RETURN_IF_ERROR(SqliteExec(db, "BEGIN IMMEDIATE"));
  absl::Status status = CheckAndMigrate(db, path);
  if (status.ok()) status = SqliteExec(db, "COMMIT");
  if (!status.ok()) SqliteExec(db, "ROLLBACK").IgnoreError();
  return status;
}

absl::Status ReadSchemaVersion(sqlite3* db, int32_t* application_id, int* version) {
  DENIABLE_ASSIGN_OR_RETURN(int64_t id, PragmaInt(db, "PRAGMA application_id"));
  DENIABLE_ASSIGN_OR_RETURN(int64_t v, PragmaInt(db, "PRAGMA user_version"));
  *application_id = static_cast<int32_t>(id);
  *version = static_cast<int>(v);
  return absl::OkStatus();
}

}  // namespace deniable::server
