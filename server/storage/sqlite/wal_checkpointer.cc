#include "server/storage/sqlite/wal_checkpointer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/storage/sqlite/sqlite_statement.h"

namespace deniable::server {
namespace {

// A busy handler that gives up after `*max_tries` calls, sleeping about 1 ms each.
int BoundedBusy(void* max_tries, int calls) {
  if (calls >= *static_cast<int*>(max_tries)) return 0;
  sqlite3_sleep(1);
  return 1;
}

// An fsync of the WAL of `db`'s main database (nothing when it has none open). `what` names the
// file in the error.
absl::Status SyncWal(sqlite3* db, const std::string& what) {
  sqlite3_file* wal = nullptr;
  int rc = sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &wal);
  if (rc != SQLITE_OK) return SqliteError(db, rc, absl::StrCat("finding the WAL of ", what));
  if (wal == nullptr || wal->pMethods == nullptr) return absl::OkStatus();
  rc = wal->pMethods->xSync(wal, SQLITE_SYNC_NORMAL);
  // The file's own call: the connection's error message knows nothing of it (null db: the
  // code's text, "disk I/O error", where it said "not an error").
  if (rc != SQLITE_OK) return SqliteError(nullptr, rc, absl::StrCat("syncing the WAL of ", what));
  return absl::OkStatus();
}

}  // namespace

WalCheckpointer::WalCheckpointer(sqlite3* db, std::string path, const Options& options)
    : db_(db), path_(std::move(path)), options_(options) {
  sqlite3_wal_hook(db_, &WalCheckpointer::Hook, this);
}

WalCheckpointer::~WalCheckpointer() { sqlite3_wal_hook(db_, nullptr, nullptr); }

int WalCheckpointer::Hook(void* self, sqlite3* /*db*/, const char* /*schema*/, int pages) {
  static_cast<WalCheckpointer*>(self)->OnCommit(pages);
  return SQLITE_OK;  // a failed checkpoint is no failure of the commit
}

void WalCheckpointer::OnCommit(int pages) {
  ++commits_;
  unsynced_ = true;
  // After a restart the WAL starts again at frame 0: a smaller size is one commit's frames.
  const int wrote = pages > last_wal_pages_ ? pages - last_wal_pages_ : pages;
  last_wal_pages_ = pages;
  last_commit_pages_ = wrote;
  if (pages > largest_wal_pages_.load(std::memory_order_relaxed)) {
    largest_wal_pages_.store(pages, std::memory_order_relaxed);
  }
  counts_.largest_commit_pages = std::max<int64_t>(counts_.largest_commit_pages, wrote);
  if (options_.when == When::kInCommit) CheckpointInCommit(pages);
}

void WalCheckpointer::CheckpointInCommit(int pages) {
  if (pages < options_.checkpoint_pages) return;
  if (pages < next_restart_pages_) {
    ++counts_.passive;
    (void)sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    return;
  }
  if (Restart()) {
    next_restart_pages_ = 0;
  } else {
    next_restart_pages_ = pages + std::max(1, options_.checkpoint_pages / 4);
  }
}

// The keyed file's WAL, bounded as the database's is (SqliteOptions::wal_autocheckpoint_pages,
// keyed_wal_autocheckpoint_pages): its readers (appends' lookups, ReportCount) are single
// statements, so a RESTART checkpoint waits little; when one is in the way, the checkpoint copies
// what it can and the restart is tried again after the next transaction.
void WalCheckpointer::Checkpoint() {
  if (options_.when != When::kAfterTransaction) return;
  if (last_wal_pages_ < options_.checkpoint_pages) return;
  (void)Restart();
}

bool WalCheckpointer::Restart() {
  ++counts_.attempts;
  int tries = options_.restart_wait_tries;
  sqlite3_busy_handler(db_, &BoundedBusy, &tries);
  const int rc =
      sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_RESTART, nullptr, nullptr);
  sqlite3_busy_timeout(db_, options_.busy_timeout_millis);
  if (rc != SQLITE_OK) {
    ++counts_.busy;
    return false;
  }
  ++counts_.restarted;
  last_wal_pages_ = 0;  // the next commit writes from the WAL's beginning
  return true;
}

absl::Status WalCheckpointer::Sync() {
  if (options_.durability == Durability::kFull || !unsynced_) return absl::OkStatus();
  if (absl::Status s = SyncWal(db_, path_); !s.ok()) return s;
  unsynced_ = false;
  return absl::OkStatus();
}

WalCheckpointer::Counts WalCheckpointer::counts() const {
  Counts counts = counts_;
  counts.largest_wal_pages = largest_wal_pages_.load(std::memory_order_relaxed);
  return counts;
}

}  // namespace deniable::server
