// A gRPC server interceptor that counts every finished call by method and status code in
// ServerCounters (deniable_calls_total{transport="grpc"}). It only observes: it never changes or
// ends a call. Thread-safe; the counters must outlive the server.
#ifndef DENIABLE_SERVER_SERVICE_CALL_METRICS_H_
#define DENIABLE_SERVER_SERVICE_CALL_METRICS_H_

#include <grpcpp/support/server_interceptor.h>

#include "server/service/server_counters.h"

namespace deniable::server {

class CallMetricsFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit CallMetricsFactory(ServerCounters* counters) : counters_(counters) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  ServerCounters* const counters_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_CALL_METRICS_H_
