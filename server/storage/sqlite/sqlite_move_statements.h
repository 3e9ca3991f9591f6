// SqliteStorage's statements for moves (sqlite_move.cc), shared with its other parts (the open's
// recovery, sqlite_open.cc; DeleteMetric and retention, sqlite_delete.cc) and with
// sqlite_storage.cc, which destroys them before it closes the connections they run on; and a
// helper they use.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_MOVE_STATEMENTS_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_MOVE_STATEMENTS_H_

#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_storage.h"

namespace deniable::server {

// A stored report id. Errors: DATA_LOSS if the column is not 16 bytes.
absl::StatusOr<ReportId> ColumnReportId(const SqliteStatement& st, int column);

struct SqliteStorage::MoveStatements {
  // On move_db_ (the database, read).
  SqliteStatement list_rows;
  // On keyed_db_ (the keyed file, written by moves, retention and DeleteMetric).
  SqliteStatement keyed_begin, keyed_commit, keyed_rollback;
  SqliteStatement insert_keyed, read_watermark, start_watermark, advance_watermark;
  SqliteStatement finish_watermark;
  // keyed_file.generation = ?1 and db_generation = ?2 (the database generation the copy relies
  // on), in each copy transaction (sqlite_keyed_file.h, "Generations").
  SqliteStatement bump_generation;
  // On write_db_, with write_mu_ held too.
  // Recent rows of a metric-hour in a seq range (?3, ?4] that are behind a watermark: seq <= ?5,
  // or report_id <= ?6 (NULL: none).
  SqliteStatement delete_behind, seq_bound, any_behind;
  // keyed_file.keyed_generation = ?1, in each transaction of delete_behind.
  SqliteStatement record_generation;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_MOVE_STATEMENTS_H_
