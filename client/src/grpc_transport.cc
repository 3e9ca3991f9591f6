#include "deniable/client/grpc_transport.h"

#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <chrono>
#include <string>

#include "absl/status/status.h"
#include "deniable/v1/report_service.grpc.pb.h"

namespace deniable::client {
namespace {

// The one place where a grpc::Status becomes an absl::Status in the SDK.
absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::microseconds(absl::ToInt64Microseconds(timeout)));
}

class GrpcTransport : public ReportTransport {
 public:
  explicit GrpcTransport(std::shared_ptr<grpc::Channel> channel)
      : channel_(std::move(channel)), stub_(v1::ReportService::NewStub(channel_)) {}

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration timeout) override {
    grpc::ClientContext context;
    SetDeadline(&context, timeout);
    v1::GetDesignRequest request;
    request.set_metric(metric);
    v1::GetDesignResponse response;
    grpc::Status status = stub_->GetDesign(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration timeout) override {
    grpc::ClientContext context;
    SetDeadline(&context, timeout);
    v1::SubmitReportsResponse response;
    grpc::Status status = stub_->SubmitReports(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ReportService::Stub> stub_;
};

}  // namespace

std::shared_ptr<ReportTransport> MakeGrpcTransport(std::shared_ptr<grpc::Channel> channel) {
  return std::make_shared<GrpcTransport>(std::move(channel));
}

std::shared_ptr<ReportTransport> MakeInsecureGrpcTransport(const std::string& target) {
  return MakeGrpcTransport(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
}

}  // namespace deniable::client
