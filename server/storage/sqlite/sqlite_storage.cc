#include "server/storage/sqlite/sqlite_storage.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_move_statements.h"
#include "server/storage/sqlite/sqlite_schema.h"
#include "server/storage/sqlite/sqlite_storage_statements.h"
#include "server/storage/storage_error.h"
#include "spdlog/spdlog.h"

namespace deniable::server {

int64_t SqliteStorage::MovedIdsFilterBytes() {
  absl::MutexLock lock(&write_mu_);
  int64_t bytes = 0;
  for (const HourKey& key : recent_.All()) {
    const RecentHours::Hour* hour = recent_.Find(key);
    if (hour != nullptr && hour->moved != nullptr) bytes += hour->moved->bytes();
  }
  return bytes;
}

absl::StatusOr<ReportId> ColumnReportId(const SqliteStatement& st, int column) {
  const std::string blob = st.ColumnBlob(column);
  ReportId id{};
  if (blob.size() != id.size()) {
    return absl::DataLossError("the database holds a report id that is not 16 bytes");
  }
  std::copy(blob.begin(), blob.end(), id.begin());
  return id;
}

SqliteStorage::CheckpointCounts SqliteStorage::Checkpoints() {
  absl::MutexLock lock(&write_mu_);
  CheckpointCounts counts;
  if (database_wal_ != nullptr) {
    const WalCheckpointer::Counts c = database_wal_->counts();
    counts.attempts = c.attempts;
    counts.restarted = c.restarted;
    counts.busy = c.busy;
    counts.passive = c.passive;
    counts.largest_wal_pages = c.largest_wal_pages;
    counts.largest_commit_pages = c.largest_commit_pages;
  }
  // keyed_wal_ is set once at open; its largest WAL is an atomic (no move_mu_, which a move
  // holds for long).
  const WalCheckpointer* keyed = ABSL_TS_UNCHECKED_READ(keyed_wal_).get();
  if (keyed != nullptr) counts.largest_keyed_wal_pages = keyed->largest_wal_pages();
  return counts;
}

SqliteStorage::~SqliteStorage() {
  {
    absl::MutexLock wlock(&write_mu_);
    stop_ = true;
  }
  if (mover_.joinable()) mover_.join();
  {
    absl::MutexLock mlock(&move_mu_);
    move_.reset();
    keyed_wal_.reset();  // its WAL hook goes before the connection
    sqlite3_close(move_db_);
    sqlite3_close(keyed_db_);
  }
  absl::MutexLock wlock(&write_mu_);
  absl::MutexLock rlock(&read_mu_);
  write_.reset();
  read_.reset();
  database_wal_.reset();
  sqlite3_close(write_db_);
  sqlite3_close(read_db_);
  sqlite3_close(keyed_lookup_db_);
  // Last, once SQLite has closed the files.
  keyed_lock_.reset();
  lock_.reset();
}

absl::StatusOr<StoredMetric> SqliteStorage::CreateMetric(StoredMetric metric) {
  absl::MutexLock lock(&write_mu_);
  if (metric.designs.size() != 1) {
    return absl::InvalidArgumentError("a new metric must have exactly one design");
  }
  DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
  auto body = [&]() -> absl::Status {
    write_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    write_->insert_metric.BindText(1, metric.name);
    write_->insert_metric.BindText(2, metric.description);
    write_->insert_metric.BindInt64(3, metric.created_time_seconds);
    write_->insert_metric.BindInt64(4, metric.time_precision_seconds);
    write_->insert_metric.BindInt64(5, metric.min_reports);
    write_->insert_metric.BindInt64(6, metric.reporting_period_seconds);
    write_->insert_metric.BindInt64(7, metric.randomization);
    write_->insert_metric.BindText(8, JoinCategories(metric.categories));
    write_->insert_metric.BindInt64(9, metric.retention_days);
    write_->insert_metric.BindInt64(10, metric.retention_policy);
    write_->insert_metric.BindInt64(11, metric.window_firsts_off ? 1 : 0);
    write_->insert_metric.BindInt64(12, metric.reporting_once ? 1 : 0);
    if (absl::Status s = write_->insert_metric.Run(); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::AlreadyExistsError(
            absl::StrCat("metric \"", metric.name, "\" already exists"));
      }
      return s;
    }
    metric.id = sqlite3_last_insert_rowid(write_db_);
    DENIABLE_RETURN_IF_ERROR(InsertDesign(metric.id, metric.designs.front()));
    return write_->commit.Run();
  };
  if (absl::Status s = body(); !s.ok()) {
    (void)write_->rollback.Run();
    return s;
  }
  return metric;
}

