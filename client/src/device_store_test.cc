// The two device stores behave alike; the SQLite one also persists and refuses foreign files.
#include "deniable/client/device_store.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace device_store_test {

std::string TempPath(std::string name) {
  std::replace(name.begin(), name.end(), '/', '_');  // parameterized names hold a '/'
  std::string path = absl::StrCat(::testing::TempDir(), "/store_", getpid(), "_", name, ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  return path;
}

ReportCommit Commit(const std::string& metric, const std::string& id) {
  ReportCommit c;
  c.report.set_metric(metric);
  c.report.set_report_id(id);
  c.report.set_bit(1);
  c.epsilon = 1.5;
  c.randomized = true;
  c.period_start_seconds = 86400;
  c.max_queued_reports = 100;
  return c;
}

class DeviceStoreTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      auto store = OpenSqliteDeviceStore(
          {.path = TempPath(::testing::UnitTest::GetInstance()->current_test_info()->name())});
      ASSERT_TRUE(store.ok()) << store.status();
      store_ = *std::move(store);
    } else {
      store_ = MakeMemoryDeviceStore();
    }
  }
  std::unique_ptr<DeviceStore> store_;
};

TEST_P(DeviceStoreTest, QueueIsOldestFirstAndRemovalUpdatesLedgerAndCounters) {
  ASSERT_TRUE(store_->CommitReport(Commit("a", "1")).ok());
  ASSERT_TRUE(store_->CommitReport(Commit("b", "2")).ok());
  ASSERT_TRUE(store_->CommitReport(Commit("a", "3")).ok());
  auto batch = store_->PeekOldest(2);
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->size(), 2u);
  EXPECT_EQ((*batch)[0].report.report_id(), "1");
  EXPECT_EQ((*batch)[1].report.report_id(), "2");
  DeliveryCounters add;
  add.acknowledged = 2;
  add.duplicates = 1;
  ASSERT_TRUE(store_->RemoveReports({(*batch)[0].sequence, (*batch)[1].sequence}, true, add).ok());
  EXPECT_EQ(*store_->QueueSize(), 1);
  auto ledger = store_->ReadLedger();
  ASSERT_TRUE(ledger.ok());
  EXPECT_EQ(ledger->at("a").reports_accepted, 2);
  EXPECT_EQ(ledger->at("a").reports_acknowledged, 1);
  EXPECT_DOUBLE_EQ(ledger->at("a").epsilon_spent, 3.0);
  EXPECT_EQ(ledger->at("b").reports_acknowledged, 1);
  EXPECT_EQ(store_->ReadCounters()->acknowledged, 2);
  EXPECT_EQ(store_->ReadCounters()->duplicates, 1);
}

TEST_P(DeviceStoreTest, DroppedReportsAreNotCountedAsAcknowledged) {
  ASSERT_TRUE(store_->CommitReport(Commit("a", "1")).ok());
  auto batch = store_->PeekOldest(10);
  DeliveryCounters add;
  add.dropped_rejected = 1;
  ASSERT_TRUE(store_->RemoveReports({(*batch)[0].sequence}, false, add).ok());
  EXPECT_EQ(store_->ReadLedger()->at("a").reports_acknowledged, 0);
  EXPECT_EQ(store_->ReadCounters()->dropped_rejected, 1);
  EXPECT_EQ(*store_->QueueSize(), 0);
}

TEST_P(DeviceStoreTest, FullQueueEvictsTheOldest) {
  for (int i = 0; i < 5; ++i) {
    ReportCommit c = Commit("a", std::to_string(i));
    c.max_queued_reports = 2;
    ASSERT_TRUE(store_->CommitReport(c).ok());
  }
  auto batch = store_->PeekOldest(10);
  ASSERT_EQ(batch->size(), 2u);
  EXPECT_EQ((*batch)[0].report.report_id(), "3");
  EXPECT_EQ((*batch)[1].report.report_id(), "4");
  EXPECT_EQ(store_->ReadCounters()->dropped_queue_full, 3);
}

TEST_P(DeviceStoreTest, MemoEntryIsKeyedByMetricVersionAndValue) {
  ReportCommit c = Commit("a", "1");
  c.memo = ReportCommit::MemoEntry{3, true, false};
  ASSERT_TRUE(store_->CommitReport(c).ok());
  EXPECT_EQ(*store_->LookupMemo("a", 3, true), std::optional<bool>(false));
  EXPECT_EQ(*store_->LookupMemo("a", 3, false), std::nullopt);
  EXPECT_EQ(*store_->LookupMemo("a", 2, true), std::nullopt);
  EXPECT_EQ(*store_->LookupMemo("b", 3, true), std::nullopt);
}

