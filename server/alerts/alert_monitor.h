// Alerts evaluated with anytime-valid intervals (docs/alerts.md, docs/statistics.md section 10).
//
// Every rule (alert_rules.h) is evaluated on the current window of its metric, [k W, now) with
// k W <= now < (k + 1) W, through GetPrevalence with interval = ANYTIME:
//   above X:       fires when the quantity's anytime lower bound at the rule's level is > X;
//   changed_by Y:  the current window and the previous one, [(k - 1) W, k W), each get an anytime
//                  interval at level 1 - alpha/2; the difference's interval is
//                  [L_cur - U_prev, U_cur - L_prev], and the rule fires when it lies wholly at or
//                  above Y, or at or below -Y.
// The rule's alpha = 1 - level is spent across windows: the w-th window since the rule's origin
// (w = 1 for the window holding since_seconds, or, by default, the window of the monitor's first
// evaluation of the rule) is evaluated at alpha_w = alpha * 6 / (pi^2 w^2) (WindowLevel), and
// sum_w alpha_w = alpha. Within window w a rule fires falsely (X not exceeded, or the change
// smaller than Y) at any of its evaluations with probability <= alpha_w (Ville's inequality and,
// for a change, the union bound over the two windows), so over all its windows, however many and
// however often evaluated, with probability <= alpha. A window before the origin is not evaluated
// (status "not started ..."). A window whose selection cannot be estimated (too few reports,
// several reporting periods) leaves the rule not firing, with the reason in `status`.
//
// State: States() / StatesJson() (GET /v1/alerts) / StatesProto() (QueryService.ListAlerts), the
// gauge deniable_alert_firing{metric, rule} (0 or 1) on the given Prometheus registry, and the
// webhook called with one JSON object each time a rule starts or stops firing.
//
// Thread-safe.
#ifndef DENIABLE_SERVER_ALERTS_ALERT_MONITOR_H_
#define DENIABLE_SERVER_ALERTS_ALERT_MONITOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "deniable/v1/query_service.pb.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "server/alerts/alert_rules.h"

namespace deniable::server {

struct AlertState {
  AlertRule rule;
  bool firing = false;
  bool evaluated = false;  // the last evaluation produced intervals
  std::string status;      // "ok", or why the last evaluation produced none
  double estimate = 0;     // above: the quantity; changed_by: current - previous
  double lower = 0;        // its anytime interval (at the rule's level)
  double upper = 0;
  int64_t window_start_seconds = 0;  // k W of the last evaluation
  int64_t window_number = 0;         // its w (1 = the origin's window); 0 before any evaluation
  double window_level = 0;           // 1 - alpha_w (WindowLevel), that window's level
  absl::Time evaluated_at = absl::InfinitePast();
  absl::Time changed_at = absl::InfinitePast();  // when `firing` last changed
};

class AlertMonitor {
 public:
  using PrevalenceFn =
      std::function<absl::StatusOr<v1::Prevalence>(const v1::GetPrevalenceRequest&)>;
  // Called with the JSON body of one state change (AlertChangeJson); may block (an HTTP POST).
  using WebhookFn = std::function<void(const std::string& json)>;

  // `registry` and `webhook` may be null. `query` must outlive the monitor.
  AlertMonitor(std::vector<AlertRule> rules, PrevalenceFn query, prometheus::Registry* registry,
               WebhookFn webhook);
  ~AlertMonitor();  // Stop()

  // Evaluates every rule at `now` (on demand: tests, and the periodic thread). Returns the number
  // of rules whose firing state changed (each change also went to the webhook).
  int EvaluateAll(absl::Time now);

  // Evaluates every `period` on `clock`'s time from a thread of its own, until Stop().
  // REQUIRES: period > 0; not already started.
  void Start(absl::Duration period, const Clock* clock);
  // Stops the periodic thread (waits for an evaluation in progress). Idempotent.
  void Stop();

  std::vector<AlertState> States() const;
  // {"alerts": [{"rule", "metric", "quantity", "kind", "threshold", "window_seconds", "level",
  // "firing", "status", "estimate", "lower", "upper", "window_start_seconds", "window_number",
  // "window_level", "evaluated_at", "changed_at"}, ...]}
  std::string StatesJson() const;
  // The same states for QueryService.ListAlerts (AlertState in query_service.proto): times in
  // Unix seconds, 0 for never.
  v1::ListAlertsResponse StatesProto() const;

 private:
  struct Evaluation {
    bool ok = false;
    std::string status;
    double estimate = 0, lower = 0, upper = 0;
    int64_t window_start = 0;
    int64_t window_number = 0;
    double window_level = 0;
  };
  // `origin`: the start of the rule's window 1.
  Evaluation Evaluate(const AlertRule& rule, int64_t origin, absl::Time now) const;

  const PrevalenceFn query_;
  const WebhookFn webhook_;
  std::vector<prometheus::Gauge*> gauges_;  // per rule, or null

  mutable absl::Mutex mu_;
  std::vector<AlertState> states_ ABSL_GUARDED_BY(mu_);
  absl::Mutex evaluate_mu_;  // one evaluation at a time
  // Per rule, the start of its window 1 (the spending's origin), or nullopt before its first
  // evaluation when the rule has no since_seconds.
  std::vector<std::optional<int64_t>> origins_ ABSL_GUARDED_BY(evaluate_mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// The level of a rule's w-th window: 1 - (1 - level) * 6 / (pi^2 w^2), so that the alphas of
// windows 1, 2, ... sum to 1 - level (window 1 gets 61 % of it, window 10 0.6 %).
// REQUIRES: level in (0, 1), window_number >= 1. Thread-safe (pure).
double WindowLevel(double level, int64_t window_number);

// The webhook body for one state change: {"rule", "metric", "quantity", "firing", "estimate",
// "lower", "upper", "level", "window_start_seconds", "time"} (time in RFC 3339 UTC).
std::string AlertChangeJson(const AlertState& state);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_ALERTS_ALERT_MONITOR_H_
