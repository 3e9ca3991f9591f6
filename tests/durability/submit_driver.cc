// A client for the kill -9 test: submits batches of reports with known ids to a collector as
// fast as it answers and prints, one per line in hex, the id of every report of every
// acknowledged batch (after the OK, flushed). Exits 0 when the server stops answering.
//
//   deniable_submit_driver HOST:PORT RUN [TOKEN]
// Ids are RUN (8 bytes, big-endian) then a counter (8 bytes), so runs never collide.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"

namespace {

std::string BigEndian(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) out[static_cast<size_t>(i)] = static_cast<char>(v & 0xff);
  return out;
}

void Authorize(grpc::ClientContext* context, const char* token, int seconds) {
  if (token != nullptr) context->AddMetadata("authorization", std::string("Bearer ") + token);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s HOST:PORT RUN [TOKEN]\n", argv[0]);
    return 2;
  }
  const uint64_t run = std::strtoull(argv[2], nullptr, 10);
  const char* token = argc > 3 ? argv[3] : nullptr;
  auto channel = grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials());
  auto queries = deniable::v1::QueryService::NewStub(channel);
  auto reports = deniable::v1::ReportService::NewStub(channel);
  {
    deniable::v1::CreateMetricRequest create;
    create.set_name("kill");
    create.mutable_design()->mutable_two_coin();
    deniable::v1::Metric metric;
    grpc::ClientContext context;
    Authorize(&context, token, 5);
    context.set_wait_for_ready(true);
    grpc::Status s = queries->CreateMetric(&context, create, &metric);
    if (!s.ok() && s.error_code() != grpc::StatusCode::ALREADY_EXISTS) {
      std::fprintf(stderr, "create: %s\n", s.error_message().c_str());
      return 0;
    }
  }
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  uint64_t counter = 0;
  for (int batch = 0; batch < 1000000; ++batch) {
    deniable::v1::SubmitReportsRequest request;
    const int size = 1 + batch % 50;
    for (int i = 0; i < size; ++i) {
      deniable::v1::Report* r = request.add_reports();
      r->set_metric("kill");
      r->set_design_version(1);
      r->set_bit(static_cast<uint32_t>(counter % 3 == 0));
      r->set_report_id(BigEndian(run) + BigEndian(counter++));
      r->set_event_time_seconds(now - now % 3600);
    }
    deniable::v1::SubmitReportsResponse response;
    grpc::ClientContext context;
    Authorize(&context, token, 5);
    grpc::Status s = reports->SubmitReports(&context, request, &response);
    if (!s.ok()) {
      std::fprintf(stderr, "submit: %d %s\n", s.error_code(), s.error_message().c_str());
      return 0;
    }
    for (const auto& r : request.reports()) {
      std::printf("%s\n", absl::BytesToHexString(r.report_id()).c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}
