#include "tools/cli/report_arrivals.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable::tools {

ArrivalTracker::ArrivalTracker(std::vector<std::string> metrics) : metrics_(std::move(metrics)) {}

bool ArrivalTracker::Watched(const std::string& metric) const {
  return metrics_.empty() || std::find(metrics_.begin(), metrics_.end(), metric) != metrics_.end();
}

std::vector<Arrival> ArrivalTracker::Update(const v1::ServerStats& stats) {
  const bool baseline = !polled_;
  if (polled_ && stats.start_time_seconds() != start_time_seconds_) seen_.clear();  // restarted
  polled_ = true;
  start_time_seconds_ = stats.start_time_seconds();
  std::vector<Arrival> arrivals;
  for (const v1::MetricReportCounts& m : stats.per_metric()) {
    if (!Watched(m.metric())) continue;
    Seen& seen = seen_[m.metric()];
    // Counters only grow within one process; a smaller value would mean another process.
    const uint64_t accepted = std::max(m.reports_accepted(), seen.accepted);
    const uint64_t rejected = std::max(m.reports_rejected(), seen.rejected);
    if (!baseline && (accepted > seen.accepted || rejected > seen.rejected)) {
      arrivals.push_back(Arrival{.metric = m.metric(),
                                 .new_reports = accepted - seen.accepted,
                                 .total = accepted,
                                 .new_rejected = rejected - seen.rejected,
                                 .first = seen.accepted == 0 && accepted > 0});
    }
    seen = Seen{accepted, rejected};
  }
  return arrivals;
}

std::string FormatArrival(const Arrival& a, absl::Time now, bool json) {
  const std::string time = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  if (json) {
    // Metric names are [a-z0-9_.-] (metric.proto): nothing to escape.
    return absl::StrFormat(
        R"({"time":"%s","metric":"%s","newReports":%d,"totalReports":%d,"newRejected":%d,)"
        R"("first":%s})",
        time, a.metric, a.new_reports, a.total, a.new_rejected, a.first ? "true" : "false");
  }
  std::string line = absl::StrFormat("%s  %s  +%d report%s (total %d)", time, a.metric,
                                     a.new_reports, a.new_reports == 1 ? "" : "s", a.total);
  if (a.new_rejected > 0) absl::StrAppend(&line, ", ", a.new_rejected, " rejected");
  if (a.first) absl::StrAppend(&line, "  first report of ", a.metric, " arrived");
  return line;
}

}  // namespace deniable::tools
