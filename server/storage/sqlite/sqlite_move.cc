// SqliteStorage's moves: a metric-hour's recent rows (the database's recent_reports) into the
// keyed reports file (sqlite_keyed_file.h), and the recovery of a move cut short.
#include <algorithm>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"
#include "server/storage/sqlite/moved_ids_filter.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_move_statements.h"
#include "server/storage/sqlite/sqlite_storage.h"

namespace deniable::server {
namespace {

// While appends arrive, a move's delete phase pauses after each transaction for this many times
// as long as the transaction held the writer, so it takes at most a quarter of the writer's time:
// at half (a factor of 1), a hot metric-hour ingested at half its rate for the seconds each
// delete phase lasted (docs/performance.md, "Allocations and cache misses").
constexpr int kDeleteYield = 3;

// The seq of every kSeqMarkRows-th row of a move and of the last: the delete phase's range
// bounds.
constexpr size_t kSeqMarkRows = 1024;

}  // namespace

absl::Status SqliteStorage::SyncDatabaseCommits() { return database_wal_->Sync(); }

absl::Status SqliteStorage::BumpDatabaseGeneration() {
  if (database_wal_->commits() == commits_at_bump_) return absl::OkStatus();
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(write_db_, "UPDATE keyed_file SET db_generation = ?"));
  st.BindInt64(1, db_generation_ + 1);
  DENIABLE_RETURN_IF_ERROR(st.Run());
  ++db_generation_;                             // committed
  commits_at_bump_ = database_wal_->commits();  // (counting the raise's own commit)
  return absl::OkStatus();
}

absl::Status SqliteStorage::SyncKeyedCommits() { return keyed_wal_->Sync(); }

