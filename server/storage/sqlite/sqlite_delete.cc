// SqliteStorage's deletes: DeleteMetric (the database's rows, then the keyed file's) and
// retention (SetRetention, ApplyRetention: expired recent rows, keyed rows and watermarks, then
// counts), in the order docs/storage.md's invariant 11 gives, each file's fsync between.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"
#include "server/storage/sqlite/sqlite_move_statements.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_storage_statements.h"
#include "spdlog/spdlog.h"

namespace deniable::server {

absl::Status SqliteStorage::DeleteMetric(absl::string_view name) {
  // move_mu_ first: no move of one of the metric's hours is half done while its rows go.
  absl::MutexLock mlock(&move_mu_);
  absl::MutexLock lock(&write_mu_);
  int64_t id = 0;
  absl::Status s = RunInTransaction([&]() -> absl::Status {
    write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement find,
        SqliteStatement::Prepare(write_db_, "SELECT id FROM metrics WHERE name = ?"));
    find.BindText(1, name);
    DENIABLE_ASSIGN_OR_RETURN(bool found, find.Step());
    if (!found) return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
    id = find.ColumnInt64(0);
    find.Reset();
    for (const char* sql :
         {"DELETE FROM recent_reports WHERE metric_id = ?",
          "DELETE FROM counts WHERE metric_id = ?",
          "DELETE FROM counter_chunks WHERE metric_id = ?",
          "DELETE FROM counter_deltas WHERE metric_id = ?",
          "DELETE FROM first_counts WHERE metric_id = ?",
          "DELETE FROM label_values WHERE metric_id = ?", "DELETE FROM designs WHERE metric_id = ?",
          "DELETE FROM metrics WHERE id = ?"}) {
      DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(write_db_, sql));
      st.BindInt64(1, id);
      DENIABLE_RETURN_IF_ERROR(st.Run());
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  // The in-memory half of recent_reports follows the committed delete.
  for (const HourKey& key : recent_.All()) {
    if (key.metric_id == id) recent_.Erase(key);
  }
  // Then the keyed file, in a transaction of its own: the metric is gone once the first
  // committed (appends refuse its id, AUTOINCREMENT never gives it again); if this one fails,
  // the next open deletes the rows left (FinishInterruptedMoves). Under durability=normal the
  // first is made durable before (docs/storage.md, invariant 11): else a power loss could keep
  // the keyed delete and undo the database's, and the metric would come back with its counts
  // but without its moved reports. If the sync fails, the keyed rows stay for the next open
  // (which syncs first), and the delete is as durable as any commit under durability=normal.
  // The keyed step relies on the delete: a database generation after it, durable first.
  absl::Status keyed = BumpDatabaseGeneration();
  if (keyed.ok()) keyed = SyncDatabaseCommits();
  if (keyed.ok()) keyed = DeleteKeyedMetric(id, db_generation_);
  if (!keyed.ok()) {
    spdlog::warn(
        "event=delete_metric_keyed_rows_left metric_id={} reason=\"{}\" (deleted at the next "
        "start)",
        id, std::string(keyed.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<StoredMetric> SqliteStorage::SetRetention(absl::string_view name, uint32_t days,
                                                         int policy) {
  DENIABLE_RETURN_IF_ERROR(CheckRetention(days, policy));
  {
    absl::MutexLock lock(&write_mu_);
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement st,
        SqliteStatement::Prepare(
            write_db_,
            "UPDATE metrics SET retention_days = ?, retention_policy = ? WHERE name = ?"));
    st.BindInt64(1, days);
    st.BindInt64(2, policy);
    st.BindText(3, name);
    DENIABLE_RETURN_IF_ERROR(st.Run());
    if (sqlite3_changes(write_db_) == 0) {
      return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
    }
  }
  return GetMetric(name);
}

absl::StatusOr<int64_t> SqliteStorage::DeleteExpired(const char* table, const char* key,
                                                     int64_t metric_id, int64_t cutoff,
                                                     int64_t batch_rows,
                                                     const std::function<void()>& after_last) {
  const std::string sql = absl::StrCat(
      "DELETE FROM ", table, " WHERE metric_id = ?1 AND (event_time, ", key, ") IN (SELECT ",
      "event_time, ", key, " FROM ", table, " WHERE metric_id = ?1 AND event_time < ?2 LIMIT ?3)");
  int64_t total = 0;
  while (true) {
    absl::MutexLock lock(&write_mu_);
    int64_t deleted = 0;
    const absl::Status done = RunInTransaction([&]() -> absl::Status {
      write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(write_db_, sql));
      st.BindInt64(1, metric_id);
      st.BindInt64(2, cutoff);
      st.BindInt64(3, batch_rows);
      DENIABLE_RETURN_IF_ERROR(st.Run());
      deleted = sqlite3_changes(write_db_);
      return absl::OkStatus();
    });
    if (!done.ok()) return done;
    total += deleted;
    if (deleted < batch_rows) {
      if (after_last) after_last();
      return total;
    }
  }
}

absl::StatusOr<int64_t> SqliteStorage::DeleteExpiredCounts(int64_t metric_id, int64_t cutoff,
                                                           int64_t batch_rows) {
  // The same keys in the four statements: the subquery reads counts in key order, and the
  // counts rows go last.
  constexpr char kKeys[] =
      "metric_id = ?1 AND (event_time, version, labelset_id) IN (SELECT event_time, version, "
      "labelset_id FROM counts WHERE metric_id = ?1 AND event_time < ?2 ORDER BY event_time, "
      "version, labelset_id LIMIT ?3)";
  int64_t total = 0;
  while (true) {
    absl::MutexLock lock(&write_mu_);
    int64_t deleted = 0;
    const absl::Status done = RunInTransaction([&]() -> absl::Status {
      write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      for (const char* table : {"counter_chunks", "counter_deltas", "first_counts", "counts"}) {
        DENIABLE_ASSIGN_OR_RETURN(
            SqliteStatement st,
            SqliteStatement::Prepare(write_db_,
                                     absl::StrCat("DELETE FROM ", table, " WHERE ", kKeys)));
        st.BindInt64(1, metric_id);
        st.BindInt64(2, cutoff);
        st.BindInt64(3, batch_rows);
        DENIABLE_RETURN_IF_ERROR(st.Run());
      }
      deleted = sqlite3_changes(write_db_);  // of the last: counts
      return absl::OkStatus();
    });
    if (!done.ok()) return done;
    total += deleted;
    if (deleted < batch_rows) return total;
  }
}

absl::StatusOr<int64_t> SqliteStorage::DeleteExpiredKeyed(int64_t metric_id, int64_t cutoff,
                                                          int64_t batch_rows) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(keyed_db_,
                               "DELETE FROM reports WHERE metric_id = ?1 AND (event_time, "
                               "report_id) IN (SELECT event_time, report_id FROM reports WHERE "
                               "metric_id = ?1 AND event_time < ?2 LIMIT ?3)"));
  int64_t total = 0;
  while (true) {
    int64_t deleted = 0;
    DENIABLE_RETURN_IF_ERROR(RunInKeyedTransaction([&]() -> absl::Status {
      move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      st.BindInt64(1, metric_id);
      st.BindInt64(2, cutoff);
      st.BindInt64(3, batch_rows);
      absl::Status s = st.Run();
      deleted = sqlite3_changes(keyed_db_);
      return s;
    }));
    total += deleted;
    if (deleted < batch_rows) break;
  }
  // The watermarks go last: the recent rows of these hours are gone already (ApplyRetention).
  DENIABLE_RETURN_IF_ERROR(RunInKeyedTransaction([&]() -> absl::Status {
    move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement del,
        SqliteStatement::Prepare(keyed_db_,
                                 "DELETE FROM watermarks WHERE metric_id = ? AND event_time < ?"));
    del.BindInt64(1, metric_id);
    del.BindInt64(2, cutoff);
    return del.Run();
  }));
  return total;
}

absl::StatusOr<RetentionResult> SqliteStorage::ApplyRetention(const RetentionOptions& options) {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<StoredMetric> metrics, ListMetrics());
  const int64_t batch = std::max<int64_t>(1, options.batch_rows);
  RetentionResult result;
  absl::MutexLock mlock(&move_mu_);
  for (const StoredMetric& m : metrics) {
    if (m.retention_days == 0) continue;
    const int64_t cutoff = RetentionCutoff(m, options);
    // The recent rows first, the keyed ones after: a reader never sees a recent row whose
    // watermark is gone (sqlite_keyed_file.h). The recent ids of the emptied metric-hours go with
    // the transaction that deleted the last of their rows (nothing can be appended to them in
    // between: the writer lock is held).
    DENIABLE_ASSIGN_OR_RETURN(
        int64_t recent, DeleteExpired("recent_reports", "seq", m.id, cutoff, batch,
                                      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                        for (const HourKey& key : recent_.All()) {
                                          if (key.metric_id == m.id && key.event_time < cutoff)
                                            recent_.Erase(key);
                                        }
                                      }));
    // The keyed deletes need no fsync of the recent rows' deletes first: a power loss that undoes
    // these (and a move's delete of moved rows) but keeps the keyed deletes leaves the hour's
    // recent rows visible once, no longer behind a watermark, and counted, and the next pass
    // deletes them (invariant 11, tested in sync_order_test.cc). The counts go only once the
    // keyed deletes are durable (under durability=normal): else a power loss could leave
    // visible reports whose counts are gone.
    DENIABLE_ASSIGN_OR_RETURN(int64_t sorted, DeleteExpiredKeyed(m.id, cutoff, batch));
    result.Count(m, sorted + recent);
    if (m.retention_policy != kRetentionDropCounts) continue;
    DENIABLE_RETURN_IF_ERROR(SyncKeyedCommits());
    DENIABLE_ASSIGN_OR_RETURN(int64_t counts, DeleteExpiredCounts(m.id, cutoff, batch));
    result.count_rows_dropped += counts;
    // Rows of a key without counts (none: the batches above take them with their counts).
    DENIABLE_RETURN_IF_ERROR(DeleteExpired("counter_chunks", "version, labelset_id, win, chunk",
                                           m.id, cutoff, batch, nullptr)
                                 .status());
    DENIABLE_RETURN_IF_ERROR(DeleteExpired("counter_deltas", "version, labelset_id, win, seq", m.id,
                                           cutoff, batch, nullptr)
                                 .status());
    DENIABLE_RETURN_IF_ERROR(DeleteExpired("first_counts", "version, labelset_id, win, counter",
                                           m.id, cutoff, batch, nullptr)
                                 .status());
  }
  return result;
}

}  // namespace deniable::server
