// Metrics with categories on the device: Report(metric, category), its errors, the wire form of
// the three mechanisms, the memo per (metric, design version, category), the ledger and its cap,
// periods, and the design-mismatch rule.
#include "deniable/common/categorical.h"

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/src/testing/fake_transport.h"
#include "client/src/testing/fault_injecting_transport.h"
#include "client/src/testing/reporter_file_fixture.h"
#include "deniable/client/reporter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace categorical_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1'700'001'234;
const double kLn3 = std::log(3.0);
const std::vector<std::string> kVote = {"Y", "N", "U", "A"};

class CategoricalReportTest : public testing::ReporterFileFixture {
 protected:
  CategoricalReportTest() : ReporterFileFixture(absl::FromUnixSeconds(kNow), 11, "cat") {
    transport_->SetCategorical(kVote, CategoricalMechanism::kDirectEncoding, kLn3);
  }
  // These tests are about the memo and the ledger unless they say otherwise: each Report()
  // stands for a report of a new period.
  std::unique_ptr<Reporter> MakeMemo() {
    options_.one_report_per_period = false;
    return Make();
  }
  MetricLedger LedgerOf(Reporter& reporter) {
    absl::StatusOr<std::map<std::string, MetricLedger>> ledger = reporter.Ledger();
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    return ledger.ok() && ledger->contains("m") ? ledger->at("m") : MetricLedger{};
  }
};

TEST_F(CategoricalReportTest, ReportByNameSendsOneCategoricalReportWithTheDesignFingerprint) {
  transport_->fingerprint = 0x0123456789abcdefULL;
  auto reporter = Make();
  std::string id;
  ASSERT_TRUE(reporter->Report("m", "U", &id).ok());
  EXPECT_EQ(id.size(), 16u);
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].has_categorical());
  EXPECT_EQ(sent[0].bit(), 0u);
  EXPECT_LT(sent[0].categorical().category(), 4u);
  EXPECT_TRUE(sent[0].categorical().bits().empty());  // k-RR sets only the category
  EXPECT_EQ(sent[0].design_version(), 1u);
  EXPECT_EQ(sent[0].design_fingerprint(), 0x0123456789abcdefULL);
  EXPECT_EQ(sent[0].report_id(), id);
  absl::StatusOr<std::vector<std::string>> categories = reporter->Categories("m");
  ASSERT_TRUE(categories.ok());
  EXPECT_EQ(*categories, kVote);
}

TEST_F(CategoricalReportTest, UnknownCategoryIsInvalidArgumentThatNeverRepeatsTheValue) {
  auto reporter = Make();
  absl::Status status = reporter->Report("m", "Maybe");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("category"));
  EXPECT_THAT(status.message(), HasSubstr("Y, N, U, A"));
  EXPECT_THAT(status.message(), Not(HasSubstr("Maybe")));
  EXPECT_EQ(reporter->Report("m", "y").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reporter->Report("m", std::string()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reporter->Report("m", static_cast<const char*>(nullptr)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reporter->ReportCategoryIndex("m", 4).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reporter->ReportCategoryIndex("m", -1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(LedgerOf(*reporter).reports_accepted, 0);
  EXPECT_EQ(LedgerOf(*reporter).epsilon_spent, 0);
}

TEST_F(CategoricalReportTest, YesNoAnswerOnAMetricWithCategoriesIsFailedPrecondition) {
  auto reporter = Make();
  absl::Status status = reporter->Report("m", true);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("Report(metric, category)"));
  // The C API and the JVM SDK pass this message on: it names their calls too.
  EXPECT_THAT(status.message(), HasSubstr("(C: deniable_reporter_report_category; Java, Kotlin: "
                                          "reportCategory)"));
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(CategoricalReportTest, CategoryOnAYesNoMetricIsFailedPreconditionEvenForALiteral) {
  transport_ = std::make_shared<testing::FakeTransport>();  // "m" is two coins, yes/no
  auto reporter = Make();
  // A string literal must not convert to bool and report "yes".
  const absl::Status literal = reporter->Report("m", "Y");
  EXPECT_EQ(literal.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(
      literal.message(),
      HasSubstr("Report(metric, bool) (C: deniable_reporter_report; Java, Kotlin: report)"));
  EXPECT_EQ(reporter->Report("m", std::string("Y")).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->ReportCategoryIndex("m", 0).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->pending(), 0u);
  absl::StatusOr<std::vector<std::string>> categories = reporter->Categories("m");
  ASSERT_TRUE(categories.ok());
  EXPECT_TRUE(categories->empty());
}

TEST_F(CategoricalReportTest, ReportByIndexIsReportByName) {
  auto reporter = MakeMemo();
  ASSERT_TRUE(reporter->Report("m", "A").ok());
  ASSERT_TRUE(reporter->ReportCategoryIndex("m", 3).ok());  // "A": the memoized report
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].categorical().SerializeAsString(), sent[1].categorical().SerializeAsString());
  EXPECT_EQ(LedgerOf(*reporter).randomizations, 1);
}

// Memoization per (metric, design version, category), as per true value for bits: a category's
// report is drawn once and re-sent; each distinct category spends epsilon once.
TEST_F(CategoricalReportTest, MemoIsPerCategoryAndTheLedgerCountsEachDistinctCategoryOnce) {
  transport_->SetCategorical(kVote, CategoricalMechanism::kOptimizedUnaryEncoding, kLn3);
  auto reporter = MakeMemo();
  const std::vector<std::string> answers = {"Y", "N", "Y", "N", "Y", "N", "Y"};
  for (const std::string& a : answers) ASSERT_TRUE(reporter->Report("m", a).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), answers.size());
  for (size_t i = 2; i < sent.size(); ++i) {
    EXPECT_EQ(sent[i].categorical().bits(), sent[i % 2].categorical().bits()) << i;
    EXPECT_NE(sent[i].report_id(), sent[i % 2].report_id());
  }
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.reports_accepted, 7);
  EXPECT_EQ(ledger.reports_acknowledged, 7);
  EXPECT_EQ(ledger.randomizations, 2);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * kLn3);
  EXPECT_NEAR(ledger.epsilon_if_fresh, 7 * kLn3, 1e-12);
}

