// C++ devices for the interop matrix (tests/interop/interop_matrix_test.py):
//   cpp_devices TARGET METRIC DEVICES SEED SHARE
// Device i (its own Reporter and in-memory store, randomness from a std::mt19937_64 seeded with
// SEED + i: a test, so reproducible) answers "yes" when i < DEVICES * SHARE, reports once and
// flushes. Prints the number of reports acknowledged; exits 1 on any error.
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "deniable/common/clock.h"

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fputs("usage: cpp_devices TARGET METRIC DEVICES SEED SHARE\n", stderr);
    return 2;
  }
  const std::string target = argv[1], metric = argv[2];
  const int devices = std::atoi(argv[3]);
  const uint64_t seed = std::strtoull(argv[4], nullptr, 10);
  const double share = std::atof(argv[5]);
  auto transport = deniable::client::MakeInsecureGrpcTransport(target);
  int64_t acknowledged = 0;
  for (int i = 0; i < devices; ++i) {
    std::mt19937_64 gen(seed + static_cast<uint64_t>(i));
    deniable::client::ReporterOptions options;
    options.background_sending = false;
    options.shutdown_drain_timeout = absl::ZeroDuration();
    options.labels = {{"lang", "cpp"}};
    auto reporter = deniable::client::Reporter::CreateForTesting(transport, options, gen,
                                                                 deniable::SystemClock::Default());
    absl::Status status = reporter->Report(metric, i < devices * share);
    if (status.ok()) status = reporter->Flush(absl::Seconds(10));
    if (!status.ok()) {
      std::fprintf(stderr, "device %d: %s\n", i, status.ToString().c_str());
      return 1;
    }
    auto ledger = reporter->Ledger();
    if (ledger.ok()) acknowledged += (*ledger)[metric].reports_acknowledged;
  }
  std::printf("%lld\n", static_cast<long long>(acknowledged));
  return 0;
}
