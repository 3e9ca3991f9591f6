// The whole SDK in one small app: report_app TARGET CA_FILE TOKEN DEVICE_FILE METRIC yes|no
// (CA_FILE "-" means plaintext, for a local development collector only).
#include <cstdio>
#include <string>

#include "deniable/client/device_store.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"

namespace dc = deniable::client;

int main(int argc, char** argv) {
  if (argc != 7)
    return std::fputs("usage: report_app TARGET CA TOKEN FILE METRIC yes|no\n", stderr), 2;
  const std::string target = argv[1], ca = argv[2], token = argv[3], metric = argv[5];
  // 1. The network: TLS with the collector's CA and a bearer token (or plaintext for dev).
  absl::StatusOr<std::shared_ptr<dc::ReportTransport>> transport =
      ca == "-"
          ? dc::MakeInsecureGrpcTransport(target)
          : dc::MakeSecureGrpcTransport({.target = target, .ca_file = ca, .bearer_token = token});
  // 2. The device file: memo table + queue of unacknowledged reports (mode 0600).
  absl::StatusOr<std::unique_ptr<dc::DeviceStore>> store =
      dc::OpenSqliteDeviceStore({.path = argv[4]});
  if (!transport.ok() || !store.ok())
    return std::fputs("cannot open transport or store\n", stderr), 1;
  // 3. The reporter: memoization by default; log callback for drops and retries.
  dc::ReporterOptions options;
  options.labels = {{"app_version", "1.0"}};
  options.log = [](dc::LogLevel, absl::string_view message) {
    std::fprintf(stderr, "deniable: %.*s\n", static_cast<int>(message.size()), message.data());
  };
  absl::StatusOr<std::unique_ptr<dc::Reporter>> reporter =
      dc::Reporter::Open(*transport, *std::move(store), options);
  if (!reporter.ok()) return std::fputs(reporter.status().ToString().c_str(), stderr), 1;
  // 4. Fetch the design up front, so Report() never waits on the network.
  if (absl::Status s = (*reporter)->Prefetch({metric}, absl::Seconds(5)); !s.ok()) {
    std::fprintf(stderr, "prefetch: %s (a design cached by an earlier run is used)\n",
                 s.ToString().c_str());
  }
  // 5. Report: randomized on the device, durable in the file before it returns.
  if (absl::Status s = (*reporter)->Report(metric, std::string(argv[6]) == "yes"); !s.ok()) {
    return std::fprintf(stderr, "report: %s\n", s.ToString().c_str()), 1;
  }
  // 6. Optionally wait for delivery (the background sender would send it anyway).
  absl::Status flushed = (*reporter)->Flush(absl::Seconds(10));
  // 7. What this device has spent, and what is still queued.
  absl::StatusOr<std::map<std::string, dc::MetricLedger>> ledger = (*reporter)->Ledger();
  for (const auto& [name, l] : ledger.value_or(std::map<std::string, dc::MetricLedger>{})) {
    std::printf("%s: reports=%lld acknowledged=%lld epsilon_spent=%.3f (fresh would be %.3f)\n",
                name.c_str(), static_cast<long long>(l.reports_accepted),
                static_cast<long long>(l.reports_acknowledged), l.epsilon_spent,
                l.epsilon_if_fresh);
  }
  std::printf("queued=%zu flush=%s\n", (*reporter)->pending(), flushed.ToString().c_str());
  return 0;
}
