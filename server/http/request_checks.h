// The checks the HTTP listener makes on a request's headers before it reads a byte of its body:
// the body's announced size, and the browser-forgery rules of the analyst and admin routes.
//
// A page on another origin can make a logged-in analyst's browser send a "simple" POST
// (`mode: 'no-cors'`, Content-Type text/plain, form-urlencoded or multipart) without any
// preflight, so the analyst and admin routes (everything under /v1/ but /v1/ReportService/)
// require `Content-Type: application/json`, which a simple request cannot carry, and refuse a
// request whose `Origin` header names another origin than the request's own. ReportService
// keeps its CORS rules (HttpOptions::cors_origins) instead: its callers are devices and the
// browser SDK on the app's pages, and a forged report is only one more randomized bit.
//
// Example:
//   RequestHeaders h{.content_type = "application/json", .origin = "https://c.example",
//                    .host = "c.example", .tls = true};
//   absl::Status s = CheckSameOrigin(h);  // OK: same origin
//
// Pure functions; thread-safe.
#ifndef DENIABLE_SERVER_HTTP_REQUEST_CHECKS_H_
#define DENIABLE_SERVER_HTTP_REQUEST_CHECKS_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::server::http {

// The headers the checks read; nullopt when the request has no such header.
struct RequestHeaders {
  std::optional<absl::string_view> content_type = std::nullopt;
  std::optional<absl::string_view> origin = std::nullopt;
  std::optional<absl::string_view> host = std::nullopt;
  // Set by a reverse proxy in front of the listener (docs/http.md); a browser page cannot send
  // them on a request that skips the CORS preflight.
  std::optional<absl::string_view> forwarded_host = std::nullopt;   // X-Forwarded-Host
  std::optional<absl::string_view> forwarded_proto = std::nullopt;  // X-Forwarded-Proto
  bool tls = false;                                                 // the listener speaks HTTPS
};

// Whether the POST route `path` ("/v1/QueryService/DeleteMetric") is an analyst or admin route,
// which CheckJsonContentType and CheckSameOrigin guard: any /v1/ path outside /v1/ReportService/.
bool IsGuardedRoute(absl::string_view path);

// For a guarded route: Content-Type must be application/json (parameters such as
// "; charset=utf-8" allowed, any case). Errors: INVALID_ARGUMENT "content-type: ..." when it is
// absent or another type; the listener answers it with HTTP 415.
absl::Status CheckJsonContentType(const RequestHeaders& headers);

// For a guarded route: an Origin header, when present, must be scheme://host of the request
// itself (the scheme is https with TLS, else http, unless X-Forwarded-Proto says otherwise; the
// host is X-Forwarded-Host, else Host; compared without regard to case). Origin "null" (sandboxed
// frames, file: pages) is another origin. Errors: PERMISSION_DENIED "origin: ..." (HTTP 403),
// the origin echoed capped.
absl::Status CheckSameOrigin(const RequestHeaders& headers);

// The Content-Length header against `max_body_bytes`. Errors: INVALID_ARGUMENT "body: ..." when
// the announced size is larger than max_body_bytes (HTTP 413) or the header is not a decimal
// number. nullopt header (chunked or no body): OK.
absl::Status CheckContentLength(std::optional<absl::string_view> content_length,
                                uint64_t max_body_bytes);

// The error for a body found larger than `max_body_bytes` (announced or counted while read).
absl::Status BodyTooLargeError(uint64_t max_body_bytes);

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_REQUEST_CHECKS_H_
