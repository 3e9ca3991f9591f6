// Each metric's estimate as Prometheus series (issue 41, docs/operations.md "Estimates on
// /metrics"), so that Grafana and Alertmanager can read them:
//
//   deniable_estimate{metric, quantity}          the debiased estimate (estimate_unbiased; a
//                                                mean in the metric's unit)
//   deniable_estimate_lower{metric, quantity}    its interval at 95 % (a share's interval alone,
//   deniable_estimate_upper{metric, quantity}    not the simultaneous one)
//   deniable_estimate_manipulation_bound{metric, quantity}   how far 1 % of n fake reports could
//                                                have moved it (Prevalence.manipulation.bound)
//   deniable_estimate_reports{metric}            n, the reports counted
//   deniable_estimate_window_start_timestamp_seconds,
//   deniable_estimate_window_end_timestamp_seconds
//                                                the selection [start, end) every estimate is
//                                                of; end is the last refresh's time
//   deniable_estimate_metrics_omitted            metrics left out by max_metrics
//
// `quantity` is "prevalence" (yes/no), the category's name (categorical), "mean" (ONE_BIT_MEAN)
// or "p50", "p90", "p99" (D_BIT_FLIP quantiles): one series per metric and quantity, label values
// no others than the metric's own (its name and categories). A metric whose selection holds too
// few reports (min_reports) or fails has no series. At most `max_metrics` metrics, in name order.
//
// The estimates are computed every `refresh` over the last `window` (the selection
// [now - window, now)), by `get`, and kept as text; a scrape only copies it.
//
// Thread-safe. The functions passed must be thread-safe and outlive the exporter.
#ifndef DENIABLE_SERVER_METRICS_ESTIMATE_METRICS_H_
#define DENIABLE_SERVER_METRICS_ESTIMATE_METRICS_H_

#include <functional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::server {

struct EstimateMetricsOptions {
  absl::Duration refresh = absl::Seconds(60);  // zero: never refreshed on a thread (Start idle)
  absl::Duration window = absl::Hours(24);     // > 0
  int max_metrics = 100;                       // >= 0
};

class EstimateMetrics {
 public:
  using ListMetrics = std::function<absl::StatusOr<v1::ListMetricsResponse>()>;
  using GetPrevalence =
      std::function<absl::StatusOr<v1::Prevalence>(const v1::GetPrevalenceRequest&)>;

  EstimateMetrics(ListMetrics list, GetPrevalence get, const Clock* clock,
                  EstimateMetricsOptions options);
  ~EstimateMetrics();  // Stop()
  EstimateMetrics(const EstimateMetrics&) = delete;
  EstimateMetrics& operator=(const EstimateMetrics&) = delete;

  // Refreshes once now, then every options.refresh on a thread of its own (none when refresh is
  // zero). Call at most once.
  void Start();
  // Ends the thread (it finishes a refresh under way first). Idempotent.
  void Stop();

  // Computes every series at the clock's now and replaces the text. Errors: the list's (the
  // previous text stays); a metric's own error only leaves that metric out.
  absl::Status Refresh();

  // The series of the last refresh, in the Prometheus text format 0.0.4 ("" before the first).
  std::string Text() const;

 private:
  const ListMetrics list_;
  const GetPrevalence get_;
  const Clock* const clock_;
  const EstimateMetricsOptions options_;
  mutable absl::Mutex mu_;
  std::string text_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Mutex refresh_mu_;  // one refresh at a time
  std::thread thread_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_METRICS_ESTIMATE_METRICS_H_
