// The delivery contract of reporter.h / docs/sdk.md, driven by a scripted collector: a queued
// report leaves the device only when acknowledged, rejected for good, or dropped by a device-side
// bound, each drop counted and logged; everything else is retried until delivered exactly once.
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "client/src/testing/fault_injecting_transport.h"
#include "deniable/client/reporter.h"
#include "deniable/client/retry_policy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/eventually.h"

namespace deniable::client {
namespace {
namespace delivery_contract_test {

using ::deniable::client::testing::FaultInjectingTransport;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'001'234;

class DeliveryTest : public ::testing::Test {
 protected:
  DeliveryTest() : clock_(absl::FromUnixSeconds(kNow)), gen_(7) {
    options_.initial_backoff = absl::Microseconds(10);
    options_.max_backoff = absl::Microseconds(100);
    options_.background_sending = false;     // Flush() alone sends: call counts are exact
    options_.one_report_per_period = false;  // each Report() stands for a device
    options_.retry_policy = std::make_shared<LimitedErrorCountRetryPolicy>(100);
    options_.log = [this](LogLevel level, absl::string_view message) {
      absl::MutexLock lock(&log_mu_);
      if (level == LogLevel::kError) errors_.emplace_back(message);
    };
  }
  std::unique_ptr<Reporter> Make() {
    return Reporter::CreateForTesting(transport_, options_, gen_, &clock_);
  }
  std::string ReportOne(Reporter& reporter, bool answer = true) {
    std::string id;
    EXPECT_TRUE(reporter.Report("m", answer, &id).ok());
    return id;
  }
  std::vector<std::string> Errors() {
    absl::MutexLock lock(&log_mu_);
    return errors_;
  }

  std::shared_ptr<FaultInjectingTransport> transport_ = std::make_shared<FaultInjectingTransport>();
  ReporterOptions options_;
  FakeClock clock_;
  std::mt19937_64 gen_;
  absl::Mutex log_mu_;
  std::vector<std::string> errors_ ABSL_GUARDED_BY(log_mu_);
};

using ::deniable::testing_util::Eventually;

// Every non-OK canonical code, answered for a whole batch three times in a row.
class EveryCodeTest : public DeliveryTest, public ::testing::WithParamInterface<absl::StatusCode> {
 protected:
  bool DropsOneReportBatch() const { return GetParam() == absl::StatusCode::kInvalidArgument; }
};

TEST_P(EveryCodeTest, FlushDeliversExactlyOnceOrDropsOnlyWhereTheContractSays) {
  const absl::Status failure(GetParam(), "scripted");
  transport_->Script({failure, failure, failure});
  auto reporter = Make();
  const std::string id = ReportOne(*reporter);
  absl::Status flushed = reporter->Flush();
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->queued, 0);
  if (DropsOneReportBatch()) {  // a one-report batch the collector judged invalid: (b)
    EXPECT_EQ(flushed.code(), GetParam());
    EXPECT_THAT(flushed.message(), HasSubstr("dropped"));
    EXPECT_EQ(transport_->calls(), 1);
    EXPECT_EQ(transport_->stored(), 0);
    EXPECT_EQ(stats->counters.dropped_rejected, 1);
    ASSERT_EQ(Errors().size(), 1u);
    EXPECT_THAT(Errors()[0], HasSubstr("scripted"));
  } else {  // retried until the collector accepts
    EXPECT_TRUE(flushed.ok()) << flushed;
    EXPECT_EQ(transport_->calls(), 4);
    EXPECT_EQ(transport_->sends(id), 4);
    EXPECT_TRUE(transport_->IsStored(id));
    EXPECT_EQ(transport_->stored(), 1);
    EXPECT_EQ(stats->counters.acknowledged, 1);
    EXPECT_EQ(stats->counters.dropped_rejected, 0);
    EXPECT_EQ(stats->failed_attempts, 3);
    EXPECT_TRUE(Errors().empty());
  }
}

TEST_P(EveryCodeTest, BackgroundSenderDeliversExactlyOnceOrDropsOnlyWhereTheContractSays) {
  options_.background_sending = true;
  options_.send_interval = absl::Milliseconds(2);
  const absl::Status failure(GetParam(), "scripted");
  transport_->Script({failure, failure, failure});
  auto reporter = Make();
  const std::string id = ReportOne(*reporter);
  ASSERT_TRUE(Eventually([&] { return reporter->pending() == 0; }));
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok());
  if (DropsOneReportBatch()) {
    EXPECT_EQ(transport_->stored(), 0);
    EXPECT_EQ(stats->counters.dropped_rejected, 1);
  } else {
    EXPECT_EQ(transport_->sends(id), 4);
    EXPECT_EQ(transport_->stored(), 1);
    EXPECT_EQ(stats->counters.acknowledged, 1);
    EXPECT_EQ(stats->counters.dropped_rejected, 0);
  }
}

TEST_P(EveryCodeTest, AWholeBatchIsNeverDroppedForOneStatus) {
  const absl::Status failure(GetParam(), "scripted");
  transport_->Script({failure});
  auto reporter = Make();
  for (int i = 0; i < 8; ++i) ReportOne(*reporter, i % 2 == 0);
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->stored(), 8);
  EXPECT_EQ(reporter->Stats()->counters.acknowledged, 8);
  EXPECT_EQ(reporter->Stats()->counters.dropped_rejected, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Codes, EveryCodeTest,
    ::testing::Values(absl::StatusCode::kCancelled, absl::StatusCode::kUnknown,
                      absl::StatusCode::kInvalidArgument, absl::StatusCode::kDeadlineExceeded,
                      absl::StatusCode::kNotFound, absl::StatusCode::kAlreadyExists,
                      absl::StatusCode::kPermissionDenied, absl::StatusCode::kResourceExhausted,
                      absl::StatusCode::kFailedPrecondition, absl::StatusCode::kAborted,
                      absl::StatusCode::kOutOfRange, absl::StatusCode::kUnimplemented,
                      absl::StatusCode::kInternal, absl::StatusCode::kUnavailable,
                      absl::StatusCode::kDataLoss, absl::StatusCode::kUnauthenticated),
    [](const auto& param_info) { return absl::StatusCodeToString(param_info.param); });

TEST_F(DeliveryTest, OneBadReportInABatchJudgedWholeCostsOnlyThatReport) {
  transport_->set_judge_whole(true);  // an older collector: one invalid report fails the batch
  auto reporter = Make();
  std::vector<std::string> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(ReportOne(*reporter, i % 2 == 0));
  transport_->Reject(ids[5], {});
  absl::Status flushed = reporter->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flushed.message(), HasSubstr("dropped 1 report"));
  EXPECT_EQ(transport_->stored(), 7);
  EXPECT_FALSE(transport_->IsStored(ids[5]));
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  EXPECT_EQ(stats->queued, 0);
  EXPECT_EQ(stats->counters.acknowledged, 7);
  EXPECT_EQ(stats->counters.dropped_rejected, 1);
  // 8 (rejected) -> [0..3] stored, the size grows back -> [4..7] rejected -> [4, 5] rejected ->
  // [4] stored -> [5, 6] rejected -> [5] dropped: four halvings.
  EXPECT_EQ(stats->batch_splits, 4);
}

