// Numeric metrics end to end: N devices (each its own Reporter and memory store, so its own
// alpha) report values with ReportValue through gRPC to the real collector, which counts every
// report exactly once and estimates the mean (1BitMean) or the histogram (dBitFlip) with
// intervals that contain the truth (and the median, from the histogram). Seeded devices, so the
// run repeats.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "deniable/common/clock.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/sqlite/sqlite_storage.h"

namespace deniable {
namespace {

constexpr int kDevices = 1200;

class SdkNumericEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = absl::StrCat(::testing::TempDir(), "/numeric_e2e_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    Cleanup();
    server::SqliteOptions sqlite;
    sqlite.path = path_;
    auto storage = server::SqliteStorage::Open(sqlite);
    ASSERT_TRUE(storage.ok()) << storage.status();
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    auto server =
        server::CollectorServer::Start(*std::move(storage), SystemClock::Default(), options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    queries_ = v1::QueryService::NewStub(server_->InProcessChannel());
    transport_ = client::MakeInsecureGrpcTransport(absl::StrCat("127.0.0.1:", server_->port()));
  }
  void TearDown() override {
    server_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) unlink((path_ + suffix).c_str());
  }

  // Creates the numeric metric `name` on [0, 100] (unit "ms") with `numeric` as its design.
  void CreateNumericMetric(const std::string& name, const v1::Numeric& numeric) {
    v1::CreateMetricRequest create;
    create.set_name(name);
    create.set_min_reports(1);
    create.mutable_range()->set_lo(0);
    create.mutable_range()->set_hi(100);
    create.mutable_range()->set_unit("ms");
    *create.mutable_design()->mutable_numeric() = numeric;
    grpc::ClientContext context;
    v1::Metric metric;
    grpc::Status status = queries_->CreateMetric(&context, create, &metric);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  // Device i reports `values[i]` of `metric` once, from its own reporter and store, seeded i.
  void ReportFromDevices(const std::string& metric, const std::vector<double>& values) {
    client::ReporterOptions options;
    options.background_sending = false;
    for (size_t i = 0; i < values.size(); ++i) {
      std::mt19937_64 gen(1000 + i);
      auto reporter =
          client::Reporter::CreateForTesting(transport_, options, gen, SystemClock::Default());
      ASSERT_TRUE(reporter->ReportValue(metric, values[i]).ok()) << i;
      ASSERT_TRUE(reporter->Flush(absl::Seconds(10)).ok()) << i;
      absl::StatusOr<client::DeliveryStats> stats = reporter->Stats();
      ASSERT_TRUE(stats.ok());
      EXPECT_EQ(stats->counters.acknowledged, 1);
      EXPECT_EQ(stats->values_clipped, values[i] < 0 || values[i] > 100 ? 1 : 0);
    }
  }

  v1::Prevalence Prevalence(const std::string& metric) {
    v1::GetPrevalenceRequest request;
    request.set_metric(metric);
    grpc::ClientContext context;
    v1::Prevalence prevalence;
    grpc::Status status = queries_->GetPrevalence(&context, request, &prevalence);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return prevalence;
  }

  std::string path_;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  std::shared_ptr<client::ReportTransport> transport_;
};

// Values spread over [0, 100] with a few outside it (clipped to the nearest end on the device):
// device i has (i * 37) % 113 - 6, so 6 of every 113 are below 0 and 6 above 100.
std::vector<double> Values() {
  std::vector<double> values;
  for (int i = 0; i < kDevices; ++i) values.push_back((i * 37) % 113 - 6.0);
  return values;
}

TEST_F(SdkNumericEndToEndTest, OneBitMeanCountsEveryDeviceAndItsIntervalHoldsTheTrueMean) {
  v1::Numeric numeric;
  numeric.set_mechanism(v1::ONE_BIT_MEAN);
  numeric.set_epsilon(std::log(3.0));
  CreateNumericMetric("load_ms", numeric);
  const std::vector<double> values = Values();
  ReportFromDevices("load_ms", values);
  double truth = 0;  // the mean of the clipped values: what the devices can report
  for (double v : values) truth += std::clamp(v, 0.0, 100.0) / kDevices;

  const v1::Prevalence p = Prevalence("load_ms");
  EXPECT_EQ(p.n(), kDevices);  // every report counted, exactly once
  ASSERT_TRUE(p.has_numeric());
  const v1::NumericEstimate& e = p.numeric();
  EXPECT_EQ(e.devices(), kDevices);
  EXPECT_EQ(e.mechanism(), "one_bit_mean");
  EXPECT_LE(e.mean_ci_lower(), truth);
  EXPECT_GE(e.mean_ci_upper(), truth);
  EXPECT_NEAR(e.mean(), truth, 5 * e.mean_standard_error());
  EXPECT_NEAR(e.total(), e.mean() * kDevices, 1e-6 * kDevices);
  std::printf("1BitMean: n=%lld truth=%.3f mean=%.3f se=%.3f [%.3f, %.3f]\n",
              static_cast<long long>(p.n()), truth, e.mean(), e.mean_standard_error(),
              e.mean_ci_lower(), e.mean_ci_upper());
}

TEST_F(SdkNumericEndToEndTest, DBitFlipCountsEveryBucketSampledAndItsBandHoldsTheTrueShares) {
  v1::Numeric numeric;
  numeric.set_mechanism(v1::D_BIT_FLIP);
  numeric.set_epsilon(2.0);
  numeric.set_buckets(5);
  numeric.set_sampled_buckets(2);
  CreateNumericMetric("age", numeric);
  const std::vector<double> values = Values();
  ReportFromDevices("age", values);
  std::vector<double> truth(5, 0);
  for (double v : values) {
    const int bucket = std::min(4, static_cast<int>(std::clamp(v, 0.0, 100.0) / 20));
    truth[bucket] += 1.0 / kDevices;
  }

  const v1::Prevalence p = Prevalence("age");
  EXPECT_EQ(p.n(), kDevices);
  ASSERT_TRUE(p.has_numeric());
  const v1::NumericEstimate& e = p.numeric();
  EXPECT_EQ(e.mechanism(), "d_bit_flip");
  ASSERT_EQ(e.buckets_size(), 5);
  int64_t sampled = 0;
  for (int j = 0; j < 5; ++j) {
    const v1::NumericBucket& b = e.buckets(j);
    SCOPED_TRACE(j);
    EXPECT_DOUBLE_EQ(b.lower(), 20.0 * j);
    EXPECT_DOUBLE_EQ(b.upper(), 20.0 * (j + 1));
    sampled += b.sampled();
    EXPECT_LE(b.ones(), b.sampled());
    EXPECT_LE(b.simultaneous_lower(), truth[j]);
    EXPECT_GE(b.simultaneous_upper(), truth[j]);
    std::printf("bucket %d: truth=%.4f unbiased=%.4f [%.4f, %.4f] sampled=%lld\n", j, truth[j],
                b.estimate_unbiased(), b.simultaneous_lower(), b.simultaneous_upper(),
                static_cast<long long>(b.sampled()));
  }
  EXPECT_EQ(sampled, 2 * kDevices);  // d = 2 buckets per report, each counted once
  std::vector<double> sorted;
  for (double v : values) sorted.push_back(std::clamp(v, 0.0, 100.0));
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[kDevices / 2];
  bool has_median = false;
  for (const v1::NumericQuantile& q : e.quantiles()) {
    if (q.level() != 0.5) continue;
    has_median = true;
    EXPECT_LE(q.ci_lower(), median);
    EXPECT_GE(q.ci_upper(), median);
    std::printf("median: truth=%.3f estimate=%.3f [%.3f, %.3f]\n", median, q.value(), q.ci_lower(),
                q.ci_upper());
  }
  EXPECT_TRUE(has_median);  // 0.5, 0.9 and 0.99 when none are asked
}

}  // namespace
}  // namespace deniable
