// Longitudinal privacy: memoized bits, fresh randomization with a cap, and the ledger.
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
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
namespace memoization_test {

using ::deniable::client::testing::FakeTransport;

constexpr int64_t kNow = 1'700'001'234;
const double kLn3 = std::log(3.0);

class MemoizationTest : public testing::ReporterFileFixture {
 protected:
  MemoizationTest() : ReporterFileFixture(absl::FromUnixSeconds(kNow), 7, "memo") {
    // These tests are about the memo and the ledger: each Report() stands for a report of a new
    // period (period_test.cc holds the one-report-per-period contract itself).
    options_.one_report_per_period = false;
  }
};

TEST_F(MemoizationTest, MemoizedBitIsStableAcrossTenThousandReports) {
  auto reporter = Make();
  for (int i = 0; i < 10000; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<uint32_t> bits = SentBits();
  ASSERT_EQ(bits.size(), 10000u);
  EXPECT_EQ(std::count(bits.begin(), bits.end(), bits[0]), 10000);
  // Each report still has its own id: the server counts all 10000.
  EXPECT_EQ(transport_->StoredCount(), 10000);
  absl::StatusOr<std::map<std::string, MetricLedger>> ledger = reporter->Ledger();
  ASSERT_TRUE(ledger.ok());
  const MetricLedger& m = ledger->at("m");
  EXPECT_EQ(m.reports_accepted, 10000);
  EXPECT_EQ(m.reports_acknowledged, 10000);
  EXPECT_EQ(m.randomizations, 1);
  EXPECT_DOUBLE_EQ(m.epsilon_spent, kLn3);
  EXPECT_NEAR(m.epsilon_if_fresh, 10000 * kLn3, 1e-6);
}

TEST_F(MemoizationTest, EachTrueValueHasItsOwnIndependentlyDrawnBit) {
  // Across many devices (fresh memo tables), a memoized "yes" is 1 with probability a = 3/4 and a
  // memoized "no" with b = 1/4: memoization does not change the channel. Fixed seed; bound 5 sd.
  constexpr int kDevices = 2000;
  int yes_of_true = 0;
  int yes_of_false = 0;
  for (int d = 0; d < kDevices; ++d) {
    auto reporter = Make();
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(reporter->Report("m", true).ok());
      ASSERT_TRUE(reporter->Report("m", false).ok());
    }
    ASSERT_TRUE(reporter->Flush().ok());
  }
  std::vector<uint32_t> bits = SentBits();
  ASSERT_EQ(bits.size(), 6u * kDevices);
  for (int d = 0; d < kDevices; ++d) {
    for (int i = 1; i < 3; ++i) {
      ASSERT_EQ(bits[6 * d + 2 * i], bits[6 * d]);          // true value: same bit
      ASSERT_EQ(bits[6 * d + 2 * i + 1], bits[6 * d + 1]);  // false value: same bit
    }
    yes_of_true += static_cast<int>(bits[6 * d]);
    yes_of_false += static_cast<int>(bits[6 * d + 1]);
  }
  const double sd = std::sqrt(kDevices * 0.75 * 0.25);
  EXPECT_NEAR(yes_of_true, 0.75 * kDevices, 5 * sd);
  EXPECT_NEAR(yes_of_false, 0.25 * kDevices, 5 * sd);
}

TEST_F(MemoizationTest, MemoizedBitSurvivesARestartOnTheSameDeviceFile) {
  std::vector<uint32_t> first;
  for (int restart = 0; restart < 5; ++restart) {
    auto reporter = Make(OpenFile());
    for (int i = 0; i < 20; ++i) ASSERT_TRUE(reporter->Report("m", false).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  std::vector<uint32_t> bits = SentBits();
  ASSERT_EQ(bits.size(), 100u);
  EXPECT_EQ(std::count(bits.begin(), bits.end(), bits[0]), 100);
  auto reporter = Make(OpenFile());
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.randomizations, 1);
  EXPECT_EQ(m.reports_accepted, 100);
  EXPECT_EQ(m.reports_acknowledged, 100);
}

TEST_F(MemoizationTest, SurvivesRestartWhateverTheSeedOfTheNextProcess) {
  // A restarted process has a different generator state: the bit must come from the file.
  { ASSERT_TRUE(Make(OpenFile())->Report("m", true).ok()); }
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    gen_.seed(seed);
    ASSERT_TRUE(Make(OpenFile())->Report("m", true).ok());
  }
  std::vector<uint32_t> bits = SentBits();
  ASSERT_EQ(bits.size(), 21u);
  EXPECT_EQ(std::count(bits.begin(), bits.end(), bits[0]), 21);
}

TEST_F(MemoizationTest, ANewDesignVersionDrawsAgainAndSpendsItsEpsilon) {
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  DesignToProto(*Design::SymmetricEpsilon(2.0), 2, &transport_->design_);
  transport_->mark_stale = true;
  ASSERT_TRUE(reporter->Flush().ok());  // the answer names "m" stale: the design is refetched
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->submits.back().reports(0).design_version(), 2u);
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.randomizations, 2);
  EXPECT_DOUBLE_EQ(m.epsilon_spent, kLn3 + 2.0);
}

TEST_F(MemoizationTest, FreshLedgerAddsUp) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  options_.max_epsilon_per_metric = 1000;
  auto reporter = Make();
  for (int i = 0; i < 250; ++i) ASSERT_TRUE(reporter->Report("m", i % 4 == 0).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  const MetricLedger m = reporter->Ledger()->at("m");
  EXPECT_EQ(m.reports_accepted, 250);
  EXPECT_EQ(m.reports_acknowledged, 250);
  EXPECT_EQ(m.randomizations, 250);
  EXPECT_NEAR(m.epsilon_spent, 250 * kLn3, 1e-9);
  EXPECT_DOUBLE_EQ(m.epsilon_spent, m.epsilon_if_fresh);
  EXPECT_EQ(m.reports_this_period, 250);
  EXPECT_EQ(reporter->Stats()->counters.acknowledged, 250);
}

TEST_F(MemoizationTest, UnsentReportsSurviveARestartAndAreSentOnce) {
  transport_->SetDown(true);
  options_.max_attempts = 1;
  options_.shutdown_drain_timeout = absl::Milliseconds(1);
  std::set<std::string> ids;
  {
    auto reporter = Make(OpenFile());
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
    EXPECT_FALSE(reporter->Flush().ok());
  }
  transport_->SetDown(false);
  auto reporter = Make(OpenFile());
  EXPECT_EQ(reporter->pending(), 5u);
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->StoredCount(), 5);
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(reporter->Stats()->counters.duplicates, 0);
}

TEST_F(MemoizationTest, DeviceFileIsPrivateToItsOwner) {
  auto reporter = Make(OpenFile());
  ASSERT_TRUE(reporter->Report("m", true).ok());
  struct stat st {};
  ASSERT_EQ(stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

}  // namespace memoization_test
}  // namespace
}  // namespace deniable::client
