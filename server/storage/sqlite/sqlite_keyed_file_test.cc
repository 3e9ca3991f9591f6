// The keyed reports file (sqlite_keyed_file.h): it belongs to one database (an older copy of it,
// or one whose WAL was lost, is refused by generation), a version 7 database's reports move into
// it, and tools read both through one view.
#include "server/storage/sqlite/sqlite_keyed_file.h"

#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace sqlite_keyed_file_test {

using ::testing::HasSubstr;
using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;

int64_t Count(sqlite3* db, const char* sql) {
  sqlite3_stmt* st = nullptr;
  int64_t n = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

// A database with `n` reports of one metric-hour, all moved into the keyed file but `recent`.
std::string MakeDatabase(const std::string& name, int n, int recent) {
  const std::string path = TempDbPath(name);
  auto s = SqliteStorage::Open({.path = path, .background_moves = false});
  EXPECT_TRUE(s.ok()) << s.status();
  const int64_t m = (*s)->CreateMetric(NewMetric("m"))->id;
  std::vector<ReportRow> rows;
  for (int i = 1; i <= n - recent; ++i) rows.push_back(Row(m, i, i % 2 == 0, 5));
  EXPECT_TRUE((*s)->AppendReports(rows).ok());
  EXPECT_TRUE((*s)->MoveRecentReports().ok());
  rows.clear();
  for (int i = n - recent + 1; i <= n; ++i) rows.push_back(Row(m, i, true, 5));
  EXPECT_TRUE((*s)->AppendReports(rows).ok());
  return path;
}

TEST(SqliteKeyedFileTest, TheViewFileForToolsIsTheHeadersView) {
  std::ifstream in(DENIABLE_STORED_REPORTS_SQL);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ("\n" + text.str(), kStoredReportsViewSql);
}

TEST(SqliteKeyedFileTest, ToolsReadEveryReportOnceThroughTheView) {
  const std::string path = MakeDatabase("view", 10, 3);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_TRUE(AttachKeyedReports(db, path).ok());
  EXPECT_EQ(Count(db, "SELECT count(*) FROM keyed.reports"), 7);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM main.recent_reports"), 3);
  EXPECT_EQ(Count(db, "SELECT count(DISTINCT report_id) FROM stored_reports"), 10);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM stored_reports"), 10);
  sqlite3_close(db);
}

TEST(SqliteKeyedFileTest, AMissingKeyedFileIsRefusedNotRecreated) {
  const std::string path = MakeDatabase("missing", 10, 3);
  ASSERT_EQ(std::rename(KeyedReportsPath(path).c_str(), (path + ".aside").c_str()), 0);
  auto s = SqliteStorage::Open({.path = path});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr(KeyedReportsPath(path)));
  ASSERT_EQ(std::rename((path + ".aside").c_str(), KeyedReportsPath(path).c_str()), 0);
  auto again = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->ReportCount(), 10);
}

TEST(SqliteKeyedFileTest, AnotherDatabasesKeyedFileIsRefused) {
  const std::string a = MakeDatabase("pair_a", 10, 3);
  const std::string b = MakeDatabase("pair_b", 4, 1);
  ASSERT_EQ(std::rename(KeyedReportsPath(b).c_str(), KeyedReportsPath(a).c_str()), 0);
  auto s = SqliteStorage::Open({.path = a});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("belongs to another database"));
}

// A database of schema version 7 (built here from a current one: `reports` back in the
// database, no pair id, counter_sums for counter_chunks, no counter_deltas, user_version 7) opens
// with its reports moved into a new keyed file, each once, and deduplicates against them.
TEST(SqliteKeyedFileTest, AVersion7DatabasesReportsMoveIntoANewKeyedFile) {
  const std::string path = MakeDatabase("v7", 10, 3);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(AttachKeyedReports(db, path).ok());
    ASSERT_EQ(sqlite3_exec(db,
                           "BEGIN; CREATE TABLE main.reports AS SELECT * FROM keyed.reports; "
                           "CREATE TABLE main.moving(metric_id, event_time); CREATE TABLE "
                           "main.move_watermarks(metric_id, event_time, last_seq, last_id); "
                           "DROP TABLE main.keyed_file; PRAGMA main.user_version = 7; "
                           "DROP TABLE main.counter_chunks; DROP TABLE main.counter_deltas; "
                           "CREATE TABLE main.counter_sums("
                           "metric_id, event_time, version, labelset_id, counter, total); COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  // A stale keyed file of an interrupted migration (here: the old one) is made anew.
  auto s = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*(*s)->ReportCount(), 10);
  EXPECT_EQ((*s)->RecentReportCount(), 3);
  std::vector<ReportRow> again;
  for (int i = 1; i <= 11; ++i) again.push_back(Row(1, i, true, 5));
  absl::StatusOr<AppendResult> r = (*s)->AppendReports(again);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->duplicates, 10);
  EXPECT_EQ(r->accepted, 1);
  s->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(Count(db, "PRAGMA user_version"), kCurrentSchemaVersion);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM sqlite_master WHERE name = 'legacy_reports'"), 0);
  sqlite3_close(db);
}