TEST_F(DeliveryTest, BatchTooLargeForTheCollectorIsHalvedAndAllDelivered) {
  transport_->set_max_batch(3);
  options_.max_batch_reports = 10;
  auto reporter = Make();
  for (int i = 0; i < 10; ++i) ReportOne(*reporter);
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->stored(), 10);
  EXPECT_EQ(reporter->Stats()->counters.dropped_rejected, 0);
  EXPECT_EQ(reporter->Stats()->counters.acknowledged, 10);
  // 10 (rejected whole) -> 5 (rejected whole) -> 2 (stored) -> 4 (rejected) -> 2 ...: halved,
  // never dropped.
  std::vector<int> sizes = transport_->batch_sizes();
  EXPECT_EQ(sizes[0], 10);
  EXPECT_EQ(sizes[1], 5);
  EXPECT_EQ(sizes[2], 2);
}

TEST_F(DeliveryTest, PermanentRejectionIsDroppedCountedAndLoggedTheRestStored) {
  auto reporter = Make();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(ReportOne(*reporter));
  transport_->Reject(ids[1], {.code = absl::StatusCode::kInvalidArgument, .permanent = true});
  absl::Status flushed = reporter->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(flushed.message(), HasSubstr("dropped 1 reports"));
  EXPECT_EQ(transport_->calls(), 1);
  EXPECT_EQ(transport_->stored(), 4);
  EXPECT_FALSE(transport_->IsStored(ids[1]));
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  EXPECT_EQ(stats->queued, 0);
  EXPECT_EQ(stats->counters.acknowledged, 4);
  EXPECT_EQ(stats->counters.dropped_rejected, 1);
  ASSERT_EQ(Errors().size(), 1u);
  EXPECT_THAT(Errors()[0], HasSubstr("reports[1]: scripted rejection"));
}

