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
//   deniable_request_duration_seconds{transport, method, code}   histogram of the calls' time from
//                              arrival to status (kRequestDurationBuckets)
//   deniable_retention_reports_dropped_total{metric}   reports dropped by retention runs
//   deniable_retention_runs_total{outcome="applied"|"failed"}   retention runs finished
//   deniable_label_values_refused_total{metric}   reports refused by the caps on distinct values
//                              of a label key and on distinct keys (--max_label_values,
//                              --max_label_keys; also in reports_rejected)
//   deniable_window_firsts_refused_total{metric}   reports refused by the per-token limit on
//                              first-in-window reports (--max_window_firsts_per_token; also in
//                              reports_rejected as RESOURCE_EXHAUSTED)
//   deniable_streams_shed_total       StreamReports calls refused: too many streams were open
//   deniable_open_streams             StreamReports calls open now (gauge)
//
// Series that exist from the start, at 0: every unlabelled one, the `outcome` and `reason`
// values above, and those of metric="" (reports_total by outcome, reports_rejected_total for the
// codes a single report is refused with: kReportRejectionCodes). AddMetric adds a metric's
// series (reports_total, reports_rejected_total, imported_reports_total,
// retention_reports_dropped_total), AddMethod a method's calls_total and duration at code="OK";
// other codes appear with their first call.
//
// Thread-safe (prometheus-cpp counters are atomic; the caches below are locked).
#ifndef DENIABLE_SERVER_CORE_SERVER_COUNTERS_H_
#define DENIABLE_SERVER_CORE_SERVER_COUNTERS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/ingestor.h"

namespace deniable::server {

// Upper bounds of deniable_request_duration_seconds's buckets, in seconds: 0.5 ms to 10 s.
inline const std::vector<double>& RequestDurationBuckets() {
  static const auto* buckets = new std::vector<double>{
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
  return *buckets;
}

// The codes one report alone is refused with (SubmitReportsResponse.rejections): its series exist
// from the start for metric="" and from AddMetric for a metric.
inline constexpr absl::StatusCode kReportRejectionCodes[] = {absl::StatusCode::kInvalidArgument,
                                                             absl::StatusCode::kNotFound,
                                                             absl::StatusCode::kFailedPrecondition};

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
  void RecordWindowFirstRefused(absl::string_view metric) override;
  // A call that stored nothing, with the number of reports it carried (0 if unknown) and whether
  // the rate limit (rather than storage) said RESOURCE_EXHAUSTED. Its reports count with
  // metric="" (not attributed).
  void RecordRejected(absl::StatusCode code, int64_t reports, bool rate_limited);
  // A StreamReports call refused because max_concurrent_streams were open (it is also recorded
  // by RecordRejected as a rejected batch).
  void RecordStreamShed() { streams_shed_.Increment(); }
  // A StreamReports call opened (+1) or ended (-1).
  void RecordOpenStreams(int change) { open_streams_.Increment(change); }
  // A finished call of `method` ("deniable.v1.QueryService/GetPrevalence") on `transport`
  // ("grpc" or "http") with its status code: deniable_calls_total only.
  void RecordCall(absl::string_view transport, absl::string_view method, absl::StatusCode code);
  // The same, and its `duration` (arrival to status) in deniable_request_duration_seconds. The
  // gRPC interceptor (call_metrics.h) calls this one; so should every front end that can time
  // its calls, so that the histogram's count equals deniable_calls_total.
  void RecordCall(absl::string_view transport, absl::string_view method, absl::StatusCode code,
                  absl::Duration duration);
  // Makes the series of `method` on `transport` exist at 0 with code="OK" (calls_total and the
  // duration histogram), so that a scrape shows every served method before its first call.
  void AddMethod(absl::string_view transport, absl::string_view method);
  // Makes the per-metric series of `metric` (a metric of this server) exist at 0: reports_total
  // by outcome, reports_rejected_total for kReportRejectionCodes, imported_reports_total by
  // outcome and retention_reports_dropped_total. Idempotent.
  void AddMetric(absl::string_view metric);

  // A retention run that finished: its dropped reports, by metric (ServerStats.
  // reports_dropped_by_retention sums them), and retention_runs_total{outcome="applied"} + 1.
  void RecordRetention(const RetentionResult& result);
  // A retention run that failed: retention_runs_total{outcome="failed"} + 1.
  void RecordRetentionFailed() { retention_failed_.Increment(); }

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
  prometheus::Family<prometheus::Histogram>& durations_;
  // The series of one (transport, method, code).
  struct CallSeries {
    prometheus::Counter* calls;
    prometheus::Histogram* duration;
  };
  CallSeries ForCall(absl::string_view transport, absl::string_view method, absl::StatusCode code)
      ABSL_LOCKS_EXCLUDED(calls_mu_);
  absl::Mutex calls_mu_;
  absl::flat_hash_map<std::string, CallSeries> by_call_ ABSL_GUARDED_BY(calls_mu_);
  prometheus::Family<prometheus::Counter>& label_values_refused_;
  prometheus::Family<prometheus::Counter>& window_firsts_refused_;
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
  prometheus::Family<prometheus::Counter>& retention_runs_;
  prometheus::Counter &retention_applied_, &retention_failed_;
  prometheus::Gauge& open_streams_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_SERVER_COUNTERS_H_
