// A full disk or an I/O error while a batch commits gives the caller an error and no
// acknowledgement, leaves the stored reports and counts as they were, and the store keeps
// working once the fault is gone; the health service says NOT_SERVING while every write fails
// (disk full, a damaged keyed file) and SERVING once one succeeds. Faults come from an SQLite VFS
// wrapper (tests/support).
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/service/collector_server.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/support/eventually.h"
#include "tests/support/fault_vfs.h"
#include "tests/support/report_batches.h"

namespace deniable {
namespace {

using testing::Fault;
using testing::FaultVfs;
using ::testing::HasSubstr;

using testing::Batch;
constexpr int64_t kNow = testing::kBatchHour;

class StorageFaultTest : public ::testing::TestWithParam<Fault> {
 protected:
  void SetUp() override {
    FaultVfs::Install();
    char tmpl[] = "/tmp/deniable-fault-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto storage = server::SqliteStorage::Open({.path = dir_ + "/d.db"});
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = storage->get();
    server::ServerOptions options;
    options.listen_address = "";
    auto server = server::CollectorServer::Start(*std::move(storage), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = server_->InProcessChannel();
    reports_ = v1::ReportService::NewStub(channel);
    auto queries = v1::QueryService::NewStub(channel);
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    grpc::ClientContext context;
    ASSERT_TRUE(queries->CreateMetric(&context, create, &metric).ok());
  }
  void TearDown() override {
    FaultVfs::Arm(Fault::kNone);
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  grpc::Status Submit(const v1::SubmitReportsRequest& request,
                      v1::SubmitReportsResponse* response) {
    grpc::ClientContext context;
    return reports_->SubmitReports(&context, request, response);
  }
  int64_t CountsTotal() {
    auto rows = storage_->ReadCounts(1, 0, kNow + 1);
    int64_t n = 0;
    for (const auto& row : *rows) n += row.n;
    return n;
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::string dir_;
  server::SqliteStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
};

TEST_P(StorageFaultTest, FailedCommitIsNotAcknowledgedAndChangesNothing) {
  v1::SubmitReportsResponse response;
  ASSERT_TRUE(Submit(Batch('a', 5), &response).ok());

  FaultVfs::Arm(GetParam());
  v1::SubmitReportsResponse failed;
  grpc::Status s = Submit(Batch('b', 7), &failed);
  FaultVfs::Arm(Fault::kNone);
  // Both may pass: UNAVAILABLE, which every client retries (never INTERNAL, which the SDK used
  // to treat as final, nor RESOURCE_EXHAUSTED, which is the caller's quota).
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  if (GetParam() == Fault::kDiskFull) {
    EXPECT_THAT(s.error_message(), HasSubstr("disk is full"));
  } else {
    EXPECT_THAT(s.error_message(), HasSubstr("I/O error"));
  }
  EXPECT_EQ(failed.accepted(), 0u);
  EXPECT_EQ(*storage_->ReportCount(), 5);
  EXPECT_EQ(CountsTotal(), 5);
  EXPECT_EQ(*storage_->IntegrityCheck(), "ok");

  // The store recovers; the retried batch is stored once.
  v1::SubmitReportsResponse retried;
  ASSERT_TRUE(Submit(Batch('b', 7), &retried).ok());
  // All 7 are new: the failed transaction left no trace, on disk or in the in-memory index of
  // recent report ids.
  EXPECT_EQ(retried.accepted(), 7u);
  EXPECT_EQ(retried.duplicates(), 0u);
  EXPECT_EQ(*storage_->ReportCount(), 12);
  EXPECT_EQ(CountsTotal(), 12);
}

INSTANTIATE_TEST_SUITE_P(Faults, StorageFaultTest,
                         ::testing::Values(Fault::kDiskFull, Fault::kSyncError),
                         [](const auto& param_info) {
                           return param_info.param == Fault::kDiskFull ? "DiskFull" : "SyncError";
                         });

// The health service with the storage's writes failing: NOT_SERVING while they fail, SERVING once
// one succeeds (issue 37 item 6; docs/operations.md, "Health").
class StorageHealthTest : public ::testing::Test {
 protected:
  using Health = grpc::health::v1::HealthCheckResponse;
  void SetUp() override {
    FaultVfs::Install();
    char tmpl[] = "/tmp/deniable-health-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto storage = server::SqliteStorage::Open({.path = dir_ + "/d.db"});
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = storage->get();
    server::ServerOptions options;
    options.listen_address = "";
    options.health_check_interval = absl::Milliseconds(10);
    auto server = server::CollectorServer::Start(*std::move(storage), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = server_->InProcessChannel();
    reports_ = v1::ReportService::NewStub(channel);
    health_ = grpc::health::v1::Health::NewStub(channel);
    auto queries = v1::QueryService::NewStub(channel);
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    grpc::ClientContext context;
    ASSERT_TRUE(queries->CreateMetric(&context, create, &metric).ok());
  }
  void TearDown() override {
    FaultVfs::Arm(Fault::kNone);
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  grpc::Status Submit(const v1::SubmitReportsRequest& request,
                      v1::SubmitReportsResponse* response) {
    grpc::ClientContext context;
    return reports_->SubmitReports(&context, request, response);
  }
  Health::ServingStatus HealthStatus() {
    grpc::ClientContext context;
    Health response;
    if (!health_->Check(&context, grpc::health::v1::HealthCheckRequest(), &response).ok()) {
      return Health::UNKNOWN;
    }
    return response.status();
  }
  bool HealthBecomes(Health::ServingStatus want) {
    return testing_util::Eventually([&] { return HealthStatus() == want; });
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::string dir_;
  server::SqliteStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

TEST_F(StorageHealthTest, DiskFullIsNotServingUntilAWriteSucceeds) {
  v1::SubmitReportsResponse response;
  ASSERT_TRUE(Submit(Batch('a', 5), &response).ok());
  ASSERT_TRUE(HealthBecomes(Health::SERVING));

  FaultVfs::Arm(Fault::kDiskFull);
  grpc::Status s = Submit(Batch('b', 7), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("disk is full"));
  EXPECT_TRUE(HealthBecomes(Health::NOT_SERVING));
  // Still full: the storage's own probe write fails too, so it stays unhealthy.
  absl::Status health = storage_->Health();
  EXPECT_EQ(health.code(), absl::StatusCode::kUnavailable) << health;
  EXPECT_THAT(std::string(health.message()), HasSubstr("disk is full"));
  EXPECT_EQ(HealthStatus(), Health::NOT_SERVING);
  // What GET /healthz answers (503 with the reason; server/http).
  absl::Status serving = server_->ServingStatus("deniable.v1.ReportService");
  EXPECT_EQ(serving.code(), absl::StatusCode::kUnavailable) << serving;
  EXPECT_THAT(std::string(serving.message()), HasSubstr("disk is full"));

  // Space comes back: the next probe commits and the server serves again, with no append.
  FaultVfs::Arm(Fault::kNone);
  EXPECT_TRUE(HealthBecomes(Health::SERVING));
  EXPECT_TRUE(server_->ServingStatus("deniable.v1.ReportService").ok());
  v1::SubmitReportsResponse retried;
  ASSERT_TRUE(Submit(Batch('b', 7), &retried).ok());
  EXPECT_EQ(retried.accepted(), 7u);
  EXPECT_EQ(*storage_->ReportCount(), 12);
}

TEST_F(StorageHealthTest, DamagedKeyedFileIsNotServingUntilAWriteSucceeds) {
  v1::SubmitReportsResponse response;
  ASSERT_TRUE(Submit(Batch('a', 5), &response).ok());
  // The hour moves into the keyed file: the next report of it is looked up there.
  ASSERT_TRUE(storage_->MoveRecentReports().ok());
  ASSERT_TRUE(HealthBecomes(Health::SERVING));

  FaultVfs::Arm(Fault::kCorruptKeyed);
  grpc::Status s = Submit(Batch('c', 3), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DATA_LOSS) << s.error_message();
  EXPECT_TRUE(HealthBecomes(Health::NOT_SERVING));
  // No probe repairs a damaged file: unhealthy (DATA_LOSS) even once reads work again...
  FaultVfs::Arm(Fault::kNone);
  absl::Status health = storage_->Health();
  EXPECT_EQ(health.code(), absl::StatusCode::kDataLoss) << health;
  EXPECT_EQ(HealthStatus(), Health::NOT_SERVING);
  EXPECT_THAT(std::string(server_->ServingStatus("").message()), HasSubstr("damaged"));
  // ...until a write succeeds.
  ASSERT_TRUE(Submit(Batch('c', 3), &response).ok());
  EXPECT_EQ(response.accepted(), 3u);
  EXPECT_TRUE(HealthBecomes(Health::SERVING));
  EXPECT_EQ(*storage_->ReportCount(), 8);
}

}  // namespace
}  // namespace deniable
