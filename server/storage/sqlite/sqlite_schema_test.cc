// Schema versions of the collector database (issue 17): a database written by the last
// unversioned release (tests/data/collector-schema-320cd93.sql, run into an empty file) opens and
// is migrated in place; a newer, a device store and a foreign database are refused unchanged.
#include "server/storage/sqlite/sqlite_schema.h"

#include <sqlite3.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace sqlite_schema_test {

using ::testing::HasSubstr;
using testing_util::TempDbPath;
using testing_util::Yes;

// Runs `sql` into the file at `path` (created if missing).
void RunSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  EXPECT_EQ(rc, SQLITE_OK) << (error != nullptr ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// PRAGMA application_id and user_version, and the number of tables, of the file at `path`.
struct Header {
  int32_t application_id = 0;
  int version = 0;
};
Header ReadHeader(const std::string& path) {
  sqlite3* db = nullptr;
  Header h;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_TRUE(ReadSchemaVersion(db, &h.application_id, &h.version).ok());
  sqlite3_close(db);
  return h;
}

std::string Fixture(const char* path = DENIABLE_SCHEMA_FIXTURE) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SqliteSchemaTest, OpensADatabaseWrittenByTheUnversionedReleaseAndMigratesItInPlace) {
  const std::string path = TempDbPath("schema_v0");
  const std::string sql = Fixture();
  ASSERT_THAT(sql, HasSubstr("CREATE TABLE IF NOT EXISTS counts"));
  RunSql(path, sql);
  ASSERT_EQ(ReadHeader(path).application_id, 0);

  auto storage = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<StoredMetric> metric = (*storage)->GetMetric("chile_vote_yes");
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->reporting_period_seconds, 86400u);
  ASSERT_EQ(metric->designs.size(), 1u);
  EXPECT_EQ(metric->designs[0].a, 0.75);
  absl::StatusOr<std::vector<CountRow>> counts =
      (*storage)->ReadCounts(metric->id, 0, 2'000'000'000);
  ASSERT_TRUE(counts.ok()) << counts.status();
  int64_t n = 0;
  for (const CountRow& row : *counts) n += row.n;
  EXPECT_EQ(n, 3);
  EXPECT_EQ(*(*storage)->ReportCount(), 3);
  storage->reset();

  const Header header = ReadHeader(path);
  EXPECT_EQ(header.application_id, kCollectorApplicationId);
  EXPECT_EQ(header.version, kCurrentSchemaVersion);
  // A second start finds the current version and opens it as it is.
  auto reopened = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ(*(*reopened)->ReportCount(), 3);
}

