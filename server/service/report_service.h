// gRPC handlers of deniable.v1.ReportService: each converts and delegates to the CollectorCore,
// which logs and counts the batches. Thread-safe; does not own the core.
#ifndef DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_
#define DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_

#include <cstdint>

#include "deniable/v1/report_service.grpc.pb.h"
#include "server/service/collector_core.h"
#include "server/service/report_stream_reactor.h"

namespace deniable::server {

// The report calls on gRPC's callback API, so no thread blocks per call in flight or per open
// stream. SubmitReports queues the batch and returns; the group committer finishes the call after
// the commit. StreamReports runs a ReportStreamReactor (report_stream_reactor.h) per stream.
using ReportServiceCallbackBase = v1::ReportService::WithCallbackMethod_SubmitReports<
    v1::ReportService::WithCallbackMethod_StreamReports<v1::ReportService::Service>>;

class ReportServiceImpl final : public ReportServiceCallbackBase {
 public:
  // `max_streams`: StreamReports calls open at once (0: no limit); `max_buffered_rows`: rows
  // buffered by all streams together before a stream stores early (see StreamLimits).
  explicit ReportServiceImpl(CollectorCore* core, int max_streams = 0,
                             int64_t max_buffered_rows = 0)
      : core_(core), stream_limits_(max_streams, max_buffered_rows) {}

  grpc::Status GetDesign(grpc::ServerContext* context, const v1::GetDesignRequest* request,
                         v1::GetDesignResponse* response) override;
  grpc::ServerUnaryReactor* SubmitReports(grpc::CallbackServerContext* context,
                                          const v1::SubmitReportsRequest* request,
                                          v1::SubmitReportsResponse* response) override;
  // A stream beyond max_streams ends at once with RESOURCE_EXHAUSTED "reports: too many open
  // streams"; see report_stream.h for how the messages of a stream are judged.
  grpc::ServerReadReactor<v1::SubmitReportsRequest>* StreamReports(
      grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) override;
  // StreamReports with `admit(reports in the message)` run on each message before it is
  // validated (the token re-check and the rate limit). A refusal ends the stream with that
  // status; `admit` records the refusal itself. Reports of earlier messages may or may not be
  // stored (re-sending is safe).
  // `call`: the batches of an import are judged as such (Ingestor) and logged (LogImport). Only
  // the guarded service (guarded_services.h), after AccessPolicy admitted the import, passes one.
  grpc::ServerReadReactor<v1::SubmitReportsRequest>* StreamReportsAdmitted(
      grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response,
      ReportStreamReactor::Admit admit, ReportCall call = {});
  // SubmitReports for `call` (see StreamReportsAdmitted).
  grpc::ServerUnaryReactor* SubmitReportsFrom(grpc::CallbackServerContext* context,
                                              const v1::SubmitReportsRequest* request,
                                              v1::SubmitReportsResponse* response, ReportCall call);

  const StreamLimits& stream_limits() const { return stream_limits_; }

 private:
  CollectorCore* const core_;
  StreamLimits stream_limits_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_
