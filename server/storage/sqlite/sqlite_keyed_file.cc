#include "server/storage/sqlite/sqlite_keyed_file.h"

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/status_macros.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/sqlite/sqlite_statement.h"

namespace deniable::server {
namespace {

constexpr char kKeyedSchema[] = R"sql(
CREATE TABLE reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  support BLOB,
  firsts INTEGER,
  PRIMARY KEY (metric_id, event_time, report_id)) WITHOUT ROWID;
CREATE TABLE watermarks(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  moved_seq INTEGER NOT NULL,
  last_seq INTEGER NOT NULL,
  last_id BLOB,
  PRIMARY KEY (metric_id, event_time)) WITHOUT ROWID;
CREATE TABLE keyed_file(pair_id BLOB NOT NULL, generation INTEGER NOT NULL DEFAULT 0,
  db_generation INTEGER NOT NULL DEFAULT 0);
)sql";

}  // namespace

std::string KeyedReportsPath(const std::string& db_path) {
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(db_path, ec);
  return absl::StrCat(ec ? db_path : real.string(), "-reports");
}

absl::Status AttachKeyedReports(sqlite3* db, const std::string& db_path) {
  const std::string keyed = KeyedReportsPath(db_path);
  struct stat st {};
  if (stat(keyed.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("the keyed reports file \"", keyed, "\" of \"", db_path, "\" does not exist"));
  }
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement attach,
                            SqliteStatement::Prepare(db, "ATTACH DATABASE ? AS keyed"));
  attach.BindText(1, keyed);
  DENIABLE_RETURN_IF_ERROR(attach.Run());
  return SqliteExec(db, kStoredReportsViewSql);
}

absl::StatusOr<std::string> ReadPairId(sqlite3* db) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement exists,
                            SqliteStatement::Prepare(db,
                                                     "SELECT 1 FROM sqlite_master WHERE type = "
                                                     "'table' AND name = 'keyed_file'"));
  DENIABLE_ASSIGN_OR_RETURN(bool has_table, exists.Step());
  if (!has_table) return std::string();
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st,
                            SqliteStatement::Prepare(db, "SELECT pair_id FROM keyed_file"));
  DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnBlob(0) : std::string();
}

absl::StatusOr<int64_t> ReadGeneration(sqlite3* db, bool keyed) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db, keyed ? "SELECT generation FROM keyed_file"
                                         : "SELECT keyed_generation FROM keyed_file"));
  DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

absl::StatusOr<int64_t> ReadDatabaseGeneration(sqlite3* db) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st,
                            SqliteStatement::Prepare(db, "SELECT db_generation FROM keyed_file"));
  DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

absl::Status CheckDatabaseGeneration(const std::string& db_path, int64_t db_generation,
                                     const std::string& keyed_path, int64_t relied) {
  if (db_generation >= relied) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "the database \"", db_path, "\" is older than its keyed reports file \"", keyed_path,
      "\" (generation ", db_generation, ", the keyed file relies on ", relied,
      "): an older copy of it, or its -wal was lost, so reports the keyed file holds are missing "
      "from its counts; nothing was changed: restore both files of one backup (deniable-server "
      "restore), or put back the database and its -wal that were beside this keyed file"));
}

absl::Status CheckGenerations(const std::string& db_path, int64_t db_generation,
                              const std::string& keyed_path, int64_t keyed_generation) {
  if (keyed_generation >= db_generation) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(
      "the keyed reports file \"", keyed_path, "\" is older than its database \"", db_path,
      "\" (generation ", keyed_generation, ", the database relies on ", db_generation,
      "): an older copy of it, or its -wal was lost, so reports the database moved there are "
      "missing; nothing was changed: restore both files of one backup (deniable-server "
      "restore), or put back the keyed file and its -wal that were beside this database"));
}

