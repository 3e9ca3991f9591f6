// http_latency_bench: latency of the same GetPrevalence call over gRPC and over the HTTP/JSON
// API of one running deniable-server, interleaved in one run (docs/http.md reports the figures).
//
//   http_latency_bench GRPC_TARGET HTTP_HOST:PORT METRIC [CALLS=2000] [GROUP_BY=]
//
// One connection per transport, calls one at a time (latency, not throughput); prints p50, p90,
// p99 and max in microseconds. Tokenless servers only (it sends no token).
#include <grpcpp/grpcpp.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "deniable/v1/query_service.grpc.pb.h"

namespace {

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

void Print(const char* name, const std::vector<double>& us) {
  std::printf("%-6s calls=%zu p50=%.0f us p90=%.0f us p99=%.0f us max=%.0f us\n", name, us.size(),
              Percentile(us, 0.5), Percentile(us, 0.9), Percentile(us, 0.99),
              *std::max_element(us.begin(), us.end()));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: http_latency_bench GRPC_TARGET HTTP_HOST:PORT METRIC [CALLS]\n");
    return 2;
  }
  const std::string metric = argv[3];
  const int calls = argc > 4 ? std::atoi(argv[4]) : 2000;
  const std::string group_by = argc > 5 ? argv[5] : "";
  auto stub = deniable::v1::QueryService::NewStub(
      grpc::CreateChannel(argv[1], grpc::InsecureChannelCredentials()));
  const std::string http = argv[2];
  const size_t colon = http.rfind(':');
  httplib::Client client(http.substr(0, colon), std::atoi(http.substr(colon + 1).c_str()));
  client.set_keep_alive(true);
  client.set_tcp_nodelay(true);  // as curl and browsers do
  const std::string body = "{\"metric\":\"" + metric + "\",\"groupBy\":\"" + group_by + "\"}";
  deniable::v1::GetPrevalenceRequest request;
  request.set_metric(metric);
  request.set_group_by(group_by);

  std::vector<double> grpc_us, http_us;
  using Clock = std::chrono::steady_clock;
  for (int i = -100; i < calls; ++i) {  // the first 100 of each warm up and are not counted
    auto t0 = Clock::now();
    grpc::ClientContext context;
    deniable::v1::Prevalence response;
    grpc::Status s = stub->GetPrevalence(&context, request, &response);
    auto t1 = Clock::now();
    auto answer = client.Post("/v1/QueryService/GetPrevalence", body, "application/json");
    auto t2 = Clock::now();
    if (!s.ok() || !answer || answer->status != 200) {
      std::fprintf(stderr, "call failed: grpc=%s http=%d\n", s.error_message().c_str(),
                   answer ? answer->status : -1);
      return 1;
    }
    if (i < 0) continue;
    grpc_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    http_us.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
  }
  Print("grpc", grpc_us);
  Print("http", http_us);
  return 0;
}
