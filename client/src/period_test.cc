// One report per metric and period (reporter.h, "One report per period"): repeated Report()
// calls change nothing on the wire and are counted; fresh randomization spends epsilon per
// period up to the app's cap; the period state survives a restart with the SQLite store.
#include <unistd.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/src/testing/fake_transport.h"
#include "client/src/testing/reporter_file_fixture.h"
#include "deniable/client/reporter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace period_test {

using ::deniable::client::testing::FakeTransport;
using ::testing::HasSubstr;

constexpr int64_t kDay = 86400;
constexpr int64_t kDayStart = 1'699'920'000;  // 2023-11-14 00:00 UTC, a multiple of kDay
const double kLn3 = std::log(3.0);

class PeriodTest : public testing::ReporterFileFixture {
 protected:
  PeriodTest() : ReporterFileFixture(absl::FromUnixSeconds(kDayStart + 5 * 3600), 11, "period") {}
  int ReportsSent() {
    int n = 0;
    for (const auto& s : transport_->submits) n += s.reports_size();
    return n;
  }
};

TEST_F(PeriodTest, KReportCallsInOnePeriodQueueOneReport) {
  std::vector<std::string> infos;
  options_.log = [&infos](LogLevel level, absl::string_view message) {
    if (level == LogLevel::kInfo) infos.emplace_back(message);
  };
  auto reporter = Make();
  std::string first_id;
  ASSERT_TRUE(reporter->Report("m", true, &first_id).ok());
  EXPECT_EQ(first_id.size(), 16u);
  for (int i = 0; i < 6; ++i) {
    std::string id = "stale";
    ASSERT_TRUE(reporter->Report("m", i % 2 == 0, &id).ok());
    EXPECT_TRUE(id.empty()) << "a repeated call queues nothing, so it has no report id";
    clock_.Advance(absl::Hours(2));  // still the same day: 05:00 + 6 * 2 h = 17:00
  }
  EXPECT_EQ(reporter->pending(), 1u);
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(ReportsSent(), 1);
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.reports_accepted, 1);
  EXPECT_EQ(m.reports_repeated_in_period, 6);
  EXPECT_EQ(m.randomizations, 1);
  EXPECT_DOUBLE_EQ(m.epsilon_spent, kLn3);
  // Each repeated call is said as the other SDKs say it ("already reported this period; nothing
  // sent"), not only an OK with an empty id.
  EXPECT_EQ(std::count(infos.begin(), infos.end(),
                       "metric \"m\": already reported this period; nothing sent"),
            6);
}

TEST_F(PeriodTest, TheNextPeriodQueuesOneMoreWithTheMemoizedBit) {
  auto reporter = Make();
  for (int day = 0; day < 4; ++day) {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
    ASSERT_EQ(reporter->pending(), 1u) << "day " << day;
    ASSERT_TRUE(reporter->Flush().ok());
    clock_.Advance(absl::Hours(24));
  }
  std::vector<uint32_t> bits = SentBits();
  ASSERT_EQ(bits.size(), 4u);
  EXPECT_EQ(std::count(bits.begin(), bits.end(), bits[0]), 4);
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.reports_accepted, 4);
  EXPECT_EQ(m.reports_repeated_in_period, 8);
  EXPECT_EQ(m.randomizations, 1);
}

TEST_F(PeriodTest, ThePeriodComesFromTheMetricsDesign) {
  transport_->reporting_period_seconds = 3600;
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());  // 05:00
  clock_.Advance(absl::Minutes(59));
  ASSERT_TRUE(reporter->Report("m", true).ok());  // 05:59: same hour
  EXPECT_EQ(reporter->pending(), 1u);
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(reporter->Report("m", true).ok());  // 06:00: a new period
  EXPECT_EQ(reporter->pending(), 2u);
}

TEST_F(PeriodTest, AnOlderServersZeroPeriodMeansADayAlignedToTheEpoch) {
  transport_->reporting_period_seconds = 0;
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());  // 05:00
  clock_.Advance(absl::Hours(18) + absl::Minutes(59));
  ASSERT_TRUE(reporter->Report("m", true).ok());  // 23:59 the same day
  EXPECT_EQ(reporter->pending(), 1u);
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(reporter->Report("m", true).ok());  // 00:00 the next day
  EXPECT_EQ(reporter->pending(), 2u);
}