absl::Status EnsureKeyedSchema(sqlite3* keyed, const std::string& path,
                               const std::string& pair_id) {
  int32_t application_id = 0;
  int version = 0;
  DENIABLE_RETURN_IF_ERROR(ReadSchemaVersion(keyed, &application_id, &version));
  if (application_id == 0 && version == 0) {
    DENIABLE_ASSIGN_OR_RETURN(SqliteStatement any_table,
                              SqliteStatement::Prepare(keyed, "SELECT 1 FROM sqlite_master"));
    DENIABLE_ASSIGN_OR_RETURN(bool has_tables, any_table.Step());
    any_table.Reset();
    if (has_tables) {
      return absl::FailedPreconditionError(
          absl::StrCat("\"", path, "\" is not a Deniable keyed reports file; nothing was changed"));
    }
    DENIABLE_RETURN_IF_ERROR(SqliteExec(keyed, "BEGIN IMMEDIATE"));
    absl::Status s = SqliteExec(keyed, kKeyedSchema);
    if (s.ok()) {
      absl::StatusOr<SqliteStatement> ins =
          SqliteStatement::Prepare(keyed, "INSERT INTO keyed_file(pair_id) VALUES(?)");
      if (ins.ok()) {
        ins->BindBlob(1, pair_id.data(), static_cast<int>(pair_id.size()));
        s = ins->Run();
      } else {
        s = ins.status();
      }
    }
    if (s.ok()) {
      s = SqliteExec(keyed, absl::StrCat("PRAGMA application_id=", kKeyedReportsApplicationId,
                                         "; PRAGMA user_version=", kKeyedReportsVersion));
    }
    if (s.ok()) s = SqliteExec(keyed, "COMMIT");
    if (!s.ok()) SqliteExec(keyed, "ROLLBACK").IgnoreError();
    return s;
  }
  // Version 1 -> 2: the generation, 0 like the database's at its version 9; 2 -> 3: the
  // database generation relied on, 0 like the database's at its version 11 (sqlite_keyed_file.h).
  constexpr const char* kSteps[] = {
      "ALTER TABLE keyed_file ADD COLUMN generation INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE keyed_file ADD COLUMN db_generation INTEGER NOT NULL DEFAULT 0"};
  static_assert(sizeof(kSteps) / sizeof(kSteps[0]) == kKeyedReportsVersion - 1);
  while (application_id == kKeyedReportsApplicationId && version >= 1 &&
         version < kKeyedReportsVersion) {
    DENIABLE_RETURN_IF_ERROR(SqliteExec(keyed, "BEGIN IMMEDIATE"));
    absl::Status s =
        SqliteExec(keyed, absl::StrCat(kSteps[version - 1], "; PRAGMA user_version=", version + 1));
    if (s.ok()) s = SqliteExec(keyed, "COMMIT");
    if (!s.ok()) {
      SqliteExec(keyed, "ROLLBACK").IgnoreError();
      return s;
    }
    ++version;
  }
  if (application_id != kKeyedReportsApplicationId || version != kKeyedReportsVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "\"%s\" is not a Deniable keyed reports file of this version (application_id 0x%08x, "
        "version %d); nothing was changed",
        path, static_cast<uint32_t>(application_id), version));
  }
  DENIABLE_ASSIGN_OR_RETURN(std::string stored, ReadPairId(keyed));
  if (stored != pair_id) {
    return absl::DataLossError(absl::StrCat(
        "the keyed reports file \"", path,
        "\" belongs to another database (its pair id differs): restore the keyed file that was "
        "beside this database (back up and copy both files together)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadLegacyCopyPairId(sqlite3* db) {
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement exists,
                            SqliteStatement::Prepare(db,
                                                     "SELECT 1 FROM sqlite_master WHERE type = "
                                                     "'table' AND name = 'legacy_copy'"));
  DENIABLE_ASSIGN_OR_RETURN(bool has_table, exists.Step());
  if (!has_table) return std::string();
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st,
                            SqliteStatement::Prepare(db, "SELECT pair_id FROM legacy_copy"));
  DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnBlob(0) : std::string();
}

