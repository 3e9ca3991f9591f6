#include <unistd.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/memory_storage.h"
#include "server/storage/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;

struct StorageFactory {
  std::string name;
  std::function<std::unique_ptr<Storage>(const std::string& test)> make;
  friend void PrintTo(const StorageFactory& f, std::ostream* os) { *os << f.name; }
};

class StorageTest : public ::testing::TestWithParam<StorageFactory> {
 protected:
  void SetUp() override {
    storage_ = GetParam().make("param");
    ASSERT_NE(storage_, nullptr);
  }
  std::unique_ptr<Storage> storage_;
};

TEST_P(StorageTest, CreatedMetricIsFoundWithItsDesign) {
  absl::StatusOr<StoredMetric> created = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<StoredMetric> found = storage_->GetMetric("m");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->id, created->id);
  EXPECT_EQ(found->description, "question");
  ASSERT_EQ(found->designs.size(), 1u);
  EXPECT_EQ(found->designs[0].parameters, "params");
  EXPECT_DOUBLE_EQ(found->designs[0].a, 0.75);
}

TEST_P(StorageTest, CreateFailsWhenNameIsTaken) {
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("m")).ok());
  absl::StatusOr<StoredMetric> again = storage_->CreateMetric(NewMetric("m"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr("\"m\""));
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
}

TEST_P(StorageTest, GetFailsForUnknownMetric) {
  EXPECT_EQ(storage_->GetMetric("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StorageTest, ListIsOrderedByName) {
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("b")).ok());
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("a")).ok());
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "a");
  EXPECT_EQ((*all)[1].name, "b");
}

TEST_P(StorageTest, AppendCountsEachReportIdOnce) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  std::vector<ReportRow> batch = {Row(m->id, 1, true, 10), Row(m->id, 2, false, 10),
                                  Row(m->id, 1, true, 10)};  // id 1 twice in one batch
  absl::StatusOr<AppendResult> first = storage_->AppendReports(batch);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->accepted, 2);
  EXPECT_EQ(first->duplicates, 1);
  absl::StatusOr<AppendResult> resent = storage_->AppendReports(batch);  // a retry
  ASSERT_TRUE(resent.ok());
  EXPECT_EQ(resent->accepted, 0);
  EXPECT_EQ(resent->duplicates, 3);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_EQ((*counts)[0].yes, 1);
}

TEST_P(StorageTest, ReadCountsKeepsHalfOpenRangeAndLabels) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  absl::StatusOr<StoredMetric> other = storage_->CreateMetric(NewMetric("other"));
  ASSERT_TRUE(m.ok() && other.ok());
  ASSERT_TRUE(
      storage_
          ->AppendReports({Row(m->id, 1, true, 10, "region=N"), Row(m->id, 2, true, 11, "region=S"),
                           Row(m->id, 3, false, 11, "region=S"), Row(m->id, 4, true, 12),
                           Row(other->id, 5, true, 11)})
          .ok());
  absl::StatusOr<std::vector<CountRow>> counts =
      storage_->ReadCounts(m->id, 11 * 3600, 12 * 3600);  // [11h, 12h)
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].event_time_seconds, 11 * 3600);
  EXPECT_EQ((*counts)[0].labels, "region=S");
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_EQ((*counts)[0].yes, 1);
}

INSTANTIATE_TEST_SUITE_P(
    AllStorages, StorageTest,
    ::testing::Values(StorageFactory{"memory",
                                     [](const std::string&) -> std::unique_ptr<Storage> {
                                       return std::make_unique<MemoryStorage>();
                                     }},
                      StorageFactory{"sqlite",
                                     [](const std::string& test) -> std::unique_ptr<Storage> {
                                       auto s = SqliteStorage::Open({.path = TempDbPath(test)});
                                       return s.ok() ? *std::move(s) : nullptr;
                                     }}),
    [](const ::testing::TestParamInfo<StorageFactory>& param) { return param.param.name; });

TEST(SqliteStorageTest, ReportsAndCountsSurviveReopen) {
  const std::string path = TempDbPath("reopen");
  int64_t id = 0;
  {
    auto s = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewMetric("m"));
    ASSERT_TRUE(m.ok());
    id = m->id;
    ASSERT_TRUE((*s)->AppendReports({Row(id, 1, true, 5), Row(id, 2, false, 5)}).ok());
  }
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->ReportCount(), 2);
  absl::StatusOr<std::vector<CountRow>> counts = (*s)->ReadCounts(id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_EQ(*(*s)->IntegrityCheck(), "ok");
  // A retry after the restart is still recognised.
  absl::StatusOr<AppendResult> again = (*s)->AppendReports({Row(id, 1, true, 5)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->duplicates, 1);
}

TEST(SqliteStorageTest, OpenRefusesInMemoryPath) {
  auto s = SqliteStorage::Open({.path = ":memory:"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("path"));
}

TEST(SqliteStorageTest, OpenFailsForUnwritableDirectory) {
  auto s = SqliteStorage::Open({.path = "/nonexistent-dir/deniable.db"});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent-dir/deniable.db"));
}

TEST(SqliteStorageTest, SecondOpenOfTheSameDatabaseFailsNamingThePathAndTheHolder) {
  const std::string path = TempDbPath("one_writer");
  auto first = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SqliteStorage::Open({.path = path});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr(path));
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("pid ", getpid())));
  // The first storage is untouched and keeps working.
  absl::StatusOr<StoredMetric> m = (*first)->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*first)->AppendReports({Row(m->id, 1, true, 5)}).ok());
  first->reset();
  // Once the holder has closed, the database opens again.
  auto third = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(*(*third)->ReportCount(), 1);
}

TEST(SqliteErrorTest, FailuresThatMayPassAreUnavailableAndOnlyBugsAreInternal) {
  struct Case {
    int code;
    absl::StatusCode want;
  };
  for (const Case& c : {Case{SQLITE_FULL, absl::StatusCode::kUnavailable},
                        Case{SQLITE_IOERR, absl::StatusCode::kUnavailable},
                        Case{SQLITE_IOERR_WRITE, absl::StatusCode::kUnavailable},
                        Case{SQLITE_IOERR_FSYNC, absl::StatusCode::kUnavailable},
                        Case{SQLITE_BUSY, absl::StatusCode::kUnavailable},
                        Case{SQLITE_LOCKED, absl::StatusCode::kUnavailable},
                        Case{SQLITE_READONLY, absl::StatusCode::kUnavailable},
                        Case{SQLITE_CANTOPEN, absl::StatusCode::kUnavailable},
                        Case{SQLITE_NOMEM, absl::StatusCode::kUnavailable},
                        Case{SQLITE_CORRUPT, absl::StatusCode::kDataLoss},
                        Case{SQLITE_NOTADB, absl::StatusCode::kDataLoss},
                        Case{SQLITE_CONSTRAINT_PRIMARYKEY, absl::StatusCode::kAlreadyExists},
                        Case{SQLITE_MISUSE, absl::StatusCode::kInternal},
                        Case{SQLITE_ERROR, absl::StatusCode::kInternal}}) {
    const absl::Status s = SqliteError(nullptr, c.code, "writing");
    EXPECT_EQ(s.code(), c.want) << "sqlite code " << c.code << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("writing"));
  }
  EXPECT_THAT(SqliteError(nullptr, SQLITE_FULL, "commit").message(), HasSubstr("disk is full"));
}

}  // namespace
}  // namespace deniable::server
