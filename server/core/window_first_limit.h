// Per-token limit on first-in-window reports (issue 41, docs/security.md "Forged window flags").
//
// A report flagged first in its day, week or month (Report.window_firsts) counts as one more
// device in that window's active-device estimate (docs/statistics.md section 4.4), so one client
// that sends many such reports adds as many "devices". This limiter gives each (token, metric,
// window kind, window) at most `max_per_window` first-in-window reports: a report first in its
// day, week and month takes one from each of the three windows it names, and is refused whole
// (nothing taken) when any of them is full. Reports without flags, tokenless callers (token id 0)
// and analysts' historical imports are not limited (the ingestor decides which it asks).
//
// Counts live in this process's memory: several collectors on one database each apply the limit
// (a token may reach it once per collector). A window's count is kept until the window ended
// more than `keep_after_end` ago (reports older than the oldest accepted event time cannot name
// it any more), so memory is bounded by tokens x metrics x the windows of that age; at most
// `max_entries` counts are kept, beyond which the limiter refuses new windows (fails closed)
// rather than forgetting counts an attacker could reset.
//
// Thread-safe.
#ifndef DENIABLE_SERVER_CORE_WINDOW_FIRST_LIMIT_H_
#define DENIABLE_SERVER_CORE_WINDOW_FIRST_LIMIT_H_

#include <cstdint>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deniable::server {

struct WindowFirstLimitOptions {
  // First-in-window reports per token, metric and window; 0 turns the limit off.
  int64_t max_per_window = 0;
  // How long after its end a window's count is kept (the oldest event time accepted).
  absl::Duration keep_after_end = absl::Hours(24 * 31);
  size_t max_entries = 1000000;
};

class WindowFirstLimiter {
 public:
  explicit WindowFirstLimiter(WindowFirstLimitOptions options) : options_(options) {}

  bool enabled() const { return options_.max_per_window > 0; }

  // Takes one first report of each window that `firsts` (kFirstInDay | kFirstInWeek |
  // kFirstInMonth, calendar_windows.h) names at `event_time_seconds` for (`token_id`,
  // `metric_id`), or nothing when one of them already holds max_per_window. `now_seconds` prunes
  // ended windows. `field` ("reports[i]") and `metric` name the report in the message.
  // Errors: RESOURCE_EXHAUSTED "reports[i].window_firsts.<day|week|month>: ..." naming the window
  // and the limit (--max_window_firsts_per_token).
  absl::Status Admit(int64_t token_id, int64_t metric_id, int firsts, int64_t event_time_seconds,
                     int64_t now_seconds, absl::string_view field, absl::string_view metric)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The counts kept (tests).
  size_t entries() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // (token, metric, window kind, window start) -> first reports taken.
  using Key = std::tuple<int64_t, int64_t, int, int64_t>;
  void PruneLocked(int64_t now_seconds) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const WindowFirstLimitOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<Key, int64_t> counts_ ABSL_GUARDED_BY(mu_);
  int64_t pruned_at_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_WINDOW_FIRST_LIMIT_H_
