// `deniable tail`: which metrics received reports between two polls of AdminService
// GetServerStats, and the lines that say so. Arrival counts only: ServerStats carries no bit, and
// nothing here prints an answer, a yes count or an estimate.
//
// Example:
//   ArrivalTracker tracker({"smoking"});          // empty: every metric
//   tracker.Update(first_stats);                   // the baseline: no arrivals
//   for (const Arrival& a : tracker.Update(next_stats)) puts(FormatArrival(a, now, false).c_str());
//
// Thread-compatible.
#ifndef DENIABLE_TOOLS_CLI_REPORT_ARRIVALS_H_
#define DENIABLE_TOOLS_CLI_REPORT_ARRIVALS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "deniable/v1/admin_service.pb.h"

namespace deniable::tools {

// One metric's reports stored between two polls.
struct Arrival {
  std::string metric;
  uint64_t new_reports = 0;   // newly stored since the last poll.
  uint64_t total = 0;         // stored since the collector started.
  uint64_t new_rejected = 0;  // refused one by one since the last poll.
  bool first = false;         // the metric's first stored report since the collector started.
};

class ArrivalTracker {
 public:
  // `metrics`: the metric names to watch; empty watches every metric.
  explicit ArrivalTracker(std::vector<std::string> metrics);

  // The watched metrics whose stored (or rejected) count grew since the last call, in the order
  // of `stats.per_metric` (by name). The first call only records the counts (the baseline) and
  // returns nothing. When the collector restarted (another start_time_seconds) its counts start
  // again at 0: every metric with a count above 0 is then an arrival, and a first one.
  std::vector<Arrival> Update(const v1::ServerStats& stats);

 private:
  struct Seen {
    uint64_t accepted = 0;
    uint64_t rejected = 0;
  };
  bool Watched(const std::string& metric) const;
  const std::vector<std::string> metrics_;
  bool polled_ = false;
  int64_t start_time_seconds_ = 0;
  absl::flat_hash_map<std::string, Seen> seen_;
};

// "2026-11-26T23:01:02Z  smoking  +3 reports (total 3)", then ", 1 rejected" when reports were
// rejected and "  first report of smoking arrived" for a first arrival. With `json`, one object:
// {"time":"2026-11-26T23:01:02Z","metric":"smoking","newReports":3,"totalReports":3,
//  "newRejected":1,"first":true}. No newline.
std::string FormatArrival(const Arrival& arrival, absl::Time now, bool json);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_REPORT_ARRIVALS_H_
