// The server's one logging path: spdlog to stdout, as text (the default) or JSON lines, at a
// chosen level, with gRPC's own log lines routed through the same sink.
//
// Every line but the access log's is flushed as it is written. Access lines (the logger named
// kAccessLoggerName, server/access_log.h) go through stdio's buffer and are flushed with the
// next other line, once a second, and at exit: one write(2) per buffer of lines instead of one
// per call. That cost 8 % of unary ingestion on PostgreSQL (docs/benchmarks.md); a collector
// killed with SIGKILL loses at most the last second of access lines, never other lines.
//
// JSON lines: one object per line, {"time":"2026-11-23T18:04:27.082Z","level":"warning",
// "msg":"start","event":"start","port":50051,...}: the message's key=value pairs as fields and
// its free text as "msg" (log_fields.h), every string escaped (quotes, backslashes and control
// bytes), so no value a client sent can break a line or forge a field. gRPC's lines (gpr_log)
// arrive as "grpc: <file>:<line> <message>": its errors at error, its info lines (epoll fds,
// IPv6 probing) at debug, its debug lines at trace.
//
// Not thread-safe: call once in main() before other threads log.
#ifndef DENIABLE_SERVER_SERVER_LOGGING_H_
#define DENIABLE_SERVER_SERVER_LOGGING_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// `level`: trace | debug | info | warning | error | off; `format`: text | json.
// Errors: INVALID_ARGUMENT naming "--log_level" or "--log_format" (nothing changed).
absl::Status ConfigureLogging(absl::string_view level, absl::string_view format);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVER_LOGGING_H_
