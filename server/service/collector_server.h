// Assembles the collector: storage -> CollectorCore (collector_core.h: registry, ingestor,
// queries, advisor, access policy, counters) -> gRPC services that make one core call each, the
// access checks included (report_service.h, query_service.h) -> a running grpc::Server with the
// standard health service (unauthenticated), AdminService and, optionally, server reflection. The
// HTTP/JSON front end (server/http) takes the same core (core()). Used by deniable-server's main
// and by in-process tests.
//
// Example (a test on an ephemeral port):
//   auto server = CollectorServer::Start(std::make_unique<MemoryStorage>(), &clock,
//                                        {.listen_address = "127.0.0.1:0"});
//   auto channel = (*server)->InProcessChannel();
//
// Thread-safe. Owns the storage; does not own the clock, which must outlive it.
#ifndef DENIABLE_SERVER_SERVICE_COLLECTOR_SERVER_H_
#define DENIABLE_SERVER_SERVICE_COLLECTOR_SERVER_H_

#include <grpcpp/grpcpp.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/core/collector_core.h"
#include "server/core/ingestor.h"
#include "server/core/prevalence_query.h"
#include "server/core/server_counters.h"
#include "server/service/query_service.h"
#include "server/service/report_service.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct ServerOptions {
  // host:port; port 0 picks a free port (see port()). Empty: no listening port (in-process only).
  std::string listen_address = "127.0.0.1:50051";
  IngestOptions ingest;
  QueryOptions query;
  // Largest request accepted, in bytes. 10000 reports with labels fit in about 1 MiB.
  int max_receive_message_bytes = 2 * 1024 * 1024;
  // Credentials of the listening port (grpc::SslServerCredentials for TLS / mTLS).
  std::shared_ptr<grpc::ServerCredentials> credentials;  // null: insecure
  // Bearer-token check; null: tokenless (every call passes; for local development only).
  std::shared_ptr<Authenticator> authenticator;
  // Per-token (tokenless: per salted peer hash) limit on reports; off by default.
  RateLimitOptions rate_limit;
  // Registers grpc.reflection.v1alpha.ServerReflection (unauthenticated: it shows only the
  // public schema).
  bool reflection = false;
  // One access line per finished call (server/access_log.h), at info level.
  bool access_log = true;
  // Idle handler threads kept polling (gRPC's SyncServerOption::MAX_POLLERS; its default is 2).
  // Synchronous handlers (GetDesign, the queries, GetServerStats) otherwise end threads when a
  // burst of calls finishes and create them again for the next one. 0: gRPC's default.
  // Capped at max_threads.
  int max_idle_threads = 32;

  // Resource bounds (docs/security.md section 6). The report calls (SubmitReports,
  // StreamReports) run on gRPC's callback API and hold no thread while they wait; these bound
  // what is left.
  //
  // Threads of the synchronous handlers (gRPC ResourceQuota::SetMaxThreads). A synchronous call
  // arriving while all are busy is refused by gRPC with RESOURCE_EXHAUSTED "Server Threadpool
  // Exhausted" (counted in deniable_calls_total). 0: no limit.
  int max_threads = 64;
  // Memory quota of gRPC's buffers (ResourceQuota::Resize), in bytes: its read buffers and
  // flow-control windows draw on it, and gRPC makes them smaller under memory pressure. 0: no
  // limit.
  int64_t max_grpc_memory_bytes = 256LL * 1024 * 1024;
  // StreamReports calls open at once over all connections; one more ends at once with
  // RESOURCE_EXHAUSTED "reports: too many open streams" and is counted
  // (deniable_streams_shed_total). 0: no limit.
  int max_concurrent_streams = 1024;
  // Calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS,
  // GRPC_ARG_MAX_CONCURRENT_STREAMS): a client's further calls on that connection wait in the
  // client until one ends. 0: gRPC's default (no limit).
  int max_streams_per_connection = 100;
  // Validated rows held (buffered or being stored) by all streams together; a stream whose
  // message takes the total over it reads on only once its flush in progress has committed (see
  // StreamLimits). 0: only ingest.stream_flush_reports applies.
  int64_t max_stream_buffered_rows = 100000;
  // How often the storage's Health() is checked; the health service says NOT_SERVING (with an
  // event=storage_unhealthy error log) while it fails, and SERVING again once it passes.
  // Zero: never.
  absl::Duration health_check_interval = absl::Seconds(1);
  // Metrics cached longer than this are read again (MetricRegistry): the bound within which a
  // design version added through another collector on a shared database reaches GetDesign.
  // Infinite: this process is the database's only writer (SQLite).
  absl::Duration metric_cache_age = absl::InfiniteDuration();
  // For tests only (--testing_heavy_hitters_salt): nonzero, the hash salt of every new
  // heavy-hitters design instead of a random draw, so a seeded run repeats exactly. 0 (the
  // default): drawn at random, as the estimates' random-hash model needs.
  uint64_t heavy_hitters_salt = 0;
  // How often metrics' retention is applied (Storage::ApplyRetention, also once at start, on a
  // thread of its own); zero: never. Reports younger than ingest.max_report_age (the dedup
  // window) are never dropped.
  absl::Duration retention_interval = absl::Hours(1);
  // Where the counters register their Prometheus metrics (served at /metrics); null: a registry
  // of their own.
  std::shared_ptr<prometheus::Registry> metrics_registry;
};

