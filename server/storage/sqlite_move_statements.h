// SqliteStorage's statements for moves (sqlite_move.cc), shared with sqlite_storage.cc, which
// destroys them before it closes the connections they run on; and two helpers both files use.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_MOVE_STATEMENTS_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_MOVE_STATEMENTS_H_

#include "server/storage/sqlite_statement.h"
#include "server/storage/sqlite_storage.h"

namespace deniable::server {

// A stored report id. Errors: DATA_LOSS if the column is not 16 bytes.
absl::StatusOr<ReportId> ColumnReportId(const SqliteStatement& st, int column);

// A busy handler that gives up after `*max_tries` calls (an int), sleeping about 1 ms each.
int BoundedBusy(void* max_tries, int calls);

struct SqliteStorage::MoveStatements {
  // On move_db_ (the database, read).
  SqliteStatement list_rows;
  // On keyed_db_ (the keyed file, written by moves, retention and DeleteMetric).
  SqliteStatement keyed_begin, keyed_commit, keyed_rollback;
  SqliteStatement insert_keyed, read_watermark, start_watermark, advance_watermark;
  SqliteStatement finish_watermark;
  // On write_db_, with write_mu_ held too.
  SqliteStatement delete_moved, delete_behind, seq_bound, any_behind;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_MOVE_STATEMENTS_H_
