#include "server/service/server_counters.h"

namespace deniable::server {

void ServerCounters::RecordAccepted(const v1::SubmitReportsResponse& response) {
  batches_accepted_.fetch_add(1, std::memory_order_relaxed);
  reports_accepted_.fetch_add(response.accepted(), std::memory_order_relaxed);
  reports_duplicate_.fetch_add(response.duplicates(), std::memory_order_relaxed);
  reports_rejected_.fetch_add(static_cast<uint64_t>(response.rejections_size()),
                              std::memory_order_relaxed);
}

void ServerCounters::RecordRejected(grpc::StatusCode code, int64_t reports, bool rate_limited) {
  batches_rejected_.fetch_add(1, std::memory_order_relaxed);
  reports_rejected_.fetch_add(static_cast<uint64_t>(reports), std::memory_order_relaxed);
  std::atomic<uint64_t>* reason = &other_;
  if (rate_limited) {
    reason = &rate_limited_;
  } else if (code == grpc::StatusCode::INVALID_ARGUMENT || code == grpc::StatusCode::NOT_FOUND) {
    reason = &invalid_;
  } else if (code == grpc::StatusCode::UNAUTHENTICATED) {
    reason = &unauthenticated_;
  } else if (code == grpc::StatusCode::PERMISSION_DENIED) {
    reason = &permission_denied_;
  }
  reason->fetch_add(1, std::memory_order_relaxed);
}

v1::ServerStats ServerCounters::Snapshot() const {
  v1::ServerStats s;
  auto get = [](const std::atomic<uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  s.set_start_time_seconds(start_time_seconds_);
  s.set_batches_accepted(get(batches_accepted_));
  s.set_reports_accepted(get(reports_accepted_));
  s.set_reports_duplicate(get(reports_duplicate_));
  s.set_batches_rejected(get(batches_rejected_));
  s.set_reports_rejected(get(reports_rejected_));
  s.set_rejected_invalid(get(invalid_));
  s.set_rejected_unauthenticated(get(unauthenticated_));
  s.set_rejected_permission_denied(get(permission_denied_));
  s.set_rejected_rate_limited(get(rate_limited_));
  s.set_rejected_other(get(other_));
  return s;
}

}  // namespace deniable::server
