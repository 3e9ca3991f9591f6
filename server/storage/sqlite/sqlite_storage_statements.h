// SqliteStorage's statements for its writer (write_db_) and reader (read_db_), prepared at the
// open (sqlite_open.cc) and used by the append (sqlite_append.cc), the reads (sqlite_read.cc),
// retention and DeleteMetric (sqlite_delete.cc); sqlite_storage.cc destroys them before it
// closes the connections they run on.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_STATEMENTS_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_STATEMENTS_H_

#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_storage.h"

namespace deniable::server {

struct SqliteStorage::WriteStatements {
  SqliteStatement begin, commit, rollback;
  SqliteStatement insert_metric, insert_design, insert_labelset, find_labelset;
  // insert_recent_many: kInsertRecentRows rows per statement (sqlite_append.cc).
  SqliteStatement insert_recent, insert_recent_many, upsert_count;
  SqliteStatement find_report, hour_has_reports;  // on keyed_lookup_db_
  SqliteStatement upsert_counter_chunk;           // counter_chunks (counter_chunks.h)
  SqliteStatement upsert_first_count;             // first_counts (sqlite_schema.h version 5)
  SqliteStatement metric_exists;
  SqliteStatement label_value_known, label_value_count, insert_label_value, label_key_count;
  // counter_deltas (counter_chunks.h): AppendCounterCells' CounterStatements.
  SqliteStatement counter_delta_rows, insert_counter_delta, read_counter_deltas,
      delete_counter_deltas;
};

struct SqliteStorage::ReadStatements {
  SqliteStatement get_metric, list_metrics, get_designs, read_counts, count_reports;
  SqliteStatement read_counter_chunks;
  SqliteStatement read_first_counts;
  SqliteStatement read_counter_deltas;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_STORAGE_STATEMENTS_H_