absl::Status SqliteStorage::InsertDesign(int64_t metric_id, const StoredDesign& d) {
  SqliteStatement& st = write_->insert_design;
  st.BindInt64(1, metric_id);
  st.BindInt64(2, d.version);
  st.BindBlob(3, d.parameters.data(), static_cast<int>(d.parameters.size()));
  st.BindDouble(4, d.a);
  st.BindDouble(5, d.b);
  st.BindInt64(6, d.created_time_seconds);
  return st.Run();
}

absl::StatusOr<StoredMetric> SqliteStorage::AddDesignVersion(absl::string_view name,
                                                             StoredDesign design) {
  DENIABLE_ASSIGN_OR_RETURN(StoredMetric metric, GetMetric(name));
  {
    absl::MutexLock lock(&write_mu_);
    const uint32_t next = metric.designs.back().version + 1;
    if (design.version != next) {
      return absl::FailedPreconditionError(
          absl::StrCat("metric \"", name, "\": next version is ", next, ", not ", design.version));
    }
    if (absl::Status s = InsertDesign(metric.id, design); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "metric \"", name, "\": version ", design.version, " was added concurrently"));
      }
      return s;
    }
  }
  metric.designs.push_back(std::move(design));
  return metric;
}

absl::Status SqliteStorage::Health() {
  DENIABLE_RETURN_IF_ERROR(FileHealth());
  absl::Status failure;
  {
    absl::MutexLock lock(&health_mu_);
    failure = write_failure_;
  }
  if (failure.ok()) return absl::OkStatus();
  if (IsDiskFull(failure)) {
    // Has space come back? A real commit says (a check of free blocks would not: a quota, the
    // WAL's reserved pages, root's reserve). One small transaction a call, only while failing.
    absl::MutexLock lock(&write_mu_);
    const absl::Status probe =
        RunInTransaction([&]() ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::Status {
          // A row in and out again: the page is written (an UPDATE to the same value is not).
          return SqliteExec(write_db_,
                            "INSERT INTO keyed_file(pair_id) VALUES(x''); DELETE FROM keyed_file "
                            "WHERE rowid = last_insert_rowid()");
        });
    NoteWrite(probe);
    if (probe.ok()) return absl::OkStatus();
  }
  return absl::Status(failure.code(),
                      absl::StrCat("storage: the last write failed and none has succeeded since (",
                                   failure.message(), "); not serving until a write succeeds"));
}

void SqliteStorage::NoteWrite(const absl::Status& status) {
  if (status.ok()) {
    if (!write_failed_.load(std::memory_order_relaxed)) return;
    absl::MutexLock lock(&health_mu_);
    write_failure_ = absl::OkStatus();
    write_failed_.store(false, std::memory_order_relaxed);
    return;
  }
  // Only the failures that every write meets until someone acts: a full disk, a damaged file.
  if (!IsDiskFull(status) && status.code() != absl::StatusCode::kDataLoss) return;
  absl::MutexLock lock(&health_mu_);
  write_failure_ = status;
  write_failed_.store(true, std::memory_order_relaxed);
}

absl::Status SqliteStorage::FileHealth() {
  struct stat st {};
  for (const auto& [path, device, inode] : {std::tuple(&keyed_path_, keyed_device_, keyed_inode_),
                                            std::tuple(&path_, file_device_, file_inode_)}) {
    if (stat(path->c_str(), &st) != 0) {
      return absl::UnavailableError(absl::StrCat(
          "storage: the database file \"", *path, "\" was deleted while the server runs (",
          std::strerror(errno), "); nothing more is acknowledged: restore the file and restart"));
    }
    if (static_cast<uint64_t>(st.st_dev) != device || static_cast<uint64_t>(st.st_ino) != inode) {
      return absl::UnavailableError(
          absl::StrCat("storage: the database file \"", *path,
                       "\" was replaced by another file while the server runs; nothing more is "
                       "acknowledged: restart the server"));
    }
  }
  if ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0) {
    return absl::UnavailableError(absl::StrFormat(
        "storage: the database file \"%s\" is read-only (mode %04o); nothing is acknowledged "
        "until it is writable again",
        path_, st.st_mode & 07777));
  }
  struct statvfs fs {};
  if (statvfs(path_.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0) {
    return absl::UnavailableError(
        absl::StrCat("storage: the file system of \"", path_,
                     "\" is read-only; nothing is acknowledged until it is writable again"));
  }
  return absl::OkStatus();
}

absl::Status SqliteStorage::RunInTransaction(const std::function<absl::Status()>& body) {
  DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
  absl::Status s = body();
  if (s.ok()) s = write_->commit.Run();
  if (!s.ok() && !sqlite3_get_autocommit(write_db_)) (void)write_->rollback.Run();
  return s;
}

int64_t SqliteStorage::RecentReportCount() {
  absl::MutexLock lock(&write_mu_);
  return recent_.size();
}

}  // namespace deniable::server