TEST_P(DeviceStoreTest, CategoryMemoIsKeyedByMetricVersionAndCategoryAndForgottenByVersion) {
  ReportCommit c = Commit("a", "1");
  c.report.set_bit(0);
  c.report.mutable_categorical()->set_bits("\x05");
  c.category_memo = ReportCommit::CategoryMemoEntry{3, 2, c.report.categorical()};
  ASSERT_TRUE(store_->CommitReport(c).ok());
  c.category_memo = ReportCommit::CategoryMemoEntry{4, 2, c.report.categorical()};
  ASSERT_TRUE(store_->CommitReport(c).ok());
  absl::StatusOr<std::optional<v1::CategoricalReport>> memo = store_->LookupCategoryMemo("a", 3, 2);
  ASSERT_TRUE(memo.ok());
  ASSERT_TRUE(memo->has_value());
  EXPECT_EQ((*memo)->bits(), "\x05");
  EXPECT_EQ(*store_->LookupCategoryMemo("a", 3, 1), std::nullopt);
  EXPECT_EQ(*store_->LookupCategoryMemo("b", 3, 2), std::nullopt);
  EXPECT_EQ(*store_->LookupMemo("a", 3, false), std::nullopt);  // bits and categories apart
  ASSERT_TRUE(store_->ForgetMemo("a", 3).ok());
  EXPECT_EQ(*store_->LookupCategoryMemo("a", 3, 2), std::nullopt);
  EXPECT_TRUE(store_->LookupCategoryMemo("a", 4, 2)->has_value());  // another version stays
  EXPECT_EQ(*store_->QueueSize(), 2);
  EXPECT_EQ(store_->PeekOldest(1)->at(0).report.categorical().bits(), "\x05");
}

TEST_P(DeviceStoreTest, NumericMemoIsKeyedByMetricVersionAndLevelAndForgottenByVersion) {
  ReportCommit c = Commit("n", "1");
  c.report.set_bit(0);
  c.report.mutable_numeric()->add_buckets(2);
  c.report.mutable_numeric()->add_bits(true);
  v1::Report answer;
  *answer.mutable_numeric() = c.report.numeric();
  c.numeric_memo = ReportCommit::NumericMemoEntry{3, 2, answer};
  c.value_clipped = true;
  ASSERT_TRUE(store_->CommitReport(c).ok());
  c.numeric_memo = ReportCommit::NumericMemoEntry{4, 2, answer};
  c.value_clipped = false;
  ASSERT_TRUE(store_->CommitReport(c).ok());
  absl::StatusOr<std::optional<v1::Report>> memo = store_->LookupNumericMemo("n", 3, 2);
  ASSERT_TRUE(memo.ok()) << memo.status();
  ASSERT_TRUE(memo->has_value());
  EXPECT_EQ((*memo)->numeric().buckets(0), 2u);
  EXPECT_TRUE((*memo)->numeric().bits(0));
  EXPECT_EQ(*store_->LookupNumericMemo("n", 3, 1), std::nullopt);
  EXPECT_EQ(*store_->LookupNumericMemo("m", 3, 2), std::nullopt);
  EXPECT_EQ(*store_->LookupCategoryMemo("n", 3, 2), std::nullopt);  // kinds apart
  EXPECT_EQ(store_->ReadLedger()->at("n").values_clipped, 1);
  ASSERT_TRUE(store_->ForgetMemo("n", 3).ok());
  EXPECT_EQ(*store_->LookupNumericMemo("n", 3, 2), std::nullopt);
  EXPECT_TRUE(store_->LookupNumericMemo("n", 4, 2)->has_value());  // another version stays
}