TEST_F(PeriodTest, FreshRandomizationDrawsAnewEachPeriodAndSpendsEpsilonEachTime) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  options_.max_epsilon_per_metric = std::numeric_limits<double>::infinity();
  options_.max_report_age = absl::InfiniteDuration();  // 200 days of reports, all kept
  constexpr int kPeriods = 200;
  auto reporter = Make();
  for (int day = 0; day < kPeriods; ++day) {
    ASSERT_TRUE(reporter->Report("m", true).ok());
    ASSERT_TRUE(reporter->Report("m", true).ok());  // repeated: no new draw
    clock_.Advance(absl::Hours(24));
  }
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<uint32_t> bits = SentBits();
  ASSERT_EQ(bits.size(), static_cast<size_t>(kPeriods));
  // Fixed seed: a true "yes" gives 1 with probability 3/4 in each period independently; both
  // bits occur (a memoized metric would send one bit 200 times). Bound: 5 sd of the binomial.
  const auto ones = std::count(bits.begin(), bits.end(), 1u);
  EXPECT_GT(ones, 0);
  EXPECT_LT(ones, kPeriods);
  EXPECT_NEAR(ones, 0.75 * kPeriods, 5 * std::sqrt(kPeriods * 0.75 * 0.25));
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.randomizations, kPeriods);
  EXPECT_NEAR(m.epsilon_spent, kPeriods * kLn3, 1e-9);
  EXPECT_EQ(m.reports_repeated_in_period, kPeriods);
}

TEST_F(PeriodTest, FreshRandomizationStopsAtTheAppsEpsilonCap) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  options_.max_epsilon_per_metric = 3 * kLn3 + 1e-9;
  auto reporter = Make();
  for (int day = 0; day < 3; ++day) {
    ASSERT_TRUE(reporter->Report("m", day % 2 == 0).ok()) << day;
    clock_.Advance(absl::Hours(24));
  }
  absl::Status refused = reporter->Report("m", true);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(refused.message(), HasSubstr("max_epsilon_per_metric"));
  EXPECT_EQ(reporter->pending(), 3u);  // nothing queued past the cap
  clock_.Advance(absl::Hours(24));
  EXPECT_EQ(reporter->Report("m", true).code(), absl::StatusCode::kResourceExhausted);
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.randomizations, 3);
  EXPECT_NEAR(m.epsilon_spent, 3 * kLn3, 1e-9);
}

TEST_F(PeriodTest, TheCapAlsoBoundsTheDrawsOfAMemoizedMetric) {
  options_.max_epsilon_per_metric = 1.5 * kLn3;  // room for one draw of two-coin
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  clock_.Advance(absl::Hours(24));
  ASSERT_TRUE(reporter->Report("m", true).ok());  // memoized bit: no new spending
  clock_.Advance(absl::Hours(24));
  EXPECT_EQ(reporter->Report("m", false).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(reporter->pending(), 2u);
}

TEST_F(PeriodTest, FreshRandomizationWithoutACapIsRefused) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  auto reporter = Make();
  absl::Status s = reporter->Report("m", true);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("max_epsilon_per_metric"));
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(PeriodTest, NegativeOrNanCapIsAnInvalidOption) {
  for (double cap : {-1.0, std::nan("")}) {
    options_.max_epsilon_per_metric = cap;
    absl::StatusOr<std::unique_ptr<Reporter>> reporter =
        Reporter::Open(transport_, MakeMemoryDeviceStore(), options_);
    EXPECT_EQ(reporter.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(reporter.status().message(), HasSubstr("max_epsilon_per_metric"));
  }
}

TEST_F(PeriodTest, TheSqliteStoreKeepsThePeriodStateAcrossARestart) {
  {
    auto reporter = Make(OpenFile());
    ASSERT_TRUE(reporter->Report("m", true).ok());
    ASSERT_TRUE(reporter->Report("m", true).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  {
    auto reporter = Make(OpenFile());  // the same period, a new process
    ASSERT_TRUE(reporter->Report("m", false).ok());
    EXPECT_EQ(reporter->pending(), 0u);
    ASSERT_TRUE(reporter->Flush().ok());
  }
  EXPECT_EQ(ReportsSent(), 1);
  clock_.Advance(absl::Hours(24));
  auto reporter = Make(OpenFile());
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(ReportsSent(), 2);
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.reports_accepted, 2);
  EXPECT_EQ(m.reports_repeated_in_period, 2);
}

}  // namespace period_test
}  // namespace
}  // namespace deniable::client
