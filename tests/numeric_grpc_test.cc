// Numeric metrics (issue 28) over gRPC (in-process channel): create a 1BitMean and a dBitFlip
// metric, fetch the design with its range, submit reports (one bad one rejected alone, naming
// its field), and read the mean and the histogram back, with the per-metric Prometheus counters
// counting the numeric reports.
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <memory>
#include <string>

#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class NumericGrpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.listen_address = "";  // in-process only
    options.query.default_min_reports = 1;
    auto server =
        server::CollectorServer::Start(std::make_unique<server::MemoryStorage>(), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    reports_ = v1::ReportService::NewStub(server_->InProcessChannel());
    queries_ = v1::QueryService::NewStub(server_->InProcessChannel());
  }

  void Create(const std::string& name, v1::NumericMechanism mechanism, int buckets) {
    v1::CreateMetricRequest create;
    create.set_name(name);
    create.mutable_range()->set_lo(0);
    create.mutable_range()->set_hi(200);
    create.mutable_range()->set_unit("ms");
    create.mutable_design()->mutable_numeric()->set_mechanism(mechanism);
    create.mutable_design()->mutable_numeric()->set_epsilon(std::log(3.0));
    create.mutable_design()->mutable_numeric()->set_buckets(static_cast<uint32_t>(buckets));
    v1::Metric metric;
    grpc::ClientContext context;
    const grpc::Status status = queries_->CreateMetric(&context, create, &metric);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(metric.range().unit(), "ms");
  }

  v1::Report NewReport(const std::string& metric) {
    v1::Report r;
    r.set_metric(metric);
    r.set_design_version(1);
    r.set_report_id(std::string(15, 'n') + static_cast<char>(next_id_++));
    r.set_event_time_seconds(kNow);
    return r;
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  int next_id_ = 0;
};

TEST_F(NumericGrpcTest, MeanAndHistogramEndToEnd) {
  Create("latency", v1::ONE_BIT_MEAN, 0);
  Create("latency_hist", v1::D_BIT_FLIP, 2);
  {
    v1::GetDesignRequest request;
    request.set_metric("latency_hist");
    v1::GetDesignResponse design;
    grpc::ClientContext context;
    ASSERT_TRUE(reports_->GetDesign(&context, request, &design).ok());
    EXPECT_EQ(design.range().hi(), 200);
    EXPECT_EQ(design.design().parameters().numeric().sampled_buckets(), 2u);
  }
  v1::SubmitReportsRequest batch;
  for (int i = 0; i < 40; ++i) {  // 30 ones of 40: ybar = 3/4, pi = (3 - 1)/2 = 1
    v1::Report r = NewReport("latency");
    r.set_bit(i < 30 ? 1 : 0);
    *batch.add_reports() = r;
  }
  for (int i = 0; i < 40; ++i) {  // every report samples both buckets: bucket 0's bit 1 in 3/4
    v1::Report r = NewReport("latency_hist");
    r.mutable_numeric()->add_buckets(0);
    r.mutable_numeric()->add_buckets(1);
    r.mutable_numeric()->add_bits(i < 30);
    r.mutable_numeric()->add_bits(i >= 30);
    *batch.add_reports() = r;
  }
  v1::Report bad = NewReport("latency_hist");
  bad.mutable_numeric()->add_buckets(1);
  bad.mutable_numeric()->add_buckets(0);
  bad.mutable_numeric()->add_bits(true);
  bad.mutable_numeric()->add_bits(false);
  *batch.add_reports() = bad;
  v1::SubmitReportsResponse submitted;
  {
    grpc::ClientContext context;
    const grpc::Status status = reports_->SubmitReports(&context, batch, &submitted);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_EQ(submitted.accepted(), 80u);
  ASSERT_EQ(submitted.rejections_size(), 1);
  EXPECT_EQ(submitted.rejections(0).index(), 80u);
  EXPECT_EQ(submitted.rejections(0).code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(submitted.rejections(0).reason(), HasSubstr("reports[80].numeric"));

  v1::GetPrevalenceRequest request;
  request.set_metric("latency");
  request.set_start_time_seconds(kNow);
  request.set_end_time_seconds(kNow + 3600);
  v1::Prevalence mean;
  {
    grpc::ClientContext context;
    const grpc::Status status = queries_->GetPrevalence(&context, request, &mean);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  EXPECT_NEAR(mean.numeric().mean(), 200.0, 1e-9);  // lo + m (ybar (e^eps+1) - 1)/(e^eps - 1)
  EXPECT_NEAR(mean.numeric().total(), 200.0 * 40, 1e-6);
  EXPECT_EQ(mean.numeric().devices(), 40);
  EXPECT_EQ(mean.numeric().unit(), "ms");

  request.set_metric("latency_hist");
  request.add_quantiles(0.5);
  v1::Prevalence hist;
  {
    grpc::ClientContext context;
    const grpc::Status status = queries_->GetPrevalence(&context, request, &hist);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  ASSERT_EQ(hist.numeric().buckets_size(), 2);
  const double a = std::sqrt(3.0);  // e^(eps/2)
  const double share0 = (0.75 - 1 / (a + 1)) / ((a - 1) / (a + 1));
  EXPECT_NEAR(hist.numeric().buckets(0).estimate_unbiased(), share0, 1e-12);
  EXPECT_NEAR(hist.numeric().buckets(1).estimate_unbiased(),
              (0.25 - 1 / (a + 1)) / ((a - 1) / (a + 1)), 1e-12);
  EXPECT_EQ(hist.numeric().buckets(0).sampled(), 40);
  // The median: bucket 0 = [0, 100) holds more than half of the values.
  ASSERT_EQ(hist.numeric().quantiles_size(), 1);
  EXPECT_EQ(hist.numeric().quantiles(0).level(), 0.5);
  EXPECT_GE(hist.numeric().quantiles(0).value(), 0);
  EXPECT_LT(hist.numeric().quantiles(0).value(), 100);
  EXPECT_LE(hist.numeric().quantiles(0).ci_lower(), hist.numeric().quantiles(0).value());
  EXPECT_GE(hist.numeric().quantiles(0).ci_upper(), hist.numeric().quantiles(0).value());

  // The per-metric Prometheus counters count the numeric reports like any other.
  const std::string exposition =
      prometheus::TextSerializer().Serialize(server_->counters().registry()->Collect());
  EXPECT_THAT(exposition,
              HasSubstr("deniable_reports_total{metric=\"latency_hist\",outcome=\"accepted\"} 40"));
  EXPECT_THAT(exposition,
              HasSubstr("deniable_reports_total{metric=\"latency\",outcome=\"accepted\"} 40"));
  EXPECT_THAT(exposition, HasSubstr("deniable_reports_rejected_total{code=\"INVALID_ARGUMENT\","
                                    "metric=\"latency_hist\"} 1"));
}

}  // namespace
}  // namespace deniable
