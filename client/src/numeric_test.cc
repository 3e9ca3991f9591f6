// Numeric metrics on the device: ReportValue, clipping, alpha-point rounding with an alpha kept
// per metric, the memo per (metric, design version, level), the ledger and its cap, periods,
// the wire form of 1BitMean and dBitFlip, and the errors for a value of the wrong kind.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "client/src/testing/fake_transport.h"
#include "client/src/testing/fault_injecting_transport.h"
#include "client/src/testing/reporter_file_fixture.h"
#include "deniable/client/device_store.h"
#include "deniable/client/reporter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace numeric_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'001'234;
const double kLn3 = std::log(3.0);
// Ten cells of width 10 over [0, 100] ms.
const std::vector<double> kTens = {0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

class NumericReportTest : public testing::ReporterFileFixture {
 protected:
  NumericReportTest() : ReporterFileFixture(absl::FromUnixSeconds(kNow), 17, "num") {
    transport_->SetNumeric(v1::ONE_BIT_MEAN, kLn3, kTens);
  }
  // These tests are about the memo and the ledger unless they say otherwise: each ReportValue
  // stands for a report of a new period.
  std::unique_ptr<Reporter> MakeMemo(std::unique_ptr<DeviceStore> store = nullptr) {
    options_.one_report_per_period = false;
    return Make(std::move(store));
  }
  // A memory store whose alpha for "m" is `alpha`, so that levels are known in advance.
  static std::unique_ptr<DeviceStore> StoreWithAlpha(double alpha) {
    std::unique_ptr<DeviceStore> store = MakeMemoryDeviceStore();
    EXPECT_TRUE(store->SaveNumericAlpha("m", alpha).ok());
    return store;
  }
  MetricLedger LedgerOf(Reporter& reporter) {
    absl::StatusOr<std::map<std::string, MetricLedger>> ledger = reporter.Ledger();
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    return ledger.ok() && ledger->contains("m") ? ledger->at("m") : MetricLedger{};
  }
};

TEST_F(NumericReportTest, OneBitMeanSendsOneBitWithTheDesignFingerprintAndWindowFlags) {
  transport_->fingerprint = 0x0123456789abcdefULL;
  auto reporter = Make();
  std::string id;
  ASSERT_TRUE(reporter->ReportValue("m", 42.5, &id).ok());
  EXPECT_EQ(id.size(), 16u);
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_LE(sent[0].bit(), 1u);
  EXPECT_FALSE(sent[0].has_numeric());
  EXPECT_FALSE(sent[0].has_categorical());
  EXPECT_EQ(sent[0].design_version(), 1u);
  EXPECT_EQ(sent[0].design_fingerprint(), 0x0123456789abcdefULL);
  EXPECT_EQ(sent[0].report_id(), id);
  EXPECT_EQ(sent[0].event_time_seconds(), kNow - kNow % 3600);
  EXPECT_TRUE(sent[0].window_firsts().day());  // the device's first report of the metric
  EXPECT_TRUE(sent[0].window_firsts().month());
}

TEST_F(NumericReportTest, DBitFlipSendsDAscendingDistinctBucketsWithOneBitEach) {
  transport_->SetNumeric(v1::D_BIT_FLIP, 1.0, {0, 20, 40, 60, 80, 100}, 3);
  options_.one_report_per_period = false;
  std::set<uint32_t> seen;
  for (int d = 0; d < 200; ++d) {
    auto reporter = Make();
    ASSERT_TRUE(reporter->ReportValue("m", 70).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 200u);
  for (const v1::Report& r : sent) {
    ASSERT_TRUE(r.has_numeric());
    EXPECT_EQ(r.bit(), 0u);
    ASSERT_EQ(r.numeric().buckets_size(), 3);
    ASSERT_EQ(r.numeric().bits_size(), 3);
    for (int i = 0; i < 3; ++i) {
      EXPECT_LT(r.numeric().buckets(i), 5u);
      if (i > 0) {
        EXPECT_LT(r.numeric().buckets(i - 1), r.numeric().buckets(i));
      }
      seen.insert(r.numeric().buckets(i));
    }
  }
  EXPECT_EQ(seen.size(), 5u);  // every bucket gets sampled by some device
}

TEST_F(NumericReportTest, ValuesOutsideTheRangeAreClippedCountedAndReportedAsTheNearestEnd) {
  auto reporter = MakeMemo();
  ASSERT_TRUE(reporter->ReportValue("m", 150).ok());       // clipped to 100: level 10
  ASSERT_TRUE(reporter->ReportValue("m", 100).ok());       // level 10: the memoized report
  ASSERT_TRUE(reporter->ReportValue("m", -3).ok());        // clipped to 0: level 0
  ASSERT_TRUE(reporter->ReportValue("m", 0).ok());         // level 0: the memoized report
  ASSERT_TRUE(reporter->ReportValue("m", INFINITY).ok());  // clipped to 100
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.values_clipped, 3);
  EXPECT_EQ(ledger.reports_accepted, 5);
  EXPECT_EQ(ledger.randomizations, 2);
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->values_clipped, 3);
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 5u);
  EXPECT_EQ(sent[0].bit(), sent[1].bit());
  EXPECT_EQ(sent[0].bit(), sent[4].bit());
  EXPECT_EQ(sent[2].bit(), sent[3].bit());
}