// Retention reaches the keyed file: an expired metric-hour's moved reports and its watermark go,
// a recent hour's stay.
TEST(SqliteKeyedFileTest, RetentionDropsMovedReportsAndTheirWatermarks) {
  constexpr int64_t kDay = 24;  // Row() takes hours
  const std::string path = TempDbPath("retention");
  auto s = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(s.ok()) << s.status();
  StoredMetric metric = NewMetric("m");
  metric.reporting_period_seconds = 86400;
  const int64_t m = (*s)->CreateMetric(metric)->id;
  ASSERT_TRUE((*s)->SetRetention("m", 10, kRetentionKeepCounts).ok());
  ASSERT_TRUE((*s)->AppendReports({Row(m, 1, true, 80 * kDay), Row(m, 2, false, 80 * kDay),
                                   Row(m, 3, true, 95 * kDay)})
                  .ok());
  ASSERT_TRUE((*s)->MoveRecentReports().ok());
  ASSERT_TRUE((*s)->AppendReports({Row(m, 4, true, 80 * kDay)}).ok());  // recent again
  absl::StatusOr<RetentionResult> r = (*s)->ApplyRetention(
      {.now_seconds = 100 * 86400, .dedup_window_seconds = 2 * 86400, .batch_rows = 1});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reports_dropped, 3);
  EXPECT_EQ(*(*s)->ReportCount(), 1);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(KeyedReportsPath(path).c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM reports"), 1);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM watermarks"), 1);  // day 95's
  sqlite3_close(db);
}

// A DeleteMetric whose second transaction (in the keyed file) did not run leaves keyed rows of a
// metric the database no longer has: the next open deletes them.
TEST(SqliteKeyedFileTest, KeyedRowsOfADeletedMetricGoAtTheNextOpen) {
  const std::string path = MakeDatabase("orphans", 10, 3);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(KeyedReportsPath(path).c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "BEGIN; INSERT INTO reports SELECT 99, event_time, report_id, version, "
                           "bit, labelset_id, support, firsts FROM reports; INSERT INTO "
                           "watermarks SELECT 99, event_time, moved_seq, last_seq, last_id FROM "
                           "watermarks; COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    EXPECT_EQ(Count(db, "SELECT count(*) FROM reports"), 14);
    sqlite3_close(db);
  }
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*(*s)->ReportCount(), 10);
  s->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(KeyedReportsPath(path).c_str(), &db), SQLITE_OK);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM reports WHERE metric_id = 99"), 0);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM watermarks WHERE metric_id = 99"), 0);
  sqlite3_close(db);
}

// Reports appended after a restart that found every recent report moved (none left to number
// from) are numbered past the hour's watermark: the next move copies them instead of deleting
// them unseen (durability_kill9 found 52334 acknowledged reports lost this way).
TEST(SqliteKeyedFileTest, ReportsAfterARestartWithEveryReportMovedAreKeptByTheNextMove) {
  const std::string path = MakeDatabase("renumber", 10, 0);
  auto s = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ((*s)->RecentReportCount(), 0);
  const int64_t m = (*s)->GetMetric("m")->id;
  std::vector<ReportRow> rows;
  for (int i = 11; i <= 15; ++i) rows.push_back(Row(m, i, true, 5));
  ASSERT_TRUE((*s)->AppendReports(rows).ok());
  EXPECT_EQ(*(*s)->ReportCount(), 15);
  ASSERT_TRUE((*s)->MoveRecentReports().ok());
  EXPECT_EQ(*(*s)->ReportCount(), 15);
  absl::StatusOr<AppendResult> again = (*s)->AppendReports({Row(m, 13, true, 5)});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->duplicates, 1);
  s->reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(KeyedReportsPath(path).c_str(), &db), SQLITE_OK);
  EXPECT_EQ(Count(db, "SELECT count(*) FROM reports"), 15);
  sqlite3_close(db);
}

