// `deniable tail`: polls AdminService.GetServerStats every --interval and prints a line for each
// metric whose stored report count grew (report_arrivals.h). Arrival counts only, never a bit.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "deniable/v1/admin_service.grpc.pb.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/cli_flags.h"
#include "tools/cli/report_arrivals.h"

namespace deniable::tools {
namespace {

// NOT_FOUND naming the first of `names` that is not a metric of the server.
grpc::Status CheckMetricsExist(const std::shared_ptr<grpc::Channel>& channel,
                               const std::vector<std::string>& names) {
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ListMetricsResponse list;
  grpc::Status status = stub->ListMetrics(&context, v1::ListMetricsRequest(), &list);
  if (!status.ok()) return status;
  for (const std::string& name : names) {
    bool found = false;
    for (const v1::Metric& m : list.metrics()) found = found || m.name() == name;
    if (!found) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("--metric: no metric \"", name, "\" on the server"));
    }
  }
  return grpc::Status::OK;
}

}  // namespace

int Tail() {
  const absl::Duration interval = absl::GetFlag(FLAGS_interval);
  if (interval <= absl::ZeroDuration()) {
    return FailUsage(
        absl::StrCat("--interval must be > 0, but is ", absl::FormatDuration(interval)));
  }
  const int64_t count = absl::GetFlag(FLAGS_count);
  if (count < 0) return FailUsage(absl::StrCat("--count must be >= 0, but is ", count));
  const std::vector<std::string> metrics =
      absl::StrSplit(absl::GetFlag(FLAGS_metric), ',', absl::SkipEmpty());
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Channel();
  if (!channel.ok()) return FailUsage(std::string(channel.status().message()));
  if (!metrics.empty()) {
    if (grpc::Status status = CheckMetricsExist(*channel, metrics); !status.ok()) {
      return Fail("tail", status);
    }
  }
  auto stub = v1::AdminService::NewStub(*channel);
  ArrivalTracker tracker(metrics);
  const bool json = absl::GetFlag(FLAGS_json);
  for (int64_t poll = 1;; ++poll) {
    grpc::ClientContext context;
    SetDeadline(&context);
    v1::ServerStats stats;
    grpc::Status status = stub->GetServerStats(&context, v1::GetServerStatsRequest(), &stats);
    if (!status.ok()) {
      if (poll == 1) return Fail("tail", status);  // cannot reach it, or not allowed: say so
      std::cerr << "deniable: tail: poll failed (" << status.error_message()
                << "); trying again in " << absl::FormatDuration(interval) << "\n";
    } else {
      const absl::Time now = absl::Now();
      for (const Arrival& arrival : tracker.Update(stats)) {
        std::printf("%s\n", FormatArrival(arrival, now, json).c_str());
      }
      std::fflush(stdout);
      if (poll == 1) {
        std::cerr << "deniable tail: watching "
                  << (metrics.empty() ? std::string("every metric") : absl::StrJoin(metrics, ", "))
                  << " at " << absl::GetFlag(FLAGS_target)
                  << " (reports stored since the collector started at "
                  << absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                                      absl::FromUnixSeconds(stats.start_time_seconds()),
                                      absl::UTCTimeZone())
                  << "; counts only, never answers)\n"
                  << std::flush;
      }
    }
    if (count > 0 && poll >= count) return 0;
    absl::SleepFor(interval);
  }
}

}  // namespace deniable::tools
