#include "deniable/client/reporter.h"

#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/mock_distributions.h"
#include "absl/random/mocking_bit_gen.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "deniable/convert/design_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'001'234;

// Records every call; fails the first `failures` submits with `failure`.
class FakeTransport : public ReportTransport {
 public:
  FakeTransport() { DesignToProto(Design::TwoCoin(), 1, &design_); }

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    ++design_calls;
    if (metric != "m") return absl::NotFoundError("metric \"" + metric + "\" does not exist");
    v1::GetDesignResponse response;
    response.set_metric(metric);
    *response.mutable_design() = design_;
    response.set_time_precision_seconds(3600);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    submits.push_back(request);
    timeouts.push_back(timeout);
    if (failures > 0) {
      --failures;
      return failure;
    }
    v1::SubmitReportsResponse response;
    response.set_accepted(static_cast<uint32_t>(request.reports_size()));
    if (mark_stale) response.add_stale_metrics("m");
    return response;
  }

  absl::Mutex mu_;
  v1::Design design_;
  int design_calls = 0;
  std::vector<v1::SubmitReportsRequest> submits;
  std::vector<absl::Duration> timeouts;
  int failures = 0;
  absl::Status failure = absl::UnavailableError("down");
  bool mark_stale = false;
};

class ReporterTest : public ::testing::Test {
 protected:
  ReporterTest() : clock_(absl::FromUnixSeconds(kNow)), gen_(42) {
    options_.initial_backoff = absl::Microseconds(10);
    options_.max_backoff = absl::Microseconds(100);
    options_.rpc_timeout = absl::Seconds(3);
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
  auto reporter = Make();
  constexpr int kN = 20000;
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

}  // namespace
}  // namespace deniable::client