class CollectorServer {
 public:
  // Builds the services and starts serving. Errors: UNAVAILABLE if the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<CollectorServer>> Start(std::unique_ptr<Storage> storage,
                                                                const Clock* clock,
                                                                const ServerOptions& options);
  ~CollectorServer();

  // The bound port (the chosen one when the address asked for port 0); 0 without a port.
  int port() const { return port_; }
  // A channel to this server that does not touch the network.
  std::shared_ptr<grpc::Channel> InProcessChannel();
  // Marks the health service NOT_SERVING, lets in-flight calls finish for up to `grace`, then
  // cancels the rest and stops. Idempotent.
  void Shutdown(absl::Duration grace);
  // Blocks until Shutdown has completed.
  void Wait();

  // The services the health service reports on, besides the overall "": the storage's health
  // and draining decide all of them alike (a service answers only while its storage does).
  static constexpr const char* kHealthServices[] = {
      "deniable.v1.ReportService", "deniable.v1.QueryService", "deniable.v1.AdminService"};
  // What grpc.health.v1.Health/Check answers for `service` ("" for the whole server), for the
  // HTTP listener's /healthz. OK: SERVING. Errors: NOT_FOUND "service: ..." for a name that is
  // neither "" nor in kHealthServices; UNAVAILABLE "health: NOT_SERVING ..." with the reason
  // (the storage check failed, or the server is draining). Thread-safe.
  absl::Status ServingStatus(absl::string_view service);

  Storage* storage() { return core_.storage(); }
  // Open StreamReports calls and the rows their buffers hold (for tests and /metrics).
  const StreamLimits& stream_limits() const { return report_service_.stream_limits(); }
  // The accepted / rejected counters that AdminService serves.
  const ServerCounters& counters() const { return core_.counters(); }
  // The core under the gRPC services, for the HTTP/JSON front end (server/http), which serves
  // the same calls behind the same checks, audit lines and counters.
  CollectorCore* core() { return &core_; }
  // Makes the per-metric Prometheus series (ServerCounters::AddMetric) exist, at 0, for every
  // metric in storage, including those another collector created on a shared database; the
  // /metrics handler calls it before each scrape (one metric listing). Errors: the storage's
  // (the series of the metrics already seen stay).
  absl::Status AddMetricSeries();
  // Applies retention now (what the retention thread does every retention_interval): at the
  // clock's now, keeping the dedup window; records the dropped reports in the counters and logs
  // event=retention_applied. Errors: the storage's (what was dropped before the error stays
  // dropped and counted).
  absl::StatusOr<RetentionResult> ApplyRetention() { return core_.ApplyRetention(); }

 private:
  CollectorServer(std::unique_ptr<Storage> storage, const Clock* clock,
                  const ServerOptions& options);

  CollectorCore core_;
  ReportServiceImpl report_service_;
  QueryServiceImpl query_service_;
  AdminServiceImpl admin_service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;

  // Runs ApplyRetention at once and then every `interval` until the destructor.
  void RetentionLoop(absl::Duration interval);
  std::thread retention_thread_;

  // Follows storage_->Health() into the health service until Shutdown.
  void WatchHealth(absl::Duration interval);
  absl::Mutex health_mu_;  // orders the watcher's status changes with Shutdown's
  bool stopping_ ABSL_GUARDED_BY(health_mu_) = false;
  std::string unhealthy_reason_ ABSL_GUARDED_BY(health_mu_);  // empty: healthy
  std::thread health_watcher_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_COLLECTOR_SERVER_H_
