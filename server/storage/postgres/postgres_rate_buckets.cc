#include "server/storage/postgres/postgres_rate_buckets.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "deniable/common/status_macros.h"
#include "server/storage/postgres/postgres_schema.h"

namespace deniable::server {
namespace {

// $1 key, $2 wanted, $3 burst, $4 rate. now() is the statement's start; a take that waited for
// another collector's lock on the row may start before that one's `updated`, so the refill
// counts only time after the later of the two (greatest), and `updated` never moves back: the
// refills over all takes add up to at most rate * (last - first take).
constexpr char kTake[] = R"sql(
INSERT INTO rate_buckets AS b(key, level, updated)
VALUES ($1, $3::float8 - $2::float8, now())
ON CONFLICT (key) DO UPDATE
SET level = least($3::float8, b.level + $4::float8 *
                  extract(epoch FROM greatest(now() - b.updated, interval '0'))::float8)
            - $2::float8,
    updated = greatest(b.updated, now())
WHERE least($3::float8, b.level + $4::float8 *
            extract(epoch FROM greatest(now() - b.updated, interval '0'))::float8) >= $2::float8
RETURNING level)sql";

constexpr char kLevel[] = R"sql(
SELECT least($2::float8, level + $3::float8 *
             extract(epoch FROM greatest(now() - updated, interval '0'))::float8)
FROM rate_buckets WHERE key = $1)sql";

std::string Number(double v) { return absl::StrFormat("%.17g", v); }

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresRateBuckets>> PostgresRateBuckets::Open(
    const std::string& uri) {
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> conn, PgConnection::Connect(uri));
  DENIABLE_RETURN_IF_ERROR(EnsurePostgresSchema(*conn));
  auto buckets = std::unique_ptr<PostgresRateBuckets>(new PostgresRateBuckets());
  absl::MutexLock lock(&buckets->mu_);
  buckets->conn_ = std::move(conn);
  return buckets;
}

absl::StatusOr<SharedTake> PostgresRateBuckets::Take(absl::string_view key, double wanted,
                                                     double rate, double burst) {
  if (!(rate > 0) || !(burst > 0) || !(wanted >= 0) || wanted > burst) {
    return absl::InvalidArgumentError(
        absl::StrFormat("wanted: %g reports must be in [0, burst %g], with a positive rate (%g)",
                        wanted, burst, rate));
  }
  const std::string k(key);
  absl::MutexLock lock(&mu_);
  DENIABLE_ASSIGN_OR_RETURN(PgResult took,
                            conn_->Exec(kTake, {k, Number(wanted), Number(burst), Number(rate)}));
  if (took.rows() == 1) return SharedTake{true, took.Double(0, 0)};
  // Refused: read what the bucket holds, for the caller's "retry in" (a second round trip only
  // on refusal).
  DENIABLE_ASSIGN_OR_RETURN(PgResult level, conn_->Exec(kLevel, {k, Number(burst), Number(rate)}));
  return SharedTake{false, level.rows() == 1 ? level.Double(0, 0) : 0.0};
}

}  // namespace deniable::server
