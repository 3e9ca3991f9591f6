#include "server/service/query_service.h"

#include <utility>

#include "server/service/grpc_call.h"
#include "server/service/grpc_status.h"

namespace deniable::server {
namespace {

// One core call for `method`: the caller's check and `run`, the answer moved into `response`.
template <typename Request, typename Response>
grpc::Status Serve(CollectorCore* core, const char* method, const grpc::ServerContext& context,
                   const Request& request,
                   absl::StatusOr<Response> (CollectorCore::*run)(const Request&),
                   Response* response) {
  return CatchAll(method, [&] {
    absl::StatusOr<Response> result = core->Call(method, CredentialsOf(context), request, run);
    if (!result.ok()) return ToGrpcStatus(result.status());
    *response = *std::move(result);
    return grpc::Status::OK;
  });
}

}  // namespace

#define DENIABLE_QUERY_HANDLER(Method, Request, Response)                                         \
  grpc::Status QueryServiceImpl::Method(grpc::ServerContext* context, const v1::Request* request, \
                                        v1::Response* response) {                                 \
    return Serve(core_, "deniable.v1.QueryService/" #Method, *context, *request,                  \
                 &CollectorCore::Method, response);                                               \
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

grpc::Status AdminServiceImpl::GetServerStats(grpc::ServerContext* context,
                                              const v1::GetServerStatsRequest* request,
                                              v1::ServerStats* response) {
  return Serve(core_, "deniable.v1.AdminService/GetServerStats", *context, *request,
               &CollectorCore::GetServerStats, response);
}

}  // namespace deniable::server
