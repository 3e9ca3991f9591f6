// A gRPC server interceptor that, for every finished call, counts it by method and status code
// in ServerCounters (deniable_calls_total{transport="grpc"}) with its time from arrival to status
// (deniable_request_duration_seconds) and, when the access log is on, writes its access line
// (access_log.h: method, code, latency, reports received for the report calls). It only
// observes: it never changes or ends a call. Thread-safe; the counters must outlive the server.
#ifndef DENIABLE_SERVER_SERVICE_CALL_METRICS_H_
#define DENIABLE_SERVER_SERVICE_CALL_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include "server/core/server_counters.h"

namespace deniable::server {

class CallMetricsFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  CallMetricsFactory(ServerCounters* counters, bool access_log)
      : counters_(counters), access_log_(access_log) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  ServerCounters* const counters_;
  const bool access_log_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_CALL_METRICS_H_
