#include "server/service/report_service.h"

#include <utility>

#include "server/service/grpc_status.h"

namespace deniable::server {
grpc::Status ReportServiceImpl::GetDesign(grpc::ServerContext* /*context*/,
                                          const v1::GetDesignRequest* request,
                                          v1::GetDesignResponse* response) {
  absl::StatusOr<v1::GetDesignResponse> design = core_->GetDesign(*request);
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
  core_->SubmitAdmitted(Transport::kGrpc, call, *request,
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
  return StreamReportsAdmitted(context, response, nullptr);
}

grpc::ServerReadReactor<v1::SubmitReportsRequest>* ReportServiceImpl::StreamReportsAdmitted(
    grpc::CallbackServerContext* /*context*/, v1::SubmitReportsResponse* response,
    ReportStreamReactor::Admit admit, ReportCall call) {
  return ReportStreamReactor::Open(core_, &stream_limits_, response, std::move(admit), call);
}

}  // namespace deniable::server
