// The category counts of categorical metrics in PostgreSQL (table category_counts, schema
// version 2; postgres_schema.h): kept apart from postgres_storage.cc's append path so that the
// yes/no path stays as it is. PostgresStorage::ReadCounts reads them with the counts, in one
// statement.
//
// Thread-compatible: the caller holds the connection's mutex.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_CATEGORIES_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_CATEGORIES_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "server/storage/postgres_connection.h"
#include "server/storage/storage.h"

namespace deniable::server {

// Adds the support of `rows` (newly stored categorical reports) to category_counts under
// `shard`, inside the caller's open transaction (the one that stored the rows and their counts),
// in key order so that concurrent collectors lock rows in the same order. No rows: no statement.
// Errors: from PostgreSQL (the caller's transaction then rolls back).
absl::Status AddPostgresCategoryCounts(PgConnection& conn,
                                       const std::vector<const ReportRow*>& rows, int shard);

// Adds the window-first counts of `rows` (newly stored reports with ReportRow::window_firsts set)
// to first_counts (schema version 6) under `shard`, in the caller's transaction and in key order,
// as above. Errors: from PostgreSQL.
absl::Status AddPostgresFirstCounts(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_CATEGORIES_H_
