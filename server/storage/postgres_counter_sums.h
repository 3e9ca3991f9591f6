// Counters 1 and up of the counter vectors in PostgreSQL (table counter_sums, schema version 7;
// postgres_schema.h; counter 0 is counts.counter0) and the window-first counts (first_counts):
// kept apart from postgres_storage.cc's append path, which writes n and counter 0.
// PostgresStorage::ReadCounts reads them with the counts, in one statement.
//
// Thread-compatible: the caller holds the connection's mutex.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_COUNTER_SUMS_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_COUNTER_SUMS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "server/storage/postgres_connection.h"
#include "server/storage/storage.h"

namespace deniable::server {

// Adds counters 1 and up of `rows` (newly stored reports with such counters) to counter_sums
// under `shard`, inside the caller's open transaction (the one that stored the rows and their
// counts), in key order so that concurrent collectors lock rows in the same order. No counters:
// no statement. Errors: from PostgreSQL (the caller's transaction then rolls back).
absl::Status AddPostgresCounterSums(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard);

// Adds the window-first counts of `rows` (newly stored reports with ReportRow::window_firsts set)
// to first_counts (schema version 6) under `shard`, in the caller's transaction and in key order,
// as above. Errors: from PostgreSQL.
absl::Status AddPostgresFirstCounts(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_COUNTER_SUMS_H_
