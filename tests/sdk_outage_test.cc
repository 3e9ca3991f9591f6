// An outage: the collector stops while the device keeps reporting; the device's queue (a SQLite
// file) keeps every report, the background sender keeps retrying (counted through
// DeliveryStats and the log callback), and drains the queue once the collector is back on the
// same port, each report counted once.
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/support/eventually.h"

namespace deniable {
namespace {

using ::deniable::testing_util::Eventually;

class SdkOutageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = absl::StrCat(::testing::TempDir(), "/outage_", getpid());
    Cleanup();
  }
  void TearDown() override { Cleanup(); }
  void Cleanup() {
    for (const char* file : {"server.db", "device.db"}) {
      for (const char* suffix : {"", "-wal", "-shm"}) {
        unlink(absl::StrCat(prefix_, file, suffix).c_str());
      }
    }
  }

  // Starts the collector on `port` (0: any) over the same database file.
  void StartServer(int port) {
    server::SqliteOptions sqlite;
    sqlite.path = prefix_ + "server.db";
    auto storage = server::SqliteStorage::Open(sqlite);
    ASSERT_TRUE(storage.ok()) << storage.status();
    storage_ = storage->get();
    server::ServerOptions options;
    options.listen_address = absl::StrCat("127.0.0.1:", port);
    auto server =
        server::CollectorServer::Start(*std::move(storage), SystemClock::Default(), options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  // Creates the two-coin metric "m" through the collector's in-process channel.
  void CreateMetricM() {
    auto queries = v1::QueryService::NewStub(server_->InProcessChannel());
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    grpc::ClientContext context;
    v1::Metric metric;
    ASSERT_TRUE(queries->CreateMetric(&context, create, &metric).ok());
  }
  int64_t Stored() {
    absl::StatusOr<int64_t> n = storage_->ReportCount();
    return n.ok() ? *n : -1;
  }

  std::string prefix_;
  server::SqliteStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
};

TEST_F(SdkOutageTest, QueueDrainsAfterTheCollectorComesBack) {
  StartServer(0);
  const int port = server_->port();
  CreateMetricM();
  auto store = client::OpenSqliteDeviceStore({.path = prefix_ + "device.db"});
  ASSERT_TRUE(store.ok()) << store.status();
  client::ReporterOptions options;
  options.send_interval = absl::Milliseconds(20);
  options.initial_backoff = absl::Milliseconds(20);
  options.max_backoff = absl::Milliseconds(200);
  options.rpc_timeout = absl::Seconds(2);
  options.one_report_per_period = false;  // each Report() stands for a device: 100 reports
  absl::Mutex log_mu;
  int retry_events = 0;
  options.log = [&](client::LogLevel, absl::string_view message) {
    absl::MutexLock lock(&log_mu);
    if (absl::StrContains(message, "will retry")) ++retry_events;
  };
  auto RetryEvents = [&] {
    absl::MutexLock lock(&log_mu);
    return retry_events;
  };
  auto reporter = client::Reporter::Open(
      client::MakeInsecureGrpcTransport(absl::StrCat("127.0.0.1:", port), absl::Milliseconds(200)),
      *std::move(store), options);
  ASSERT_TRUE(reporter.ok()) << reporter.status();

  for (int i = 0; i < 30; ++i) ASSERT_TRUE((*reporter)->Report("m", i % 2 == 0).ok());
  ASSERT_TRUE(Eventually([&] { return (*reporter)->pending() == 0; }));
  EXPECT_EQ(Stored(), 30);

  server_->Shutdown(absl::ZeroDuration());
  server_->Wait();
  server_.reset();  // the collector is gone: nothing listens on the port
  const int64_t failed_before = (*reporter)->Stats()->failed_attempts;
  EXPECT_EQ(failed_before, 0);
  for (int i = 0; i < 70; ++i) ASSERT_TRUE((*reporter)->Report("m", i % 3 == 0).ok());
  // The sender keeps trying: at least three failed attempts, each logged, nothing dropped.
  ASSERT_TRUE(Eventually([&] { return (*reporter)->Stats()->failed_attempts >= 3; }));
  EXPECT_GE(RetryEvents(), 3);
  EXPECT_EQ((*reporter)->pending(), 70u);
  const int64_t attempts_during_outage = (*reporter)->Stats()->send_attempts;

  StartServer(port);
  EXPECT_TRUE(Eventually([&] { return (*reporter)->pending() == 0; }));
  EXPECT_EQ(Stored(), 100);
  absl::StatusOr<client::DeliveryStats> stats = (*reporter)->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->counters.acknowledged, 100);
  EXPECT_EQ(stats->counters.dropped_rejected + stats->counters.dropped_queue_full +
                stats->counters.dropped_too_old,
            0);
  // The queue drained through a later attempt of the same sender, not a fresh start.
  EXPECT_GT(stats->send_attempts, attempts_during_outage);
  EXPECT_GE(stats->failed_attempts, 3);
}

// Issue 25: now() + microseconds(ToInt64Microseconds(InfiniteDuration())) overflowed (undefined
// behaviour) and put the deadline in the past, so an infinite timeout failed every call at once
// with DEADLINE_EXCEEDED; the server's Shutdown(InfiniteDuration()) likewise cancelled at once.
TEST_F(SdkOutageTest, AnInfiniteTimeoutMeansNoDeadline) {
  StartServer(0);
  CreateMetricM();

  std::shared_ptr<client::ReportTransport> transport =
      client::MakeGrpcTransport(server_->InProcessChannel());
  for (absl::Duration timeout : {absl::InfiniteDuration(), absl::Hours(24 * 365 * 100'000)}) {
    absl::StatusOr<v1::GetDesignResponse> design = transport->GetDesign("m", timeout);
    ASSERT_TRUE(design.ok()) << design.status() << " with timeout " << timeout;
    EXPECT_EQ(design->design().version(), 1u);
  }
  v1::SubmitReportsRequest request;
  v1::Report* report = request.add_reports();
  report->set_metric("m");
  report->set_design_version(1);
  report->set_bit(1);
  report->set_report_id(std::string(16, 'i'));
  report->set_event_time_seconds(absl::ToUnixSeconds(absl::Now()) / 3600 * 3600);
  absl::StatusOr<v1::SubmitReportsResponse> submitted =
      transport->SubmitReports(request, absl::InfiniteDuration());
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_EQ(submitted->accepted(), 1u);
  EXPECT_EQ(Stored(), 1);

  server_->Shutdown(absl::InfiniteDuration());  // nothing in flight: returns
  server_->Wait();
}

}  // namespace
}  // namespace deniable