TEST_P(DeviceStoreTest, NumericAlphaIsKeptOncePerMetricAndOutlivesForgetMemo) {
  EXPECT_EQ(*store_->LoadNumericAlpha("n"), std::nullopt);
  ASSERT_TRUE(store_->SaveNumericAlpha("n", 0.25).ok());
  ASSERT_TRUE(store_->SaveNumericAlpha("n", 0.75).ok());  // the first alpha stays
  ASSERT_TRUE(store_->SaveNumericAlpha("o", 0.5).ok());
  EXPECT_EQ(*store_->LoadNumericAlpha("n"), std::optional<double>(0.25));
  EXPECT_EQ(*store_->LoadNumericAlpha("o"), std::optional<double>(0.5));
  ASSERT_TRUE(store_->ForgetMemo("n", 1).ok());
  EXPECT_EQ(*store_->LoadNumericAlpha("n"), std::optional<double>(0.25));
}

TEST_P(DeviceStoreTest, StringMemoIsKeyedByMetricVersionAndValueKeyAndForgottenByVersion) {
  const std::string key = HeavyHittersValueKey("s", 3, 7, "value");
  EXPECT_EQ(key.size(), 32u);
  EXPECT_NE(key, HeavyHittersValueKey("s", 3, 8, "value"));  // salt, version, metric, value
  EXPECT_NE(key, HeavyHittersValueKey("s", 4, 7, "value"));
  EXPECT_NE(key, HeavyHittersValueKey("t", 3, 7, "value"));
  EXPECT_NE(key, HeavyHittersValueKey("s", 3, 7, "valud"));
  EXPECT_EQ(key, HeavyHittersValueKey("s", 3, 7, "value"));
  ReportCommit c = Commit("s", "1");
  c.report.mutable_heavy_hitters()->set_group(5);
  c.report.mutable_heavy_hitters()->set_row(2);
  c.report.mutable_heavy_hitters()->set_coefficient(9);
  v1::Report answer;
  answer.set_bit(1);
  *answer.mutable_heavy_hitters() = c.report.heavy_hitters();
  c.string_memo = ReportCommit::StringMemoEntry{3, key, answer};
  ASSERT_TRUE(store_->CommitReport(c).ok());
  c.string_memo = ReportCommit::StringMemoEntry{4, key, answer};
  ASSERT_TRUE(store_->CommitReport(c).ok());
  absl::StatusOr<std::optional<v1::Report>> memo = store_->LookupStringMemo("s", 3, key);
  ASSERT_TRUE(memo.ok()) << memo.status();
  ASSERT_TRUE(memo->has_value());
  EXPECT_EQ((*memo)->bit(), 1u);
  EXPECT_EQ((*memo)->heavy_hitters().group(), 5u);
  EXPECT_EQ((*memo)->heavy_hitters().coefficient(), 9u);
  EXPECT_EQ(*store_->LookupStringMemo("s", 3, HeavyHittersValueKey("s", 3, 7, "other")),
            std::nullopt);
  EXPECT_EQ(*store_->LookupStringMemo("t", 3, key), std::nullopt);
  ASSERT_TRUE(store_->ForgetMemo("s", 3).ok());
  EXPECT_EQ(*store_->LookupStringMemo("s", 3, key), std::nullopt);
  EXPECT_TRUE(store_->LookupStringMemo("s", 4, key)->has_value());  // another version stays
}

TEST_P(DeviceStoreTest, HeavyHittersGroupIsKeptOncePerDesignAndOutlivesForgetMemo) {
  const uint64_t salt = 0xfedcba9876543210ULL;  // above INT64_MAX: stored as its 64 bits
  EXPECT_EQ(*store_->LoadHeavyHittersGroup("s", 1, salt), std::nullopt);
  ASSERT_TRUE(store_->SaveHeavyHittersGroup("s", 1, salt, 7).ok());
  ASSERT_TRUE(store_->SaveHeavyHittersGroup("s", 1, salt, 3).ok());  // the first group stays
  ASSERT_TRUE(store_->SaveHeavyHittersGroup("s", 2, salt, 0).ok());
  ASSERT_TRUE(store_->SaveHeavyHittersGroup("s", 1, salt + 1, 4).ok());
  EXPECT_EQ(*store_->LoadHeavyHittersGroup("s", 1, salt), std::optional<uint32_t>(7));
  EXPECT_EQ(*store_->LoadHeavyHittersGroup("s", 2, salt), std::optional<uint32_t>(0));
  EXPECT_EQ(*store_->LoadHeavyHittersGroup("s", 1, salt + 1), std::optional<uint32_t>(4));
  EXPECT_EQ(*store_->LoadHeavyHittersGroup("t", 1, salt), std::nullopt);
  ASSERT_TRUE(store_->ForgetMemo("s", 1).ok());
  EXPECT_EQ(*store_->LoadHeavyHittersGroup("s", 1, salt), std::optional<uint32_t>(7));
}

