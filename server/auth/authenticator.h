// Checks bearer tokens ("authorization: Bearer dn_...") against the stored hashes and roles.
//
// The access mode follows the token table live: while the table holds no token at all, calls
// need none (the tokenless development mode, TokensRequired() is false); once any token exists,
// even a revoked one, every guarded call needs an active token. A token added to a server that
// started tokenless therefore turns tokens on within `reload_interval`, without a restart; the
// change is logged once as a warning (`event=auth_mode_changed auth=tokens`).
//
// The token's SHA-256 is compared with every active token's hash with CRYPTO_memcmp and no early
// exit, so the time taken does not depend on how much of a hash matched. The token list is read
// through `loader` at most every `reload_interval` (revocations take effect within it); if a
// reload fails, the previous list stays in use.
//
// Thread-safe. Does not own the clock.
#ifndef DENIABLE_SERVER_AUTH_AUTHENTICATOR_H_
#define DENIABLE_SERVER_AUTH_AUTHENTICATOR_H_

#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "deniable/common/clock.h"
#include "server/auth/token_store.h"

namespace deniable::server {

// Who is calling: the token's id, role and hash (the hash keys the rate limit).
struct Principal {
  int64_t token_id = 0;
  Role role = Role::kReporter;
  TokenHash hash{};
};

class Authenticator {
 public:
  using Loader = std::function<absl::StatusOr<std::vector<TokenRecord>>()>;

  // Loads the list once now. Errors: those of `loader`.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Create(Loader loader, const Clock* clock,
                                                               absl::Duration reload_interval);

  // `authorization` is the "authorization" metadata value ("" when absent); `method` names the
  // call for the message. Returns the caller when its token is active and its role is in
  // `allowed`. Errors: UNAUTHENTICATED "authorization: ..." when the header is missing, not
  // "Bearer <token>", or the token is unknown or revoked; PERMISSION_DENIED naming the role and
  // the method when the role is not allowed. Messages never contain the token.
  absl::StatusOr<Principal> Authorize(absl::string_view authorization,
                                      absl::Span<const Role> allowed, absl::string_view method);

  // True once the token table holds any token (active or revoked), as of the last reload, which
  // this call triggers when `reload_interval` has passed. Never turns false again within one
  // process (revoking the last token does not open the server). No errors: a failed reload keeps
  // the previous answer.
  bool TokensRequired() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Authenticator(Loader loader, const Clock* clock, absl::Duration reload_interval)
      : loader_(std::move(loader)), clock_(clock), reload_interval_(reload_interval) {}
  void MaybeReload() ABSL_LOCKS_EXCLUDED(mu_);
  void Install(std::vector<TokenRecord> records) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Loader loader_;
  const Clock* const clock_;
  const absl::Duration reload_interval_;
  absl::Mutex mu_;
  std::vector<TokenRecord> active_ ABSL_GUARDED_BY(mu_);
  bool tokens_required_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time loaded_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_AUTH_AUTHENTICATOR_H_
