// gRPC handlers of deniable.v1.QueryService and deniable.v1.AdminService: each takes the
// caller's credentials from the call's metadata (grpc_call.h) and makes one CollectorCore::Call,
// which checks the caller's token and role (UNAUTHENTICATED / PERMISSION_DENIED
// "authorization: ...") and runs the query or change, writing its audit line. An exception
// escaping a handler becomes INTERNAL (CatchAll). See report_service.h for why the check is in
// the core call. Thread-safe; does not own the core.
#ifndef DENIABLE_SERVER_SERVICE_QUERY_SERVICE_H_
#define DENIABLE_SERVER_SERVICE_QUERY_SERVICE_H_

#include "deniable/v1/admin_service.grpc.pb.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "server/core/collector_core.h"

namespace deniable::server {

class QueryServiceImpl final : public v1::QueryService::Service {
 public:
  explicit QueryServiceImpl(CollectorCore* core) : core_(core) {}

  grpc::Status CreateMetric(grpc::ServerContext* context, const v1::CreateMetricRequest* request,
                            v1::Metric* response) override;
  grpc::Status ListMetrics(grpc::ServerContext* context, const v1::ListMetricsRequest* request,
                           v1::ListMetricsResponse* response) override;
  grpc::Status AddDesignVersion(grpc::ServerContext* context,
                                const v1::AddDesignVersionRequest* request,
                                v1::Metric* response) override;
  grpc::Status GetPrevalence(grpc::ServerContext* context, const v1::GetPrevalenceRequest* request,
                             v1::Prevalence* response) override;
  grpc::Status GetSeries(grpc::ServerContext* context, const v1::GetSeriesRequest* request,
                         v1::Series* response) override;
  grpc::Status GetDifference(grpc::ServerContext* context, const v1::GetDifferenceRequest* request,
                             v1::Difference* response) override;
  grpc::Status DescribeDesign(grpc::ServerContext* context,
                              const v1::DescribeDesignRequest* request,
                              v1::DesignDescription* response) override;
  grpc::Status PlanSurvey(grpc::ServerContext* context, const v1::PlanSurveyRequest* request,
                          v1::SurveyPlan* response) override;
  grpc::Status GetTopValues(grpc::ServerContext* context, const v1::GetTopValuesRequest* request,
                            v1::TopValues* response) override;
  grpc::Status GetFrequencies(grpc::ServerContext* context,
                              const v1::GetFrequenciesRequest* request,
                              v1::TopValues* response) override;
  grpc::Status ListAlerts(grpc::ServerContext* context, const v1::ListAlertsRequest* request,
                          v1::ListAlertsResponse* response) override;
  grpc::Status DeleteMetric(grpc::ServerContext* context, const v1::DeleteMetricRequest* request,
                            v1::DeleteMetricResponse* response) override;
  grpc::Status SetRetention(grpc::ServerContext* context, const v1::SetRetentionRequest* request,
                            v1::Metric* response) override;

 private:
  CollectorCore* const core_;
};

// AdminService.GetServerStats: the counters, for analysts.
class AdminServiceImpl final : public v1::AdminService::Service {
 public:
  explicit AdminServiceImpl(CollectorCore* core) : core_(core) {}
  grpc::Status GetServerStats(grpc::ServerContext* context,
                              const v1::GetServerStatsRequest* request,
                              v1::ServerStats* response) override;

 private:
  CollectorCore* const core_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_QUERY_SERVICE_H_
