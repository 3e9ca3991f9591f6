// gRPC handlers of deniable.v1.ReportService: each converts and delegates to the core.
// Thread-safe; does not own the core objects.
#ifndef DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_
#define DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_

#include <functional>

#include "deniable/v1/report_service.grpc.pb.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/service/server_counters.h"

namespace deniable::server {

// SubmitReports uses gRPC's callback API: its handler queues the batch and returns, and the group
// committer finishes the call after the commit, so no thread blocks per call in flight.
class ReportServiceImpl final
    : public v1::ReportService::WithCallbackMethod_SubmitReports<v1::ReportService::Service> {
 public:
  // `counters` (may be null) records each batch's outcome after validation and commit.
  ReportServiceImpl(MetricRegistry* registry, Ingestor* ingestor,
                    ServerCounters* counters = nullptr)
      : registry_(registry), ingestor_(ingestor), counters_(counters) {}

  grpc::Status GetDesign(grpc::ServerContext* context, const v1::GetDesignRequest* request,
                         v1::GetDesignResponse* response) override;
  grpc::ServerUnaryReactor* SubmitReports(grpc::CallbackServerContext* context,
                                          const v1::SubmitReportsRequest* request,
                                          v1::SubmitReportsResponse* response) override;
  grpc::Status StreamReports(grpc::ServerContext* context,
                             grpc::ServerReader<v1::SubmitReportsRequest>* reader,
                             v1::SubmitReportsResponse* response) override;
  // StreamReports with `admit(reports in the message)` run on each message before it is
  // validated (the rate limit). A refusal ends the stream with that status; `admit` records the
  // refusal itself. Reports of earlier messages may or may not be stored (re-sending is safe).
  grpc::Status StreamReportsAdmitted(grpc::ServerContext* context,
                                     grpc::ServerReader<v1::SubmitReportsRequest>* reader,
                                     v1::SubmitReportsResponse* response,
                                     const std::function<absl::Status(int64_t)>& admit);

 private:
  MetricRegistry* const registry_;
  Ingestor* const ingestor_;
  ServerCounters* const counters_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_REPORT_SERVICE_H_