bool KeyedFileHasPairId(const std::string& keyed_path, const std::string& pair_id) {
  struct stat st {};
  if (pair_id.empty() || stat(keyed_path.c_str(), &st) != 0) return false;
  sqlite3* db = nullptr;
  bool same = false;
  if (sqlite3_open_v2(keyed_path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    int32_t application_id = 0;
    int version = 0;
    if (ReadSchemaVersion(db, &application_id, &version).ok() &&
        application_id == kKeyedReportsApplicationId) {
      absl::StatusOr<std::string> stored = ReadPairId(db);
      same = stored.ok() && *stored == pair_id;
    }
  }
  sqlite3_close(db);
  return same;
}

namespace {

// The legacy copy's statements on the keyed file's writer (collector attached) and its cursor:
// the metric-hour it copies and the largest id copied there. The caller holds the keyed file's
// writer lock (SqliteStorage: move_mu_).
struct LegacyCopy {
  // Prepares the statements on `keyed`.
  static absl::StatusOr<LegacyCopy> Prepare(sqlite3* keyed) {
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement next_hour,
        SqliteStatement::Prepare(keyed,
                                 "SELECT metric_id, event_time FROM collector.legacy_reports "
                                 "WHERE (metric_id, event_time) > (?, ?) ORDER BY metric_id, "
                                 "event_time LIMIT 1"));
    // A chunk: the hour's next rows in id order after ?3 (NULL: from its first).
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement copy,
        SqliteStatement::Prepare(
            keyed,
            "INSERT OR IGNORE INTO main.reports(metric_id, event_time, report_id, version, bit, "
            "labelset_id, support, firsts) SELECT metric_id, event_time, report_id, version, bit, "
            "labelset_id, support, firsts FROM collector.legacy_reports WHERE metric_id = ?1 AND "
            "event_time = ?2 AND (?3 IS NULL OR report_id > ?3) ORDER BY report_id LIMIT ?4"));
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement mark,
        SqliteStatement::Prepare(keyed,
                                 "INSERT OR IGNORE INTO main.watermarks(metric_id, event_time, "
                                 "moved_seq, last_seq, last_id) VALUES(?, ?, 0, 0, NULL)"));
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement last_copied,
        SqliteStatement::Prepare(keyed,
                                 "SELECT max(report_id) FROM main.reports WHERE metric_id = ? AND "
                                 "event_time = ?"));
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement last_hour,
        SqliteStatement::Prepare(keyed,
                                 "SELECT metric_id, event_time FROM main.watermarks ORDER BY "
                                 "metric_id DESC, event_time DESC LIMIT 1"));
    return LegacyCopy{keyed,
                      std::move(next_hour),
                      std::move(copy),
                      std::move(mark),
                      std::move(last_copied),
                      std::move(last_hour),
                      INT64_MIN,
                      INT64_MIN,
                      false,
                      std::string()};
  }

  // after_id := the largest id copied into the current hour ("" for none).
  absl::Status ReadLastId() {
    last_copied.BindInt64(1, metric);
    last_copied.BindInt64(2, hour);
    absl::StatusOr<bool> row = last_copied.Step();
    after_id = row.ok() && *row && !last_copied.ColumnIsNull(0) ? last_copied.ColumnBlob(0) : "";
    last_copied.Reset();
    return row.status();
  }

  // A copy cut short (a crash, a full disk) goes on in the last hour with a watermark, after
  // its largest id copied: the hours are copied in key order, each in id order.
  absl::Status ResumeInLastHour() {
    DENIABLE_ASSIGN_OR_RETURN(bool found, last_hour.Step());
    if (found) {
      metric = last_hour.ColumnInt64(0);
      hour = last_hour.ColumnInt64(1);
      in_hour = true;
    }
    last_hour.Reset();
    if (in_hour) DENIABLE_RETURN_IF_ERROR(ReadLastId());
    return absl::OkStatus();
  }

  // Moves to the next metric-hour of legacy_reports; false when there is none.
  absl::StatusOr<bool> NextHour() {
    next_hour.BindInt64(1, metric);
    next_hour.BindInt64(2, hour);
    DENIABLE_ASSIGN_OR_RETURN(bool found, next_hour.Step());
    if (found) {
      metric = next_hour.ColumnInt64(0);
      hour = next_hour.ColumnInt64(1);
    }
    next_hour.Reset();
    if (!found) return false;
    in_hour = true;
    after_id.clear();
    return true;
  }

  // One transaction: the hour's next `chunk_rows` rows and its watermark. Returns the rows
  // copied; rolled back on an error.
  absl::StatusOr<int64_t> CopyChunk(int64_t chunk_rows) {
    DENIABLE_RETURN_IF_ERROR(SqliteExec(keyed, "BEGIN IMMEDIATE"));
    copy.BindInt64(1, metric);
    copy.BindInt64(2, hour);
    if (after_id.empty()) {
      copy.BindNull(3);
    } else {
      copy.BindBlob(3, after_id.data(), static_cast<int>(after_id.size()));
    }
    copy.BindInt64(4, chunk_rows);
    absl::Status s = copy.Run();
    copy.Reset();
    const int64_t copied = sqlite3_changes(keyed);
    mark.BindInt64(1, metric);
    mark.BindInt64(2, hour);
    if (s.ok()) s = mark.Run();
    mark.Reset();
    if (s.ok()) s = SqliteExec(keyed, "COMMIT");
    if (!s.ok()) {
      SqliteExec(keyed, "ROLLBACK").IgnoreError();
      return s;
    }
    return copied;
  }

  sqlite3* keyed;
  SqliteStatement next_hour, copy, mark, last_copied, last_hour;
  int64_t metric = INT64_MIN;
  int64_t hour = INT64_MIN;
  bool in_hour = false;
  std::string after_id;
};

