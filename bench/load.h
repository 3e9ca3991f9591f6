// Load generators for deniable-bench: closed-loop gRPC clients of deniable.v1.ReportService
// (unary with a fixed number of calls in flight, and client streaming), plus a trivial
// ReportService that stores nothing, which gives the raw gRPC limit on the same machine.
//
// The same generators drive the trivial service and the Deniable collector, so the two figures
// differ only by what the server does with a report.
//
// Thread-safe where stated; each Run* call blocks until its load has finished.
#ifndef DENIABLE_BENCH_LOAD_H_
#define DENIABLE_BENCH_LOAD_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deniable/v1/report_service.grpc.pb.h"

namespace deniable::server {
class Storage;
}  // namespace deniable::server

namespace deniable::bench {

// The metric every load reports to (LoadConfig::metric's default).
inline constexpr char kBenchMetric[] = "bench";

// The id of kBenchMetric in `storage`, creating it (two-coin design) through the collector's
// MetricRegistry if it is not there. Errors: the storage's.
absl::StatusOr<int64_t> EnsureBenchMetric(server::Storage* storage);

// Distinct report ids (never repeated within a process; `salt` separates processes). Thread-safe.
// Random order: SplitMix64 of a counter (a bijection), like the SDK's random ids. Time order: the
// counter big-endian first, so ids sort by creation (ids whose prefix is the time; for the
// comparison in docs/performance.md only, the SDK does not send such ids).
class IdSource {
 public:
  explicit IdSource(uint64_t salt, bool time_ordered = false)
      : next_(salt), time_ordered_(time_ordered) {}
  // Writes 16 bytes into `out`.
  void Next(std::string* out);

 private:
  std::atomic<uint64_t> next_;
  const bool time_ordered_;
};

struct LoadSpec {
  std::string metric = kBenchMetric;
  int64_t event_time_seconds = 0;  // rounded to the hour
  int reports_per_call = 1;        // reports per unary call, or per stream message
  int in_flight = 8;               // unary calls in flight, or concurrent streams
  absl::Duration duration = absl::Seconds(5);
  // Unary only: 0 runs closed loop (each slot issues its next call when the last one returns);
  // > 0 issues calls at this rate (open loop, calls per second), at most `in_flight` at once,
  // so a query can be timed beside a load below the machine's limit.
  double calls_per_second = 0;
};

struct LoadResult {
  double seconds = 0;
  int64_t calls = 0;    // completed OK calls (unary) or streams
  int64_t reports = 0;  // reports acknowledged (the responses' accepted + duplicates)
  int64_t errors = 0;
  std::string first_error;
  double reports_per_second() const { return seconds > 0 ? reports / seconds : 0; }
  double calls_per_second() const { return seconds > 0 ? calls / seconds : 0; }
};

// `channels` are used round robin (one HTTP/2 connection each). Runs until `spec.duration` has
// passed, then waits for the calls in flight.
LoadResult RunUnary(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                    const LoadSpec& spec, IdSource* ids);
LoadResult RunStreaming(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                        const LoadSpec& spec, IdSource* ids);

// `n` channels to `target` (host:port), each its own connection.
std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const std::string& target, int n);

// The raw limit: acknowledges every report without looking at it or storing it. On gRPC's
// callback API, as the collector's SubmitReports and StreamReports are, so that the two differ
// only by what the server does with a report.
class NullReportService final : public v1::ReportService::CallbackService {
 public:
  grpc::ServerUnaryReactor* SubmitReports(grpc::CallbackServerContext* context,
                                          const v1::SubmitReportsRequest* request,
                                          v1::SubmitReportsResponse* response) override;
  grpc::ServerReadReactor<v1::SubmitReportsRequest>* StreamReports(
      grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) override;
};

// A server with only the NullReportService on 127.0.0.1:0, built with the collector's server
// settings (CollectorServer::Start with ServerOptions' defaults: pollers, thread and memory
// quota, streams per connection) and the bench collectors' 8 MiB message limit.
struct NullServer {
  NullReportService service;
  std::unique_ptr<grpc::Server> server;
  int port = 0;
};
std::unique_ptr<NullServer> StartNullServer();

}  // namespace deniable::bench

#endif  // DENIABLE_BENCH_LOAD_H_
