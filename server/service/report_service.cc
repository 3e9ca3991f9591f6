#include "server/service/report_service.h"

#include <spdlog/spdlog.h>

#include "server/core/report_stream.h"
#include "server/service/grpc_status.h"

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
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const int size = request->reports_size();
  ServerCounters* counters = counters_;
  ingestor_->SubmitAsync(*request, [reactor, response, size,
                                    counters](absl::StatusOr<v1::SubmitReportsResponse> result) {
    if (!result.ok()) {
      // The reason names a field and value, never a bit; no peer address is logged.
      spdlog::warn("event=batch_rejected reports={} code={} reason=\"{}\"", size,
                   absl::StatusCodeToString(result.status().code()),
                   std::string(result.status().message()));
      if (counters != nullptr) {
        counters->RecordRejected(static_cast<grpc::StatusCode>(result.status().code()), size,
                                 false);
      }
      reactor->Finish(ToGrpcStatus(result.status()));
      return;
    }
    *response = *std::move(result);
    LogRejections("reports_rejected", *response);
    if (counters != nullptr) counters->RecordAccepted(*response);
    reactor->Finish(grpc::Status::OK);
  });
  return reactor;
}

grpc::Status ReportServiceImpl::StreamReports(grpc::ServerContext* context,
                                              grpc::ServerReader<v1::SubmitReportsRequest>* reader,
                                              v1::SubmitReportsResponse* response) {
  return StreamReportsAdmitted(context, reader, response, nullptr);
}

grpc::Status ReportServiceImpl::StreamReportsAdmitted(
    grpc::ServerContext* /*context*/, grpc::ServerReader<v1::SubmitReportsRequest>* reader,
    v1::SubmitReportsResponse* response, const std::function<absl::Status(int64_t)>& admit) {
  ReportStream stream(ingestor_);
  v1::SubmitReportsRequest message;
  absl::Status status;
  while (status.ok() && reader->Read(&message)) {
    if (admit) {
      if (absl::Status admitted = admit(message.reports_size()); !admitted.ok()) {
        return ToGrpcStatus(admitted);
      }
    }
    status = stream.Add(message);
  }
  absl::StatusOr<v1::SubmitReportsResponse> result =
      status.ok() ? stream.Finish() : absl::StatusOr<v1::SubmitReportsResponse>(status);
  if (!result.ok()) {
    spdlog::warn("event=stream_rejected code={} reason=\"{}\"",
                 absl::StatusCodeToString(result.status().code()),
                 std::string(result.status().message()));
    if (counters_ != nullptr) {
      counters_->RecordRejected(static_cast<grpc::StatusCode>(result.status().code()), 0, false);
    }
    return ToGrpcStatus(result.status());
  }
  *response = *std::move(result);
  LogRejections("stream_reports_rejected", *response);
  if (counters_ != nullptr) counters_->RecordAccepted(*response);
  return grpc::Status::OK;
}

}  // namespace deniable::server
