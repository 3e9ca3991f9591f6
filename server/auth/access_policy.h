// The role table and the checks every front end (gRPC, HTTP/JSON) runs before a call reaches the
// core: who may call which method, and the per-caller rate limit on reports.
//
// Policy (tokens on; with no Authenticator, or one whose token table is still empty, every call
// passes: the tokenless development mode, left live as soon as a token is added):
//   deniable.v1.ReportService/GetDesign                     reporter or analyst
//   deniable.v1.ReportService/SubmitReports, StreamReports  reporter
//   deniable.v1.QueryService/*, deniable.v1.AdminService/*  analyst
// A method not in the table is refused (PERMISSION_DENIED) even in tokenless mode: the policy
// fails closed. The health check and /metrics are not guarded and do not go through here.
//
// Historical imports (docs/cli.md, docs/security.md): a SubmitReports or StreamReports call
// carrying the header `x-deniable-import: historical` (gRPC metadata or HTTP header) is an
// analyst's import, judged by the ingestor against --max_import_age_seconds instead of
// --max_report_age_seconds. For such a call the table above does not apply:
//   header value other than "historical"          INVALID_ARGUMENT "x-deniable-import: ..."
//   tokenless mode (no role to check)             PERMISSION_DENIED "x-deniable-import: ..."
//   missing, unknown or revoked token             UNAUTHENTICATED "authorization: ..."
//   a token whose role is not analyst (a device)  PERMISSION_DENIED "x-deniable-import: ..."
//   an analyst token                              the call proceeds as an import (Caller::import)
// so devices, which only ever hold reporter tokens, can never reach older data. The header means
// nothing on other methods and is ignored there.
//
// Thread-safe. Does not own its arguments.
#ifndef DENIABLE_SERVER_AUTH_ACCESS_POLICY_H_
#define DENIABLE_SERVER_AUTH_ACCESS_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"

namespace deniable::server {

// The roles allowed to call `method` ("deniable.v1.QueryService/GetPrevalence"); empty for a
// method the policy does not know.
std::vector<Role> AllowedRoles(absl::string_view method);

// The header that makes a report call a historical import (lowercase, as gRPC metadata keys
// are; HTTP header names match it in any case), and its one accepted value.
inline constexpr absl::string_view kImportHeader = "x-deniable-import";
inline constexpr absl::string_view kImportHeaderValue = "historical";

// Whether `method` is SubmitReports or StreamReports (a full name).
bool IsReportMethod(absl::string_view method);

// The caller of an authorized call.
struct Caller {
  std::optional<Principal> principal;  // nullopt in tokenless mode
  std::string rate_key;                // the token's id, else a salted hash of the peer's host
  bool import = false;                 // an analyst's historical import (report methods only)
};

class AccessPolicy {
 public:
  // `authenticator` null: tokenless for good; else tokens are required once its table holds one.
  // `limiter` null or disabled: no rate limit.
  AccessPolicy(Authenticator* authenticator, RateLimiter* limiter)
      : authenticator_(authenticator), limiter_(limiter) {}

  // `method` is the full method name ("deniable.v1.QueryService/GetPrevalence"), `authorization`
  // the "authorization" header or metadata value ("" when absent), `peer` the caller's address in
  // gRPC's form ("ipv4:1.2.3.4:5678", "ipv6:[::1]:5678"; used only for the rate-limit key, never
  // stored). Errors: PERMISSION_DENIED "authorization: ..." for a method not in the table or a
  // role not allowed; UNAUTHENTICATED "authorization: ..." for a missing, malformed, unknown or
  // revoked token (see Authenticator::Authorize). Messages never contain the token.
  // `import_header`: the x-deniable-import header's value, nullopt when the call has none; on a
  // report method it makes the call an import, authorized as the file comment says
  // (INVALID_ARGUMENT / PERMISSION_DENIED "x-deniable-import: ..."; the value is never echoed).
  absl::StatusOr<Caller> Authorize(absl::string_view method, absl::string_view authorization,
                                   absl::string_view peer,
                                   std::optional<absl::string_view> import_header = std::nullopt);

  // Takes `reports` from the caller's rate-limit bucket. Errors: RESOURCE_EXHAUSTED "reports: rate
  // limit ..." (nothing taken). OK when the limit is off.
  absl::Status AdmitReports(const Caller& caller, int64_t reports);

 private:
  Authenticator* const authenticator_;
  RateLimiter* const limiter_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_AUTH_ACCESS_POLICY_H_
