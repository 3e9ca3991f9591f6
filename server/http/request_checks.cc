#include "server/http/request_checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/core/echo.h"

namespace deniable::server::http {

bool IsGuardedRoute(absl::string_view path) {
  return absl::StartsWith(path, "/v1/") && !absl::StartsWith(path, "/v1/ReportService/");
}

absl::Status CheckJsonContentType(const RequestHeaders& headers) {
  if (headers.content_type.has_value()) {
    absl::string_view type = *headers.content_type;
    type = type.substr(0, type.find(';'));
    if (absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(type), "application/json")) {
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "content-type: the analyst and admin calls take only \"Content-Type: application/json\", "
      "but the request has ",
      headers.content_type.has_value() ? EchoValue(*headers.content_type) : "none"));
}

absl::Status CheckSameOrigin(const RequestHeaders& headers) {
  if (!headers.origin.has_value()) return absl::OkStatus();
  absl::string_view scheme = headers.tls ? "https" : "http";
  if (headers.forwarded_proto.has_value()) {
    scheme = absl::StripAsciiWhitespace(*headers.forwarded_proto);
  }
  absl::string_view host = headers.host.value_or("");
  if (headers.forwarded_host.has_value()) host = *headers.forwarded_host;
  host = absl::StripAsciiWhitespace(host);
  const std::string own = absl::StrCat(scheme, "://", host);
  if (!host.empty() && absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(*headers.origin), own)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "origin: the analyst and admin calls are same-origin only, but the request comes from ",
      EchoValue(*headers.origin), " to ", EchoValue(own),
      " (a page on another origin cannot call them; --http_cors_origins opens ReportService "
      "only)"));
}

absl::Status BodyTooLargeError(uint64_t max_body_bytes) {
  return absl::InvalidArgumentError(
      absl::StrCat("body: larger than the server accepts (", max_body_bytes,
                   " bytes, --max_message_bytes); send smaller batches"));
}

absl::Status CheckContentLength(std::optional<absl::string_view> content_length,
                                uint64_t max_body_bytes) {
  if (!content_length.has_value()) return absl::OkStatus();
  absl::string_view digits = absl::StripAsciiWhitespace(*content_length);
  uint64_t bytes = 0;
  if (digits.empty() || digits.find_first_not_of("0123456789") != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("content-length: must be a number of bytes, but is ", EchoValue(digits)));
  }
  // More digits than a uint64 holds is larger than any limit.
  if (!absl::SimpleAtoi(digits, &bytes) || bytes > max_body_bytes) {
    return BodyTooLargeError(max_body_bytes);
  }
  return absl::OkStatus();
}

}  // namespace deniable::server::http
