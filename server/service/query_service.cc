#include "server/service/query_service.h"

#include <spdlog/spdlog.h>

#include "server/service/grpc_status.h"

namespace deniable::server {

grpc::Status QueryServiceImpl::CreateMetric(grpc::ServerContext* /*context*/,
                                            const v1::CreateMetricRequest* request,
                                            v1::Metric* response) {
  absl::StatusOr<v1::Metric> metric = registry_->Create(*request);
  if (!metric.ok()) return ToGrpcStatus(metric.status());
  spdlog::info("event=metric_created metric={} design_version={} epsilon={}", metric->name(),
               metric->design().version(), metric->design().epsilon());
  *response = *std::move(metric);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::ListMetrics(grpc::ServerContext* /*context*/,
                                           const v1::ListMetricsRequest* /*request*/,
                                           v1::ListMetricsResponse* response) {
  absl::StatusOr<std::vector<v1::Metric>> metrics = registry_->List();
  if (!metrics.ok()) return ToGrpcStatus(metrics.status());
  for (v1::Metric& m : *metrics) *response->add_metrics() = std::move(m);
  return grpc::Status::OK;
}

grpc::Status QueryServiceImpl::GetPrevalence(grpc::ServerContext* /*context*/,
                                             const v1::GetPrevalenceRequest* request,
                                             v1::Prevalence* response) {
  absl::StatusOr<v1::Prevalence> result = prevalence_->Get(*request);
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace deniable::server
