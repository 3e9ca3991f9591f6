// gRPC status codes as HTTP status codes and JSON error bodies, the way Google's HTTP APIs map
// them (google/rpc/code.proto): INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE 400;
// UNAUTHENTICATED 401; PERMISSION_DENIED 403; NOT_FOUND 404; ALREADY_EXISTS, ABORTED 409;
// RESOURCE_EXHAUSTED 429; CANCELLED 499; UNKNOWN, INTERNAL, DATA_LOSS 500; UNIMPLEMENTED 501;
// UNAVAILABLE 503; DEADLINE_EXCEEDED 504; OK 200. Pure functions; thread-safe.
#ifndef DENIABLE_SERVER_HTTP_HTTP_STATUS_H_
#define DENIABLE_SERVER_HTTP_HTTP_STATUS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::server::http {

// The HTTP status for `code` (table above).
int HttpStatusFor(absl::StatusCode code);

// The longest message ErrorBody repeats, in bytes: a backstop over every echo of client text
// (each echo site also caps its own value, see ClipText and deniable/common/echo.h).
inline constexpr size_t kMaxErrorMessageBytes = 1024;

// `text` cut to at most `max_bytes` bytes on a UTF-8 character boundary, followed by
// "... (N bytes)" when it was cut, so a message quoting client text (a 1 MB unknown JSON field
// name) stays short. Unchanged when it fits.
std::string ClipText(absl::string_view text, size_t max_bytes);

// {"error":{"code":<HTTP status>,"status":"INVALID_ARGUMENT","message":"..."}} for a non-OK
// `status`; the message is the status's, which names the field ("reports[3].bit: ..."), clipped
// at kMaxErrorMessageBytes. `http_status` 0: HttpStatusFor(status.code()); else that status
// (413, 415: refusals made before the body is read).
std::string ErrorBody(const absl::Status& status, int http_status = 0);

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_HTTP_STATUS_H_
