// The access log: one line per finished call, gRPC and HTTP alike, through the server's one
// spdlog sink (so --log_format=json makes it JSON lines too), at level info:
//
//   event=access transport=grpc method=deniable.v1.QueryService/GetPrevalence code=OK
//       latency_ms=0.412
//   event=access transport=http method=deniable.v1.ReportService/SubmitReports code=OK
//       http_status=200 latency_ms=1.870 reports=3
//
//   event=access transport=grpc method=deniable.v1.ReportService/SubmitReports code=OK
//       latency_ms=2.100 reports=500 import=true
//
// It names the method (or, for an HTTP request that is no API call, its route: "/metrics",
// "/healthz", "/livez", "/" and the dashboard's files, "preflight:/v1/ReportService" for a CORS
// preflight, "other" for any other path, "unknown" for POST /v1/ to a method not served), the
// status code, the latency in milliseconds from the call's arrival to its status, and for report
// calls the number of reports received and `import=true` when the call carried the
// x-deniable-import header (an attempted historical import, whatever its outcome; the header's
// value is not logged). It NEVER carries the peer address, the token, a label, a
// report or a bit (docs/security.md). Turned off by `deniable-server --access_log=false`
// (docs/operations.md).
//
// Thread-safe.
#ifndef DENIABLE_SERVER_ACCESS_LOG_H_
#define DENIABLE_SERVER_ACCESS_LOG_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace deniable::server {

// The spdlog logger LogAccess writes through when one of this name is registered (the server's
// ConfigureLogging registers it, to buffer access lines: server_logging.h); otherwise the
// default logger.
inline constexpr char kAccessLoggerName[] = "access";

struct AccessEntry {
  absl::string_view transport;  // "grpc" or "http"
  // Full method name ("deniable.v1.QueryService/GetPrevalence") or an HTTP route; must not hold
  // client-chosen text other than a method name the server serves.
  absl::string_view method;
  absl::string_view code;  // absl/grpc status code name ("OK", "NOT_FOUND", ...)
  int http_status = 0;     // HTTP only; 0: not logged
  absl::Duration latency;  // from arrival to status
  int64_t reports = -1;    // reports received (report calls only); -1: not logged
  bool import = false;     // a report call carrying the x-deniable-import header
};

// Writes one info line for `entry`.
void LogAccess(const AccessEntry& entry);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_ACCESS_LOG_H_
