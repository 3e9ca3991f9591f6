// The transport the Reporter sends through: an interface, so that apps and tests can replace
// the network (a fake in tests, gRPC in production; see grpc_transport.h).
#ifndef DENIABLE_CLIENT_TRANSPORT_H_
#define DENIABLE_CLIENT_TRANSPORT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable::client {

// Implementations must be safe for concurrent use from multiple threads.
class ReportTransport {
 public:
  virtual ~ReportTransport() = default;

  // Fetches a metric's current design, giving up after `timeout`.
  // Errors: the server's status (NOT_FOUND for an unknown metric), DEADLINE_EXCEEDED,
  // UNAVAILABLE when the server cannot be reached.
  virtual absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                          absl::Duration timeout) = 0;

  // Submits one batch, giving up after `timeout`. OK means the server committed it.
  // Errors: the server's status (INVALID_ARGUMENT / NOT_FOUND naming the field), or
  // UNAVAILABLE / DEADLINE_EXCEEDED / RESOURCE_EXHAUSTED, after which the same batch may be
  // re-sent (the server counts each report id once).
  virtual absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(
      const v1::SubmitReportsRequest& request, absl::Duration timeout) = 0;
};

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_TRANSPORT_H_
