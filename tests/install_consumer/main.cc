// Uses the installed SDK: headers, generated protos, the device store and the Reporter. Prints
// "ok" and exits 0 when every check holds.
#include <cstdio>
#include <string>

#include "deniable/client/device_store.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/common/randomizer.h"
#include "deniable/v1/report_service.pb.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string path = argv[1];
  deniable::client::SecureBitGen gen;
  const bool bit = deniable::RandomizeAnswer(deniable::Design::TwoCoin().channel(), true, gen);
  auto store = deniable::client::OpenSqliteDeviceStore({.path = path});
  if (!store.ok()) return std::puts(store.status().ToString().c_str()), 1;
  deniable::client::ReporterOptions options;
  options.first_design_wait = absl::Milliseconds(200);
  auto reporter = deniable::client::Reporter::Open(
      deniable::client::MakeInsecureGrpcTransport("127.0.0.1:1"), *std::move(store), options);
  if (!reporter.ok()) return std::puts(reporter.status().ToString().c_str()), 1;
  // Nothing listens on port 1: the design cannot be fetched, so nothing is queued.
  const absl::Status s = (*reporter)->Report("m", bit);
  if (s.ok() || (*reporter)->pending() != 0) return std::puts("unexpected report"), 1;
  deniable::v1::Report report;
  report.set_bit(bit ? 1 : 0);
  std::printf("ok: %s\n", s.ToString().c_str());
  return 0;
}
