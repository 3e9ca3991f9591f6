// Retention through the collector (issue 17): SetRetention and CreateMetric's retention over gRPC
// (analyst calls in-process), the metric's retention in ListMetrics and GetDesign, and
// CollectorServer::ApplyRetention at a fake clock's "now": expired reports dropped, counted in
// AdminService's reports_dropped_by_retention, the estimate over the retained window exact under
// DROP_REPORTS_AND_COUNTS and the old estimate unchanged under DROP_REPORTS_KEEP_COUNTS.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "deniable/v1/admin_service.grpc.pb.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kDay = 86400;
constexpr int64_t kStart = 1'700'000'000 - 1'700'000'000 % kDay;  // a UTC midnight

class RetentionServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.listen_address = "";
    options.query.default_min_reports = 1;
    options.ingest.max_report_age = absl::Hours(24 * 3);  // the dedup window: 3 days
    options.retention_interval = absl::ZeroDuration();    // runs only when the test says so
    auto server =
        server::CollectorServer::Start(std::make_unique<server::MemoryStorage>(), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = server_->InProcessChannel();
    reports_ = v1::ReportService::NewStub(channel_);
    queries_ = v1::QueryService::NewStub(channel_);
    admin_ = v1::AdminService::NewStub(channel_);
  }

  v1::Metric Create(const std::string& name, uint32_t days, v1::RetentionPolicy policy) {
    v1::CreateMetricRequest create;
    create.set_name(name);
    create.mutable_design()->mutable_two_coin();
    create.set_retention_days(days);
    create.set_retention_policy(policy);
    v1::Metric metric;
    grpc::ClientContext context;
    const grpc::Status status = queries_->CreateMetric(&context, create, &metric);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return metric;
  }

  // `n` reports of `metric` (bit 1 for the first `yes`) at the clock's hour, ids from `first`.
  void Submit(const std::string& metric, int n, int yes, int first) {
    v1::SubmitReportsRequest request;
    const int64_t now = absl::ToUnixSeconds(clock_.Now());
    for (int i = 0; i < n; ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric(metric);
      r->set_design_version(1);
      r->set_bit(i < yes ? 1 : 0);
      std::string id(16, '\0');
      id[0] = static_cast<char>(first + i);
      id[1] = static_cast<char>(metric.size());
      r->set_report_id(id);
      r->set_event_time_seconds(now - now % 3600);
    }
    v1::SubmitReportsResponse response;
    grpc::ClientContext context;
    ASSERT_TRUE(reports_->SubmitReports(&context, request, &response).ok());
    ASSERT_EQ(response.accepted(), static_cast<uint32_t>(n));
  }

  v1::Prevalence Prevalence(const std::string& metric, int64_t start, int64_t end) {
    v1::GetPrevalenceRequest request;
    request.set_metric(metric);
    request.set_start_time_seconds(start);
    request.set_end_time_seconds(end);
    v1::Prevalence p;
    grpc::ClientContext context;
    const grpc::Status status = queries_->GetPrevalence(&context, request, &p);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return p;
  }

  FakeClock clock_{absl::FromUnixSeconds(kStart)};
  std::unique_ptr<server::CollectorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