// Alpha-point rounding with the kept alpha: 12 and 13 ms lie 0.2 and 0.3 into the cell
// [10, 20], below alpha = 0.5, so both round to the grid point 10 (level 1) and send one
// memoized bit; 17 ms (0.7 > alpha) rounds to 20 (level 2) and draws anew.
TEST_F(NumericReportTest, SameLevelSendsTheMemoizedReportAndANewLevelDrawsAndSpendsOnce) {
  auto reporter = MakeMemo(StoreWithAlpha(0.5));
  ASSERT_TRUE(reporter->ReportValue("m", 12).ok());
  EXPECT_EQ(LedgerOf(*reporter).randomizations, 1);
  for (double v : {13.0, 12.0, 10.0, 15.0}) ASSERT_TRUE(reporter->ReportValue("m", v).ok());
  MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.randomizations, 1);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, kLn3);
  ASSERT_TRUE(reporter->ReportValue("m", 17).ok());
  ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.randomizations, 2);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * kLn3);
  EXPECT_NEAR(ledger.epsilon_if_fresh, 6 * kLn3, 1e-12);
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 6u);
  for (size_t i = 1; i < 5; ++i) EXPECT_EQ(sent[i].bit(), sent[0].bit()) << i;
  std::set<std::string> ids;
  for (const v1::Report& r : sent) ids.insert(r.report_id());
  EXPECT_EQ(ids.size(), 6u);  // every report has its own id
}

TEST_F(NumericReportTest, TheLevelComesFromTheKeptAlpha) {
  for (const auto& [alpha, level] : {std::pair{0.3, 4}, std::pair{0.7, 3}}) {
    SCOPED_TRACE(alpha);
    std::unique_ptr<DeviceStore> store = StoreWithAlpha(alpha);
    DeviceStore* raw = store.get();
    auto reporter = MakeMemo(std::move(store));
    ASSERT_TRUE(reporter->ReportValue("m", 35).ok());  // 0.5 into [30, 40]
    EXPECT_TRUE(raw->LookupNumericMemo("m", 1, level)->has_value());
    EXPECT_EQ(raw->LookupNumericMemo("m", 1, 7 - level)->has_value(), false);
  }
}

TEST_F(NumericReportTest, DBitFlipMemoizesPerBucket) {
  transport_->SetNumeric(v1::D_BIT_FLIP, 1.0, {0, 20, 40, 60, 80, 100}, 2);
  auto reporter = MakeMemo();
  for (double v : {21.0, 39.9, 20.0, 55.0, 30.0}) ASSERT_TRUE(reporter->ReportValue("m", v).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 5u);
  for (size_t i : {1u, 2u, 4u}) {
    EXPECT_EQ(sent[i].numeric().SerializeAsString(), sent[0].numeric().SerializeAsString()) << i;
  }
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.randomizations, 2);  // buckets 1 and 2
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2.0);
}

