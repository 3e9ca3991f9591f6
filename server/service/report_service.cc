#include "server/service/report_service.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "server/service/grpc_status.h"
#include "server/storage/storage_error.h"

namespace deniable::server {
namespace {

// One line per call with rejected reports: how many, and the first reason (bounded by
// EchoValue, never a bit).
void LogRejections(const char* event, const v1::SubmitReportsResponse& response) {
  if (response.rejections_size() == 0) return;
  spdlog::warn(
      "event={} rejected={} accepted={} first_index={} first_code={} first_reason=\"{}\"", event,
      response.rejections_size(), response.accepted(), response.rejections(0).index(),
      absl::StatusCodeToString(static_cast<absl::StatusCode>(response.rejections(0).code())),
      response.rejections(0).reason());
}

}  // namespace

grpc::Status ReportServiceImpl::GetDesign(grpc::ServerContext* /*context*/,
                                          const v1::GetDesignRequest* request,
                                          v1::GetDesignResponse* response) {
  absl::StatusOr<v1::GetDesignResponse> design = DesignForDevice(*registry_, request->metric());
  if (!design.ok()) return ToGrpcStatus(design.status());
  *response = *std::move(design);
  return grpc::Status::OK;
}

grpc::ServerUnaryReactor* ReportServiceImpl::SubmitReports(grpc::CallbackServerContext* context,
                                                           const v1::SubmitReportsRequest* request,
                                                           v1::SubmitReportsResponse* response) {
  return SubmitReportsFrom(context, request, response, ReportCall());
}

grpc::ServerUnaryReactor* ReportServiceImpl::SubmitReportsFrom(
    grpc::CallbackServerContext* context, const v1::SubmitReportsRequest* request,
    v1::SubmitReportsResponse* response, ReportCall call) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const int size = request->reports_size();
  ServerCounters* counters = counters_;
  ingestor_->SubmitAsync(
      *request, call.origin,
      [reactor, response, size, counters, call](absl::StatusOr<v1::SubmitReportsResponse> result) {
        if (!result.ok()) {
          // The reason names a field and value, never a bit; no peer address is logged.
          spdlog::warn("event=batch_rejected reports={} code={} reason=\"{}\"", size,
                       absl::StatusCodeToString(result.status().code()),
                       std::string(result.status().message()));
          if (counters != nullptr) {
            counters->RecordRejected(
                static_cast<grpc::StatusCode>(ClientVisibleStatus(result.status()).code()), size,
                false);
          }
          reactor->Finish(ToGrpcStatus(result.status()));
          return;
        }
        *response = *std::move(result);
        LogRejections("reports_rejected", *response);
        if (call.origin == ReportOrigin::kImport) LogImport("SubmitReports", call, *response);
        if (counters != nullptr) counters->RecordAccepted(*response);
        reactor->Finish(grpc::Status::OK);
      });
  return reactor;
}

grpc::ServerReadReactor<v1::SubmitReportsRequest>* ReportServiceImpl::StreamReports(
    grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) {
  return StreamReportsAdmitted(context, response, nullptr);
}

grpc::ServerReadReactor<v1::SubmitReportsRequest>* ReportServiceImpl::StreamReportsAdmitted(
    grpc::CallbackServerContext* /*context*/, v1::SubmitReportsResponse* response,
    ReportStreamReactor::Admit admit, ReportCall call) {
  return ReportStreamReactor::Open(ingestor_, counters_, &stream_limits_, response,
                                   std::move(admit), call);
}

}  // namespace deniable::server