TEST_P(DeviceStoreTest, PeriodCountRestartsInANewPeriod) {
  ReportCommit c = Commit("a", "1");
  ASSERT_TRUE(store_->CommitReport(c).ok());
  ASSERT_TRUE(store_->CommitReport(c).ok());
  c.period_start_seconds = 2 * 86400;
  ASSERT_TRUE(store_->CommitReport(c).ok());
  const MetricLedger l = store_->ReadLedger()->at("a");
  EXPECT_EQ(l.period_start_seconds, 2 * 86400);
  EXPECT_EQ(l.reports_this_period, 1);
  EXPECT_EQ(l.reports_accepted, 3);
}

INSTANTIATE_TEST_SUITE_P(MemoryAndSqlite, DeviceStoreTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Sqlite" : "Memory"; });

TEST(SqliteDeviceStoreTest, StateSurvivesReopening) {
  const std::string path = TempPath("reopen");
  {
    auto store = OpenSqliteDeviceStore({.path = path});
    ASSERT_TRUE(store.ok());
    ReportCommit c = Commit("a", "1");
    c.memo = ReportCommit::MemoEntry{1, false, true};
    ASSERT_TRUE((*store)->CommitReport(c).ok());
    ASSERT_TRUE((*store)->SaveDesign("a", "design-bytes").ok());
    ASSERT_TRUE((*store)->SaveNumericAlpha("n", 0.625).ok());
  }
  auto store = OpenSqliteDeviceStore({.path = path});
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->LoadNumericAlpha("n"), std::optional<double>(0.625));
  EXPECT_EQ(*(*store)->QueueSize(), 1);
  EXPECT_EQ(*(*store)->LookupMemo("a", 1, false), std::optional<bool>(true));
  EXPECT_EQ(*(*store)->LoadDesign("a"), std::optional<std::string>("design-bytes"));
}

// A device file written by main at c83eab3 (schema 1, testdata/README.md) opens with its state
// intact and gains the category memo.
TEST(SqliteDeviceStoreTest, MigratesAStoreWrittenBySchemaOne) {
  const std::string path = TempPath("schema1");
  {
    std::ifstream in(std::string(DENIABLE_CLIENT_TESTDATA) + "/device_store_schema1.db",
                     std::ios::binary);
    ASSERT_TRUE(in.good());
    std::ofstream(path, std::ios::binary) << in.rdbuf();
  }
  {
    auto store = OpenSqliteDeviceStore({.path = path});
    ASSERT_TRUE(store.ok()) << store.status();
    const MetricLedger l = (*store)->ReadLedger()->at("m");
    EXPECT_EQ(l.reports_accepted, 1);
    EXPECT_EQ(l.reports_acknowledged, 1);
    EXPECT_EQ(l.randomizations, 1);
    EXPECT_DOUBLE_EQ(l.epsilon_spent, std::log(3.0));
    EXPECT_EQ(l.last_report_seconds, 0);  // unknown: the next report is first in every window
    EXPECT_TRUE((*store)->LookupMemo("m", 1, true)->has_value());
    EXPECT_FALSE((*store)->LookupMemo("m", 1, false)->has_value());
    absl::StatusOr<std::optional<std::string>> design = (*store)->LoadDesign("m");
    ASSERT_TRUE(design.ok() && design->has_value());
    v1::GetDesignResponse response;
    ASSERT_TRUE(response.ParseFromString(**design));
    EXPECT_EQ(response.design().version(), 1u);
    EXPECT_EQ(*(*store)->QueueSize(), 0);
    EXPECT_EQ((*store)->ReadCounters()->acknowledged, 1);
    EXPECT_EQ(*(*store)->LookupCategoryMemo("m", 1, 0), std::nullopt);
    ReportCommit c = Commit("vote", "1");
    c.report.mutable_categorical()->set_category(3);
    c.category_memo = ReportCommit::CategoryMemoEntry{1, 2, c.report.categorical()};
    c.report_time_seconds = 1793577600;
    ASSERT_TRUE((*store)->CommitReport(c).ok());
  }
  auto store = OpenSqliteDeviceStore({.path = path});  // migrated once, opens again
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->ReadLedger()->at("vote").last_report_seconds, 1793577600);
  EXPECT_EQ((*(*store)->LookupCategoryMemo("vote", 1, 2))->category(), 3u);
  EXPECT_EQ(*(*store)->QueueSize(), 1);
  EXPECT_TRUE((*store)->LookupMemo("m", 1, true)->has_value());
}