TEST_F(DeliveryTest, NonPermanentRejectionStaysQueuedAndIsResent) {
  auto reporter = Make();
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(ReportOne(*reporter));
  transport_->Reject(ids[2], {.code = absl::StatusCode::kNotFound, .permanent = false, .times = 2});
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->sends(ids[2]), 3);  // kept twice, stored the third time
  EXPECT_EQ(transport_->sends(ids[0]), 1);  // the others were stored at once
  EXPECT_EQ(transport_->stored(), 4);
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  EXPECT_EQ(stats->counters.acknowledged, 4);
  EXPECT_EQ(stats->counters.dropped_rejected, 0);
  EXPECT_EQ(stats->kept_after_rejection, 2);
  EXPECT_TRUE(Errors().empty());
}

TEST_F(DeliveryTest, NonPermanentRejectionKeepsTheReportWhenFlushGivesUp) {
  options_.retry_policy = std::make_shared<LimitedErrorCountRetryPolicy>(1);
  auto reporter = Make();
  const std::string id = ReportOne(*reporter);
  transport_->Reject(id, {.code = absl::StatusCode::kNotFound, .permanent = false});
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(transport_->sends(id), 2);
  EXPECT_EQ(reporter->pending(), 1u);
  EXPECT_EQ(reporter->Stats()->counters.dropped_rejected, 0);
}

TEST_F(DeliveryTest, MalformedRejectionIndexRemovesNothing) {
  auto reporter = Make();
  const std::string id = ReportOne(*reporter);
  transport_->set_bad_index();
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->sends(id), 2);
  EXPECT_EQ(reporter->Stats()->counters.acknowledged, 1);
  EXPECT_EQ(reporter->Stats()->counters.dropped_rejected, 0);
}

TEST_F(DeliveryTest, ReportsOlderThanMaxReportAgeAreDroppedCountedAndLogged) {
  options_.max_report_age = absl::Hours(24);
  auto reporter = Make();
  const std::string old_id = ReportOne(*reporter);
  clock_.Advance(absl::Hours(50));
  const std::string new_id = ReportOne(*reporter);
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(transport_->sends(old_id), 0);  // never sent
  EXPECT_TRUE(transport_->IsStored(new_id));
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  EXPECT_EQ(stats->queued, 0);
  EXPECT_EQ(stats->counters.dropped_too_old, 1);
  EXPECT_EQ(stats->counters.acknowledged, 1);
  ASSERT_EQ(Errors().size(), 1u);
  EXPECT_THAT(Errors()[0], HasSubstr("max_report_age"));
}

TEST_F(DeliveryTest, QueueFullDropsAreLoggedWithTheirReason) {
  options_.max_queued_reports = 2;
  auto reporter = Make();
  for (int i = 0; i < 5; ++i) ReportOne(*reporter);
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(reporter->Stats()->counters.dropped_queue_full, 3);
  ASSERT_EQ(Errors().size(), 1u);
  EXPECT_THAT(Errors()[0], HasSubstr("dropped 3 reports: queue full"));
}

TEST_F(DeliveryTest, InvalidMaxReportAgeIsRefused) {
  options_.max_report_age = absl::ZeroDuration();
  auto reporter = Make();
  absl::Status s = reporter->Report("m", true);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("max_report_age"));
}

// Policies an app injects: the reporter asks them, and only them.
class CountingRetryPolicy : public RetryPolicy {
 public:
  explicit CountingRetryPolicy(int* failures) : failures_(failures) {}
  std::unique_ptr<RetryPolicy> clone() const override {
    return std::make_unique<CountingRetryPolicy>(failures_);
  }
  bool OnFailure(const absl::Status& status) override {
    ++*failures_;
    return !IsPermanentFailure(status);
  }
  bool IsExhausted() const override { return false; }
  bool IsPermanentFailure(const absl::Status& status) const override {
    return absl::IsFailedPrecondition(status);  // this app's collector says so for bad reports
  }

 private:
  int* failures_;
};

class FixedBackoffPolicy : public BackoffPolicy {
 public:
  explicit FixedBackoffPolicy(int* calls) : calls_(calls) {}
  std::unique_ptr<BackoffPolicy> clone() const override {
    return std::make_unique<FixedBackoffPolicy>(calls_);
  }
  absl::Duration OnCompletion() override {
    ++*calls_;
    return absl::ZeroDuration();
  }

 private:
  int* calls_;
};