// The copy of CopyLegacyReports, with the database attached as `collector`.
absl::Status CopyAttachedLegacyReports(sqlite3* keyed, int64_t chunk_rows,
                                       const std::function<void()>& after_commit) {
  DENIABLE_ASSIGN_OR_RETURN(LegacyCopy c, LegacyCopy::Prepare(keyed));
  DENIABLE_RETURN_IF_ERROR(c.ResumeInLastHour());
  while (true) {
    if (!c.in_hour) {
      DENIABLE_ASSIGN_OR_RETURN(bool found, c.NextHour());
      if (!found) return absl::OkStatus();
    }
    DENIABLE_ASSIGN_OR_RETURN(const int64_t copied, c.CopyChunk(chunk_rows));
    if (after_commit) after_commit();
    // The rows after after_id are new (the hour's copied rows are a prefix in id order), so
    // fewer than a chunk's means the hour is done.
    if (copied < chunk_rows) {
      c.in_hour = false;
    } else {
      DENIABLE_RETURN_IF_ERROR(c.ReadLastId());
    }
  }
}

}  // namespace

absl::Status CopyLegacyReports(sqlite3* keyed, const std::string& db_path, int64_t chunk_rows,
                               const std::function<void()>& after_commit) {
  {
    DENIABLE_ASSIGN_OR_RETURN(SqliteStatement attach,
                              SqliteStatement::Prepare(keyed, "ATTACH DATABASE ? AS collector"));
    attach.BindText(1, db_path);
    DENIABLE_RETURN_IF_ERROR(attach.Run());
  }
  absl::Status status = CopyAttachedLegacyReports(keyed, chunk_rows, after_commit);
  absl::Status detach = SqliteExec(keyed, "DETACH DATABASE collector");
  return status.ok() ? detach : status;
}

}  // namespace deniable::server
