// Alert rules (docs/alerts.md): read from the JSON file of deniable-server --alert_rules.
//
//   {"rules": [
//     {"name": "crash_high", "metric": "crash", "quantity": "prevalence", "above": 0.2},
//     {"name": "yes_moved", "metric": "vote", "quantity": "share:Y", "changed_by": 0.05,
//      "window_seconds": 604800, "level": 0.99},
//     {"name": "slow", "metric": "load_ms", "quantity": "mean", "above": 250}]}
//
// Per rule: name ([a-z][a-z0-9_]{0,63}, unique), metric, quantity ("prevalence", "share:<category>"
// or "mean"; default "prevalence"), exactly one of above (X, on the quantity's scale: a share in
// [0, 1], or a mean in the metric's unit) or changed_by (Y > 0, on the same scale), window_seconds
// (W, default 86400, in [3600, 366 days]: windows [k W, (k + 1) W) aligned to the Unix epoch),
// level (default 0.95, in (0, 1)), tuned_reports (default 10000, > 0) and since_seconds (the
// Unix time, >= 0, from which the level is spent across windows, alert_monitor.h; default: the
// monitor's first evaluation, i.e. the server's start).
//
// Thread-safe (pure functions).
#ifndef DENIABLE_SERVER_ALERTS_ALERT_RULES_H_
#define DENIABLE_SERVER_ALERTS_ALERT_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

struct AlertRule {
  enum class Kind { kAbove, kChangedBy };
  std::string name;
  std::string metric;
  std::string quantity = "prevalence";  // "prevalence", "share:<category>" or "mean"
  Kind kind = Kind::kAbove;
  double threshold = 0;  // X (kAbove) or Y (kChangedBy), on the quantity's scale
  int64_t window_seconds = 86400;
  double level = 0.95;
  int64_t tuned_reports = 10000;
  // The window holding this time is window 1 of the level's spending (alert_monitor.h); -1: the
  // window of the monitor's first evaluation of the rule.
  int64_t since_seconds = -1;
};

// Parses the rules from JSON text; `file` names the source in messages.
// Errors: INVALID_ARGUMENT naming the file and the field ("rules.json: rules[2].above: must be a
// number"), for malformed JSON, unknown fields, missing or bad values and duplicate names.
absl::StatusOr<std::vector<AlertRule>> ParseAlertRules(absl::string_view json,
                                                       absl::string_view file);

// Reads and parses `path`. Errors: NOT_FOUND / PERMISSION_DENIED naming the file when it cannot
// be read; those of ParseAlertRules.
absl::StatusOr<std::vector<AlertRule>> LoadAlertRules(const std::string& path);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_ALERTS_ALERT_RULES_H_
