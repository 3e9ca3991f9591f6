// A reporting process for the SIGKILL fault test (sdk_fault_test.py): reports `--count` answers
// through a Reporter over the SQLite device store at `--store`, printing each accepted report's
// id (hex) on its own line, flushed, only after Report() returned OK. With --count=0 it only
// drains the queue and prints "pending=N".
//   sdk_fault_driver TARGET STORE METRIC COUNT
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: sdk_fault_driver TARGET STORE METRIC COUNT\n");
    return 2;
  }
  const std::string target = argv[1], path = argv[2], metric = argv[3];
  const long count = std::strtol(argv[4], nullptr, 10);
  auto store = deniable::client::OpenSqliteDeviceStore({.path = path});
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  deniable::client::ReporterOptions options;
  options.send_interval = absl::Milliseconds(10);
  options.max_batch_reports = 50;
  options.initial_backoff = absl::Milliseconds(10);
  options.max_backoff = absl::Milliseconds(100);
  options.one_report_per_period = false;  // each Report() stands for a device
  auto reporter = deniable::client::Reporter::Open(
      deniable::client::MakeInsecureGrpcTransport(target, absl::Milliseconds(200)),
      *std::move(store), options);
  if (!reporter.ok()) {
    std::fprintf(stderr, "reporter: %s\n", reporter.status().ToString().c_str());
    return 1;
  }
  for (long i = 0; i < count; ++i) {
    std::string id;
    absl::Status s = (*reporter)->Report(metric, i % 3 == 0, &id);
    if (!s.ok()) {
      std::fprintf(stderr, "report: %s\n", s.ToString().c_str());
      return 1;
    }
    std::printf("%s\n", absl::BytesToHexString(id).c_str());
    std::fflush(stdout);
  }
  absl::Status flushed = (*reporter)->Flush(absl::Seconds(30));
  std::printf("pending=%zu\n", (*reporter)->pending());
  if (!flushed.ok()) std::fprintf(stderr, "flush: %s\n", flushed.ToString().c_str());
  return flushed.ok() ? 0 : 1;
}