TEST_F(NumericReportTest, AlphaIsDrawnOnceAndKeptInTheDeviceFileAcrossRestarts) {
  options_.one_report_per_period = false;
  {
    auto reporter = Make(OpenFile());
    ASSERT_TRUE(reporter->ReportValue("m", 35).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  std::optional<double> alpha;
  {
    std::unique_ptr<DeviceStore> file = OpenFile();
    ASSERT_NE(file, nullptr);
    alpha = *file->LoadNumericAlpha("m");
  }
  ASSERT_TRUE(alpha.has_value());
  EXPECT_GE(*alpha, 0.0);
  EXPECT_LT(*alpha, 1.0);
  {
    auto reporter = Make(OpenFile());
    for (double v : {35.0, 36.0, 31.0}) ASSERT_TRUE(reporter->ReportValue("m", v).ok());
    ASSERT_TRUE(reporter->Flush().ok());
    // 35 after the restart: the same level (same alpha), so the memoized bit.
    EXPECT_EQ(transport_->SentReports()[1].bit(), transport_->SentReports()[0].bit());
  }
  std::unique_ptr<DeviceStore> file = OpenFile();
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(*file->LoadNumericAlpha("m"), alpha);
  // Levels 3 and 4 are the only ones 31..36 can round to: at most two draws in all.
  const MetricLedger ledger = file->ReadLedger()->at("m");
  EXPECT_LE(ledger.randomizations, 2);
  EXPECT_EQ(ledger.reports_accepted, 4);
}

TEST_F(NumericReportTest, TheCapRefusesANewLevelButNotAMemoizedOne) {
  options_.max_epsilon_per_metric = 2 * kLn3 + 0.01;
  auto reporter = MakeMemo(StoreWithAlpha(0.5));
  ASSERT_TRUE(reporter->ReportValue("m", 12).ok());       // level 1
  ASSERT_TRUE(reporter->ReportValue("m", 27).ok());       // level 3
  absl::Status refused = reporter->ReportValue("m", 55);  // level 5: a third draw
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("max_epsilon_per_metric"));
  EXPECT_TRUE(reporter->ReportValue("m", 13).ok());  // level 1: memoized, spends nothing
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.reports_accepted, 3);
  EXPECT_EQ(ledger.randomizations, 2);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * kLn3);
  EXPECT_EQ(reporter->pending(), 3u);
}

TEST_F(NumericReportTest, OneReportPerPeriodAsForOtherMetrics) {
  transport_->reporting_period_seconds = 3600;
  auto reporter = Make();  // the contract: one report per period
  std::string id;
  ASSERT_TRUE(reporter->ReportValue("m", 12, &id).ok());
  EXPECT_EQ(id.size(), 16u);
  ASSERT_TRUE(reporter->ReportValue("m", 95, &id).ok());  // same period: nothing queued
  EXPECT_TRUE(id.empty());
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(reporter->ReportValue("m", 95).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_TRUE(sent[0].window_firsts().day());
  EXPECT_FALSE(sent[1].window_firsts().day());  // the same UTC day
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.reports_repeated_in_period, 1);
  EXPECT_EQ(ledger.reports_accepted, 2);
}

TEST_F(NumericReportTest, FreshPerPeriodDrawsEachPeriodUnderTheCap) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  transport_->reporting_period_seconds = 3600;
  auto reporter = Make();
  EXPECT_EQ(reporter->ReportValue("m", 12).code(), absl::StatusCode::kFailedPrecondition);
  options_.max_epsilon_per_metric = 2 * kLn3 + 0.01;
  reporter = Make();
  ASSERT_TRUE(reporter->ReportValue("m", 12).ok());
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(reporter->ReportValue("m", 12).ok());
  clock_.Advance(absl::Hours(1));
  EXPECT_EQ(reporter->ReportValue("m", 12).code(), absl::StatusCode::kResourceExhausted);
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.randomizations, 2);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * kLn3);
}

TEST_F(NumericReportTest, PerReportLabelsAreSent) {
  options_.labels = {{"region", "N"}};
  auto reporter = Make();
  ASSERT_TRUE(reporter->ReportValue("m", 12, {{"app_version", "4.2"}}).ok());
  EXPECT_EQ(reporter->ReportValue("m", 12, {{"Bad Key", "x"}}).code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].labels().at("app_version"), "4.2");
  EXPECT_EQ(sent[0].labels().at("region"), "N");
}

