#include "server/service/server_counters.h"

#include <string>

namespace deniable::server {
namespace {

std::shared_ptr<prometheus::Registry> OrNew(std::shared_ptr<prometheus::Registry> registry) {
  return registry != nullptr ? std::move(registry) : std::make_shared<prometheus::Registry>();
}

prometheus::Family<prometheus::Counter>& Counters(prometheus::Registry& registry, const char* name,
                                                  const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

uint64_t Get(const prometheus::Counter& c) { return static_cast<uint64_t>(c.Value()); }

}  // namespace

ServerCounters::ServerCounters(int64_t start_time_seconds,
                               std::shared_ptr<prometheus::Registry> registry)
    : start_time_seconds_(start_time_seconds),
      registry_(OrNew(std::move(registry))),
      batches_(Counters(*registry_, "deniable_report_batches_total",
                        "Report batches (SubmitReports calls, streams) by outcome")),
      reports_(Counters(*registry_, "deniable_reports_total",
                        "Reports by outcome: accepted (stored now), duplicate (already stored), "
                        "rejected (judged alone, or in a call refused whole)")),
      rejected_batches_(Counters(*registry_, "deniable_report_batches_rejected_total",
                                 "Rejected report batches by reason")),
      rejected_reports_(
          Counters(*registry_, "deniable_reports_rejected_total",
                   "Rejected reports by status code: judged alone, or in a call refused whole")),
      calls_(Counters(*registry_, "deniable_calls_total",
                      "Finished calls by transport, method and status code")),
      batches_accepted_(batches_.Add({{"outcome", "accepted"}})),
      batches_rejected_(batches_.Add({{"outcome", "rejected"}})),
      reports_accepted_(reports_.Add({{"outcome", "accepted"}})),
      reports_duplicate_(reports_.Add({{"outcome", "duplicate"}})),
      reports_rejected_(reports_.Add({{"outcome", "rejected"}})),
      invalid_(rejected_batches_.Add({{"reason", "invalid"}})),
      unauthenticated_(rejected_batches_.Add({{"reason", "unauthenticated"}})),
      permission_denied_(rejected_batches_.Add({{"reason", "permission_denied"}})),
      rate_limited_(rejected_batches_.Add({{"reason", "rate_limited"}})),
      other_(rejected_batches_.Add({{"reason", "other"}})),
      streams_shed_(Counters(*registry_, "deniable_streams_shed_total",
                             "StreamReports calls refused with RESOURCE_EXHAUSTED because the "
                             "server's limit of open streams was reached")
                        .Add({})),
      open_streams_(prometheus::BuildGauge()
                        .Name("deniable_open_streams")
                        .Help("StreamReports calls open now (limit: --max_concurrent_streams)")
                        .Register(*registry_)
                        .Add({})) {}

void ServerCounters::RecordAccepted(const v1::SubmitReportsResponse& response) {
  batches_accepted_.Increment();
  reports_accepted_.Increment(response.accepted());
  reports_duplicate_.Increment(response.duplicates());
  // A stream lists its first 1000 rejections only (rejections_omitted counts the rest): those
  // count in the total, not per code.
  reports_rejected_.Increment(
      static_cast<double>(response.rejections_size() + response.rejections_omitted()));
  for (const v1::ReportRejection& r : response.rejections()) {
    rejected_reports_
        .Add({{"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(r.code()))}})
        .Increment();
  }
}

void ServerCounters::RecordRejected(grpc::StatusCode code, int64_t reports, bool rate_limited) {
  batches_rejected_.Increment();
  reports_rejected_.Increment(static_cast<double>(reports));
  rejected_reports_.Add({{"code", absl::StatusCodeToString(static_cast<absl::StatusCode>(code))}})
      .Increment(static_cast<double>(reports));
  prometheus::Counter* reason = &other_;
  if (rate_limited) {
    reason = &rate_limited_;
  } else if (code == grpc::StatusCode::INVALID_ARGUMENT || code == grpc::StatusCode::NOT_FOUND) {
    reason = &invalid_;
  } else if (code == grpc::StatusCode::UNAUTHENTICATED) {
    reason = &unauthenticated_;
  } else if (code == grpc::StatusCode::PERMISSION_DENIED) {
    reason = &permission_denied_;
  }
  reason->Increment();
}

void ServerCounters::RecordCall(absl::string_view transport, absl::string_view method,
                                absl::StatusCode code) {
  calls_
      .Add({{"transport", std::string(transport)},
            {"method", std::string(method)},
            {"code", absl::StatusCodeToString(code)}})
      .Increment();
}

v1::ServerStats ServerCounters::Snapshot() const {
  v1::ServerStats s;
  s.set_start_time_seconds(start_time_seconds_);
  s.set_batches_accepted(Get(batches_accepted_));
  s.set_reports_accepted(Get(reports_accepted_));
  s.set_reports_duplicate(Get(reports_duplicate_));
  s.set_batches_rejected(Get(batches_rejected_));
  s.set_reports_rejected(Get(reports_rejected_));
  s.set_rejected_invalid(Get(invalid_));
  s.set_rejected_unauthenticated(Get(unauthenticated_));
  s.set_rejected_permission_denied(Get(permission_denied_));
  s.set_rejected_rate_limited(Get(rate_limited_));
  s.set_rejected_other(Get(other_));
  return s;
}

}  // namespace deniable::server
