// gRPC status codes as HTTP status codes and JSON error bodies, the way Google's HTTP APIs map
// them (google/rpc/code.proto): INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE 400;
// UNAUTHENTICATED 401; PERMISSION_DENIED 403; NOT_FOUND 404; ALREADY_EXISTS, ABORTED 409;
// RESOURCE_EXHAUSTED 429; CANCELLED 499; UNKNOWN, INTERNAL, DATA_LOSS 500; UNIMPLEMENTED 501;
// UNAVAILABLE 503; DEADLINE_EXCEEDED 504; OK 200. Pure functions; thread-safe.
#ifndef DENIABLE_SERVER_HTTP_HTTP_STATUS_H_
#define DENIABLE_SERVER_HTTP_HTTP_STATUS_H_

#include <string>

#include "absl/status/status.h"

namespace deniable::server::http {

// The HTTP status for `code` (table above).
int HttpStatusFor(absl::StatusCode code);

// {"error":{"code":<HTTP status>,"status":"INVALID_ARGUMENT","message":"..."}} for a non-OK
// `status`; the message is the status's, which names the field ("reports[3].bit: ...").
std::string ErrorBody(const absl::Status& status);

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_HTTP_STATUS_H_
