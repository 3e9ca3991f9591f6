#include "server/auth/rate_limiter.h"

#include <openssl/rand.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "server/auth/token_store.h"

namespace deniable::server {

RateLimiter::RateLimiter(RateLimitOptions options, const Clock* clock)
    : options_(options), clock_(clock) {
  if (options_.burst <= 0) options_.burst = std::max(options_.reports_per_second, 1.0);
}

absl::Status RateLimiter::Refused(double wanted, double level) const {
  return absl::ResourceExhaustedError(absl::StrFormat(
      "reports: rate limit of %g reports/s (burst %g) reached; retry in %.3f s",
      options_.reports_per_second, options_.burst, (wanted - level) / options_.reports_per_second));
}

absl::Status RateLimiter::Admit(absl::string_view key, int64_t reports) {
  if (!enabled()) return absl::OkStatus();
  const double wanted = static_cast<double>(reports);
  if (wanted > options_.burst) {
    return absl::ResourceExhaustedError(absl::StrCat("reports: rate limit: a batch of ", reports,
                                                     " reports is larger than the burst of ",
                                                     options_.burst));
  }
  if (options_.shared != nullptr && absl::StartsWith(key, "t:")) {
    absl::StatusOr<SharedTake> took =
        options_.shared->Take(key, wanted, options_.reports_per_second, options_.burst);
    if (took.ok()) {
      if (shared_down_.exchange(false)) spdlog::info("event=shared_rate_limit_restored");
      return took->admitted ? absl::OkStatus() : Refused(wanted, took->level);
    }
    if (!shared_down_.exchange(true)) {
      spdlog::warn("event=shared_rate_limit_unavailable action=local_limit reason=\"{}\"",
                   std::string(took.status().message()));
    }
  }
  return AdmitLocal(key, wanted);
}

absl::Status RateLimiter::AdmitLocal(absl::string_view key, double wanted) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = buckets_.try_emplace(key, Bucket{options_.burst, now});
  Bucket& b = it->second;
  if (!inserted) {
    b.level = std::min(options_.burst, b.level + absl::ToDoubleSeconds(now - b.updated) *
                                                     options_.reports_per_second);
    b.updated = now;
  }
  if (b.level < wanted) return Refused(wanted, b.level);
  b.level -= wanted;
  if (buckets_.size() > options_.max_keys) {
    absl::erase_if(buckets_, [&](const auto& entry) {
      const Bucket& x = entry.second;
      return x.level + absl::ToDoubleSeconds(now - x.updated) * options_.reports_per_second >=
             options_.burst;
    });
  }
  return absl::OkStatus();
}

std::string PeerKey(absl::string_view peer) {
  static const std::array<unsigned char, 32> salt = [] {
    std::array<unsigned char, 32> s{};
    RAND_bytes(s.data(), static_cast<int>(s.size()));
    return s;
  }();
  // Drop the port: "ipv4:1.2.3.4:5678" -> "ipv4:1.2.3.4", "ipv6:[::1]:5678" -> "ipv6:[::1]".
  const size_t colon = peer.rfind(':');
  const size_t bracket = peer.rfind(']');
  absl::string_view host = peer;
  if (colon != absl::string_view::npos && peer.find(':') != colon &&
      (bracket == absl::string_view::npos || bracket < colon)) {
    host = peer.substr(0, colon);
  }
  const TokenHash h = HashToken(absl::StrCat(
      absl::string_view(reinterpret_cast<const char*>(salt.data()), salt.size()), host));
  return absl::StrCat("p:", absl::string_view(reinterpret_cast<const char*>(h.data()), h.size()));
}

}  // namespace deniable::server