TEST_F(RetentionServerTest, RetentionIsSetShownAndChecked) {
  v1::Metric created = Create("m", 30, v1::DROP_REPORTS_AND_COUNTS);
  EXPECT_EQ(created.retention_days(), 30u);
  EXPECT_EQ(created.retention_policy(), v1::DROP_REPORTS_AND_COUNTS);
  v1::Metric plain = Create("plain", 0, v1::RETENTION_POLICY_UNSPECIFIED);
  EXPECT_EQ(plain.retention_days(), 0u);
  EXPECT_EQ(plain.retention_policy(), v1::DROP_REPORTS_KEEP_COUNTS);

  v1::SetRetentionRequest set;
  set.set_metric("plain");
  set.set_retention_days(7);
  v1::Metric updated;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(queries_->SetRetention(&context, set, &updated).ok());
  }
  EXPECT_EQ(updated.retention_days(), 7u);
  EXPECT_EQ(updated.retention_policy(), v1::DROP_REPORTS_KEEP_COUNTS);

  v1::ListMetricsResponse list;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(queries_->ListMetrics(&context, v1::ListMetricsRequest(), &list).ok());
  }
  ASSERT_EQ(list.metrics_size(), 2);
  EXPECT_EQ(list.metrics(1).retention_days(), 7u);
  v1::GetDesignRequest get;
  get.set_metric("m");
  v1::GetDesignResponse design;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(reports_->GetDesign(&context, get, &design).ok());
  }
  EXPECT_EQ(design.retention_days(), 30u);
  EXPECT_EQ(design.retention_policy(), v1::DROP_REPORTS_AND_COUNTS);

  const auto refused = [&](v1::SetRetentionRequest request) {
    grpc::ClientContext context;
    v1::Metric ignored;
    return queries_->SetRetention(&context, request, &ignored);
  };
  set.set_retention_days(36501);
  grpc::Status too_long = refused(set);
  EXPECT_EQ(too_long.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(too_long.error_message(), HasSubstr("retention_days"));
  set.set_retention_days(1);
  set.set_retention_policy(static_cast<v1::RetentionPolicy>(9));
  EXPECT_THAT(refused(set).error_message(), HasSubstr("retention_policy"));
  set.set_retention_policy(v1::DROP_REPORTS_KEEP_COUNTS);
  set.set_metric("nope");
  EXPECT_EQ(refused(set).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(RetentionServerTest, ApplyRetentionDropsExpiredReportsCountsThemAndKeepsEstimatesExact) {
  Create("keep", 10, v1::DROP_REPORTS_KEEP_COUNTS);
  Create("drop", 10, v1::DROP_REPORTS_AND_COUNTS);
  // Day 0: 10 reports (8 yes) of each; day 20: 10 reports (2 yes) of each.
  Submit("keep", 10, 8, 0);
  Submit("drop", 10, 8, 0);
  const v1::Prevalence keep_before = Prevalence("keep", 0, kStart + 30 * kDay);
  clock_.Advance(absl::Hours(24 * 20));
  Submit("keep", 10, 2, 100);
  Submit("drop", 10, 2, 100);
  const v1::Prevalence drop_window = Prevalence("drop", kStart + 15 * kDay, kStart + 30 * kDay);
  const v1::Prevalence keep_all = Prevalence("keep", 0, kStart + 30 * kDay);

  absl::StatusOr<server::RetentionResult> r = server_->ApplyRetention();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reports_dropped, 20);  // day 0 of both metrics
  v1::ServerStats stats;
  {
    grpc::ClientContext context;
    ASSERT_TRUE(admin_->GetServerStats(&context, v1::GetServerStatsRequest(), &stats).ok());
  }
  EXPECT_EQ(stats.reports_dropped_by_retention(), 20u);

  // Keep counts: every estimate as before. Drop counts: day 0 is gone, the retained window's
  // estimate is exactly what it was.
  const v1::Prevalence keep_after = Prevalence("keep", 0, kStart + 30 * kDay);
  EXPECT_EQ(keep_after.n(), 20);
  EXPECT_EQ(keep_after.estimate_unbiased(), keep_all.estimate_unbiased());
  EXPECT_EQ(keep_before.n(), 10);
  const v1::Prevalence drop_all = Prevalence("drop", 0, kStart + 30 * kDay);
  EXPECT_EQ(drop_all.n(), 10);
  EXPECT_EQ(drop_all.yes_count(), 2);
  EXPECT_EQ(drop_all.estimate_unbiased(), drop_window.estimate_unbiased());
  EXPECT_EQ(drop_all.ci_lower(), drop_window.ci_lower());

  // Nothing more to drop until more time passes.
  absl::StatusOr<server::RetentionResult> again = server_->ApplyRetention();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->reports_dropped, 0);
}

}  // namespace
}  // namespace deniable
