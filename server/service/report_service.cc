#include "server/service/report_service.h"

#include <memory>
#include <utility>

#include "server/service/grpc_call.h"
#include "server/service/grpc_status.h"

namespace deniable::server {

grpc::Status ReportServiceImpl::GetDesign(grpc::ServerContext* context,
                                          const v1::GetDesignRequest* request,
                                          v1::GetDesignResponse* response) {
  static constexpr const char kMethod[] = "deniable.v1.ReportService/GetDesign";
  return CatchAll(kMethod, [&] {
    absl::StatusOr<v1::GetDesignResponse> design =
        core_->Call(kMethod, CredentialsOf(*context), *request, &CollectorCore::GetDesign);
    if (!design.ok()) return ToGrpcStatus(design.status());
    *response = *std::move(design);
    return grpc::Status::OK;
  });
}

grpc::ServerUnaryReactor* ReportServiceImpl::SubmitReports(grpc::CallbackServerContext* context,
                                                           const v1::SubmitReportsRequest* request,
                                                           v1::SubmitReportsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  core_->SubmitReports(Transport::kGrpc, "deniable.v1.ReportService/SubmitReports",
                       CredentialsOf(*context), *request,
                       [reactor, response](absl::StatusOr<v1::SubmitReportsResponse> result) {
                         if (!result.ok()) {
                           reactor->Finish(ToGrpcStatus(result.status()));
                           return;
                         }
                         *response = *std::move(result);
                         reactor->Finish(grpc::Status::OK);
                       });
  return reactor;
}

grpc::ServerReadReactor<v1::SubmitReportsRequest>* ReportServiceImpl::StreamReports(
    grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) {
  absl::StatusOr<std::unique_ptr<CollectorCore::Stream>> stream = core_->OpenStream(
      "deniable.v1.ReportService/StreamReports", CredentialsOf(*context), &stream_limits_);
  if (!stream.ok()) return new RefusedStreamReactor(ToGrpcStatus(stream.status()));
  return new ReportStreamReactor(*std::move(stream), &stream_limits_, response);
}

}  // namespace deniable::server
