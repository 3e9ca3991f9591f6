#include "server/auth/authenticator.h"

#include <openssl/crypto.h>

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "spdlog/spdlog.h"

namespace deniable::server {
namespace {

std::vector<TokenRecord> ActiveOnly(std::vector<TokenRecord> records) {
  records.erase(std::remove_if(records.begin(), records.end(),
                               [](const TokenRecord& r) { return r.revoked_time_seconds; }),
                records.end());
  return records;
}

}  // namespace

void Authenticator::Install(std::vector<TokenRecord> records) {
  const bool had_tokens = tokens_required_;
  tokens_required_ = tokens_required_ || !records.empty();
  active_ = ActiveOnly(std::move(records));
  if (!had_tokens && tokens_required_ && loaded_at_ != absl::InfinitePast()) {
    spdlog::warn(
        "event=auth_mode_changed auth=tokens reason=\"a token was added\" -- every call but the "
        "health check now needs a token");
  }
}

bool Authenticator::TokensRequired() {
  MaybeReload();
  absl::MutexLock lock(&mu_);
  return tokens_required_;
}

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Create(
    Loader loader, const Clock* clock, absl::Duration reload_interval) {
  std::unique_ptr<Authenticator> auth(new Authenticator(std::move(loader), clock, reload_interval));
  absl::StatusOr<std::vector<TokenRecord>> records = auth->loader_();
  if (!records.ok()) return records.status();
  absl::MutexLock lock(&auth->mu_);
  auth->Install(*std::move(records));
  auth->loaded_at_ = clock->Now();
  return auth;
}

void Authenticator::MaybeReload() {
  const absl::Time now = clock_->Now();
  {
    absl::MutexLock lock(&mu_);
    if (now - loaded_at_ < reload_interval_) return;
    loaded_at_ = now;  // one caller reloads; the others keep using the current list
  }
  absl::StatusOr<std::vector<TokenRecord>> records = loader_();
  if (!records.ok()) return;
  absl::MutexLock lock(&mu_);
  Install(*std::move(records));
}

absl::StatusOr<Principal> Authenticator::Authorize(absl::string_view authorization,
                                                   absl::Span<const Role> allowed,
                                                   absl::string_view method) {
  absl::string_view token = authorization;
  if (token.empty()) {
    return absl::UnauthenticatedError(
        "authorization: missing; send the metadata \"authorization: Bearer <token>\"");
  }
  if (!absl::ConsumePrefix(&token, "Bearer ") || token.empty()) {
    return absl::UnauthenticatedError("authorization: must be \"Bearer <token>\"");
  }
  const TokenHash hash = HashToken(token);
  MaybeReload();
  const TokenRecord* match = nullptr;
  {
    absl::MutexLock lock(&mu_);
    for (const TokenRecord& r : active_) {
      // Every stored hash is compared in full, whatever matched before.
      if (CRYPTO_memcmp(r.hash.data(), hash.data(), hash.size()) == 0) match = &r;
    }
    if (match != nullptr) {
      Principal p{match->id, match->role, match->hash};
      if (std::find(allowed.begin(), allowed.end(), p.role) == allowed.end()) {
        return absl::PermissionDeniedError(absl::StrCat(
            "authorization: token ", p.token_id, " has role ", RoleName(p.role), "; ", method,
            " needs role ", absl::StrJoin(allowed, " or ", [](std::string* out, Role role) {
              out->append(RoleName(role));
            })));
      }
      return p;
    }
  }
  return absl::UnauthenticatedError("authorization: unknown or revoked token");
}

}  // namespace deniable::server
