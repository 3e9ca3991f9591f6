#include "server/service/query_service.h"

#include <utility>

#include "server/service/grpc_status.h"

namespace deniable::server {
namespace {

// Moves a core call's value into the response, or converts its status.
template <typename T>
grpc::Status Respond(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

#define DENIABLE_QUERY_HANDLER(Method, Request, Response)                                     \
  grpc::Status QueryServiceImpl::Method(grpc::ServerContext* /*context*/,                     \
                                        const v1::Request* request, v1::Response* response) { \
    return Respond(core_->Method(*request), response);                                        \
  }
DENIABLE_QUERY_HANDLER(CreateMetric, CreateMetricRequest, Metric)
DENIABLE_QUERY_HANDLER(ListMetrics, ListMetricsRequest, ListMetricsResponse)
DENIABLE_QUERY_HANDLER(AddDesignVersion, AddDesignVersionRequest, Metric)
DENIABLE_QUERY_HANDLER(DeleteMetric, DeleteMetricRequest, DeleteMetricResponse)
DENIABLE_QUERY_HANDLER(SetRetention, SetRetentionRequest, Metric)
DENIABLE_QUERY_HANDLER(GetPrevalence, GetPrevalenceRequest, Prevalence)
DENIABLE_QUERY_HANDLER(GetSeries, GetSeriesRequest, Series)
DENIABLE_QUERY_HANDLER(GetDifference, GetDifferenceRequest, Difference)
DENIABLE_QUERY_HANDLER(DescribeDesign, DescribeDesignRequest, DesignDescription)
DENIABLE_QUERY_HANDLER(PlanSurvey, PlanSurveyRequest, SurveyPlan)
DENIABLE_QUERY_HANDLER(GetTopValues, GetTopValuesRequest, TopValues)
DENIABLE_QUERY_HANDLER(GetFrequencies, GetFrequenciesRequest, TopValues)
DENIABLE_QUERY_HANDLER(ListAlerts, ListAlertsRequest, ListAlertsResponse)
#undef DENIABLE_QUERY_HANDLER

}  // namespace deniable::server
