// A full disk or an I/O error while a batch commits gives the caller an error and no
// acknowledgement, leaves the stored reports and counts as they were, and the store keeps
// working once the fault is gone. Faults come from an SQLite VFS wrapper (tests/support).
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/service/collector_server.h"
#include "server/storage/sqlite_storage.h"
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

}  // namespace
}  // namespace deniable
