#include "server/auth/access_policy.h"

#include <initializer_list>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

std::vector<Role> AllowedRoles(absl::string_view method) {
  if (method == "deniable.v1.ReportService/GetDesign") return {Role::kReporter, Role::kAnalyst};
  if (method == "deniable.v1.ReportService/SubmitReports" ||
      method == "deniable.v1.ReportService/StreamReports") {
    return {Role::kReporter};
  }
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
                                               absl::string_view peer) {
  const std::vector<Role> allowed = AllowedRoles(method);
  if (allowed.empty()) {
    return absl::PermissionDeniedError(
        absl::StrCat("authorization: no role may call \"", method, "\""));
  }
  Caller caller;
  if (authenticator_ != nullptr && authenticator_->TokensRequired()) {
    // The message names the short method ("GetPrevalence"), as the gRPC front end always did.
    const size_t slash = method.rfind('/');
    absl::StatusOr<Principal> p = authenticator_->Authorize(
        authorization, allowed,
        slash == absl::string_view::npos ? method : method.substr(slash + 1));
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