TEST_F(CategoricalReportTest, MemoSurvivesARestartWithTheDeviceFile) {
  options_.one_report_per_period = false;
  {
    auto reporter = Make(OpenFile());
    ASSERT_TRUE(reporter->Report("m", "N").ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  auto reporter = Make(OpenFile());
  ASSERT_TRUE(reporter->Report("m", "N").ok());
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].categorical().category(), sent[1].categorical().category());
  EXPECT_EQ(LedgerOf(*reporter).randomizations, 1);
}

// Across many devices (fresh memo tables), the memoized k-RR report is the true category with
// p = e^eps / (e^eps + k - 1) = 1/2 here and each other one with q = 1/6: memoization does not
// change the channel. Fixed seed; bounds of 5 standard deviations.
TEST_F(CategoricalReportTest, MemoizedReportsFollowTheKrrChannel) {
  constexpr int kDevices = 3000;
  for (int d = 0; d < kDevices; ++d) {
    auto reporter = MakeMemo();
    ASSERT_TRUE(reporter->Report("m", "U").ok());
    ASSERT_TRUE(reporter->Report("m", "U").ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 2u * kDevices);
  std::vector<int> counts(4, 0);
  for (int d = 0; d < kDevices; ++d) {
    ASSERT_EQ(sent[2 * d].categorical().category(), sent[2 * d + 1].categorical().category());
    ++counts[sent[2 * d].categorical().category()];
  }
  for (int v = 0; v < 4; ++v) {
    const double p = v == 2 ? 0.5 : 1.0 / 6;
    EXPECT_NEAR(counts[v], p * kDevices, 5 * std::sqrt(kDevices * p * (1 - p))) << v;
  }
}

TEST_F(CategoricalReportTest, OueReportsAreKBitsPackedLsbFirst) {
  const std::vector<std::string> ten = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
  transport_->SetCategorical(ten, CategoricalMechanism::kOptimizedUnaryEncoding, 0.5);
  options_.one_report_per_period = false;
  constexpr int kDevices = 2000;
  for (int d = 0; d < kDevices; ++d) {
    auto reporter = Make();
    ASSERT_TRUE(reporter->Report("m", "j").ok());  // index 9: byte 1, mask 1 << 1
    ASSERT_TRUE(reporter->Flush().ok());
  }
  int true_bit = 0;
  int other_bits = 0;
  for (const v1::Report& r : transport_->SentReports()) {
    const std::string& bits = r.categorical().bits();
    ASSERT_EQ(bits.size(), 2u);
    ASSERT_EQ(static_cast<uint8_t>(bits[1]) & 0xFC, 0) << "unused high bits must be 0";
    true_bit += (static_cast<uint8_t>(bits[1]) >> 1) & 1;
    other_bits +=
        __builtin_popcount(static_cast<uint8_t>(bits[0])) + (static_cast<uint8_t>(bits[1]) & 1);
  }
  // p* = 1/2 for the true bit, q* = 1 / (e^0.5 + 1) for each of the 9 others.
  const double q = 1 / (std::exp(0.5) + 1);
  EXPECT_NEAR(true_bit, 0.5 * kDevices, 5 * std::sqrt(kDevices * 0.25));
  EXPECT_NEAR(other_bits, 9 * q * kDevices, 5 * std::sqrt(9 * kDevices * q * (1 - q)));
}

TEST_F(CategoricalReportTest, OlhReportsCarryAValidHashAndBucket) {
  transport_->SetCategorical(kVote, CategoricalMechanism::kOptimizedLocalHashing, 1.0);
  const CategoricalDesign design =
      *CategoricalDesign::Create(CategoricalMechanism::kOptimizedLocalHashing, 4, 1.0);
  auto reporter = MakeMemo();
  for (const char* c : {"Y", "N", "U", "A"}) ASSERT_TRUE(reporter->Report("m", c).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 4u);
  for (const v1::Report& r : sent) {
    CategoricalReport report;
    report.hash_a = r.categorical().hash_a();
    report.hash_b = r.categorical().hash_b();
    report.bucket = static_cast<int32_t>(r.categorical().bucket());
    EXPECT_TRUE(ValidateCategoricalReport(design, report).ok());
  }
}

TEST_F(CategoricalReportTest, TheCapRefusesANewCategoryButNotAMemoizedOne) {
  options_.max_epsilon_per_metric = 2 * kLn3 + 0.01;
  auto reporter = MakeMemo();
  ASSERT_TRUE(reporter->Report("m", "Y").ok());
  ASSERT_TRUE(reporter->Report("m", "N").ok());
  EXPECT_EQ(reporter->Report("m", "U").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(reporter->Report("m", "Y").ok());  // memoized: spends nothing
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.reports_accepted, 3);
  EXPECT_EQ(ledger.randomizations, 2);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * kLn3);
}

