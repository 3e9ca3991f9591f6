// A ReportTransport that calls the server core directly (no gRPC), for fast in-process
// simulations of many devices. Thread-safe as the core is.
#ifndef DENIABLE_TESTS_SUPPORT_DIRECT_TRANSPORT_H_
#define DENIABLE_TESTS_SUPPORT_DIRECT_TRANSPORT_H_

#include <memory>
#include <string>

#include "deniable/client/transport.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"

namespace deniable::testing {

class DirectTransport : public client::ReportTransport {
 public:
  DirectTransport(server::MetricRegistry* registry, server::Ingestor* ingestor)
      : registry_(registry), ingestor_(ingestor) {}

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    absl::StatusOr<std::shared_ptr<const server::MetricInfo>> info = registry_->Find(metric);
    if (!info.ok()) return info.status();
    v1::GetDesignResponse response;
    response.set_metric(metric);
    *response.mutable_design() = (*info)->current().wire;
    response.set_time_precision_seconds((*info)->proto.time_precision_seconds());
    response.set_design_fingerprint((*info)->current().fingerprint);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    return ingestor_->Submit(request);
  }

 private:
  server::MetricRegistry* registry_;
  server::Ingestor* ingestor_;
};

}  // namespace deniable::testing

#endif  // DENIABLE_TESTS_SUPPORT_DIRECT_TRANSPORT_H_
