// Calling one QueryService method from a command and printing its answer (the table, or the
// message as JSON with --json). Shared by the query commands of every kind.
#ifndef DENIABLE_TOOLS_CLI_QUERY_CALL_H_
#define DENIABLE_TOOLS_CLI_QUERY_CALL_H_

#include <functional>
#include <iostream>
#include <memory>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/cli_flags.h"
#include "tools/cli/cli_parse.h"

namespace deniable::tools {

template <typename Request, typename Response>
using StubCall = grpc::Status (v1::QueryService::Stub::*)(grpc::ClientContext*, const Request&,
                                                          Response*);

// Calls one QueryService method and prints the answer as JSON (--json) or with `format`.
template <typename Request, typename Response>
// Makes the call, prints the response (table or --json), then runs `then` on it, if set, and
// returns its exit code.
int Call(const char* what, StubCall<Request, Response> call, const Request& request,
         std::string (*format)(const Response&),
         const std::function<int(const Response&)>& then = nullptr) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Channel();
  if (!channel.ok()) return FailUsage(std::string(channel.status().message()));
  auto stub = v1::QueryService::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  Response response;
  grpc::Status status = ((*stub).*call)(&context, request, &response);
  if (!status.ok()) return Fail(what, status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
  } else {
    std::cout << format(response);
  }
  return then ? then(response) : 0;
}

// Prints a locally computed answer like Call does, or fails with its status.
template <typename Response>
int PrintLocal(const char* what, const absl::StatusOr<Response>& response,
               std::string (*format)(const Response&)) {
  if (!response.ok()) {
    return Fail(what, grpc::Status(static_cast<grpc::StatusCode>(response.status().code()),
                                   std::string(response.status().message())));
  }
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(*response);
  } else {
    std::cout << format(*response);
  }
  return 0;
}

// The time flags as given (--start, --end, --start2, --end2).
inline TimeFlagValues TimeFlags() {
  return {.start = absl::GetFlag(FLAGS_start),
          .end = absl::GetFlag(FLAGS_end),
          .start2 = absl::GetFlag(FLAGS_start2),
          .end2 = absl::GetFlag(FLAGS_end2)};
}

// Sets `request`'s metric (--metric), time range (--start and --end as `prevalence` reads them:
// every report by default) and confidence level (--level). Returns a usage error's message, or
// empty.
template <typename Request>
std::string SetMetricRangeLevel(Request* request) {
  request->set_metric(absl::GetFlag(FLAGS_metric));
  absl::StatusOr<TimeWindow> window = PrevalenceWindow(TimeFlags(), absl::Now());
  if (!window.ok()) return std::string(window.status().message());
  request->set_start_time_seconds(window->start_seconds);
  request->set_end_time_seconds(window->end_seconds);
  request->set_confidence_level(absl::GetFlag(FLAGS_level));
  return "";
}

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_QUERY_CALL_H_