// Appends `n` new reports (ids from `first`) of one metric-hour and moves them.
void AppendAndMove(SqliteStorage& s, int64_t metric, int first, int n) {
  std::vector<ReportRow> rows;
  for (int i = first; i < first + n; ++i) rows.push_back(Row(metric, i, i % 2 == 0, 5));
  ASSERT_TRUE(s.AppendReports(rows).ok());
  ASSERT_TRUE(s.MoveRecentReports().ok());
}

void CopyBytes(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
}

// Issue 37 item 2: an older copy of the keyed file (same pair id) put back after more moves used
// to open, with the reports moved since gone from stored_reports while the counts kept them.
TEST(SqliteKeyedFileTest, AnOlderCopyOfTheKeyedFileIsRefused) {
  const std::string path = TempDbPath("older_keyed");
  int64_t m = 0;
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    m = (*s)->CreateMetric(NewMetric("m"))->id;
    AppendAndMove(**s, m, 1, 10);
  }
  const std::string keyed = KeyedReportsPath(path);  // (the file exists: its canonical name)
  CopyBytes(keyed, path + ".old-reports");           // closed: no WAL beside it
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    AppendAndMove(**s, m, 11, 10);
    EXPECT_EQ(*(*s)->ReportCount(), 20);
  }
  CopyBytes(keyed, path + ".new-reports");
  CopyBytes(path + ".old-reports", keyed);
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr(keyed));
  EXPECT_THAT(s.status().message(), HasSubstr("is older than its database"));
  // The keyed file that was beside it opens, with every report.
  CopyBytes(path + ".new-reports", keyed);
  auto again = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->ReportCount(), 20);
}

// The keyed file's -wal lost after a SIGKILL (its commits since the last checkpoint gone, the
// database's deletes of the moved rows kept) is refused the same way.
TEST(SqliteKeyedFileTest, AKeyedFileWhoseWalWasLostIsRefused) {
  const std::string path = TempDbPath("lost_wal");
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    (*s)->CreateMetric(NewMetric("m")).IgnoreError();
  }
  const std::string keyed = KeyedReportsPath(path);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // moves, then dies without closing anything (a SIGKILL's state)
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    if (!s.ok()) _exit(2);
    std::vector<ReportRow> rows;
    for (int i = 1; i <= 10; ++i) rows.push_back(Row(1, i, true, 5));
    if (!(*s)->AppendReports(rows).ok() || !(*s)->MoveRecentReports().ok()) _exit(3);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_EQ(std::remove((keyed + "-wal").c_str()), 0) << "the moves left a keyed WAL";
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr(keyed));
}

// The other direction (docs/storage.md, invariant 18): an older copy of the database with the
// same pair id (its reports moved since are in the keyed file, uncounted by it) is refused,
// naming the database; the database that was beside the keyed file opens.
TEST(SqliteKeyedFileTest, AnOlderCopyOfTheDatabaseIsRefused) {
  const std::string path = TempDbPath("older_db");
  int64_t m = 0;
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    m = (*s)->CreateMetric(NewMetric("m"))->id;
    AppendAndMove(**s, m, 1, 10);
  }
  CopyBytes(path, path + ".old");  // closed: no WAL beside it
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    AppendAndMove(**s, m, 11, 10);
    EXPECT_EQ(*(*s)->ReportCount(), 20);
  }
  CopyBytes(path, path + ".new");
  CopyBytes(path + ".old", path);
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("the database \"" + path + "\""));
  EXPECT_THAT(s.status().message(), HasSubstr("is older than its keyed reports file"));
  CopyBytes(path + ".new", path);
  auto again = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->ReportCount(), 20);
}

// A DeleteMetric whose process died after its database step (the metric gone, no generation
// raised after it): the next open deletes the metric's keyed rows and records a database
// generation raised after the delete, so the older database that still has the metric (and
// counts its moved reports) is refused too.
TEST(SqliteKeyedFileTest, AnOlderDatabaseThanTheOpensDeleteOfAGoneMetricIsRefused) {
  const std::string path = TempDbPath("older_than_gone");
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    const int64_t m = (*s)->CreateMetric(NewMetric("m"))->id;
    AppendAndMove(**s, m, 1, 10);
  }
  CopyBytes(path, path + ".old");
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "BEGIN; DELETE FROM counts; DELETE FROM designs; DELETE FROM "
                           "label_values; DELETE FROM metrics; COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(*(*s)->ReportCount(), 0);  // the keyed rows of the gone metric went
  }
  CopyBytes(path + ".old", path);
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_FALSE(s.ok()) << "the older database, whose metric's moved reports are gone, opened";
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  EXPECT_THAT(s.status().message(), HasSubstr("is older than its keyed reports file"));
}

