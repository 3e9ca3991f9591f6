// The device queue's throughput: Report() into each device store (reports/s, each report
// committed before Report() returns), then the drain to an in-process collector (reports/s),
// and the delivery check: reports lost and duplicates counted must both be 0.
//   sdk_queue_bench [REPORTS] [DIR]     (defaults: 20000, /tmp)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace {

using deniable::client::DeviceStore;

int Run(const char* name, std::unique_ptr<DeviceStore> store, int reports) {
  auto storage = std::make_unique<deniable::server::MemoryStorage>();
  deniable::server::MemoryStorage* stored = storage.get();
  deniable::server::ServerOptions server_options;
  server_options.listen_address = "";
  auto server = deniable::server::CollectorServer::Start(
      std::move(storage), deniable::SystemClock::Default(), server_options);
  if (!server.ok()) return std::puts(server.status().ToString().c_str()), 1;
  auto queries = deniable::v1::QueryService::NewStub((*server)->InProcessChannel());
  deniable::v1::CreateMetricRequest create;
  create.set_name("m");
  create.mutable_design()->mutable_two_coin();
  grpc::ClientContext context;
  deniable::v1::Metric metric;
  if (!queries->CreateMetric(&context, create, &metric).ok()) return 1;

  deniable::client::ReporterOptions options;
  options.background_sending = false;  // measure the queue alone, then the drain alone
  options.max_batch_reports = 1000;
  options.one_report_per_period = false;  // measure the queue: each Report() is a new report
  auto reporter = deniable::client::Reporter::Open(
      deniable::client::MakeGrpcTransport((*server)->InProcessChannel()), std::move(store),
      options);
  if (!reporter.ok()) return std::puts(reporter.status().ToString().c_str()), 1;
  if (!(*reporter)->Prefetch({"m"}, absl::Seconds(5)).ok()) return 1;

  absl::Time start = absl::Now();
  for (int i = 0; i < reports; ++i) {
    if (!(*reporter)->Report("m", i % 3 == 0).ok()) return std::puts("report failed"), 1;
  }
  const double queue_s = absl::ToDoubleSeconds(absl::Now() - start);
  start = absl::Now();
  if (!(*reporter)->Flush(absl::Seconds(300)).ok()) return std::puts("flush failed"), 1;
  const double drain_s = absl::ToDoubleSeconds(absl::Now() - start);
  const auto stats = (*reporter)->Stats();
  const int64_t lost = reports - stored->ReportCount();
  std::printf(
      "%-22s reports=%d report_per_s=%.0f drain_per_s=%.0f server_stored=%lld lost=%lld "
      "duplicates=%lld dropped=%lld pending=%lld\n",
      name, reports, reports / queue_s, reports / drain_s,
      static_cast<long long>(stored->ReportCount()), static_cast<long long>(lost),
      static_cast<long long>(stats->counters.duplicates),
      static_cast<long long>(stats->counters.dropped_rejected + stats->counters.dropped_queue_full),
      static_cast<long long>(stats->queued));
  return lost == 0 && stats->counters.duplicates == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int reports = argc > 1 ? std::atoi(argv[1]) : 20000;
  const std::string dir = argc > 2 ? argv[2] : "/tmp";
  int failures = Run("memory", deniable::client::MakeMemoryDeviceStore(), reports);
  for (bool sync : {false, true}) {
    const std::string path = absl::StrCat(dir, "/sdk_queue_bench_", getpid(), ".db");
    auto store = deniable::client::OpenSqliteDeviceStore({.path = path, .sync_every_report = sync});
    if (!store.ok()) return std::puts(store.status().ToString().c_str()), 1;
    // Synced commits cost a disk flush each: fewer reports keep the run short.
    failures += Run(sync ? "sqlite synchronous=FULL" : "sqlite synchronous=NORMAL",
                    *std::move(store), sync ? reports / 10 : reports);
    for (const char* suffix : {"", "-wal", "-shm"}) unlink((path + suffix).c_str());
  }
  return failures == 0 ? 0 : 1;
}
