// Rate-limit buckets in PostgreSQL (table rate_buckets of postgres_schema.h), so that a token's
// limit holds over every collector on the database together (RateLimitOptions::shared).
//
//   auto buckets = PostgresRateBuckets::Open("postgresql://deniable@db/deniable");
//   options.rate_limit.shared = *std::move(buckets);
//
// One row per key ("t:<token id>": no address, no token); the refill and the take run in ONE
// statement (INSERT ... ON CONFLICT DO UPDATE ... WHERE level >= wanted), on the database's
// clock, so concurrent takes from several collectors serialise on the row and the bucket never
// gives out more than burst + rate * elapsed (no overshoot). The table is UNLOGGED: a crash of
// PostgreSQL empties it, and buckets come back full, as they do when a collector restarts.
//
// Cost: one round trip per admitted call (measured in docs/benchmarks.md); calls of one
// collector take turns on one connection.
//
// Thread-safe (one mutex around the connection); reconnects by itself after a lost connection.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_RATE_BUCKETS_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_RATE_BUCKETS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "server/auth/shared_rate_buckets.h"
#include "server/storage/postgres/postgres_connection.h"

namespace deniable::server {

class PostgresRateBuckets : public SharedRateBuckets {
 public:
  // Connects and creates or migrates the schema. Errors: as PostgresStorage::Open.
  static absl::StatusOr<std::unique_ptr<PostgresRateBuckets>> Open(const std::string& uri);

  // See SharedRateBuckets::Take. Errors: UNAVAILABLE when PostgreSQL cannot be reached;
  // INVALID_ARGUMENT "wanted: ..." when wanted < 0 or > burst, or rate/burst are not positive.
  absl::StatusOr<SharedTake> Take(absl::string_view key, double wanted, double rate,
                                  double burst) override;

 private:
  PostgresRateBuckets() = default;
  absl::Mutex mu_;
  std::unique_ptr<PgConnection> conn_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_RATE_BUCKETS_H_
