#include "deniable/client/reporter.h"

#include <limits>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/mock_distributions.h"
#include "absl/random/mocking_bit_gen.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "client/src/testing/fake_transport.h"
#include "deniable/convert/design_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"

namespace deniable::client {
namespace {
namespace reporter_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'001'234;

using ::deniable::client::testing::FakeTransport;

class ReporterTest : public ::testing::Test {
 protected:
  ReporterTest() : clock_(absl::FromUnixSeconds(kNow)), gen_(42) {
    options_.initial_backoff = absl::Microseconds(10);
    options_.max_backoff = absl::Microseconds(100);
    options_.rpc_timeout = absl::Seconds(3);
    options_.background_sending = false;  // Flush() alone sends: call counts are exact
    // These tests are about delivery: each Report() stands for a device (period_test.cc holds
    // the one-report-per-period contract).
    options_.one_report_per_period = false;
  }
  std::unique_ptr<Reporter> Make() {
    return Reporter::CreateForTesting(transport_, options_, gen_, &clock_);
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  ReporterOptions options_;
  FakeClock clock_;
  std::mt19937_64 gen_;
};

TEST_F(ReporterTest, ReportCarriesOnlyRandomizedBitIdVersionAndRoundedTime) {
  options_.labels = {{"region", "N"}};
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  ASSERT_EQ(transport_->submits.size(), 1u);
  const v1::Report& r = transport_->submits[0].reports(0);
  EXPECT_EQ(r.metric(), "m");
  EXPECT_EQ(r.design_version(), 1u);
  EXPECT_LE(r.bit(), 1u);
  EXPECT_EQ(r.report_id().size(), 16u);
  EXPECT_EQ(r.event_time_seconds(), kNow - kNow % 3600);
  EXPECT_EQ(r.labels().at("region"), "N");
  EXPECT_EQ(transport_->timeouts[0], absl::Seconds(3));
}

// Issue 17: labels are checked with the collector's rules when the reporter opens, not after
// Report() said OK.
TEST_F(ReporterTest, OpenRefusesLabelsTheCollectorWouldReject) {
  options_.labels = {{"city", "New York"}};
  absl::StatusOr<std::unique_ptr<Reporter>> opened =
      Reporter::Open(transport_, MakeMemoryDeviceStore(), options_);
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(opened.status().message(), HasSubstr("labels[\"city\"]: value must match"));
  options_.labels = {{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "1"}, {"e", "1"}};
  opened = Reporter::Open(transport_, MakeMemoryDeviceStore(), options_);
  EXPECT_THAT(opened.status().message(), HasSubstr("labels: at most 4 labels, but has 5"));
  EXPECT_TRUE(transport_->submits.empty());
}

TEST_F(ReporterTest, PerReportLabelsAreAddedAndOverrideTheReportersLabels) {
  options_.labels = {{"region", "N"}, {"app_version", "4.1"}};
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true, {{"app_version", "4.2"}, {"channel", "beta"}}).ok());
  ASSERT_TRUE(reporter->Report("m", false).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  ASSERT_EQ(transport_->submits.size(), 1u);
  ASSERT_EQ(transport_->submits[0].reports_size(), 2);
  const auto& first = transport_->submits[0].reports(0).labels();
  EXPECT_EQ(first.size(), 3u);
  EXPECT_EQ(first.at("app_version"), "4.2");
  EXPECT_EQ(first.at("channel"), "beta");
  EXPECT_EQ(first.at("region"), "N");
  EXPECT_EQ(transport_->submits[0].reports(1).labels().at("app_version"), "4.1");
}

TEST_F(ReporterTest, InvalidPerReportLabelsQueueNothingAndSpendNothing) {
  options_.labels = {{"a", "1"}, {"b", "1"}, {"c", "1"}};
  auto reporter = Make();
  absl::Status s = reporter->Report("m", true, {{"d", "1"}, {"e", "1"}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("labels: at most 4 labels, but has 5"));
  s = reporter->Report("m", true, {{"note", "free text"}});
  EXPECT_THAT(s.message(), HasSubstr("labels[\"note\"]: value must match"));
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ((*reporter->Ledger())["m"].randomizations, 0);
}

TEST_F(ReporterTest, BitComesFromTheRandomizerNotTheAnswer) {
  absl::MockingBitGen mock;
  // The channel of a true "yes" is Bernoulli(a = 3/4); force it to come out 0.
  EXPECT_CALL(absl::MockBernoulli(), Call(mock, 0.75)).WillOnce(::testing::Return(false));
  auto reporter = Reporter::CreateForTesting(transport_, options_, mock, &clock_);
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->submits[0].reports(0).bit(), 0u);
}

TEST_F(ReporterTest, FrequencyOfYesBitsFollowsTheChannel) {
  // Fixed seed: the count is deterministic; the bound is 5 standard deviations of the binomial.
  constexpr int kN = 20000;
  transport_->randomization = v1::FRESH_PER_PERIOD;  // memoization would repeat one bit
  options_.max_epsilon_per_metric = std::numeric_limits<double>::infinity();
  auto reporter = Make();
  for (int i = 0; i < kN; ++i) ASSERT_TRUE(reporter->Report("m", false).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  int yes = 0;
  for (const auto& s : transport_->submits) {
    for (const auto& r : s.reports()) yes += static_cast<int>(r.bit());
  }
  const double sd = std::sqrt(kN * 0.25 * 0.75);
  EXPECT_NEAR(yes, kN * 0.25, 5 * sd);  // b = 1/4 for a true "no"
}

TEST_F(ReporterTest, DesignIsFetchedOnceAndCached) {
  auto reporter = Make();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reporter->Report("m", i % 2 == 0).ok());
  EXPECT_EQ(transport_->design_calls, 1);
}

TEST_F(ReporterTest, UnknownMetricQueuesNothing) {
  auto reporter = Make();
  absl::Status s = reporter->Report("nope", true);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(ReporterTest, RefusesDesignWhoseChannelDoesNotMatchItsParameters) {
  transport_->design_.set_a(0.9);  // two coins must have a = 3/4
  auto reporter = Make();
  absl::Status s = reporter->Report("m", true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("does not match"));
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(ReporterTest, RetryAfterUnavailableResendsTheSameReportIds) {
  transport_->failures = 2;
  auto reporter = Make();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  ASSERT_EQ(transport_->submits.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(transport_->submits[0].reports(i).report_id(),
              transport_->submits[2].reports(i).report_id());
    EXPECT_EQ(transport_->submits[1].reports(i).bit(), transport_->submits[2].reports(i).bit());
  }
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(ReporterTest, KeepsReportsQueuedWhenRetriesRunOut) {
  options_.max_attempts = 2;
  transport_->failures = 2;
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(reporter->pending(), 1u);
  ASSERT_TRUE(reporter->Flush().ok());  // the server is back
  EXPECT_EQ(transport_->submits.front().reports(0).report_id(),
            transport_->submits.back().reports(0).report_id());
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(ReporterTest, DropsBatchOnPermanentErrorWithoutRetrying) {
  transport_->failures = 1;
  transport_->failure = absl::InvalidArgumentError("reports[0].bit: must be 0 or 1");
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  absl::Status s = reporter->Flush();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("dropped"));
  EXPECT_EQ(transport_->submits.size(), 1u);
  EXPECT_EQ(reporter->pending(), 0u);
}

TEST_F(ReporterTest, SendsInBatchesOfAtMostMaxBatchReports) {
  options_.max_batch_reports = 2;
  auto reporter = Make();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  ASSERT_EQ(transport_->submits.size(), 3u);
  EXPECT_EQ(transport_->submits[2].reports_size(), 1);
}

TEST_F(ReporterTest, StaleDesignIsFetchedAgain) {
  transport_->mark_stale = true;
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_EQ(transport_->design_calls, 2);
}

TEST_F(ReporterTest, ConcurrentReportsAreAllSentWithDistinctIds) {
  auto reporter = Reporter::Create(transport_, options_);  // the secure generator
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&reporter] {
      for (int i = 0; i < 250; ++i) ASSERT_TRUE(reporter->Report("m", i % 3 == 0).ok());
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(reporter->Flush().ok());
  std::set<std::string> ids;
  for (const auto& s : transport_->submits) {
    for (const auto& r : s.reports()) ids.insert(r.report_id());
  }
  EXPECT_EQ(ids.size(), 1000u);
}

// ---- Delivery: the background sender, drops, bounds, deadlines ----

using ::deniable::testing_util::Eventually;

TEST_F(ReporterTest, BackgroundSenderDeliversWithoutFlush) {
  options_.background_sending = true;
  options_.send_interval = absl::Milliseconds(5);
  auto reporter = Make();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(reporter->Report("m", i % 2 == 0).ok());
  EXPECT_TRUE(Eventually([&] { return reporter->pending() == 0; }));
  EXPECT_EQ(transport_->StoredCount(), 20);
  EXPECT_EQ(reporter->Stats()->counters.acknowledged, 20);
}

TEST_F(ReporterTest, BackgroundSenderRetriesUntilTheServerIsBack) {
  options_.background_sending = true;
  options_.send_interval = absl::Milliseconds(5);
  transport_->SetDown(true);
  auto reporter = Make();
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_TRUE(Eventually([&] { return transport_->SubmitCount() >= 3; }));
  EXPECT_EQ(reporter->pending(), 10u);  // nothing lost while the server is down
  transport_->SetDown(false);
  EXPECT_TRUE(Eventually([&] { return reporter->pending() == 0; }));
  EXPECT_EQ(transport_->StoredCount(), 10);
}

TEST_F(ReporterTest, NotFoundForAWholeBatchIsRetriedNotDropped) {
  // The collector may not know the metric yet (a database being restored): the reports wait.
  transport_->failures = 1;
  transport_->failure = absl::NotFoundError("reports[0].metric: unknown");
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Report("m", false).ok());
  EXPECT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->SubmitCount(), 2);
  EXPECT_EQ(transport_->StoredCount(), 2);
  EXPECT_EQ(reporter->Stats()->counters.dropped_rejected, 0);
}

TEST_F(ReporterTest, FullQueueDropsOldestFirstAndCountsThem) {
  options_.max_queued_reports = 3;
  auto reporter = Make();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_EQ(reporter->pending(), 3u);
  EXPECT_EQ(reporter->Stats()->counters.dropped_queue_full, 2);
  // The 3 kept are the newest: the ids sent are those of reports 3, 4 and 5.
  ASSERT_TRUE(reporter->Flush().ok());
  ASSERT_EQ(transport_->submits.size(), 1u);
  EXPECT_EQ(transport_->submits[0].reports_size(), 3);
}

TEST_F(ReporterTest, FlushGivesUpAtItsDeadlineAndKeepsTheReports) {
  options_.max_attempts = 1000000;
  options_.initial_backoff = absl::Milliseconds(5);
  options_.shutdown_drain_timeout = absl::Milliseconds(10);
  transport_->SetDown(true);
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_EQ(reporter->Flush(absl::Milliseconds(50)).code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(reporter->pending(), 1u);
}

TEST_F(ReporterTest, DestructorDrainsTheQueue) {
  {
    auto reporter = Make();
    for (int i = 0; i < 7; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  }
  EXPECT_EQ(transport_->StoredCount(), 7);
}

TEST_F(ReporterTest, ReportNeedsNoNetworkOnceTheDesignIsKnown) {
  auto reporter = Make();
  ASSERT_TRUE(reporter->Prefetch({"m"}, absl::Seconds(1)).ok());
  transport_->design_failure = absl::UnavailableError("offline");
  transport_->SetDown(true);
  EXPECT_TRUE(reporter->Report("m", true).ok());
  EXPECT_EQ(transport_->design_calls, 1);
}

TEST_F(ReporterTest, WithoutFirstDesignWaitReportFailsFastAndTheSenderFetches) {
  options_.background_sending = true;
  options_.send_interval = absl::Milliseconds(5);
  options_.first_design_wait = absl::ZeroDuration();
  auto reporter = Make();
  EXPECT_EQ(reporter->Report("m", true).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_TRUE(Eventually([&] { return reporter->Report("m", true).ok(); }));
}

TEST_F(ReporterTest, InvalidOptionsAreReportedByEveryCall) {
  options_.max_batch_reports = 0;
  auto reporter = Make();
  absl::Status s = reporter->Report("m", true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("max_batch_reports"));
  EXPECT_EQ(Reporter::Open(transport_, MakeMemoryDeviceStore(), options_).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Reporter::Close(): the exit path of a reporter that lives until the process ends (issue 25).
TEST_F(ReporterTest, CloseSendsWhatIsQueuedThenRefusesEveryCall) {
  auto reporter = Make();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_TRUE(reporter->Close(absl::Seconds(10)).ok());
  EXPECT_EQ(transport_->StoredCount(), 3);
  EXPECT_EQ(reporter->pending(), 0u);

  std::string id = "stale";
  absl::Status report = reporter->Report("m", true, &id);
  EXPECT_EQ(report.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(report.message(), HasSubstr("closed"));
  EXPECT_TRUE(id.empty());
  EXPECT_EQ(reporter->Report("m", "Y").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Prefetch({"m"}, absl::Seconds(1)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Categories("m").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(reporter->Ledger()->at("m").reports_accepted, 3) << "the ledger is still readable";

  EXPECT_TRUE(reporter->Close(absl::Seconds(10)).ok()) << "a second Close is a no-op";
  const int submits = transport_->SubmitCount();
  reporter.reset();
  EXPECT_EQ(transport_->SubmitCount(), submits) << "the destructor sent after Close";
}

TEST_F(ReporterTest, CloseWithTheCollectorDownReturnsTheFailureAndKeepsTheReports) {
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  transport_->SetDown(true);
  absl::Status closed = reporter->Close(absl::Seconds(10));
  EXPECT_EQ(closed.code(), absl::StatusCode::kUnavailable) << closed;
  EXPECT_EQ(reporter->pending(), 1u) << "an unsent report stays in the store";
  const int submits = transport_->SubmitCount();
  EXPECT_GE(submits, 1);
  reporter.reset();
  EXPECT_EQ(transport_->SubmitCount(), submits) << "the destructor tried again after Close";
}

TEST_F(ReporterTest, CloseWithNothingQueuedMakesNoCall) {
  options_.background_sending = true;
  options_.send_interval = absl::Hours(1);
  auto reporter = Make();
  EXPECT_TRUE(reporter->Close(absl::Seconds(10)).ok());  // joins the sender
  EXPECT_EQ(transport_->SubmitCount(), 0);
  EXPECT_EQ(transport_->design_calls, 0);
}

}  // namespace reporter_test
}  // namespace
}  // namespace deniable::client