TEST_F(CategoricalReportTest, FreshPerPeriodDrawsOncePerPeriodAndSendsOneReportPerPeriod) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  transport_->reporting_period_seconds = 3600;
  options_.max_epsilon_per_metric = 10 * kLn3;
  auto reporter = Make();  // one report per period: the contract
  ASSERT_TRUE(reporter->Report("m", "Y").ok());
  ASSERT_TRUE(reporter->Report("m", "N").ok());  // same period: nothing changes on the wire
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(reporter->Report("m", "Y").ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->SentReports().size(), 2u);
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.randomizations, 2);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * kLn3);
  EXPECT_EQ(ledger.reports_repeated_in_period, 1);
}

TEST_F(CategoricalReportTest, ADesignTheSdkCannotVerifyIsRefused) {
  transport_->design_.set_a(transport_->design_.a() + 0.01);  // not k-RR's p* for (4, ln 3)
  auto reporter = Make();
  absl::Status status = reporter->Report("m", "Y");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("does not match"));
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(CategoricalReportTest, ADesignForAnotherNumberOfCategoriesIsRefused) {
  transport_->categories = {"Y", "N", "U"};  // the design is for k = 4
  auto reporter = Make();
  absl::Status status = reporter->Report("m", "Y");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("design.categories"));
  EXPECT_EQ(reporter->pending(), 0u);
}

// The delivery contract applies unchanged: a report the collector rejects as randomized with
// another design (FAILED_PRECONDITION) is dropped, the memo of that version is forgotten, and
// the next report of the same category draws again with the design fetched anew.
TEST(CategoricalDeliveryTest, DesignMismatchForgetsTheCategoryMemoAndRefetches) {
  auto transport = std::make_shared<testing::FaultInjectingTransport>();
  transport->SetCategorical(kVote, CategoricalMechanism::kDirectEncoding, kLn3);
  FakeClock clock(absl::FromUnixSeconds(kNow));
  std::mt19937_64 gen(3);
  ReporterOptions options;
  options.background_sending = false;
  options.one_report_per_period = false;
  auto reporter = Reporter::CreateForTesting(transport, options, gen, &clock);
  std::string id;
  ASSERT_TRUE(reporter->Report("m", "Y", &id).ok());
  transport->Reject(id, {.code = absl::StatusCode::kFailedPrecondition, .permanent = true});
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Stats()->counters.dropped_design_mismatch, 1);
  EXPECT_EQ(transport->design_calls(), 2);
  ASSERT_TRUE(reporter->Report("m", "Y").ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(reporter->Ledger()->at("m").randomizations, 2);
  EXPECT_EQ(transport->stored(), 1);
}

}  // namespace categorical_test
}  // namespace
}  // namespace deniable::client
