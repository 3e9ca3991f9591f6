// The rate limiter's narrow interface to buckets kept outside the process (RateLimitOptions::
// shared): a storage backend implements it (PostgresRateBuckets, server/storage), so that auth
// needs no storage code and storage needs nothing of auth beyond this header.
#ifndef DENIABLE_SERVER_AUTH_SHARED_RATE_BUCKETS_H_
#define DENIABLE_SERVER_AUTH_SHARED_RATE_BUCKETS_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// What a shared bucket held after one SharedRateBuckets::Take.
struct SharedTake {
  bool admitted = false;  // the reports were taken
  double level = 0;       // reports left in the bucket after the refill (and the take)
};

// Token buckets kept outside the process, one per key, shared by every collector that uses the
// same store (PostgresRateBuckets). Implementations are thread-safe.
class SharedRateBuckets {
 public:
  virtual ~SharedRateBuckets() = default;
  // Atomically: refills `key`'s bucket (a new key starts full, at `burst`) by `rate` reports per
  // second of the store's clock since its last take, capped at `burst`, then takes `wanted`
  // reports if it holds at least that many. `wanted` <= `burst` (the caller checks).
  // Errors: UNAVAILABLE when the store cannot be reached (nothing taken).
  virtual absl::StatusOr<SharedTake> Take(absl::string_view key, double wanted, double rate,
                                          double burst) = 0;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_AUTH_SHARED_RATE_BUCKETS_H_
