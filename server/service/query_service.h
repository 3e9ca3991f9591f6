// gRPC handlers of deniable.v1.QueryService: each converts and delegates to the core.
// Thread-safe; does not own the core objects.
#ifndef DENIABLE_SERVER_SERVICE_QUERY_SERVICE_H_
#define DENIABLE_SERVER_SERVICE_QUERY_SERVICE_H_

#include "deniable/v1/query_service.grpc.pb.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"

namespace deniable::server {

class QueryServiceImpl final : public v1::QueryService::Service {
 public:
  QueryServiceImpl(MetricRegistry* registry, PrevalenceQuery* prevalence)
      : registry_(registry), prevalence_(prevalence) {}

  grpc::Status CreateMetric(grpc::ServerContext* context, const v1::CreateMetricRequest* request,
                            v1::Metric* response) override;
  grpc::Status ListMetrics(grpc::ServerContext* context, const v1::ListMetricsRequest* request,
                           v1::ListMetricsResponse* response) override;
  grpc::Status GetPrevalence(grpc::ServerContext* context, const v1::GetPrevalenceRequest* request,
                             v1::Prevalence* response) override;

 private:
  MetricRegistry* const registry_;
  PrevalenceQuery* const prevalence_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_QUERY_SERVICE_H_
