// The metrics table: reporting period and randomization stored, and databases written before
// those columns existed opened with their defaults (a forward migration).
#include <sqlite3.h>

#include "gtest/gtest.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace metrics_schema_test {

using testing_util::NewMetric;
using testing_util::TempDbPath;

TEST(MetricsSchemaTest, BothStoragesKeepPeriodAndRandomization) {
  const std::string path = TempDbPath("period");
  auto sqlite = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(sqlite.ok()) << sqlite.status();
  MemoryStorage memory;
  for (Storage* storage : {static_cast<Storage*>(sqlite->get()), static_cast<Storage*>(&memory)}) {
    StoredMetric metric = NewMetric("m");
    metric.reporting_period_seconds = 7200;
    metric.randomization = 2;
    ASSERT_TRUE(storage->CreateMetric(metric).ok());
    absl::StatusOr<StoredMetric> found = storage->GetMetric("m");
    ASSERT_TRUE(found.ok()) << found.status();
    EXPECT_EQ(found->reporting_period_seconds, 7200u);
    EXPECT_EQ(found->randomization, 2);
    absl::StatusOr<std::vector<StoredMetric>> list = storage->ListMetrics();
    ASSERT_TRUE(list.ok());
    EXPECT_EQ(list->at(0).reporting_period_seconds, 7200u);
  }
  sqlite->reset();
  auto reopened = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_EQ((*reopened)->GetMetric("m")->reporting_period_seconds, 7200u);
  EXPECT_EQ((*reopened)->GetMetric("m")->randomization, 2);
}

// The metrics and designs tables exactly as the first release (commit 1a58128) wrote them.
constexpr char kFirstReleaseSchema[] = R"sql(
CREATE TABLE metrics(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  time_precision_seconds INTEGER NOT NULL,
  min_reports INTEGER NOT NULL DEFAULT 0);
CREATE TABLE designs(
  metric_id INTEGER NOT NULL,
  version INTEGER NOT NULL,
  parameters BLOB NOT NULL,
  a REAL NOT NULL,
  b REAL NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  PRIMARY KEY (metric_id, version)) WITHOUT ROWID;
INSERT INTO metrics VALUES (1, 'old', 'question', 1000, 3600, 5);
INSERT INTO designs VALUES (1, 1, x'', 0.75, 0.25, 1000);
)sql";

TEST(MetricsSchemaTest, ADatabaseWithoutThePeriodColumnsOpensWithTheirDefaults) {
  const std::string path = TempDbPath("migration");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, kFirstReleaseSchema, nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  for (int open = 0; open < 2; ++open) {  // the second open finds the columns already there
    auto storage = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(storage.ok()) << storage.status();
    absl::StatusOr<StoredMetric> old = (*storage)->GetMetric("old");
    ASSERT_TRUE(old.ok()) << old.status();
    EXPECT_EQ(old->min_reports, 5u);
    EXPECT_EQ(old->reporting_period_seconds, 86400u);
    EXPECT_EQ(old->randomization, 1);  // MEMOIZED
    ASSERT_EQ(old->designs.size(), 1u);
    if (open == 0) {
      StoredMetric metric = NewMetric("new");
      metric.reporting_period_seconds = 3600;
      ASSERT_TRUE((*storage)->CreateMetric(metric).ok());
    } else {
      EXPECT_EQ((*storage)->GetMetric("new")->reporting_period_seconds, 3600u);
    }
  }
}

}  // namespace metrics_schema_test
}  // namespace
}  // namespace deniable::server
