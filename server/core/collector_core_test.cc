// CollectorCore (collector_core.h): the calls both front ends make, the batch accounting they
// share (RejectBatch, SubmitReports) and the rate limit taken before ingestion.
#include "server/core/collector_core.h"

#include <future>
#include <memory>
#include <string>
#include <utility>

#include "deniable/common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/core_test_util.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/storage_error.h"

namespace deniable::server {
namespace {

using testing_util::CountedBatch;
using testing_util::TwoCoinMetric;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;  // on an hour boundary

class CollectorCoreTest : public ::testing::Test {
 protected:
  void Open(const CoreOptions& options = {}) {
    auto storage = std::make_unique<MemoryStorage>();
    storage_ = storage.get();
    core_ = std::make_unique<CollectorCore>(std::move(storage), &clock_, options);
  }

  // SubmitReports, waiting for the answer (which comes after the commit).
  absl::StatusOr<v1::SubmitReportsResponse> Submit(Transport transport, const Caller& caller,
                                                   const v1::SubmitReportsRequest& request) {
    std::promise<absl::StatusOr<v1::SubmitReportsResponse>> done;
    std::future<absl::StatusOr<v1::SubmitReportsResponse>> answer = done.get_future();
    core_->SubmitReports(transport, caller, request,
                         [&done](absl::StatusOr<v1::SubmitReportsResponse> result) {
                           done.set_value(std::move(result));
                         });
    return answer.get();
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  MemoryStorage* storage_ = nullptr;
  std::unique_ptr<CollectorCore> core_;
};

TEST_F(CollectorCoreTest, TransportNamesAreTheCountersLabels) {
  EXPECT_STREQ(TransportName(Transport::kGrpc), "grpc");
  EXPECT_STREQ(TransportName(Transport::kHttp), "http");
}

TEST_F(CollectorCoreTest, ACreatedMetricIsListedAndItsDesignServed) {
  Open();
  absl::StatusOr<v1::Metric> created = core_->CreateMetric(TwoCoinMetric("drugs"));
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<v1::ListMetricsResponse> listed = core_->ListMetrics({});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->metrics_size(), 1);
  EXPECT_EQ(listed->metrics(0).name(), "drugs");
  v1::GetDesignRequest get;
  get.set_metric("drugs");
  absl::StatusOr<v1::GetDesignResponse> design = core_->GetDesign(get);
  ASSERT_TRUE(design.ok()) << design.status();
  EXPECT_DOUBLE_EQ(design->design().a(), 0.75);
  v1::DeleteMetricRequest del;
  del.set_metric("drugs");
  EXPECT_TRUE(core_->DeleteMetric(del).ok());
  EXPECT_EQ(core_->DeleteMetric(del).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(CollectorCoreTest, AnAcceptedBatchIsCountedOnceWhicheverFrontEndSentIt) {
  Open();
  ASSERT_TRUE(core_->CreateMetric(TwoCoinMetric("drugs")).ok());
  uint64_t next_id = 1;
  absl::StatusOr<v1::SubmitReportsResponse> grpc =
      Submit(Transport::kGrpc, Caller(), CountedBatch("drugs", 2, 1, kNow, 1, &next_id));
  absl::StatusOr<v1::SubmitReportsResponse> http =
      Submit(Transport::kHttp, Caller(), CountedBatch("drugs", 1, 0, kNow, 1, &next_id));
  ASSERT_TRUE(grpc.ok() && http.ok()) << grpc.status() << http.status();
  EXPECT_EQ(grpc->accepted(), 3);
  EXPECT_EQ(http->accepted(), 1);
  const v1::ServerStats stats = core_->GetServerStats();
  EXPECT_EQ(stats.batches_accepted(), 2u);
  EXPECT_EQ(stats.reports_accepted(), 4u);
  EXPECT_EQ(stats.batches_rejected(), 0u);
  EXPECT_EQ(storage_->ReportCount(), 4);
}

TEST_F(CollectorCoreTest, ABatchOverTheRateLimitIsRefusedWholeAndCountedAsRateLimited) {
  CoreOptions options;
  options.rate_limit.reports_per_second = 0.001;
  options.rate_limit.burst = 2;
  Open(options);
  ASSERT_TRUE(core_->CreateMetric(TwoCoinMetric("drugs")).ok());
  Caller caller;
  caller.rate_key = "t:1";
  uint64_t next_id = 1;
  absl::StatusOr<v1::SubmitReportsResponse> refused =
      Submit(Transport::kHttp, caller, CountedBatch("drugs", 3, 0, kNow, 1, &next_id));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(storage_->ReportCount(), 0);
  const v1::ServerStats stats = core_->GetServerStats();
  EXPECT_EQ(stats.batches_rejected(), 1u);
  EXPECT_EQ(stats.reports_rejected(), 3u);
  EXPECT_EQ(stats.rejected_rate_limited(), 1u);
}

TEST_F(CollectorCoreTest, RejectBatchCountsTheReasonAClientSees) {
  Open();
  core_->RejectBatch(Transport::kGrpc, absl::UnauthenticatedError("authorization: no token"), 5,
                     /*rate_limited=*/false);
  // A storage constraint failure reaches clients as INTERNAL: counted as "other", not invalid.
  core_->RejectBatch(Transport::kHttp,
                     StorageFailure(absl::StatusCode::kAlreadyExists, "storage: dup", "UNIQUE"), 2,
                     /*rate_limited=*/false);
  const v1::ServerStats stats = core_->GetServerStats();
  EXPECT_EQ(stats.batches_rejected(), 2u);
  EXPECT_EQ(stats.reports_rejected(), 7u);
  EXPECT_EQ(stats.rejected_unauthenticated(), 1u);
  EXPECT_EQ(stats.rejected_other(), 1u);
  EXPECT_EQ(stats.rejected_invalid(), 0u);
}

TEST_F(CollectorCoreTest, AnImportIsTheCallersImportWithItsTokenId) {
  Caller caller;
  EXPECT_EQ(ReportCallOf(caller).origin, ReportOrigin::kDevice);
  caller.import = true;
  caller.principal = Principal{.token_id = 42, .role = Role::kAnalyst, .hash = {}};
  const ReportCall call = ReportCallOf(caller);
  EXPECT_EQ(call.origin, ReportOrigin::kImport);
  EXPECT_EQ(call.token_id, 42);
}

}  // namespace
}  // namespace deniable::server
