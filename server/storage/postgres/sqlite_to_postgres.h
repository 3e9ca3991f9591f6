// `deniable-server migrate`: copies a SQLite database (metrics, design versions, tokens, report
// ids and thereby counts) into PostgreSQL, then verifies that the counts match.
//
//   auto summary = MigrateSqliteToPostgres("deniable.db", "postgresql://deniable@db/deniable",
//                                          [](const std::string& line) { std::cerr << line; });
//
// Idempotent: metrics and versions already present (same name and version, same parameters) are
// kept, tokens already present (same hash) are skipped, and reports go through
// PostgresStorage::AppendReports, whose deduplication counts a report already copied as a
// duplicate; a second run copies nothing and verifies again. The SQLite database is opened with
// its writer lock (DatabaseLock), so no collector may run on it meanwhile. Not thread-safe.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_SQLITE_TO_POSTGRES_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_SQLITE_TO_POSTGRES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"

namespace deniable::server {

struct MigrationSummary {
  int64_t metrics = 0;              // metrics in the SQLite database
  int64_t metrics_created = 0;      // of them, created in PostgreSQL by this run
  int64_t versions_added = 0;       // design versions added to PostgreSQL by this run
  int64_t tokens = 0;               // tokens in the SQLite database
  int64_t tokens_copied = 0;        // of them, new in PostgreSQL
  int64_t reports = 0;              // reports in the SQLite database
  int64_t reports_copied = 0;       // of them, new in PostgreSQL (the rest were there already)
  int64_t count_rows_verified = 0;  // (metric, version, hour, labels) rows found equal
};

// Copies `sqlite_path` into the PostgreSQL database at `uri` (schema created if needed), calling
// `progress` with a line of text (ending in '\n') every 50000 reports and per phase.
// Errors: FAILED_PRECONDITION when the SQLite database is in use by a running collector, when
// a metric exists in PostgreSQL with a different design under the same version, or when the
// verification finds a count that differs (the message names the metric, hour and both counts:
// PostgreSQL holds reports the SQLite database lacks, e.g. collectors already write there);
// NOT_FOUND when the SQLite file does not exist; storage errors of either side.
absl::StatusOr<MigrationSummary> MigrateSqliteToPostgres(
    const std::string& sqlite_path, const std::string& uri,
    const std::function<void(const std::string&)>& progress);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_SQLITE_TO_POSTGRES_H_
