// The SDK against the real collector whose storage fails: while the server's SQLite returns I/O
// errors at commit and then "disk full" (fault VFS, tests/support/fault_vfs.h), every batch the
// device sends fails; the device keeps every report (nothing dropped), and once the storage
// recovers every report made on the device is counted exactly once.
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/support/fault_vfs.h"

namespace deniable {
namespace {

using testing::Fault;
using testing::FaultVfs;

class SdkStorageFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FaultVfs::Install();
    char tmpl[] = "/tmp/deniable-sdk-fault-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto storage = server::SqliteStorage::Open({.path = dir_ + "/server.db"});
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = storage->get();
    server::ServerOptions options;
    options.listen_address = "";
    auto server =
        server::CollectorServer::Start(*std::move(storage), SystemClock::Default(), options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto queries = v1::QueryService::NewStub(server_->InProcessChannel());
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

  int64_t CountsTotal() {
    auto rows = storage_->ReadCounts(1, 0, absl::ToUnixSeconds(absl::Now()) + 3600);
    if (!rows.ok()) return -1;
    int64_t n = 0;
    for (const auto& row : *rows) n += row.n;
    return n;
  }

  std::string dir_;
  server::SqliteStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
};

TEST_F(SdkStorageFaultTest, EveryReportIsCountedOnceAfterIoErrorsAndDiskFull) {
  client::ReporterOptions options;
  options.background_sending = false;     // Flush() alone sends: each phase is exact
  options.one_report_per_period = false;  // each Report() stands for a device
  options.max_batch_reports = 7;
  options.retry_policy = std::make_shared<client::LimitedErrorCountRetryPolicy>(2);
  options.backoff_policy = std::make_shared<client::ExponentialBackoffPolicy>(
      absl::Milliseconds(1), absl::Milliseconds(5));
  // The device store is in memory: the fault VFS is SQLite's default for the whole process.
  std::unique_ptr<client::Reporter> reporter =
      client::Reporter::Create(client::MakeGrpcTransport(server_->InProcessChannel()), options);
  int made = 0;
  auto report = [&](int n) {
    for (int i = 0; i < n; ++i, ++made) ASSERT_TRUE(reporter->Report("m", made % 3 == 0).ok());
  };

  report(10);
  ASSERT_TRUE(reporter->Flush(absl::Seconds(10)).ok());
  ASSERT_EQ(*storage_->ReportCount(), 10);

  for (Fault fault : {Fault::kSyncError, Fault::kDiskFull}) {
    report(15);
    FaultVfs::Arm(fault);
    absl::Status flushed = reporter->Flush(absl::Seconds(10));
    FaultVfs::Arm(Fault::kNone);
    EXPECT_FALSE(flushed.ok());  // the retry policy ran out while the storage failed
    absl::StatusOr<client::DeliveryStats> stats = reporter->Stats();
    ASSERT_TRUE(stats.ok());
    EXPECT_EQ(stats->queued, 15) << flushed;  // kept, not dropped
    EXPECT_EQ(stats->counters.dropped_rejected, 0) << flushed;
    EXPECT_EQ(*storage_->ReportCount(), made - 15);  // nothing of this round stored

    ASSERT_TRUE(reporter->Flush(absl::Seconds(10)).ok());  // the storage recovered
    EXPECT_EQ(*storage_->ReportCount(), made);
    EXPECT_EQ(reporter->pending(), 0u);
    EXPECT_EQ(CountsTotal(), made);  // counted once: the aggregates agree with the rows
  }
  absl::StatusOr<client::DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->counters.acknowledged, made);
  EXPECT_EQ(stats->counters.dropped_rejected + stats->counters.dropped_queue_full +
                stats->counters.dropped_too_old,
            0);
  EXPECT_GE(stats->failed_attempts, 6);  // three per fault: the retry policy's 2 + the last
  EXPECT_EQ(*storage_->IntegrityCheck(), "ok");
}

}  // namespace
}  // namespace deniable
