#include "server/service/guarded_services.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/service/grpc_status.h"

namespace deniable::server {
namespace {

absl::string_view Metadata(const grpc::ServerContextBase& context, absl::string_view key) {
  const auto& md = context.client_metadata();
  auto it = md.find(grpc::string_ref(key.data(), key.size()));
  if (it == md.end()) return {};
  return absl::string_view(it->second.data(), it->second.size());
}

// The last guard at the service boundary: an exception escaping a handler would reach the client
// as UNKNOWN; it becomes INTERNAL (a bug by definition: handlers validate their input and call
// Boost with non-throwing policies) with a log line naming the method.
template <typename Handler>
grpc::Status CatchAll(const char* method, Handler&& handler) {
  try {
    return handler();
  } catch (const std::exception& e) {
    spdlog::error("event=handler_exception method={} what=\"{}\"", method, EchoValue(e.what()));
  } catch (...) {
    spdlog::error("event=handler_exception method={} what=\"(not a std::exception)\"", method);
  }
  return grpc::Status(grpc::StatusCode::INTERNAL,
                      absl::StrCat(method, ": internal error (logged on the server)"));
}

// Checks the caller, then runs the inner unary handler.
template <typename Service, typename Request, typename Response>
grpc::Status Forward(CallGuard* guard, const char* method, Service* inner,
                     grpc::Status (Service::*handler)(grpc::ServerContext*, const Request*,
                                                      Response*),
                     grpc::ServerContext* context, const Request* request, Response* response) {
  absl::StatusOr<Caller> caller = guard->Check(*context, method);
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  return CatchAll(method, [&] { return (inner->*handler)(context, request, response); });
}

}  // namespace

absl::StatusOr<Caller> CallGuard::Check(const grpc::ServerContextBase& context,
                                        absl::string_view method) {
  const auto& md = context.client_metadata();
  std::optional<absl::string_view> import_header;
  if (md.find(grpc::string_ref(kImportHeader.data(), kImportHeader.size())) != md.end()) {
    import_header = Metadata(context, kImportHeader);
  }
  return core_->Authorize(method, Metadata(context, "authorization"), context.peer(),
                          import_header);
}

grpc::Status GuardedReportService::Reject(const absl::Status& status, int64_t reports,
                                          bool rate_limited) {
  guard_->core()->RejectBatch(Transport::kGrpc, status, reports, rate_limited);
  return ToGrpcStatus(status);
}

grpc::Status GuardedReportService::GetDesign(grpc::ServerContext* context,
                                             const v1::GetDesignRequest* request,
                                             v1::GetDesignResponse* response) {
  return Forward(guard_, "deniable.v1.ReportService/GetDesign",
                 static_cast<v1::ReportService::Service*>(inner_),
                 &v1::ReportService::Service::GetDesign, context, request, response);
}

grpc::ServerUnaryReactor* GuardedReportService::SubmitReports(
    grpc::CallbackServerContext* context, const v1::SubmitReportsRequest* request,
    v1::SubmitReportsResponse* response) {
  const int64_t size = request->reports_size();
  absl::StatusOr<Caller> caller =
      guard_->Check(*context, "deniable.v1.ReportService/SubmitReports");
  absl::Status refused = caller.status();
  bool rate_limited = false;
  if (refused.ok()) {
    refused = guard_->AdmitReports(*caller, size);
    rate_limited = !refused.ok();
  }
  if (!refused.ok()) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(Reject(refused, size, rate_limited));
    return reactor;
  }
  return inner_->SubmitReportsFrom(context, request, response, ReportCallOf(*caller));
}

grpc::ServerReadReactor<v1::SubmitReportsRequest>* GuardedReportService::StreamReports(
    grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) {
  absl::StatusOr<Caller> caller =
      guard_->Check(*context, "deniable.v1.ReportService/StreamReports");
  if (!caller.ok()) return new RefusedStreamReactor(Reject(caller.status(), 0, false));
  // The token and the rate limit are checked again for each message, so a revocation (seen
  // within the authenticator's reload interval) or an exhausted bucket ends an open stream
  // before its next message is stored; the inner service counts the stream's outcome. The
  // context outlives the reactor, which outlives every call of this function.
  CallGuard* guard = guard_;
  GuardedReportService* self = this;
  const ReportCall call = ReportCallOf(*caller);
  return inner_->StreamReportsAdmitted(
      context, response,
      [guard, self, context, principal = *std::move(caller)](int64_t reports) -> absl::Status {
        if (principal.principal.has_value()) {
          absl::StatusOr<Caller> still =
              guard->Check(*context, "deniable.v1.ReportService/StreamReports");
          if (!still.ok()) {
            self->Reject(still.status(), reports, false);
            return still.status();
          }
        }
        absl::Status s = guard->AdmitReports(principal, reports);
        if (!s.ok()) self->Reject(s, reports, true);
        return s;
      },
      call);
}

#define DENIABLE_FORWARD_QUERY(Method, Request, Response)                                \
  grpc::Status GuardedQueryService::Method(grpc::ServerContext* c, const v1::Request* q, \
                                           v1::Response* r) {                            \
    return Forward(guard_, "deniable.v1.QueryService/" #Method, inner_,                  \
                   &v1::QueryService::Service::Method, c, q, r);                         \
  }
DENIABLE_FORWARD_QUERY(CreateMetric, CreateMetricRequest, Metric)
DENIABLE_FORWARD_QUERY(ListMetrics, ListMetricsRequest, ListMetricsResponse)
DENIABLE_FORWARD_QUERY(AddDesignVersion, AddDesignVersionRequest, Metric)
DENIABLE_FORWARD_QUERY(GetPrevalence, GetPrevalenceRequest, Prevalence)
DENIABLE_FORWARD_QUERY(GetSeries, GetSeriesRequest, Series)
DENIABLE_FORWARD_QUERY(GetDifference, GetDifferenceRequest, Difference)
DENIABLE_FORWARD_QUERY(DescribeDesign, DescribeDesignRequest, DesignDescription)
DENIABLE_FORWARD_QUERY(PlanSurvey, PlanSurveyRequest, SurveyPlan)
DENIABLE_FORWARD_QUERY(GetTopValues, GetTopValuesRequest, TopValues)
DENIABLE_FORWARD_QUERY(GetFrequencies, GetFrequenciesRequest, TopValues)
DENIABLE_FORWARD_QUERY(ListAlerts, ListAlertsRequest, ListAlertsResponse)
DENIABLE_FORWARD_QUERY(DeleteMetric, DeleteMetricRequest, DeleteMetricResponse)
DENIABLE_FORWARD_QUERY(SetRetention, SetRetentionRequest, Metric)
#undef DENIABLE_FORWARD_QUERY

grpc::Status AdminServiceImpl::GetServerStats(grpc::ServerContext* context,
                                              const v1::GetServerStatsRequest* /*request*/,
                                              v1::ServerStats* response) {
  absl::StatusOr<Caller> caller =
      guard_->Check(*context, "deniable.v1.AdminService/GetServerStats");
  if (!caller.ok()) return ToGrpcStatus(caller.status());
  *response = guard_->core()->GetServerStats();
  return grpc::Status::OK;
}

}  // namespace deniable::server