// Runs `body` on a storage of `path` in a child process that then dies without closing
// anything (a SIGKILL's state: both WALs left as they are).
void InAKilledChild(const std::string& path, void (*body)(SqliteStorage&)) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    if (!s.ok()) _exit(2);
    body(**s);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// The database's -wal lost after a SIGKILL (simulated: deleted while closed): refused when it
// held commits the keyed file relies on (appends a move copied), opened when it held only
// appends no move copied (those reports are lost, counts and reports still agree).
TEST(SqliteKeyedFileTest, ADatabaseWhoseWalWasLostIsRefusedWhenTheKeyedFileReliesOnIt) {
  for (const bool moved : {true, false}) {
    SCOPED_TRACE(moved ? "moved" : "not moved");
    const std::string path = TempDbPath(moved ? "lost_db_wal" : "lost_db_wal_unmoved");
    {
      auto s = SqliteStorage::Open({.path = path, .background_moves = false});
      ASSERT_TRUE(s.ok()) << s.status();
      ASSERT_TRUE((*s)->CreateMetric(NewMetric("m")).ok());
    }
    ASSERT_NO_FATAL_FAILURE(InAKilledChild(path, moved ? +[](SqliteStorage& s) {
      std::vector<ReportRow> rows;
      for (int i = 1; i <= 10; ++i) rows.push_back(Row(1, i, true, 5));
      if (!s.AppendReports(rows).ok() || !s.MoveRecentReports().ok()) _exit(3);
    }
                                                           : +[](SqliteStorage& s) {
      std::vector<ReportRow> rows;
      for (int i = 1; i <= 10; ++i) rows.push_back(Row(1, i, true, 5));
      if (!s.AppendReports(rows).ok()) _exit(3);
    }));
    ASSERT_EQ(std::remove((path + "-wal").c_str()), 0) << "the child left no database WAL";
    auto s = SqliteStorage::Open({.path = path});
    if (moved) {
      ASSERT_FALSE(s.ok());
      EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
      EXPECT_THAT(s.status().message(), HasSubstr("the database \"" + path + "\""));
      EXPECT_THAT(s.status().message(), HasSubstr("is older than its keyed reports file"));
    } else {
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_EQ(*(*s)->ReportCount(), 0);
    }
  }
}

// A schema version 8 pair (keyed file version 1, no generations) opens and is migrated.
TEST(SqliteKeyedFileTest, AVersion8PairGetsGenerations) {
  const std::string path = MakeDatabase("v8_pair", 10, 3);
  for (const auto& [file, sql] : {std::pair(path,
                                            "ALTER TABLE keyed_file DROP COLUMN keyed_generation; "
                                            "ALTER TABLE keyed_file DROP COLUMN db_generation; "
                                            "DROP TABLE counter_chunks; DROP TABLE counter_deltas; "
                                            "CREATE TABLE counter_sums("
                                            "metric_id, event_time, version, labelset_id, "
                                            "counter, total); PRAGMA user_version=8"),
                                  std::pair(KeyedReportsPath(path),
                                            "ALTER TABLE keyed_file DROP COLUMN generation; "
                                            "ALTER TABLE keyed_file DROP COLUMN db_generation; "
                                            "PRAGMA user_version=1")}) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(*(*s)->ReportCount(), 10);
    AppendAndMove(**s, 1, 11, 5);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(Count(db, "PRAGMA user_version"), kCurrentSchemaVersion);
  EXPECT_GT(Count(db, "SELECT keyed_generation FROM keyed_file"), 0);
  const int64_t db_generation = Count(db, "SELECT db_generation FROM keyed_file");
  sqlite3_close(db);
  ASSERT_EQ(sqlite3_open(KeyedReportsPath(path).c_str(), &db), SQLITE_OK);
  EXPECT_EQ(Count(db, "PRAGMA user_version"), kKeyedReportsVersion);
  EXPECT_GT(Count(db, "SELECT generation FROM keyed_file"), 0);
  // The move after the migration relied on a database generation, recorded in both.
  EXPECT_GT(Count(db, "SELECT db_generation FROM keyed_file"), 0);
  EXPECT_GE(db_generation, Count(db, "SELECT db_generation FROM keyed_file"));
  sqlite3_close(db);
}

}  // namespace sqlite_keyed_file_test
}  // namespace
}  // namespace deniable::server
