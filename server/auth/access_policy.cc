#include "server/auth/access_policy.h"

#include <initializer_list>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

bool IsReportMethod(absl::string_view method) {
  return method == "deniable.v1.ReportService/SubmitReports" ||
         method == "deniable.v1.ReportService/StreamReports";
}

std::vector<Role> AllowedRoles(absl::string_view method) {
  if (method == "deniable.v1.ReportService/GetDesign") return {Role::kReporter, Role::kAnalyst};
  if (IsReportMethod(method)) return {Role::kReporter};
  // Every QueryService method (CreateMetric, DeleteMetric, SetRetention, the queries, ...) and
  // AdminService method: analysts only.
  for (absl::string_view service : {"deniable.v1.QueryService/", "deniable.v1.AdminService/"}) {
    if (absl::StartsWith(method, service) && method.size() > service.size()) {
      return {Role::kAnalyst};
    }
  }
  return {};
}

absl::StatusOr<Caller> AccessPolicy::Authorize(absl::string_view method,
                                               absl::string_view authorization,
                                               absl::string_view peer,
                                               std::optional<absl::string_view> import_header) {
  std::vector<Role> allowed = AllowedRoles(method);
  if (allowed.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("authorization: no role may call \"", method, "\""));
  }
  Caller caller;
  caller.import = import_header.has_value() && IsReportMethod(method);
  const bool tokens = authenticator_ != nullptr && authenticator_->TokensRequired();
  if (caller.import) {
    if (*import_header != kImportHeaderValue) {
      return absl::InvalidArgumentError(
          absl::StrCat(kImportHeader, ": must be \"", kImportHeaderValue,
                       "\" (the only kind of import), or the header left out"));
    }
    if (!tokens) {
      return absl::PermissionDeniedError(absl::StrCat(
          kImportHeader,
          ": a historical import needs an analyst token, and this server runs without tokens; "
          "add tokens (deniable-server tokens add) to import"));
    }
    allowed = {Role::kAnalyst};
  }
  if (tokens) {
    // The message names the short method ("GetPrevalence"), as the gRPC front end always did.
    const size_t slash = method.rfind('/');
    absl::StatusOr<Principal> p = authenticator_->Authorize(
        authorization, allowed,
        slash == absl::string_view::npos ? method : method.substr(slash + 1));
    if (caller.import && absl::IsPermissionDenied(p.status())) {
      return absl::PermissionDeniedError(
          absl::StrCat(kImportHeader, ": only an analyst token may import historical reports (",
                       p.status().message(), ")"));
    }
    if (!p.ok()) return p.status();
    caller.principal = *p;
  }
  if (limiter_ != nullptr && limiter_->enabled()) {
    caller.rate_key =
        caller.principal ? absl::StrCat("t:", caller.principal->token_id) : PeerKey(peer);
  }
  return caller;
}

absl::Status AccessPolicy::AdmitReports(const Caller& caller, int64_t reports) {
  if (limiter_ == nullptr || !limiter_->enabled()) return absl::OkStatus();
  return limiter_->Admit(caller.rate_key, reports);
}

}  // namespace deniable::server