TEST_F(DeliveryTest, InjectedPoliciesDecideRetriesWaitsAndPermanence) {
  int failures = 0, backoffs = 0;
  options_.retry_policy = std::make_shared<CountingRetryPolicy>(&failures);
  options_.backoff_policy = std::make_shared<FixedBackoffPolicy>(&backoffs);
  transport_->Script({absl::InvalidArgumentError("retried by this policy"),
                      absl::UnavailableError("down"),
                      absl::FailedPreconditionError("permanent for this policy")});
  auto reporter = Make();
  const std::string first = ReportOne(*reporter);
  absl::Status flushed = reporter->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(failures, 2);  // INVALID_ARGUMENT and UNAVAILABLE; the third is judged permanent
  EXPECT_EQ(backoffs, 2);
  EXPECT_EQ(reporter->Stats()->counters.dropped_rejected, 1);
  EXPECT_FALSE(transport_->IsStored(first));
}

TEST(RetryPolicyTest, LimitedErrorCountToleratesExactlyItsMaximum) {
  LimitedErrorCountRetryPolicy policy(2);
  EXPECT_TRUE(policy.OnFailure(absl::UnavailableError("")));
  EXPECT_TRUE(policy.OnFailure(absl::InternalError("")));
  EXPECT_FALSE(policy.IsExhausted());
  EXPECT_FALSE(policy.OnFailure(absl::UnauthenticatedError("")));
  EXPECT_TRUE(policy.IsExhausted());
  std::unique_ptr<RetryPolicy> fresh = policy.clone();
  EXPECT_FALSE(fresh->IsExhausted());
  EXPECT_FALSE(fresh->OnFailure(absl::InvalidArgumentError("")));  // permanent: no retry
}

TEST(RetryPolicyTest, OnlyInvalidArgumentIsAPermanentBatchError) {
  for (int code = 1; code <= 16; ++code) {
    const absl::Status status(static_cast<absl::StatusCode>(code), "x");
    EXPECT_EQ(IsPermanentBatchError(status), code == 3) << status;
  }
  EXPECT_FALSE(IsPermanentBatchError(absl::OkStatus()));
}

TEST(BackoffPolicyTest, FullJitterStaysUnderAGrowingCappedBoundAndIsSeeded) {
  ExponentialBackoffPolicy prototype(absl::Milliseconds(10), absl::Milliseconds(100));
  std::unique_ptr<BackoffPolicy> a = prototype.clone(), b = prototype.clone();
  a->Seed(99);
  b->Seed(99);
  const absl::Duration bounds[] = {absl::Milliseconds(10),  absl::Milliseconds(20),
                                   absl::Milliseconds(40),  absl::Milliseconds(80),
                                   absl::Milliseconds(100), absl::Milliseconds(100)};
  bool any_below_half = false;
  for (absl::Duration bound : bounds) {
    const absl::Duration wait = a->OnCompletion();
    EXPECT_EQ(wait, b->OnCompletion());  // same seed, same waits
    EXPECT_GE(wait, absl::ZeroDuration());
    EXPECT_LE(wait, bound);
    if (wait < bound / 2) any_below_half = true;
  }
  EXPECT_TRUE(any_below_half);  // jittered over the whole range, for this seed
}

// Issue 17: a report the collector rejects as randomized with another design
// (FAILED_PRECONDITION, design fingerprint) is dropped alone, counted apart, and the design is
// fetched again; its neighbours are stored.
TEST_F(DeliveryTest, DesignMismatchDropsOnlyThatReportCountsItAndRefetchesTheDesign) {
  auto reporter = Make();
  const std::string first = ReportOne(*reporter);
  const std::string mismatched = ReportOne(*reporter, false);
  const std::string third = ReportOne(*reporter);
  ASSERT_EQ(transport_->design_calls(), 1);
  transport_->Reject(mismatched,
                     {.code = absl::StatusCode::kFailedPrecondition, .permanent = true});
  absl::Status flushed = reporter->Flush();
  EXPECT_EQ(flushed.code(), absl::StatusCode::kFailedPrecondition) << flushed;
  EXPECT_THAT(flushed.message(), HasSubstr("fetching the design again"));
  EXPECT_TRUE(transport_->IsStored(first));
  EXPECT_TRUE(transport_->IsStored(third));
  EXPECT_FALSE(transport_->IsStored(mismatched));
  EXPECT_EQ(transport_->sends(mismatched), 1) << "a mismatched report is never re-sent";
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->counters.dropped_design_mismatch, 1);
  EXPECT_EQ(stats->counters.dropped_rejected, 0);
  EXPECT_EQ(stats->counters.acknowledged, 2);
  EXPECT_EQ(stats->queued, 0);
  EXPECT_EQ(transport_->design_calls(), 2) << "the design was not fetched again";
}

}  // namespace delivery_contract_test
}  // namespace
}  // namespace deniable::client