TEST_F(NumericReportTest, AnswersOfTheWrongKindAreInvalidArgumentNamingTheMetric) {
  auto reporter = Make();
  for (const absl::Status& s : {reporter->Report("m", true), reporter->Report("m", "Y"),
                                reporter->ReportCategoryIndex("m", 0)}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_THAT(s.message(), HasSubstr("metric: \"m\" is a numeric metric"));
    EXPECT_THAT(s.message(),
                HasSubstr("ReportValue(metric, value) (C: "
                          "deniable_reporter_report_value; Java, Kotlin: reportValue)"));
  }
  absl::Status nan = reporter->ReportValue("m", NAN);
  EXPECT_EQ(nan.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(nan.message(), HasSubstr("value"));
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(LedgerOf(*reporter).reports_accepted, 0);

  transport_ = std::make_shared<testing::FakeTransport>();  // "m" is two coins, yes/no
  reporter = Make();
  absl::Status yes_no = reporter->ReportValue("m", 12);
  EXPECT_EQ(yes_no.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(yes_no.message(), HasSubstr("metric: \"m\" is a yes/no metric"));
  EXPECT_THAT(yes_no.message(), ::testing::Not(HasSubstr("12")));  // never the value

  transport_->SetCategorical({"Y", "N"}, CategoricalMechanism::kDirectEncoding, kLn3);
  reporter = Make();
  absl::Status categorical = reporter->ReportValue("m", 12);
  EXPECT_EQ(categorical.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(categorical.message(), HasSubstr("metric: \"m\" has categories (Y, N)"));
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(NumericReportTest, ADesignWhoseEdgesAreNotTheRangeIsRefused) {
  transport_->range->set_hi(200);
  auto reporter = Make();
  absl::Status status = reporter->ReportValue("m", 12);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("range"));
  transport_->range.reset();  // a numeric design without its range
  reporter = Make();
  EXPECT_EQ(reporter->ReportValue("m", 12).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reporter->pending(), 0u);
}

// Across many devices (fresh stores, so fresh alphas), the memoized 1BitMean bit of the value
// 30 on [0, 100] with the grid {0, 100} is 1 with probability
// 1/(e^eps + 1) + 0.3 (e^eps - 1)/(e^eps + 1) = 0.4 at eps = ln 3 (DKY17 equation 1): alpha-point
// rounding keeps the channel unbiased. Fixed seed; bounds of 5 standard deviations.
TEST_F(NumericReportTest, MemoizedOneBitMeanBitsFollowTheChannelOverDevices) {
  transport_->SetNumeric(v1::ONE_BIT_MEAN, kLn3, {0, 100});
  constexpr int kDevices = 4000;
  for (int d = 0; d < kDevices; ++d) {
    auto reporter = MakeMemo();
    ASSERT_TRUE(reporter->ReportValue("m", 30).ok());
    ASSERT_TRUE(reporter->ReportValue("m", 30).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 2u * kDevices);
  int ones = 0;
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(sent[2 * d].bit(), sent[2 * d + 1].bit());
    ones += static_cast<int>(sent[2 * d].bit());
  }
  const double p = 0.25 + 0.3 * 0.5;
  EXPECT_NEAR(ones, p * kDevices, 5 * std::sqrt(kDevices * p * (1 - p)));
}

// The delivery contract applies unchanged: a report the collector rejects as randomized with
// another design (FAILED_PRECONDITION) is dropped, the numeric memo of that version is
// forgotten, and the next report of the same level draws again with the design fetched anew.
TEST(NumericDeliveryTest, DesignMismatchForgetsTheNumericMemoAndRefetches) {
  auto transport = std::make_shared<testing::FaultInjectingTransport>();
  transport->SetNumeric(v1::ONE_BIT_MEAN, kLn3, kTens);
  FakeClock clock(absl::FromUnixSeconds(kNow));
  std::mt19937_64 gen(3);
  ReporterOptions options;
  options.background_sending = false;
  options.one_report_per_period = false;
  auto reporter = Reporter::CreateForTesting(transport, options, gen, &clock);
  std::string id;
  ASSERT_TRUE(reporter->ReportValue("m", 44, &id).ok());
  transport->Reject(id, {.code = absl::StatusCode::kFailedPrecondition, .permanent = true});
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Stats()->counters.dropped_design_mismatch, 1);
  EXPECT_EQ(transport->design_calls(), 2);
  ASSERT_TRUE(reporter->ReportValue("m", 44).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(reporter->Ledger()->at("m").randomizations, 2);
  EXPECT_EQ(transport->stored(), 1);
}

}  // namespace numeric_test
}  // namespace
}  // namespace deniable::client
