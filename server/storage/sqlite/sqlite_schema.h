// Schema versions of the collector's SQLite database: what every start checks and migrates.
//
// A collector database is marked by `PRAGMA application_id` = kCollectorApplicationId ("DNS1")
// and carries its schema version in `PRAGMA user_version`. Opening one (SqliteStorage::Open,
// SqliteTokenStore::Open) calls EnsureCollectorSchema, which in ONE transaction (BEGIN IMMEDIATE):
//   - creates the current schema in an empty file;
//   - migrates forward, step by step, a database of an older version, including the unversioned
//     databases written before versions existed (application_id 0 and only Deniable's tables:
//     version 0);
//   - refuses, changing nothing, a database of a newer version (written by a newer
//     deniable-server: upgrade, or restore a backup), the SDK's device store (application_id
//     "DNB1") and any other database (another application_id, or tables Deniable never wrote).
// A failed migration rolls back: the file stays as it was. A database already at the current
// version is recognised without a write lock (two reads of the header).
//
// Versions (docs/operations.md, "Schema versions" keeps the list for operators):
//   0  unversioned (every release up to and including commit 320cd93)
//   1  application_id and user_version set; all tables present; metrics has
//      reporting_period_seconds and randomization
//   2  categorical metrics: metrics.categories; reports.support and recent_reports.support (the
//      categories a categorical report supports, NULL for yes/no); table category_counts
//   3  metrics.retention_days and metrics.retention_policy (0 and 1: keep everything);
//      metrics.id is AUTOINCREMENT (ids of deleted metrics are never given again; the table is
//      rebuilt, sqlite_sequence starts at the largest metric id of any table)
//   4  label_values(metric_id, key, value): each metric's stored label values, for the cap on
//      distinct values of a label key (label_values.h), filled from the counts' label sets
//   5  window flags (issue 26): metrics.window_firsts_off and metrics.reporting_once (0: flags
//      on, periodic reports, what every metric did before); reports.firsts and
//      recent_reports.firsts (a report's window flags, NULL: unknown, as for every report stored
//      before); table first_counts(metric_id, event_time, version, labelset_id, win, category,
//      count): per count key and window (0 day, 1 week, 2 month) the reports first in it
//      (category -2), their yes count (-1) and their support of category v (v >= 0)
//   6  table move_watermarks(metric_id, event_time, last_seq, last_id): while a metric-hour
//      moves, its recent rows with seq <= last_seq and report_id <= last_id are already in
//      `reports` (copied in id order, deleted later by seq range); the view stored_reports
//      leaves them out
//   7  one form of counts for every kind of report (issue 27; storage.h CountRow::counters):
//      counts.yes renamed counter0 (counter 0 of the mechanism's vector, for every kind; a
//      categorical row's support of category 0 moves there); category_counts renamed
//      counter_sums(..., counter, total) for counters 1 and up; first_counts.category renamed
//      counter (-1: the reports first in the window, j: their counter j)
//   8  the keyed reports in a file of their own (issue 25; sqlite_keyed_file.h): `reports`
//      renamed legacy_reports (SqliteStorage::Open copies it into the keyed file, resuming a
//      copy cut short, whose keyed file's pair id the table legacy_copy records, then drops
//      both); moving, move_watermarks and the view stored_reports dropped (the keyed file holds the
//      watermarks; AttachKeyedReports gives the view); table keyed_file(pair_id), the keyed
//      file's pair id once it exists
//   9  keyed_file.keyed_generation (issue 37): the keyed file's generation that the database's
//      deletes of moved rows relied on; an open refuses a keyed file of a lower generation (an
//      older copy, or one whose WAL was lost: sqlite_keyed_file.h)
//  10  counters of any length stored sparsely (issue 37; counter_chunks.h): table
//      counter_chunks(metric_id, event_time, version, labelset_id, win, chunk, sums) holds
//      counters 1 and up, 1024 to a row (win -1: every report; 0-2: the window's first
//      reports), filled from counter_sums (dropped) and from first_counts' rows of counters >= 1
//      (deleted; first_counts keeps n, counter -1, and counter 0). Stored reports keep their
//      columns: a report written from this version on has reports.bit & 2 set and a sparse
//      support (storage.h EncodeCounters); older rows' bitmaps still decode
//  11  keyed_file.db_generation (issue 37): the database's generation, raised by one
//      transaction before each move's copies and by each DeleteMetric; the keyed file (its
//      version 3) records in each transaction that relies on the database the generation it
//      relied on, and an open refuses a database of a lower one (an older copy, or one whose WAL
//      was lost: sqlite_keyed_file.h)
//  12  table counter_deltas(metric_id, event_time, version, labelset_id, win, seq, sums)
//      (issue 40; counter_chunks.h), created empty: an append transaction's increments of
//      counters 1 and up, one row per key and window, folded into counter_chunks every
//      kCounterDeltaFold rows; reads sum both
//
// Thread-compatible: call it on a connection no other thread uses.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_SCHEMA_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_SCHEMA_H_

#include <sqlite3.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

inline constexpr int32_t kCollectorApplicationId = 0x444E5331;    // "DNS1"
inline constexpr int32_t kDeviceStoreApplicationId = 0x444E4231;  // "DNB1": the SDK's file
inline constexpr int kCurrentSchemaVersion = 12;

// Checks, creates or migrates the schema of the collector database open on `db`; `path` names
// it in messages. Errors: FAILED_PRECONDITION naming the path for a database of a newer schema
// version, a device store or a foreign database (nothing changed); the SQLite errors of
// SqliteError (UNAVAILABLE when busy or on I/O errors) with the transaction rolled back.
absl::Status EnsureCollectorSchema(sqlite3* db, absl::string_view path);

// The schema version recorded in the database open on `db` (PRAGMA user_version).
// Errors: as SqliteError.
absl::Status ReadSchemaVersion(sqlite3* db, int32_t* application_id, int* version);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_SQLITE_SCHEMA_H_
