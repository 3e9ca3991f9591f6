// Token-bucket rate limit on reports, one bucket per key (a token's hash, or a salted hash of the
// caller's address in tokenless mode; no address is stored). A bucket holds up to `burst`
// reports and refills at `reports_per_second`; a batch of k reports passes when the bucket holds
// at least k, and then takes k. A batch larger than `burst` never passes.
//
// Memory is bounded: when more than `max_keys` buckets exist, full buckets (idle callers) are
// dropped; a dropped bucket comes back full, which is what it would hold anyway.
//
// Several collectors on one database (RateLimitOptions::shared, PostgresRateBuckets): a token's
// bucket ("t:" keys) lives in the database and is refilled and taken from in one statement, so
// the limit holds for the token's reports over ALL collectors together, exactly (no overshoot;
// docs/deploy.md). Tokenless keys ("p:", a hash salted per process) stay in each process: a
// shared salt would put a brute-forceable hash of every address in the database. While the shared
// buckets cannot be reached, each collector applies the limit to its own calls (overshoot at most
// the number of collectors times the limit, for that time).
//
// Thread-safe. Does not own the clock.
#ifndef DENIABLE_SERVER_AUTH_RATE_LIMITER_H_
#define DENIABLE_SERVER_AUTH_RATE_LIMITER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "server/auth/shared_rate_buckets.h"

namespace deniable::server {

struct RateLimitOptions {
  double reports_per_second = 0;  // refill rate; 0 turns the limit off
  double burst = 0;               // bucket size in reports; 0 means max(reports_per_second, 1)
  size_t max_keys = 100000;       // buckets kept before idle ones are dropped
  // Buckets shared with other collectors for token keys ("t:..."); null: all in this process.
  std::shared_ptr<SharedRateBuckets> shared = nullptr;
};

class RateLimiter {
 public:
  RateLimiter(RateLimitOptions options, const Clock* clock);

  bool enabled() const { return options_.reports_per_second > 0; }

  // Takes `reports` from `key`'s bucket (the shared one for a token key when options.shared is
  // set: one round trip to the store per call). Errors: RESOURCE_EXHAUSTED "reports: rate limit
  // ..." (nothing taken) when the bucket holds fewer, with the wait after which it would pass.
  absl::Status Admit(absl::string_view key, int64_t reports);

 private:
  absl::Status Refused(double wanted, double level) const;
  absl::Status AdmitLocal(absl::string_view key, double wanted);

  struct Bucket {
    double level = 0;
    absl::Time updated;
  };
  RateLimitOptions options_;
  const Clock* const clock_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> shared_down_{false};  // the last shared Take failed (logged once per outage)
};

// A key for a caller without a token: SHA-256 of a random salt drawn at process start (kept in
// memory only) and the peer's host (the port is dropped), so that buckets cannot be mapped back
// to addresses. `peer` is grpc's form ("ipv4:1.2.3.4:5678", "ipv6:[::1]:5678").
std::string PeerKey(absl::string_view peer);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_AUTH_RATE_LIMITER_H_