absl::Status SqliteStorage::PrepareMoveStatements() {
  move_mu_.AssertHeld();
  write_mu_.AssertHeld();
  auto on = [](sqlite3* db, const char* sql) { return SqliteStatement::Prepare(db, sql); };
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement list_rows,
      on(move_db_,
         "SELECT seq, report_id, version, bit, labelset_id, support, firsts FROM recent_reports "
         "WHERE metric_id = ? AND event_time = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement keyed_begin, on(keyed_db_, "BEGIN IMMEDIATE"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement keyed_commit, on(keyed_db_, "COMMIT"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement keyed_rollback, on(keyed_db_, "ROLLBACK"));
  // OR IGNORE: a move cut short may have copied a row already (its watermark only says up to
  // which id for sure).
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_keyed,
      on(keyed_db_,
         "INSERT OR IGNORE INTO reports(metric_id, event_time, report_id, version, bit, "
         "labelset_id, support, firsts) VALUES(?, ?, ?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement read_watermark,
      on(keyed_db_,
         "SELECT moved_seq, last_seq, last_id FROM watermarks WHERE metric_id = ? AND "
         "event_time = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement start_watermark,
      on(keyed_db_,
         "INSERT INTO watermarks(metric_id, event_time, moved_seq, last_seq, last_id) "
         "VALUES(?1, ?2, 0, ?3, NULL) ON CONFLICT(metric_id, event_time) DO UPDATE SET "
         "last_seq = ?3, last_id = NULL"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement advance_watermark,
      on(keyed_db_, "UPDATE watermarks SET last_id = ? WHERE metric_id = ? AND event_time = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement finish_watermark,
      on(keyed_db_,
         "UPDATE watermarks SET moved_seq = last_seq, last_id = NULL WHERE metric_id = ? AND "
         "event_time = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement delete_behind,
      on(write_db_,
         "DELETE FROM recent_reports WHERE metric_id = ?1 AND event_time = ?2 AND seq > ?3 AND "
         "seq <= ?4 AND (seq <= ?5 OR report_id <= ?6)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement seq_bound,
      on(write_db_,
         "SELECT seq FROM recent_reports WHERE metric_id = ? AND event_time = ? AND seq > ? AND "
         "seq <= ? ORDER BY seq LIMIT 1 OFFSET ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement any_behind,
      on(write_db_,
         "SELECT 1 FROM recent_reports WHERE metric_id = ? AND event_time = ? AND seq <= ? "
         "LIMIT 1"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement bump_generation,
      on(keyed_db_, "UPDATE keyed_file SET generation = ?, db_generation = ?"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement record_generation,
                            on(write_db_, "UPDATE keyed_file SET keyed_generation = ?"));
  move_.reset(new MoveStatements{
      std::move(list_rows), std::move(keyed_begin), std::move(keyed_commit),
      std::move(keyed_rollback), std::move(insert_keyed), std::move(read_watermark),
      std::move(start_watermark), std::move(advance_watermark), std::move(finish_watermark),
      std::move(bump_generation), std::move(delete_behind), std::move(seq_bound),
      std::move(any_behind), std::move(record_generation)});
  return absl::OkStatus();
}

absl::Status SqliteStorage::RunInKeyedTransaction(const std::function<absl::Status()>& body) {
  DENIABLE_RETURN_IF_ERROR(move_->keyed_begin.Run());
  absl::Status s = body();
  if (s.ok()) s = move_->keyed_commit.Run();
  if (!s.ok() && !sqlite3_get_autocommit(keyed_db_)) (void)move_->keyed_rollback.Run();
  if (s.ok()) keyed_wal_->Checkpoint();  // the keyed WAL's bound (WalCheckpointer)
  return s;
}

absl::StatusOr<SqliteStorage::Watermark> SqliteStorage::ReadWatermark(const HourKey& key) {
  SqliteStatement& st = move_->read_watermark;
  st.BindInt64(1, key.metric_id);
  st.BindInt64(2, key.event_time);
  absl::StatusOr<bool> row = st.Step();
  Watermark w;
  if (row.ok() && *row) {
    w.moved_seq = st.ColumnInt64(0);
    w.last_seq = st.ColumnInt64(1);
    w.copying = !st.ColumnIsNull(2);
    w.last_id = st.ColumnBlob(2);
  }
  st.Reset();
  if (!row.ok()) return row.status();
  return w;
}

absl::Status SqliteStorage::DeleteKeyedMetric(int64_t metric_id, int64_t relied) {
  return RunInKeyedTransaction([&]() -> absl::Status {
    move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    for (const char* sql : {"DELETE FROM reports WHERE metric_id = ?",
                            "DELETE FROM watermarks WHERE metric_id = ?"}) {
      DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st, SqliteStatement::Prepare(keyed_db_, sql));
      st.BindInt64(1, metric_id);
      DENIABLE_RETURN_IF_ERROR(st.Run());
    }
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement record,
        SqliteStatement::Prepare(keyed_db_,
                                 "UPDATE keyed_file SET db_generation = max(db_generation, ?)"));
    record.BindInt64(1, relied);
    return record.Run();
  });
}

absl::Status SqliteStorage::DropBehind(const HourKey& key, const Watermark& w) {
  const int64_t upto = w.copying ? std::max(w.moved_seq, w.last_seq) : w.moved_seq;
  if (upto <= 0) return absl::OkStatus();
  // Rows with seq > moved_seq are behind the watermark only up to last_id while a move copies;
  // without one, an id no blob is <= to.
  const std::string last_id = w.copying ? w.last_id : std::string();
  {
    // Usually nothing is left behind the watermark: no transaction then (an open checks every
    // metric-hour that ever moved).
    SqliteStatement& any = move_->any_behind;
    any.BindInt64(1, key.metric_id);
    any.BindInt64(2, key.event_time);
    any.BindInt64(3, upto);
    absl::StatusOr<bool> found = any.Step();
    any.Reset();
    if (!found.ok()) return found.status();
    if (!*found) return absl::OkStatus();
  }
  for (int64_t after = 0; after < upto;) {
    SqliteStatement& bound = move_->seq_bound;
    bound.BindInt64(1, key.metric_id);
    bound.BindInt64(2, key.event_time);
    bound.BindInt64(3, after);
    bound.BindInt64(4, upto);
    bound.BindInt64(5, kMoveReadRows - 1);
    absl::StatusOr<bool> found = bound.Step();
    const int64_t to = found.ok() && *found ? bound.ColumnInt64(0) : upto;
    bound.Reset();
    if (!found.ok()) return found.status();
    DENIABLE_RETURN_IF_ERROR(DeleteBehind(key, after, to, w.moved_seq, last_id));
    after = to;
  }
  return absl::OkStatus();
}

absl::Status SqliteStorage::DeleteBehind(const HourKey& key, int64_t after, int64_t to,
                                         int64_t moved_seq, const std::string& last_id) {
  // The rows' keyed copies are durable before their delete commits (under durability=normal a
  // power loss could otherwise keep the delete and roll the copies back).
  DENIABLE_RETURN_IF_ERROR(SyncKeyedCommits());
  return RunInTransaction([&]() -> absl::Status {
    move_mu_.AssertHeld();  // run with both held (-Wthread-safety cannot see it)
    write_mu_.AssertHeld();
    SqliteStatement& del = move_->delete_behind;
    del.BindInt64(1, key.metric_id);
    del.BindInt64(2, key.event_time);
    del.BindInt64(3, after);
    del.BindInt64(4, to);
    del.BindInt64(5, moved_seq);
    if (last_id.empty()) {
      del.BindNull(6);
    } else {
      del.BindBlob(6, last_id.data(), static_cast<int>(last_id.size()));
    }
    DENIABLE_RETURN_IF_ERROR(del.Run());
    // These rows' keyed copies are in the keyed file's generation keyed_generation_ (or older).
    SqliteStatement& record = move_->record_generation;
    record.BindInt64(1, keyed_generation_);
    return record.Run();
  });
}

absl::Status SqliteStorage::MoveHours(const std::vector<HourKey>& keys) {
  absl::MutexLock mlock(&move_mu_);
  for (const HourKey& key : keys) DENIABLE_RETURN_IF_ERROR(MoveHour(key));
  return absl::OkStatus();
}

// Moves the metric-hour's recent rows (seq <= last_seq, those appended so far) into the keyed
// file:
//
// 1. Mark: the hour's watermark (in the keyed file) gets last_seq; a move that a failure cut
//    short continues with its own last_seq instead, and first deletes the recent rows it had
//    copied.
// 2. List: the rows, read whole in seq order on the move's own connection (short read
//    transactions of kMoveReadRows rows; nothing else deletes recent rows of the hour meanwhile:
//    that takes move_mu_), then sorted by id in memory (40 bytes a row).
// 3. Copy, in id order, on the keyed file's connection: each transaction inserts a chunk and
//    advances the watermark's last_id to the chunk's largest id, the last one sets moved_seq to
//    last_seq. The database's writer is not involved: appends go on meanwhile, on their own
//    core. After each commit, under the writer lock for a moment, the chunk's ids leave the
//    in-memory recent set (the keyed lookup finds them from then on; the hour's moved-ids filter
//    has them).
// 4. Delete the copied recent rows by seq range (contiguous pages of recent_reports), in
//    transactions of the database's writer between which appends go first.
//
// Every reader counts each report once at every moment (sqlite_keyed_file.h): the copied
// rows are behind the watermark until they are deleted. A move that fails half way (disk full)
// leaves the watermark; the next move of the hour continues it, and the next open deletes what
// it copied (FinishInterruptedMoves).
absl::Status SqliteStorage::MoveHour(const HourKey& key) {
  DENIABLE_ASSIGN_OR_RETURN(Watermark mark, ReadWatermark(key));
  if (mark.copying) {  // a move a failure cut short ends first; then what came since moves
    DENIABLE_RETURN_IF_ERROR(MoveHourOnce(key, mark));
    DENIABLE_ASSIGN_OR_RETURN(mark, ReadWatermark(key));
  }
  return MoveHourOnce(key, mark);
}

// The rows a move copies: the hour's recent rows up to its last_seq, sorted by id, their stored
// counters in `arena`, and the seq bounds of the delete phase's ranges (every kSeqMarkRows-th
// row's seq, and last_seq).
struct SqliteStorage::MovingRows {
  // A recent row on its way to the keyed file: 48 bytes, plus its stored counters (support) in
  // the arena (reports of counters other than 0 only).
  struct Row {
    ReportId id;
    int64_t labelset_id;
    uint32_t version;
    int32_t support_at;  // offset in the arena; -1: NULL
    int32_t firsts;      // -1: NULL
    uint32_t support_size;
    uint8_t bit;
  };
  std::vector<Row> rows;
  std::string arena;
  std::vector<int64_t> seq_marks;
};

absl::Status SqliteStorage::MoveHourOnce(const HourKey& key, const Watermark& mark) {
  int64_t last_seq = 0;
  int64_t relied = 0;  // the database generation the copies rely on
  DENIABLE_ASSIGN_OR_RETURN(const bool moves, MarkMove(key, mark, last_seq, relied));
  if (!moves) return absl::OkStatus();
  // 2. List.
  MovingRows moving;
  DENIABLE_RETURN_IF_ERROR(ListMovingRows(key, mark.moved_seq, last_seq, moving));
  // 3. Copy, in id order, on the keyed file's connection.
  DENIABLE_RETURN_IF_ERROR(CopyMovingRows(key, relied, moving));
  // 4. Delete the copied rows by seq range, between appends.
  return DeleteMovedRows(key, mark.moved_seq, moving.seq_marks);
}

absl::StatusOr<bool> SqliteStorage::MarkMove(const HourKey& key, const Watermark& mark,
                                             int64_t& last_seq, int64_t& relied) {
  {
    absl::MutexLock lock(&write_mu_);
    RecentHours::Hour* hour = recent_.Find(key);
    if (hour == nullptr) return false;
    // Nothing of the hour is in the keyed file yet: a filter of what moves put there is
    // complete.
    if (!hour->may_have_sorted_rows && hour->moved == nullptr) {
      hour->moved = std::make_unique<MovedIdsFilter>();
    }
    // What a failed move of this hour copied goes first (its watermark still hides it).
    DENIABLE_RETURN_IF_ERROR(DropBehind(key, mark));
    last_seq = mark.copying ? mark.last_seq : next_seq_ - 1;
    // The copies rely on the rows they copy: a database generation committed after them, which
    // each copy transaction records (sqlite_keyed_file.h, "Generations").
    DENIABLE_RETURN_IF_ERROR(BumpDatabaseGeneration());
    relied = db_generation_;
    // The rows to copy (and the generation) are durable in the database before any keyed copy
    // of them commits (under durability=normal a power loss could otherwise keep the copies and
    // roll the appends, and their counts, back).
    DENIABLE_RETURN_IF_ERROR(SyncDatabaseCommits());
  }
  if (mark.copying) return true;
  if (last_seq <= mark.moved_seq) return false;
  DENIABLE_RETURN_IF_ERROR(RunInKeyedTransaction([&]() -> absl::Status {
    move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    SqliteStatement& st = move_->start_watermark;
    st.BindInt64(1, key.metric_id);
    st.BindInt64(2, key.event_time);
    st.BindInt64(3, last_seq);
    return st.Run();
  }));
  return true;
}

absl::Status SqliteStorage::ListMovingRows(const HourKey& key, int64_t after, int64_t last_seq,
                                           MovingRows& out) {
  std::vector<MovingRows::Row>& rows = out.rows;
  std::string& arena = out.arena;
  std::vector<int64_t>& seq_marks = out.seq_marks;
  SqliteStatement& read = move_->list_rows;
  while (true) {
    read.BindInt64(1, key.metric_id);
    read.BindInt64(2, key.event_time);
    read.BindInt64(3, after);
    read.BindInt64(4, last_seq);
    read.BindInt64(5, kMoveReadRows);
    int64_t listed = 0;
    absl::Status s = absl::OkStatus();
    while (s.ok()) {
      absl::StatusOr<bool> has_row = read.Step();
      if (!has_row.ok()) s = has_row.status();
      if (!s.ok() || !*has_row) break;
      absl::StatusOr<ReportId> id = ColumnReportId(read, 1);
      if (!id.ok()) {
        s = id.status();
        break;
      }
      after = read.ColumnInt64(0);
      MovingRows::Row r{};
      r.id = *id;
      r.version = static_cast<uint32_t>(read.ColumnInt64(2));
      r.bit = static_cast<uint8_t>(read.ColumnInt64(3));
      r.labelset_id = read.ColumnInt64(4);
      r.support_at = -1;
      if (!read.ColumnIsNull(5)) {
        const std::string support = read.ColumnBlob(5);
        r.support_at = static_cast<int32_t>(arena.size());
        r.support_size = static_cast<uint32_t>(support.size());
        arena += support;
      }
      r.firsts = read.ColumnIsNull(6) ? -1 : static_cast<int32_t>(read.ColumnInt64(6));
      rows.push_back(r);
      if (rows.size() % kSeqMarkRows == 0) seq_marks.push_back(after);
      ++listed;
    }
    read.Reset();
    if (!s.ok()) return s;
    if (listed < kMoveReadRows) break;
  }
  if (seq_marks.empty() || seq_marks.back() != last_seq) seq_marks.push_back(last_seq);
  std::sort(rows.begin(), rows.end(),
            [](const MovingRows::Row& a, const MovingRows::Row& b) { return a.id < b.id; });
  return absl::OkStatus();
}

size_t SqliteStorage::NextChunkRows(size_t rows_done, int64_t wrote, size_t floor,
                                    size_t ceiling) const {
  if (!bound_move_wal_) return ceiling;
  const int64_t target_pages = std::max(1, wal_checkpoint_pages_ / 2);
  const size_t aimed =
      static_cast<size_t>(static_cast<double>(rows_done) * static_cast<double>(target_pages) /
                          static_cast<double>(std::max<int64_t>(1, wrote)));
  return std::clamp(std::min(aimed, 4 * std::max<size_t>(1, rows_done)), floor, ceiling);
}

absl::Condition SqliteStorage::AppendsDone() {
  return absl::Condition(
      +[](std::atomic<int>* waiting) { return waiting->load(std::memory_order_relaxed) == 0; },
      &appends_waiting_);
}

absl::Status SqliteStorage::InsertMovingChunk(const HourKey& key, const MovingRows& moving,
                                              size_t next, size_t end, bool last, int64_t relied) {
  SqliteStatement& ins = move_->insert_keyed;
  for (size_t i = next; i < end; ++i) {
    const MovingRows::Row& r = moving.rows[i];
    ins.BindInt64(1, key.metric_id);
    ins.BindInt64(2, key.event_time);
    ins.BindBlob(3, r.id.data(), static_cast<int>(r.id.size()));
    ins.BindInt64(4, r.version);
    ins.BindInt64(5, r.bit);
    ins.BindInt64(6, r.labelset_id);
    if (r.support_at >= 0) {
      ins.BindBlob(7, moving.arena.data() + r.support_at, r.support_size);
    } else {
      ins.BindNull(7);
    }
    if (r.firsts >= 0) {
      ins.BindInt64(8, r.firsts);
    } else {
      ins.BindNull(8);
    }
    if (absl::Status s = ins.Run(); !s.ok()) return s;
  }
  SqliteStatement& st = last ? move_->finish_watermark : move_->advance_watermark;
  int i = 1;
  if (!last) {
    const ReportId& top = moving.rows[end - 1].id;
    st.BindBlob(i++, top.data(), static_cast<int>(top.size()));
  }
  st.BindInt64(i++, key.metric_id);
  st.BindInt64(i, key.event_time);
  if (absl::Status s = st.Run(); !s.ok()) return s;
  SqliteStatement& bump = move_->bump_generation;
  bump.BindInt64(1, keyed_generation_ + 1);
  bump.BindInt64(2, relied);
  return bump.Run();
}

absl::Status SqliteStorage::CopyMovingRows(const HourKey& key, int64_t relied,
                                           const MovingRows& moving) {
  const std::vector<MovingRows::Row>& rows = moving.rows;
  const int64_t target_pages = std::max(1, wal_checkpoint_pages_ / 2);
  const size_t first_chunk = std::min(move_chunk_rows_, static_cast<size_t>(target_pages));
  size_t rows_per_chunk = bound_move_wal_ ? first_chunk : move_chunk_rows_;
  std::vector<ReportId> ids;
  for (size_t next = 0; next < rows.size() || next == 0;) {
    {
      absl::MutexLock lock(&write_mu_);
      if (stop_) return absl::CancelledError("storage is closing; the move resumes at next open");
    }
    const size_t end = std::min(rows.size(), next + rows_per_chunk);
    const bool last = end == rows.size();
    DENIABLE_RETURN_IF_ERROR(RunInKeyedTransaction([&]() -> absl::Status {
      move_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      return InsertMovingChunk(key, moving, next, end, last, relied);
    }));
    ++keyed_generation_;  // committed
    rows_per_chunk =
        NextChunkRows(end - next, keyed_wal_->last_commit_pages(), first_chunk, move_chunk_rows_);
    ids.clear();
    for (size_t i = next; i < end; ++i) ids.push_back(rows[i].id);
    next = end;
    absl::MutexLock lock(&write_mu_, AppendsDone());  // appends waiting for the writer go first
    RecentHours::Hour* hour = recent_.Find(key);
    if (hour != nullptr) {  // always: only moves and deletes (holding move_mu_) erase it
      hour->may_have_sorted_rows = true;
      recent_.MoveOut(*hour, ids);
      if (last && hour->ids.empty()) recent_.Erase(key);
    }
    if (last) break;
  }
  return absl::OkStatus();
}

// While they arrive, the move leaves the writer to appends between its transactions for
// kDeleteYield times as long as the last one held it (the rows behind the watermark are hidden
// from readers meanwhile).
absl::Status SqliteStorage::DeleteMovedRows(const HourKey& key, int64_t moved_seq,
                                            const std::vector<int64_t>& seq_marks) {
  absl::Duration pause;
  int64_t appends_seen = appends_started_.load(std::memory_order_relaxed);
  size_t marks_per_chunk = std::max<size_t>(
      1, (bound_move_wal_ ? move_chunk_rows_ : 4 * move_chunk_rows_) / kSeqMarkRows);
  int64_t deleted_to = moved_seq;  // seqs up to this one are deleted
  for (size_t at = 0; at < seq_marks.size();) {
    if (pause > absl::ZeroDuration()) {
      write_mu_.LockWhenWithTimeout(  // ends early on Close
          absl::Condition(
              +[](SqliteStorage* self) ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->stop_; },
              this),
          pause);
      write_mu_.Unlock();
    }
    absl::MutexLock lock(&write_mu_, AppendsDone());
    if (stop_) return absl::CancelledError("storage is closing; the move resumes at next open");
    const size_t end = std::min(seq_marks.size(), at + marks_per_chunk);
    const absl::Time start = absl::Now();
    // Every row of the seq range: all of them are behind the finished watermark.
    DENIABLE_RETURN_IF_ERROR(
        DeleteBehind(key, deleted_to, seq_marks[end - 1], seq_marks[end - 1], std::string()));
    const int64_t appends_now = appends_started_.load(std::memory_order_relaxed);
    const bool appending =
        appends_now != appends_seen || appends_waiting_.load(std::memory_order_relaxed) > 0;
    appends_seen = appends_now;
    pause = background_moves_ && appending ? kDeleteYield * (absl::Now() - start)
                                           : absl::ZeroDuration();
    deleted_to = seq_marks[end - 1];
    marks_per_chunk = NextChunkRows(end - at, database_wal_->last_commit_pages(), 1,
                                    4 * move_chunk_rows_ / kSeqMarkRows + 1);
    at = end;
  }
  return absl::OkStatus();
}

void SqliteStorage::MoverLoop() {
  absl::MutexLock lock(&write_mu_);
  while (true) {
    write_mu_.Await(absl::Condition(
        +[](SqliteStorage* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return self->stop_ || self->recent_.size() > self->max_recent_reports_;
        },
        this));
    if (stop_) return;
    const std::vector<HourKey> keys = recent_.OldestBeyond(max_recent_reports_ / 2);
    write_mu_.Unlock();
    const absl::Status s = MoveHours(keys);
    write_mu_.Lock();
    // After a failure (disk full, say) wait a second before trying again.
    if (!s.ok() && !stop_) write_mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Seconds(1));
  }
}

absl::Status SqliteStorage::MoveRecentReports() {
  std::vector<HourKey> keys;
  {
    absl::MutexLock lock(&write_mu_);
    keys = recent_.All();
  }
  return MoveHours(keys);
}

}  // namespace deniable::server
