// The PostgreSQL schema of Deniable: versioned, created or migrated at start, safe when several
// collectors start at once.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_SCHEMA_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_SCHEMA_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/storage/postgres/postgres_connection.h"

namespace deniable::server {

// The schema version this server writes (table schema_version holds the database's).
//   1  metrics, designs, reports (partitioned by day), counts (sharded), auth_tokens
//   2  categorical metrics: metrics.categories, category_counts (sharded like counts)
//   3  rate_buckets: rate limits shared by the collectors (UNLOGGED)
//   4  retention: metrics.retention_days, metrics.retention_policy (0 and 1: keep everything)
//   5  label_values(metric_id, key, value): each metric's stored label values, for the cap on
//      distinct values of a label key (label_values.h), filled from the counts' label sets
//   7  one form of counts for every kind of report (sqlite_schema.h version 7): counts.counter0
//      (was yes), counter_sums(..., counter, total) (was category_counts(..., category,
//      support), counters 1 and up), first_counts.counter (was category: -1 n, j counter j)
//   8  counters 1 and up in chunks (issue 37; sqlite_schema.h version 10): counter_chunks(...,
//      shard, win, chunk, offsets, sums), one row per key, shard, window (-1: every report; 0, 1,
//      2: the window's first reports) and chunk of 1024 counters (postgres_counter_sums.h), built
//      from counter_sums (dropped) and first_counts' rows of counters >= 1 (deleted)
//   9  deniable_merge_chunk(offsets, sums, add_offsets, add_sums) -> (offsets, sums): the
//      chunk merge of an append's upsert as a function (postgres_counter_sums.h)
inline constexpr int kPostgresSchemaVersion = 9;

// Advisory lock key held (session level, pg_try_advisory_lock) by the collector applying
// retention, so that collectors on one database never run it at the same time.
inline constexpr int64_t kRetentionLockKey = 0x64656e6961626c03;

// First key of the transaction advisory lock pg_advisory_xact_lock(kLabelValuesLockClass,
// metric id) an append holds while it admits new label values of that metric (the two-key space
// does not overlap the one-key locks above): two collectors never both admit a value past the
// cap. "deni" in ASCII.
inline constexpr int32_t kLabelValuesLockClass = 0x64656e69;

// Seconds per partition of the reports table: one UTC day.
inline constexpr int64_t kPartitionSeconds = 86400;

// Brings the database to kPostgresSchemaVersion: under the session advisory lock
// pg_advisory_lock(kSchemaLockKey), applies each missing migration step in its own transaction
// and records it in schema_version; with the schema current it changes nothing (idempotent).
// Concurrent callers wait for the lock, then find the schema current.
// Errors: FAILED_PRECONDITION when the database's version is newer than this server's;
// UNAVAILABLE / INTERNAL from PostgreSQL (PostgresError).
absl::Status EnsurePostgresSchema(PgConnection& conn);

// "reports_YYYYMMDD": the partition holding event times of the UTC day `day` (days since 1970).
std::string PartitionName(int64_t day);

// Creates the partition of `day` if it does not exist, in its own transaction under an advisory
// transaction lock (two collectors creating the same day wait for each other, then both find it).
// Must run outside any open transaction. Errors: from PostgreSQL.
absl::Status EnsurePartition(PgConnection& conn, int64_t day);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_SCHEMA_H_
