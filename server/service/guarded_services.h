// Access control in front of the gRPC services: each Guarded* service checks the caller's bearer
// token and role, and for reports the rate limit, then delegates to the real service.
//
// Why decorators: in gRPC 1.51 a C++ server interceptor cannot end a call before its handler
// runs (no server-side Hijack), and an AuthMetadataProcessor runs only on TLS ports (never on a
// plaintext port or an in-process channel). A decorator rejects before any core code runs, on
// every transport, and fails closed: a method it does not forward answers UNIMPLEMENTED.
//
// Policy: the role table and the rate limit live in server/auth/access_policy.h, held by the
// CollectorCore and shared with the HTTP/JSON front end (server/http); grpc.health.v1.Health is
// not guarded.
// Rejections: UNAUTHENTICATED / PERMISSION_DENIED / RESOURCE_EXHAUSTED with a message starting
// "authorization:" or "reports:"; each rejected report batch is logged (reason and size, never a
// bit, token or address) and counted by CollectorCore::RejectBatch.
//
// Thread-safe. Does not own its arguments.
#ifndef DENIABLE_SERVER_SERVICE_GUARDED_SERVICES_H_
#define DENIABLE_SERVER_SERVICE_GUARDED_SERVICES_H_

#include <grpcpp/grpcpp.h>

#include <optional>

#include "deniable/v1/admin_service.grpc.pb.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "server/auth/access_policy.h"
#include "server/service/collector_core.h"
#include "server/service/report_service.h"

namespace deniable::server {

// The checks shared by the guarded services: the core's AccessPolicy fed with gRPC's metadata and
// peer.
class CallGuard {
 public:
  explicit CallGuard(CollectorCore* core) : core_(core) {}

  // `method` is the full name ("deniable.v1.QueryService/GetPrevalence").
  // Errors: UNAUTHENTICATED, PERMISSION_DENIED (see AccessPolicy::Authorize).
  absl::StatusOr<Caller> Check(const grpc::ServerContextBase& context, absl::string_view method);
  // Rate limit keyed by the token, else by a salted hash of the peer. Errors: RESOURCE_EXHAUSTED.
  absl::Status AdmitReports(const Caller& caller, int64_t reports) {
    return core_->AdmitReports(caller, reports);
  }

  CollectorCore* core() { return core_; }

 private:
  CollectorCore* const core_;
};

// SubmitReports and StreamReports stay on gRPC's callback API like the inner service: the check
// runs on the calling thread, then the inner handler queues the batch for the group committer
// (or opens the stream's reactor, which checks the token and rate limit again per message). The
// inner service counts the outcome of batches and streams that pass the check.
class GuardedReportService final : public ReportServiceCallbackBase {
 public:
  GuardedReportService(ReportServiceImpl* inner, CallGuard* guard) : inner_(inner), guard_(guard) {}
  grpc::Status GetDesign(grpc::ServerContext* context, const v1::GetDesignRequest* request,
                         v1::GetDesignResponse* response) override;
  grpc::ServerUnaryReactor* SubmitReports(grpc::CallbackServerContext* context,
                                          const v1::SubmitReportsRequest* request,
                                          v1::SubmitReportsResponse* response) override;
  grpc::ServerReadReactor<v1::SubmitReportsRequest>* StreamReports(
      grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) override;

 private:
  grpc::Status Reject(const absl::Status& status, int64_t reports, bool rate_limited);
  ReportServiceImpl* const inner_;
  CallGuard* const guard_;
};

class GuardedQueryService final : public v1::QueryService::Service {
 public:
  GuardedQueryService(v1::QueryService::Service* inner, CallGuard* guard)
      : inner_(inner), guard_(guard) {}
  grpc::Status CreateMetric(grpc::ServerContext* c, const v1::CreateMetricRequest* q,
                            v1::Metric* r) override;
  grpc::Status ListMetrics(grpc::ServerContext* c, const v1::ListMetricsRequest* q,
                           v1::ListMetricsResponse* r) override;
  grpc::Status AddDesignVersion(grpc::ServerContext* c, const v1::AddDesignVersionRequest* q,
                                v1::Metric* r) override;
  grpc::Status GetPrevalence(grpc::ServerContext* c, const v1::GetPrevalenceRequest* q,
                             v1::Prevalence* r) override;
  grpc::Status GetSeries(grpc::ServerContext* c, const v1::GetSeriesRequest* q,
                         v1::Series* r) override;
  grpc::Status GetDifference(grpc::ServerContext* c, const v1::GetDifferenceRequest* q,
                             v1::Difference* r) override;
  grpc::Status DescribeDesign(grpc::ServerContext* c, const v1::DescribeDesignRequest* q,
                              v1::DesignDescription* r) override;
  grpc::Status PlanSurvey(grpc::ServerContext* c, const v1::PlanSurveyRequest* q,
                          v1::SurveyPlan* r) override;
  grpc::Status GetTopValues(grpc::ServerContext* c, const v1::GetTopValuesRequest* q,
                            v1::TopValues* r) override;
  grpc::Status GetFrequencies(grpc::ServerContext* c, const v1::GetFrequenciesRequest* q,
                              v1::TopValues* r) override;
  grpc::Status ListAlerts(grpc::ServerContext* c, const v1::ListAlertsRequest* q,
                          v1::ListAlertsResponse* r) override;
  grpc::Status DeleteMetric(grpc::ServerContext* c, const v1::DeleteMetricRequest* q,
                            v1::DeleteMetricResponse* r) override;
  grpc::Status SetRetention(grpc::ServerContext* c, const v1::SetRetentionRequest* q,
                            v1::Metric* r) override;

 private:
  v1::QueryService::Service* const inner_;
  CallGuard* const guard_;
};

// AdminService.GetServerStats: the counters, for analysts.
class AdminServiceImpl final : public v1::AdminService::Service {
 public:
  explicit AdminServiceImpl(CallGuard* guard) : guard_(guard) {}
  grpc::Status GetServerStats(grpc::ServerContext* context,
                              const v1::GetServerStatsRequest* request,
                              v1::ServerStats* response) override;

 private:
  CallGuard* const guard_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_GUARDED_SERVICES_H_
