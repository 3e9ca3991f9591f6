#include "server/service/report_service.h"

#include <google/protobuf/arena.h>

#include <memory>
#include <utility>

#include "server/service/grpc_call.h"
#include "server/service/grpc_status.h"

namespace deniable::server {
namespace {

// Blocks of up to 64 KiB: a 1000-report request (about 100 KiB parsed) takes a few.
google::protobuf::ArenaOptions ReportArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 512;  // a one-report call fits; below glibc's large requests
  options.max_block_size = 64 * 1024;
  return options;
}

class ArenaReportHolder final
    : public grpc::MessageHolder<v1::SubmitReportsRequest, v1::SubmitReportsResponse> {
 public:
  ArenaReportHolder() : arena_(ReportArenaOptions()) {
    set_request(google::protobuf::Arena::CreateMessage<v1::SubmitReportsRequest>(&arena_));
    set_response(google::protobuf::Arena::CreateMessage<v1::SubmitReportsResponse>(&arena_));
  }
  void Release() override { delete this; }

 private:
  google::protobuf::Arena arena_;
};

}  // namespace

grpc::MessageHolder<v1::SubmitReportsRequest, v1::SubmitReportsResponse>*
ArenaReportAllocator::AllocateMessages() {
  return new ArenaReportHolder();
}

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
