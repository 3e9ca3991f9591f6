#include "server/service/query_service.h"

#include <spdlog/spdlog.h>

#include "deniable/common/design.h"
#include "server/service/grpc_status.h"

namespace deniable::server {
namespace {

// Warns in the log when an analyst created a design with no privacy (allow_no_privacy).
void WarnIfNoPrivacy(const v1::Metric& metric) {
  if (RevealsEveryAnswer(Channel{metric.design().a(), metric.design().b()})) {
    spdlog::warn(
        "event=design_without_privacy metric={} design_version={} warning=\"every report reveals "
        "its true answer\"",
        metric.name(), metric.design().version());
  }
}

// Runs a core call and moves its value into the response.
template <typename T>
grpc::Status Respond(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status QueryServiceImpl::CreateMetric(grpc::ServerContext* /*context*/,
                                            const v1::CreateMetricRequest* request,
                                            v1::Metric* response) {
  absl::StatusOr<v1::Metric> metric = registry_->Create(*request);
  if (!metric.ok()) return ToGrpcStatus(metric.status());
  spdlog::info("event=metric_created metric={} design_version={} epsilon={}", metric->name(),
               metric->design().version(), metric->design().epsilon());
  WarnIfNoPrivacy(*metric);
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

grpc::Status QueryServiceImpl::AddDesignVersion(grpc::ServerContext* /*context*/,
                                                const v1::AddDesignVersionRequest* request,
                                                v1::Metric* response) {
  grpc::Status status = Respond(registry_->AddVersion(*request), response);
  if (status.ok()) {
    spdlog::info("event=design_version_added metric={} design_version={} epsilon={}",
                 response->name(), response->design().version(), response->design().epsilon());
    WarnIfNoPrivacy(*response);
  }
  return status;
}

grpc::Status QueryServiceImpl::DeleteMetric(grpc::ServerContext* /*context*/,
                                            const v1::DeleteMetricRequest* request,
                                            v1::DeleteMetricResponse* /*response*/) {
  const absl::Status status = registry_->Delete(request->metric());
  if (status.ok()) spdlog::warn("event=metric_deleted metric={}", request->metric());
  return ToGrpcStatus(status);
}

grpc::Status QueryServiceImpl::SetRetention(grpc::ServerContext* /*context*/,
                                            const v1::SetRetentionRequest* request,
                                            v1::Metric* response) {
  grpc::Status status = Respond(registry_->SetRetention(*request), response);
  if (status.ok()) {
    spdlog::warn("event=retention_set metric={} retention_days={} retention_policy={}",
                 response->name(), response->retention_days(),
                 v1::RetentionPolicy_Name(response->retention_policy()));
  }
  return status;
}

grpc::Status QueryServiceImpl::GetPrevalence(grpc::ServerContext* /*context*/,
                                             const v1::GetPrevalenceRequest* request,
                                             v1::Prevalence* response) {
  return Respond(prevalence_->Get(*request), response);
}

grpc::Status QueryServiceImpl::GetSeries(grpc::ServerContext* /*context*/,
                                         const v1::GetSeriesRequest* request,
                                         v1::Series* response) {
  return Respond(prevalence_->Series(*request), response);
}

grpc::Status QueryServiceImpl::GetDifference(grpc::ServerContext* /*context*/,
                                             const v1::GetDifferenceRequest* request,
                                             v1::Difference* response) {
  return Respond(prevalence_->Difference(*request), response);
}

grpc::Status QueryServiceImpl::DescribeDesign(grpc::ServerContext* /*context*/,
                                              const v1::DescribeDesignRequest* request,
                                              v1::DesignDescription* response) {
  return Respond(advisor_->Describe(*request), response);
}

grpc::Status QueryServiceImpl::PlanSurvey(grpc::ServerContext* /*context*/,
                                          const v1::PlanSurveyRequest* request,
                                          v1::SurveyPlan* response) {
  return Respond(advisor_->Plan(*request), response);
}

}  // namespace deniable::server