// A device file written by main at 100683c (schema 3: a yes/no memo, a category memo, two
// ledger rows; testdata/README.md) opens with its state intact and gains the numeric memo, the
// numeric alpha and the ledger's values_clipped.
TEST(SqliteDeviceStoreTest, MigratesAStoreWrittenBySchemaThree) {
  const std::string path = TempPath("schema3");
  {
    std::ifstream in(std::string(DENIABLE_CLIENT_TESTDATA) + "/device_store_schema3.db",
                     std::ios::binary);
    ASSERT_TRUE(in.good());
    std::ofstream(path, std::ios::binary) << in.rdbuf();
  }
  {
    auto store = OpenSqliteDeviceStore({.path = path});
    ASSERT_TRUE(store.ok()) << store.status();
    const std::map<std::string, MetricLedger> ledger = *(*store)->ReadLedger();
    ASSERT_EQ(ledger.size(), 2u);
    EXPECT_EQ(ledger.at("m").reports_acknowledged, 1);
    EXPECT_DOUBLE_EQ(ledger.at("m").epsilon_spent, std::log(3.0));
    EXPECT_EQ(ledger.at("vote").randomizations, 1);
    EXPECT_DOUBLE_EQ(ledger.at("vote").epsilon_spent, 1.0);
    EXPECT_GT(ledger.at("vote").last_report_seconds, 0);
    EXPECT_EQ(ledger.at("vote").values_clipped, 0);
    EXPECT_TRUE((*store)->LookupMemo("m", 1, true)->has_value());
    EXPECT_TRUE((*store)->LookupCategoryMemo("vote", 1, 2)->has_value());
    EXPECT_TRUE((*store)->LoadDesign("vote")->has_value());
    EXPECT_EQ((*store)->ReadCounters()->acknowledged, 2);
    EXPECT_EQ(*(*store)->LookupNumericMemo("n", 1, 0), std::nullopt);
    EXPECT_EQ(*(*store)->LoadNumericAlpha("n"), std::nullopt);
    ReportCommit c = Commit("n", "1");
    v1::Report answer;
    answer.set_bit(1);
    c.numeric_memo = ReportCommit::NumericMemoEntry{1, 4, answer};
    c.value_clipped = true;
    ASSERT_TRUE((*store)->CommitReport(c).ok());
    ASSERT_TRUE((*store)->SaveNumericAlpha("n", 0.5).ok());
  }
  auto store = OpenSqliteDeviceStore({.path = path});  // migrated once, opens again
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*(*store)->LookupNumericMemo("n", 1, 4))->bit(), 1u);
  EXPECT_EQ(*(*store)->LoadNumericAlpha("n"), std::optional<double>(0.5));
  EXPECT_EQ((*store)->ReadLedger()->at("n").values_clipped, 1);
  EXPECT_TRUE((*store)->LookupCategoryMemo("vote", 1, 2)->has_value());
  EXPECT_EQ(*(*store)->QueueSize(), 1);
  // Schema 5's tables were added too (heavy hitters).
  EXPECT_EQ(*(*store)->LookupStringMemo("s", 1, HeavyHittersValueKey("s", 1, 0, "v")),
            std::nullopt);
  ASSERT_TRUE((*store)->SaveHeavyHittersGroup("s", 1, 0, 2).ok());
  EXPECT_EQ(*(*store)->LoadHeavyHittersGroup("s", 1, 0), std::optional<uint32_t>(2));
}

TEST(SqliteDeviceStoreTest, RefusesAFileThatIsNotADeviceStore) {
  const std::string path = TempPath("foreign");
  std::ofstream(path) << "not a database, just text that is long enough to have a header.....";
  auto store = OpenSqliteDeviceStore({.path = path});
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), ::testing::HasSubstr(path));
}

TEST(SqliteDeviceStoreTest, RejectsEmptyPathAndMissingDirectory) {
  EXPECT_EQ(OpenSqliteDeviceStore({.path = ""}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenSqliteDeviceStore({.path = "/nonexistent-dir/x.db"}).status().code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace device_store_test
}  // namespace
}  // namespace deniable::client
