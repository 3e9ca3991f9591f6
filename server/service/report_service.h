// gRPC handlers of deniable.v1.ReportService: each takes the caller's credentials from the
// call's metadata (grpc_call.h) and makes one CollectorCore call, which checks the caller (token,
// role, rate limit, stream shedding), logs and counts the batches, and answers.
//
// Why the check is in the core call rather than a gRPC interceptor: in gRPC 1.51 a C++ server
// interceptor cannot end a call before its handler runs (no server-side Hijack), and an
// AuthMetadataProcessor runs only on TLS ports (never on a plaintext port or an in-process
// channel). The core refuses before any other core code runs, on every transport, and the
// services fail closed: a method they do not override answers UNIMPLEMENTED.
// Rejections: UNAUTHENTICATED / PERMISSION_DENIED / RESOURCE_EXHAUSTED with a message starting
// "authorization:" or "reports:"; each rejected report batch is logged (reason and size, never a
// bit, token or address) and counted by CollectorCore::RejectBatch.
//
// Thread-safe; does not own the core.
#ifndef DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_
#define DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_

#include <grpcpp/support/message_allocator.h>

#include <cstdint>

#include "deniable/v1/report_service.grpc.pb.h"
#include "server/core/collector_core.h"
#include "server/service/report_stream_reactor.h"

namespace deniable::server {

// The report calls on gRPC's callback API, so no thread blocks per call in flight or per open
// stream. SubmitReports queues the batch and returns; the group committer finishes the call after
// the commit. StreamReports runs a ReportStreamReactor (report_stream_reactor.h) per stream.
using ReportServiceCallbackBase = v1::ReportService::WithCallbackMethod_SubmitReports<
    v1::ReportService::WithCallbackMethod_StreamReports<v1::ReportService::Service>>;

// SubmitReports' request and response on one protobuf Arena per call, freed when gRPC releases
// the call: a 1000-report request is parsed into a few arena blocks where the default holder
// made several heap allocations per report (its Report messages, their id and metric strings)
// and freed each (docs/performance.md, "Where the time goes"). Thread-safe.
class ArenaReportAllocator final
    : public grpc::MessageAllocator<v1::SubmitReportsRequest, v1::SubmitReportsResponse> {
 public:
  grpc::MessageHolder<v1::SubmitReportsRequest, v1::SubmitReportsResponse>* AllocateMessages()
      override;
};

class ReportServiceImpl final : public ReportServiceCallbackBase {
 public:
  // `max_streams`: StreamReports calls open at once (0: no limit); `max_buffered_rows`: rows
  // buffered by all streams together before a stream stores early (see StreamLimits).
  explicit ReportServiceImpl(CollectorCore* core, int max_streams = 0,
                             int64_t max_buffered_rows = 0)
      : core_(core), stream_limits_(max_streams, max_buffered_rows) {
    SetMessageAllocatorFor_SubmitReports(&allocator_);
  }

  // CollectorCore::Call with GetDesign.
  grpc::Status GetDesign(grpc::ServerContext* context, const v1::GetDesignRequest* request,
                         v1::GetDesignResponse* response) override;
  // CollectorCore::SubmitReports with the call's credentials; finished after the commit.
  grpc::ServerUnaryReactor* SubmitReports(grpc::CallbackServerContext* context,
                                          const v1::SubmitReportsRequest* request,
                                          v1::SubmitReportsResponse* response) override;
  // CollectorCore::OpenStream, then a ReportStreamReactor; a refused or shed stream ends at once
  // with the core's status (RESOURCE_EXHAUSTED "reports: too many open streams" beyond
  // max_streams). See report_stream.h for how the messages of a stream are judged.
  grpc::ServerReadReactor<v1::SubmitReportsRequest>* StreamReports(
      grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) override;

  const StreamLimits& stream_limits() const { return stream_limits_; }

 private:
  CollectorCore* const core_;
  StreamLimits stream_limits_;
  ArenaReportAllocator allocator_;  // outlives the server: the service does
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_
