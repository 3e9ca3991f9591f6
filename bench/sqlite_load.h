// SQLite-side pieces of deniable-bench: the raw insert limit and the bulk loader that builds a
// large database without going through gRPC.
//
// Not thread-safe: each function uses its own connection or the storage it is given.
#ifndef DENIABLE_BENCH_SQLITE_LOAD_H_
#define DENIABLE_BENCH_SQLITE_LOAD_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "bench/database_files.h"
#include "bench/load.h"
#include "server/storage/sqlite/sqlite_storage.h"

namespace deniable::bench {

// The raw limit: rows per second inserted into a fresh WAL database at `path` (deleted first),
// synchronous=FULL, `batch_rows` rows per transaction, into a rowid table of the reports' columns
// with no index and no deduplication, for about `duration`.
absl::StatusOr<double> RawSqliteInsertRate(const std::string& path, int batch_rows,
                                           absl::Duration duration);

// Throughput of the bulk loader over one slice of the load.
struct LoadSlice {
  int64_t stored_before = 0;  // reports in the database when the slice started
  int64_t rows = 0;
  double rows_per_second = 0;
};

// Appends `total` reports of metric `metric_id` (design version 1, no labels, random ids) with
// SqliteStorage::AppendReports in transactions of `batch_rows`, spread evenly over `hours` hourly
// event times ending just before `end_hour_seconds`, oldest hour first. Returns the append rate
// of each tenth of the load. Errors: the storage's.
absl::StatusOr<std::vector<LoadSlice>> BulkLoad(server::SqliteStorage* storage, int64_t metric_id,
                                                int64_t total, int hours, int64_t end_hour_seconds,
                                                int batch_rows, IdSource* ids);

// DatabaseBytes and RemoveDatabase: bench/database_files.h.

}  // namespace deniable::bench

#endif  // DENIABLE_BENCH_SQLITE_LOAD_H_
