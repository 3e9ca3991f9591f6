// The server's one logging path: spdlog to stderr, as text (the default) or JSON lines, at a
// chosen level, with gRPC's own log lines routed through the same sink.
//
// JSON lines: one object per line, {"time":"2026-11-23T18:04:27.082Z","level":"warning",
// "msg":"event=start ..."}, the message escaped as a JSON string (quotes, backslashes and control
// bytes), so no value a client sent can break a line or forge a field. gRPC's lines
// (gpr_log) arrive as "grpc: <file>:<line> <message>" at the matching level.
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
