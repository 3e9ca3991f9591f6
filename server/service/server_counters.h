// Counters of report batches and calls since the process started. They are Prometheus metrics
// in one prometheus::Registry (served at /metrics by the HTTP listener, docs/operations.md), and
// AdminService.GetServerStats reads the same counters: one source for both.
//
// Metrics registered here:
//   deniable_report_batches_total{outcome="accepted"|"rejected"}
//   deniable_reports_total{outcome="accepted"|"duplicate"|"rejected", metric}
//   deniable_report_batches_rejected_total{reason="invalid"|"unauthenticated"|
//                                          "permission_denied"|"rate_limited"|"other"}
//   deniable_reports_rejected_total{code="INVALID_ARGUMENT"|..., metric}   (judged alone or
//                                                                    refused whole)
// `metric` is the name of a metric of this server (the ingestor passes no other name: the
// label's values are bounded by the server's metrics), or "" for reports that cannot be
// attributed: those of a call refused whole (token, rate limit, malformed batch, storage
// failure) and reports naming no metric of this server. The AdminService totals
// (GetServerStats) are the sums over `metric`.
//   deniable_imported_reports_total{outcome="accepted"|"duplicate", metric}   (historical imports,
//                              also counted in deniable_reports_total; docs/operations.md)
//   deniable_calls_total{transport="grpc"|"http", method, code}
//   deniable_retention_reports_dropped_total{metric}   reports dropped by retention runs
//   deniable_label_values_refused_total{metric}   reports refused by the caps on distinct values
//                              of a label key and on distinct keys (--max_label_values,
//                              --max_label_keys; also in reports_rejected)
//   deniable_streams_shed_total       StreamReports calls refused: too many streams were open
//   deniable_open_streams             StreamReports calls open now (gauge)
//
// Thread-safe (prometheus-cpp counters are atomic).
#ifndef DENIABLE_SERVER_SERVICE_SERVER_COUNTERS_H_
#define DENIABLE_SERVER_SERVICE_SERVER_COUNTERS_H_

#include <grpcpp/support/status.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/ingestor.h"

namespace deniable::server {

class ServerCounters : public ReportOutcomeSink {
 public:
  // Registers the metrics above in `registry` (a new one when null).
  explicit ServerCounters(int64_t start_time_seconds,
                          std::shared_ptr<prometheus::Registry> registry = nullptr);

  // A call (or stream) that committed, as a batch. Its reports are counted by metric when the
  // ingestor decides them (RecordStored, RecordReportRejected), its rejected reports in
  // reports_rejected (per report) but not in batches_rejected (the call itself succeeded).
  void RecordAccepted(const v1::SubmitReportsResponse& response);
  // ReportOutcomeSink: the ingestor's verdicts by metric.
  void RecordStored(absl::string_view metric, int64_t accepted, int64_t duplicates) override;
  void RecordReportRejected(absl::string_view metric, absl::StatusCode code) override;
  void RecordImported(absl::string_view metric, int64_t accepted, int64_t duplicates) override;
  void RecordLabelValueRefused(absl::string_view metric) override;
  // A call that stored nothing, with the number of reports it carried (0 if unknown) and whether
  // the rate limit (rather than storage) said RESOURCE_EXHAUSTED. Its reports count with
  // metric="" (not attributed).
  void RecordRejected(grpc::StatusCode code, int64_t reports, bool rate_limited);
  // A StreamReports call refused because max_concurrent_streams were open (it is also recorded
  // by RecordRejected as a rejected batch).
  void RecordStreamShed() { streams_shed_.Increment(); }
  // A StreamReports call opened (+1) or ended (-1).
  void RecordOpenStreams(int change) { open_streams_.Increment(change); }
  // A finished call of `method` ("deniable.v1.QueryService/GetPrevalence") on `transport`
  // ("grpc" or "http") with its status code.
  void RecordCall(absl::string_view transport, absl::string_view method, absl::StatusCode code);

  // A retention run's dropped reports, by metric (ServerStats.reports_dropped_by_retention sums
  // them).
  void RecordRetention(const RetentionResult& result);

  v1::ServerStats Snapshot() const;
  // The registry holding these metrics (and the others the server adds, see server/metrics).
  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

 private:
  const int64_t start_time_seconds_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& batches_;
  prometheus::Family<prometheus::Counter>& reports_;
  prometheus::Family<prometheus::Counter>& rejected_batches_;
  prometheus::Family<prometheus::Counter>& rejected_reports_;
  prometheus::Family<prometheus::Counter>& calls_;
  prometheus::Family<prometheus::Counter>& imported_;
  prometheus::Family<prometheus::Counter>& label_values_refused_;
  prometheus::Counter &batches_accepted_, &batches_rejected_;
  // The report counters of one value of the `metric` label.
  struct MetricReports {
    prometheus::Counter *accepted, *duplicate, *rejected;
  };
  MetricReports ForMetric(absl::string_view metric) ABSL_LOCKS_EXCLUDED(mu_);
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, MetricReports> by_metric_ ABSL_GUARDED_BY(mu_);
  prometheus::Counter &invalid_, &unauthenticated_, &permission_denied_, &rate_limited_, &other_;
  prometheus::Counter& streams_shed_;
  prometheus::Family<prometheus::Counter>& retention_dropped_;
  std::atomic<uint64_t> retention_dropped_total_{0};
  prometheus::Gauge& open_streams_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_SERVER_COUNTERS_H_
