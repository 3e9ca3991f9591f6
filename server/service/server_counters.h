// Counters of accepted and rejected report batches since the process started, served by
// AdminService.GetServerStats. Lock-free; thread-safe.
#ifndef DENIABLE_SERVER_SERVICE_SERVER_COUNTERS_H_
#define DENIABLE_SERVER_SERVICE_SERVER_COUNTERS_H_

#include <grpcpp/support/status.h>

#include <atomic>
#include <cstdint>

#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable::server {

class ServerCounters {
 public:
  explicit ServerCounters(int64_t start_time_seconds) : start_time_seconds_(start_time_seconds) {}

  // A call that committed: its accepted and duplicate counts, and its reports rejected one by
  // one (SubmitReportsResponse.rejections), which count in reports_rejected (per report) but
  // not in batches_rejected (the call itself succeeded).
  void RecordAccepted(const v1::SubmitReportsResponse& response);
  // A call that stored nothing, with the number of reports it carried (0 if unknown) and whether
  // the rate limit (rather than storage) said RESOURCE_EXHAUSTED.
  void RecordRejected(grpc::StatusCode code, int64_t reports, bool rate_limited);

  v1::ServerStats Snapshot() const;

 private:
  const int64_t start_time_seconds_;
  std::atomic<uint64_t> batches_accepted_{0}, reports_accepted_{0}, reports_duplicate_{0};
  std::atomic<uint64_t> batches_rejected_{0}, reports_rejected_{0};
  std::atomic<uint64_t> invalid_{0}, unauthenticated_{0}, permission_denied_{0}, rate_limited_{0},
      other_{0};
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_SERVER_COUNTERS_H_
