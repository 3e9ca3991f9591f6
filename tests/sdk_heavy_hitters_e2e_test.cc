// Heavy-hitters metrics end to end: N devices (each its own Reporter and store, so its own group)
// report strings with ReportString through gRPC to the real collector, which counts every
// report once and finds the common values with GetTopValues (no candidate list), each share's
// interval holding the truth. Seeded devices and a fixed hash salt, so the run repeats (with a
// salt drawn at random, each run's collisions and intervals differ).
#include <unistd.h>

#include <cstdio>
#include <map>
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

constexpr int kDevices = 4000;

class SdkHeavyHittersEndToEndTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = absl::StrCat(::testing::TempDir(), "/hh_e2e_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    Cleanup();
    server::SqliteOptions sqlite;
    sqlite.path = path_;
    sqlite.durability = server::Durability::kNormal;  // a test database: speed over power loss
    auto storage = server::SqliteStorage::Open(sqlite);
    ASSERT_TRUE(storage.ok()) << storage.status();
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.heavy_hitters_salt = 41;
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

  std::string path_;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  std::shared_ptr<client::ReportTransport> transport_;
};

TEST_F(SdkHeavyHittersEndToEndTest, TopValuesFindsTheValuesManyDevicesSent) {
  v1::CreateMetricRequest create;
  create.set_name("crash_sig");
  create.set_min_reports(1);
  v1::HeavyHitters* h = create.mutable_design()->mutable_heavy_hitters();
  h->set_epsilon(4);
  h->set_max_length(3);
  h->set_rows(4);
  h->set_width(64);
  {
    grpc::ClientContext context;
    v1::Metric metric;
    grpc::Status status = queries_->CreateMetric(&context, create, &metric);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  // Device i holds "oom" (half), "npe" (three in ten) or one of 100 rare values.
  std::map<std::string, int> truth;
  client::ReporterOptions options;
  options.background_sending = false;
  for (int i = 0; i < kDevices; ++i) {
    const int r = i % 10;
    const std::string value = r < 5 ? "oom" : r < 8 ? "npe" : absl::StrCat("r", i % 100);
    ++truth[value];
    std::mt19937_64 gen(5000 + i);
    auto reporter =
        client::Reporter::CreateForTesting(transport_, options, gen, SystemClock::Default());
    ASSERT_TRUE(reporter->ReportString("crash_sig", value).ok()) << i;
    ASSERT_TRUE(reporter->Flush(absl::Seconds(10)).ok()) << i;
  }

  v1::GetTopValuesRequest request;
  request.set_metric("crash_sig");
  grpc::ClientContext context;
  v1::TopValues top;
  grpc::Status status = queries_->GetTopValues(&context, request, &top);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(top.devices(), kDevices);  // every report counted, exactly once
  ASSERT_GE(top.values_size(), 2);
  EXPECT_EQ(top.values(0).value(), "oom");
  EXPECT_EQ(top.values(1).value(), "npe");
  for (int i = 0; i < 2; ++i) {
    const double share = static_cast<double>(truth[top.values(i).value()]) / kDevices;
    EXPECT_LE(top.values(i).simultaneous_lower(), share) << i;
    EXPECT_GE(top.values(i).simultaneous_upper(), share) << i;
    std::printf("%s: share %.3f [%.3f, %.3f], true %.3f\n", top.values(i).value().c_str(),
                top.values(i).share(), top.values(i).simultaneous_lower(),
                top.values(i).simultaneous_upper(), share);
  }
  std::printf("devices %lld, detection threshold %.3f, values %d\n",
              static_cast<long long>(top.devices()), top.detection_threshold(), top.values_size());
}

}  // namespace
}  // namespace deniable