// Issue 14: a version 1 database (written by commit c83eab3, before categorical metrics) with
// yes/no reports, some still in recent_reports, opens, migrates to version 2, keeps its counts
// and reports, and takes a categorical metric and its reports.
TEST(SqliteSchemaTest, MigratesAVersion1DatabaseKeepingItsCountsAndAcceptingCategoricalMetrics) {
  const std::string path = TempDbPath("schema_v1");
  const std::string sql = Fixture(DENIABLE_SCHEMA_V1_FIXTURE);
  ASSERT_THAT(sql, HasSubstr("PRAGMA user_version=1"));
  RunSql(path, sql);
  ASSERT_EQ(ReadHeader(path).version, 1);
  ASSERT_EQ(ReadHeader(path).application_id, kCollectorApplicationId);

  auto storage = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(storage.ok()) << storage.status();
  EXPECT_EQ(ReadHeader(path).version, kCurrentSchemaVersion);
  absl::StatusOr<StoredMetric> yes_no = (*storage)->GetMetric("chile_vote_yes");
  ASSERT_TRUE(yes_no.ok()) << yes_no.status();
  EXPECT_TRUE(yes_no->categories.empty());
  absl::StatusOr<std::vector<CountRow>> counts =
      (*storage)->ReadCounts(yes_no->id, 0, 2'000'000'000);
  ASSERT_TRUE(counts.ok()) << counts.status();
  int64_t n = 0, yes = 0;
  for (const CountRow& row : *counts) {
    n += row.n;
    yes += Yes(row);
    EXPECT_LE(row.counters.size(), 1u);  // a yes/no row: counter 0 at most
  }
  EXPECT_EQ(n, 5);
  EXPECT_EQ(yes, 3);
  EXPECT_EQ(*(*storage)->ReportCount(), 5);
  // The old recent reports are still recognised as duplicates, and move with a NULL support.
  ReportRow old = testing_util::Row(yes_no->id, 0, false, 1700002800 / 3600);
  const uint8_t id[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  std::copy(std::begin(id), std::end(id), old.report_id.begin());
  absl::StatusOr<AppendResult> again = (*storage)->AppendReports({old});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->duplicates, 1);
  ASSERT_TRUE((*storage)->MoveRecentReports().ok());

  absl::StatusOr<StoredMetric> vote =
      (*storage)->CreateMetric(testing_util::NewCategoricalMetric("chile_vote"));
  ASSERT_TRUE(vote.ok()) << vote.status();
  ASSERT_TRUE((*storage)
                  ->AppendReports({testing_util::CategoricalRow(vote->id, 1, {1}, 472223),
                                   testing_util::CategoricalRow(vote->id, 2, {1, 3}, 472223)})
                  .ok());
  absl::StatusOr<std::vector<CountRow>> cat = (*storage)->ReadCounts(vote->id, 0, 2'000'000'000);
  ASSERT_TRUE(cat.ok()) << cat.status();
  ASSERT_EQ(cat->size(), 1u);
  EXPECT_EQ((*cat)[0].n, 2);
  EXPECT_EQ((*cat)[0].counters.Dense(), (std::vector<int64_t>{0, 2, 0, 1}));
  EXPECT_EQ(*(*storage)->IntegrityCheck(), "ok");
  storage->reset();
  auto reopened = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  absl::StatusOr<StoredMetric> again_vote = (*reopened)->GetMetric("chile_vote");
  ASSERT_TRUE(again_vote.ok());
  EXPECT_EQ(again_vote->categories, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(*(*reopened)->ReportCount(), 7);
}

// Issue 17: a version 2 database (written by commit 5434860, before AUTOINCREMENT metric ids and
// retention) with yes/no and categorical reports still recent opens, migrates to version 3, keeps
// its metrics, ids, counts and reports, and never gives a deleted metric's id again.
TEST(SqliteSchemaTest, MigratesAVersion2DatabaseKeepingItsDataAndNeverReusingMetricIds) {
  const std::string path = TempDbPath("schema_v2");
  const std::string sql = Fixture(DENIABLE_SCHEMA_V2_FIXTURE);
  ASSERT_THAT(sql, HasSubstr("PRAGMA user_version=2"));
  RunSql(path, sql);
  ASSERT_EQ(ReadHeader(path).version, 2);

  auto storage = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(storage.ok()) << storage.status();
  EXPECT_EQ(ReadHeader(path).version, kCurrentSchemaVersion);
  absl::StatusOr<StoredMetric> yes_no = (*storage)->GetMetric("chile_vote_yes");
  absl::StatusOr<StoredMetric> vote = (*storage)->GetMetric("chile_vote");
  ASSERT_TRUE(yes_no.ok() && vote.ok()) << yes_no.status() << vote.status();
  EXPECT_EQ(yes_no->id, 1);
  EXPECT_EQ(vote->id, 2);
  EXPECT_EQ(vote->categories, (std::vector<std::string>{"Y", "N", "U", "A"}));
  EXPECT_EQ(*(*storage)->ReportCount(), 7);
  absl::StatusOr<std::vector<CountRow>> cat = (*storage)->ReadCounts(vote->id, 0, 2'000'000'000);
  ASSERT_TRUE(cat.ok()) << cat.status();
  ASSERT_EQ(cat->size(), 1u);
  EXPECT_EQ((*cat)[0].n, 2);
  EXPECT_EQ((*cat)[0].counters.Dense(), (std::vector<int64_t>{0, 2, 0, 1}));
  // Version 5: reports stored before carry no window flags, so no first is counted; the metrics
  // keep flags on and are periodic.
  EXPECT_EQ((*cat)[0].firsts[0].n, 0);
  EXPECT_FALSE(vote->window_firsts_off);
  EXPECT_FALSE(vote->reporting_once);
  // A recent report of the old file is still a duplicate.
  ReportRow old = testing_util::CategoricalRow(vote->id, 0, {1}, 1700002800 / 3600);
  old.report_id.fill(0);
  old.report_id[0] = 0x21;
  absl::StatusOr<AppendResult> again = (*storage)->AppendReports({old});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->duplicates, 1);

  // Metrics of version 2 keep everything; retention can be set now.
  EXPECT_EQ(yes_no->retention_days, 0u);
  EXPECT_EQ(yes_no->retention_policy, kRetentionKeepCounts);
  absl::StatusOr<StoredMetric> set =
      (*storage)->SetRetention("chile_vote_yes", 30, kRetentionDropCounts);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->retention_days, 30u);
  // A flagged report appended to the migrated database counts its first.
  ReportRow flagged = testing_util::Row(yes_no->id, 200, true, 500000);  // an hour of its own
  flagged.window_firsts = 1;
  ASSERT_TRUE((*storage)->AppendReports({flagged}).ok());
  absl::StatusOr<std::vector<CountRow>> yes_no_counts =
      (*storage)->ReadCounts(yes_no->id, int64_t{500000} * 3600, int64_t{500001} * 3600);
  ASSERT_TRUE(yes_no_counts.ok()) << yes_no_counts.status();
  ASSERT_EQ(yes_no_counts->size(), 1u);
  EXPECT_EQ((*yes_no_counts)[0].firsts[0].n, 1);
  EXPECT_EQ(Yes((*yes_no_counts)[0].firsts[0]), 1);

  // The newest metric deleted: its id is not given to the next one (version 2 gave it).
  ASSERT_TRUE((*storage)->DeleteMetric("chile_vote").ok());
  absl::StatusOr<StoredMetric> next = (*storage)->CreateMetric(testing_util::NewMetric("next"));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->id, 3);
  EXPECT_EQ(*(*storage)->IntegrityCheck(), "ok");
}

// Issue 25: the version 3 -> 4 step fills label_values from the counts' label sets (here of the
// version 2 fixture: chile_vote_yes has region=N and region=S, chile_vote region=N), so the cap
// counts the values stored before it existed; DeleteMetric removes a metric's values.
TEST(SqliteSchemaTest, MigrationFillsLabelValuesFromTheCountsSoTheCapCountsOldValues) {
  const std::string path = TempDbPath("schema_labels");
  RunSql(path, Fixture(DENIABLE_SCHEMA_V2_FIXTURE));
  auto storage =
      SqliteStorage::Open({.path = path, .background_moves = false, .max_label_values = 2});
  ASSERT_TRUE(storage.ok()) << storage.status();
  EXPECT_EQ(ReadHeader(path).version, kCurrentSchemaVersion);
  absl::StatusOr<StoredMetric> yes_no = (*storage)->GetMetric("chile_vote_yes");
  absl::StatusOr<StoredMetric> vote = (*storage)->GetMetric("chile_vote");
  ASSERT_TRUE(yes_no.ok() && vote.ok());
  absl::StatusOr<AppendResult> r = (*storage)->AppendReports(
      {testing_util::Row(yes_no->id, 100, true, 472223, "region=E"),
       testing_util::CategoricalRow(vote->id, 101, {1}, 472223, "region=E"),
       testing_util::CategoricalRow(vote->id, 102, {1}, 472223, "region=W")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  ASSERT_EQ(r->label_refusals.size(), 2u);
  EXPECT_EQ(r->label_refusals[0].row, 0u);
  EXPECT_EQ(r->label_refusals[0].key, "region");
  EXPECT_EQ(r->label_refusals[1].row, 2u);
  ASSERT_TRUE((*storage)->DeleteMetric("chile_vote").ok());
  storage->reset();

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT group_concat(metric_id || ':' || key || '=' || value, ' ') "
                               "FROM (SELECT * FROM label_values ORDER BY 1, 2, 3)",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))),
            "1:region=N 1:region=S");
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// A database of version 9 with one count row of metric `name` at hour 1 (n 5, counter 0 2) and
// `version9_sql` run on it: counter_chunks and counter_deltas dropped, counter_sums back as
// version 9 had it.
std::string Version9Database(const std::string& name, const std::string& version9_sql) {
  const std::string path = TempDbPath(name);
  {
    auto storage = SqliteStorage::Open({.path = path});
    EXPECT_TRUE(storage.ok()) << storage.status();
    if (!storage.ok()) return path;
    absl::StatusOr<StoredMetric> m = (*storage)->CreateMetric(testing_util::NewMetric("m"));
    EXPECT_TRUE(m.ok());
    EXPECT_TRUE((*storage)->AppendReports({testing_util::Row(m->id, 1, true, 1)}).ok());
  }
  RunSql(path, R"sql(
ALTER TABLE keyed_file DROP COLUMN db_generation;
DROP TABLE counter_chunks;
DROP TABLE counter_deltas;
CREATE TABLE counter_sums(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  counter INTEGER NOT NULL,
  total INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id, counter)) WITHOUT ROWID;
UPDATE counts SET n = 5, counter0 = 2;
PRAGMA user_version=9;
)sql" + version9_sql);
  return path;
}

