// `deniable stats`: the AdminService counters of the collector.
#include <cstdio>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "deniable/v1/admin_service.grpc.pb.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/cli_flags.h"

namespace deniable::tools {

int Stats() {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Channel();
  if (!channel.ok()) return FailUsage(std::string(channel.status().message()));
  auto stub = v1::AdminService::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ServerStats stats;
  grpc::Status status = stub->GetServerStats(&context, v1::GetServerStatsRequest(), &stats);
  if (!status.ok()) return Fail("stats", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(stats);
    return 0;
  }
  const auto row = [](const char* name, uint64_t value) {
    std::cout << absl::StrFormat("%-28s %d\n", name, value);
  };
  std::cout << absl::StrFormat("%-28s %d\n", "start_time_seconds", stats.start_time_seconds());
  row("batches_accepted", stats.batches_accepted());
  row("reports_accepted", stats.reports_accepted());
  row("reports_duplicate", stats.reports_duplicate());
  row("batches_rejected", stats.batches_rejected());
  row("reports_rejected", stats.reports_rejected());
  row("rejected_invalid", stats.rejected_invalid());
  row("rejected_unauthenticated", stats.rejected_unauthenticated());
  row("rejected_permission_denied", stats.rejected_permission_denied());
  row("rejected_rate_limited", stats.rejected_rate_limited());
  row("rejected_other", stats.rejected_other());
  row("reports_dropped_by_retention", stats.reports_dropped_by_retention());
  return 0;
}

}  // namespace deniable::tools