// Issue 37: version 9 -> 10 moves counter_sums (one row per counter) and first_counts' rows of
// counters >= 1 into counter_chunks (1024 counters a row), keeping every sum; counter_sums goes.
TEST(SqliteSchemaTest, MigratesVersion9CounterSumsIntoChunksKeepingEverySum) {
  const std::string path = Version9Database("schema_v9", R"sql(
INSERT INTO counter_sums SELECT metric_id, event_time, version, labelset_id, 1, 3 FROM counts;
INSERT INTO counter_sums SELECT metric_id, event_time, version, labelset_id, 1025, 1 FROM counts;
INSERT INTO counter_sums SELECT metric_id, event_time, version, labelset_id, 70000, 4 FROM counts;
DELETE FROM first_counts;
INSERT INTO first_counts SELECT metric_id, event_time, version, labelset_id, 0, -1, 2 FROM counts;
INSERT INTO first_counts SELECT metric_id, event_time, version, labelset_id, 0, 0, 1 FROM counts;
INSERT INTO first_counts SELECT metric_id, event_time, version, labelset_id, 0, 70000, 2
  FROM counts;
INSERT INTO first_counts SELECT metric_id, event_time, version, labelset_id, 2, 1, 1 FROM counts;
)sql");
  {
    auto storage = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(storage.ok()) << storage.status();
    absl::StatusOr<StoredMetric> m = (*storage)->GetMetric("m");
    ASSERT_TRUE(m.ok());
    absl::StatusOr<std::vector<CountRow>> counts = (*storage)->ReadCounts(m->id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    ASSERT_EQ(counts->size(), 1u);
    const CountRow& row = (*counts)[0];
    EXPECT_EQ(row.n, 5);
    EXPECT_EQ(row.counters.ToString(), "0:2,1:3,1025:1,70000:4");
    EXPECT_EQ(row.firsts[0].n, 2);
    EXPECT_EQ(row.firsts[0].counters.ToString(), "0:1,70000:2");
    EXPECT_EQ(row.firsts[2].counters.ToString(), "1:1");
    // And counts go on in the new form.
    ReportRow more = testing_util::Row(m->id, 2, true, 1);
    more.counters.push_back(70000);
    more.window_firsts = 1;
    ASSERT_TRUE((*storage)->AppendReports({more}).ok());
    counts = (*storage)->ReadCounts(m->id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ((*counts)[0].counters.ToString(), "0:3,1:3,1025:1,70000:5");
    EXPECT_EQ((*counts)[0].firsts[0].counters.ToString(), "0:2,70000:3");
  }
  EXPECT_EQ(ReadHeader(path).version, kCurrentSchemaVersion);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT (SELECT count(*) FROM sqlite_master WHERE name = "
                               "'counter_sums'), (SELECT count(*) FROM first_counts WHERE "
                               "counter >= 1), (SELECT count(*) FROM counter_chunks)",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 0);  // counter_sums dropped
  EXPECT_EQ(sqlite3_column_int64(st, 1), 0);  // first_counts keeps n and counter 0
  // Every report's counters: chunk 0 (counter 1), 1 (1025) and 68 (70000); window 0's: chunk
  // 68; window 2's: chunk 0.
  EXPECT_EQ(sqlite3_column_int64(st, 2), 5);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// Issue 40: version 11 -> 12 creates counter_deltas, empty (the chunks keep every sum); the
// counts read the same after it, and appends go on into deltas that sum with the chunks.
TEST(SqliteSchemaTest, MigratesVersion11ByAddingAnEmptyCounterDeltasTable) {
  const std::string path = TempDbPath("schema_v11");
  ReportRow r = testing_util::Row(1, 1, true, 1);
  r.counters = {0, 5, 70000};
  r.window_firsts = 1;
  {
    auto storage = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(storage.ok()) << storage.status();
    absl::StatusOr<StoredMetric> m = (*storage)->CreateMetric(testing_util::NewMetric("m"));
    ASSERT_TRUE(m.ok());
    r.metric_id = m->id;
    ASSERT_TRUE((*storage)->AppendReports({r}).ok());
  }
  // Version 11 had the sums in chunks only.
  RunSql(path, R"sql(
INSERT INTO counter_chunks SELECT metric_id, event_time, version, labelset_id, win, 0, x'0501'
  FROM counter_deltas WHERE win = -1;
INSERT INTO counter_chunks SELECT metric_id, event_time, version, labelset_id, win, 68, x'f00201'
  FROM counter_deltas WHERE win = -1;
DROP TABLE counter_deltas;
PRAGMA user_version=11;
)sql");
  ASSERT_EQ(ReadHeader(path).version, 11);
  {
    auto storage = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(storage.ok()) << storage.status();
    EXPECT_EQ(ReadHeader(path).version, 12);
    absl::StatusOr<std::vector<CountRow>> counts = (*storage)->ReadCounts(r.metric_id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    ASSERT_EQ(counts->size(), 1u);
    EXPECT_EQ((*counts)[0].counters.ToString(), "0:1,5:1,70000:1");
    EXPECT_EQ((*counts)[0].firsts[0].counters.ToString(), "0:1");
    r.report_id[1] = 1;
    ASSERT_TRUE((*storage)->AppendReports({r}).ok());
    counts = (*storage)->ReadCounts(r.metric_id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_EQ((*counts)[0].counters.ToString(), "0:2,5:2,70000:2");
    EXPECT_EQ((*counts)[0].firsts[0].counters.ToString(), "0:2,5:1,70000:1");
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db,
                               "SELECT (SELECT count(*) FROM counter_chunks), (SELECT count(*) "
                               "FROM counter_deltas)",
                               -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int64(st, 0), 2);  // version 11's, unchanged
  EXPECT_EQ(sqlite3_column_int64(st, 1), 2);  // the new report's: every report's, the day's
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// A counter_sums row of version 9 outside the stored ranges (a negative counter) stops the
// migration with DATA_LOSS naming the table, and the file stays at version 9.
TEST(SqliteSchemaTest, Version9CounterSumOutOfRangeIsDataLossNamingTheTable) {
  const std::string path = Version9Database("schema_v9_bad", R"sql(
INSERT INTO counter_sums SELECT metric_id, event_time, version, labelset_id, -5, 3 FROM counts;
)sql");
  auto storage = SqliteStorage::Open({.path = path});
  ASSERT_FALSE(storage.ok());
  EXPECT_EQ(storage.status().code(), absl::StatusCode::kDataLoss) << storage.status();
  EXPECT_THAT(storage.status().message(), HasSubstr("counter_sums"));
  EXPECT_EQ(ReadHeader(path).version, 9);
}

TEST(SqliteSchemaTest, ANewDatabaseGetsTheApplicationIdAndTheCurrentVersion) {
  const std::string path = TempDbPath("schema_new");
  ASSERT_TRUE(SqliteStorage::Open({.path = path}).ok());
  const Header header = ReadHeader(path);
  EXPECT_EQ(header.application_id, kCollectorApplicationId);
  EXPECT_EQ(header.version, kCurrentSchemaVersion);
}

TEST(SqliteSchemaTest, RefusesADatabaseOfANewerSchemaVersionAndChangesNothing) {
  const std::string path = TempDbPath("schema_newer");
  ASSERT_TRUE(SqliteStorage::Open({.path = path}).ok());
  RunSql(path, "PRAGMA user_version=" + std::to_string(kCurrentSchemaVersion + 1));
  auto storage = SqliteStorage::Open({.path = path});
  EXPECT_EQ(storage.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(storage.status().message(), HasSubstr(path));
  EXPECT_THAT(storage.status().message(), HasSubstr("written by a newer deniable-server"));
  EXPECT_EQ(ReadHeader(path).version, kCurrentSchemaVersion + 1);
}

TEST(SqliteSchemaTest, RefusesTheSdksDeviceStoreAndChangesNothing) {
  const std::string path = TempDbPath("schema_device");
  RunSql(path, "PRAGMA application_id=" + std::to_string(kDeviceStoreApplicationId) +
                   "; CREATE TABLE memo(metric TEXT); CREATE TABLE queue(seq INTEGER);");
  auto storage = SqliteStorage::Open({.path = path});
  EXPECT_EQ(storage.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(storage.status().message(), HasSubstr("is a Deniable device store"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 2) << "tables were added to the device store";
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST(SqliteSchemaTest, RefusesAForeignDatabaseNamingTheTable) {
  const std::string path = TempDbPath("schema_foreign");
  RunSql(path, "CREATE TABLE invoices(id INTEGER); CREATE TABLE metrics(id INTEGER);");
  auto storage = SqliteStorage::Open({.path = path});
  EXPECT_EQ(storage.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(storage.status().message(), HasSubstr("is not a Deniable collector database"));
  EXPECT_THAT(storage.status().message(), HasSubstr("\"invoices\""));

  const std::string other = TempDbPath("schema_other_app");
  RunSql(other, "PRAGMA application_id=1234; CREATE TABLE t(x);");
  EXPECT_THAT(SqliteStorage::Open({.path = other}).status().message(),
              HasSubstr("application_id 0x000004d2"));
}

}  // namespace sqlite_schema_test
}  // namespace
}  // namespace deniable::server
