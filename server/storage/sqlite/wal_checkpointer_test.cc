// WalCheckpointer on a real SQLite file in WAL mode: a commit past the page limit restarts the
// WAL; a reader holding a snapshot makes the RESTART busy, then PASSIVE checkpoints follow until
// the WAL has grown by a quarter of the limit; Sync() under kNormal fsyncs the WAL once per
// commits since the last (counted by a VFS that wraps the default one), and never under kFull.
#include "server/storage/sqlite/wal_checkpointer.h"

#include <sqlite3.h>

#include <map>
#include <mutex>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace wal_checkpointer_test {

using testing_util::TempDbPath;

// The default VFS under the name "deniable-sync-count", counting each file's xSync calls: the
// file objects are the default VFS's own; only xSync goes through SyncCounter::Sync first.
class SyncCounter {
 public:
  static SyncCounter& Install() {
    static SyncCounter* const self = [] {
      sqlite3_initialize();
      auto* counter = new SyncCounter();
      counter->real_ = sqlite3_vfs_find(nullptr);
      counter->vfs_ = *counter->real_;
      counter->vfs_.zName = "deniable-sync-count";
      counter->vfs_.pAppData = counter;
      counter->vfs_.xOpen = &Open;
      counter->vfs_.pNext = nullptr;
      sqlite3_vfs_register(&counter->vfs_, /*makeDflt=*/0);
      return counter;
    }();
    return *self;
  }
  // The xSync calls so far on files whose name ends with `suffix`.
  int Syncs(const std::string& suffix) {
    std::lock_guard<std::mutex> l(mu_);
    int n = 0;
    for (const auto& [file, name] : names_) {
      if (absl::EndsWith(name, suffix)) n += syncs_[file];
    }
    return n;
  }
  const char* name() const { return vfs_.zName; }

 private:
  static int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
                  int* out_flags) {
    auto* self = static_cast<SyncCounter*>(vfs->pAppData);
    const int rc = self->real_->xOpen(self->real_, name, file, flags, out_flags);
    if (rc != SQLITE_OK || file->pMethods == nullptr) return rc;
    std::lock_guard<std::mutex> l(self->mu_);
    auto [methods, added] = self->methods_.try_emplace(file->pMethods, *file->pMethods);
    if (added) methods->second.xSync = &Sync;
    self->real_sync_[&methods->second] = file->pMethods->xSync;
    file->pMethods = &methods->second;
    self->names_[file] = name == nullptr ? "" : name;
    self->syncs_[file] = 0;
    return rc;
  }
  static int Sync(sqlite3_file* file, int flags) {
    SyncCounter& self = Install();
    int (*real)(sqlite3_file*, int) = nullptr;
    {
      std::lock_guard<std::mutex> l(self.mu_);
      ++self.syncs_[file];
      real = self.real_sync_[file->pMethods];
    }
    return real(file, flags);
  }

  sqlite3_vfs* real_ = nullptr;
  sqlite3_vfs vfs_{};
  std::mutex mu_;
  // The default VFS's io methods, copied with xSync replaced, and the xSync each replaced.
  std::map<const sqlite3_io_methods*, sqlite3_io_methods> methods_;
  std::map<const sqlite3_io_methods*, int (*)(sqlite3_file*, int)> real_sync_;
  std::map<const sqlite3_file*, std::string> names_;
  std::map<const sqlite3_file*, int> syncs_;
};

// A connection to a new file in WAL mode with `synchronous` (FULL or NORMAL), through the
// counting VFS, with a table t(x BLOB).
sqlite3* OpenWal(const std::string& path, const char* synchronous) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                            SyncCounter::Install().name()),
            SQLITE_OK);
  const std::string setup = absl::StrCat(
      "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0; PRAGMA synchronous=", synchronous,
      "; CREATE TABLE IF NOT EXISTS t(x BLOB)");
  EXPECT_EQ(sqlite3_exec(db, setup.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  return db;
}

// One transaction inserting a blob of `bytes` bytes (about bytes / 4096 WAL pages).
void Insert(sqlite3* db, int bytes) {
  const std::string sql = absl::StrCat("INSERT INTO t(x) VALUES(zeroblob(", bytes, "))");
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
}

WalCheckpointer::Options InCommit(int pages, Durability durability = Durability::kFull) {
  return {.checkpoint_pages = pages,
          .restart_wait_tries = 1,
          .busy_timeout_millis = 5000,
          .durability = durability,
          .when = WalCheckpointer::When::kInCommit};
}

TEST(WalCheckpointerTest, ACommitPastThePageLimitRestartsTheWal) {
  const std::string path = TempDbPath("checkpointer_restart");
  sqlite3* db = OpenWal(path, "FULL");
  {
    WalCheckpointer wal(db, path, InCommit(40));
    Insert(db, 1000);  // a page or two: below the limit
    EXPECT_EQ(wal.counts().attempts, 0);
    EXPECT_GT(wal.wal_pages(), 0);
    EXPECT_LT(wal.wal_pages(), 40);
    Insert(db, 64 * 4096);  // about 64 pages: past it
    WalCheckpointer::Counts counts = wal.counts();
    EXPECT_EQ(counts.attempts, 1);
    EXPECT_EQ(counts.restarted, 1);
    EXPECT_EQ(counts.busy, 0);
    EXPECT_EQ(counts.passive, 0);
    EXPECT_GE(counts.largest_wal_pages, 64);
    EXPECT_GE(counts.largest_commit_pages, 64);
    EXPECT_EQ(wal.largest_wal_pages(), counts.largest_wal_pages);
    EXPECT_EQ(wal.wal_pages(), 0);  // restarted: the next commit writes from the beginning
    Insert(db, 1000);
    EXPECT_EQ(wal.wal_pages(), wal.last_commit_pages());
    EXPECT_LT(wal.wal_pages(), 40);
    EXPECT_EQ(wal.commits(), 3);
  }
  sqlite3_close(db);
}

TEST(WalCheckpointerTest, AReaderHoldingASnapshotMakesItBusyThenPassive) {
  const std::string path = TempDbPath("checkpointer_busy");
  sqlite3* db = OpenWal(path, "FULL");
  sqlite3* reader = OpenWal(path, "FULL");
  {
    WalCheckpointer wal(db, path, InCommit(40));
    Insert(db, 1000);
    // The reader's snapshot: a read transaction that has read the table.
    ASSERT_EQ(sqlite3_exec(reader, "BEGIN; SELECT count(*) FROM t", nullptr, nullptr, nullptr),
              SQLITE_OK);
    Insert(db, 64 * 4096);
    WalCheckpointer::Counts counts = wal.counts();
    EXPECT_EQ(counts.attempts, 1);
    EXPECT_EQ(counts.restarted, 0);
    EXPECT_EQ(counts.busy, 1);
    const int after_busy = wal.wal_pages();
    EXPECT_GE(after_busy, 64);  // not restarted
    // Below the busy size + 40 / 4 pages: PASSIVE, no new wait.
    Insert(db, 1000);
    counts = wal.counts();
    EXPECT_EQ(counts.attempts, 1);
    EXPECT_EQ(counts.passive, 1);
    EXPECT_LT(wal.wal_pages(), after_busy + 10);
    // The reader gone, a commit past the busy size + 10 pages restarts the WAL.
    ASSERT_EQ(sqlite3_exec(reader, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
    Insert(db, 16 * 4096);
    counts = wal.counts();
    EXPECT_EQ(counts.attempts, 2);
    EXPECT_EQ(counts.restarted, 1);
    EXPECT_EQ(counts.busy, 1);
    EXPECT_EQ(counts.passive, 1);
    EXPECT_EQ(wal.wal_pages(), 0);
  }
  sqlite3_close(reader);
  sqlite3_close(db);
}

TEST(WalCheckpointerTest, AfterTransactionCheckpointsOnlyWhenCalled) {
  const std::string path = TempDbPath("checkpointer_after");
  sqlite3* db = OpenWal(path, "FULL");
  {
    WalCheckpointer::Options options = InCommit(40);
    options.when = WalCheckpointer::When::kAfterTransaction;
    WalCheckpointer wal(db, path, options);
    Insert(db, 1000);
    wal.Checkpoint();  // below the limit: nothing
    EXPECT_EQ(wal.counts().attempts, 0);
    Insert(db, 64 * 4096);
    EXPECT_EQ(wal.counts().attempts, 0);  // the commit itself does not checkpoint
    EXPECT_GE(wal.wal_pages(), 64);
    wal.Checkpoint();
    EXPECT_EQ(wal.counts().attempts, 1);
    EXPECT_EQ(wal.counts().restarted, 1);
    EXPECT_EQ(wal.wal_pages(), 0);
  }
  sqlite3_close(db);
}

TEST(WalCheckpointerTest, SyncAfterACommitUnderNormalFsyncsTheWalOnceAndClearsTheFlag) {
  const std::string path = TempDbPath("checkpointer_sync");
  sqlite3* db = OpenWal(path, "NORMAL");
  SyncCounter& counter = SyncCounter::Install();
  {
    WalCheckpointer wal(db, path, InCommit(10000, Durability::kNormal));
    EXPECT_TRUE(wal.unsynced());  // at first: an earlier process's commits
    Insert(db, 1000);
    EXPECT_TRUE(wal.unsynced());
    const int before = counter.Syncs("-wal");
    ASSERT_TRUE(wal.Sync().ok());
    EXPECT_FALSE(wal.unsynced());
    EXPECT_EQ(counter.Syncs("-wal"), before + 1);
    ASSERT_TRUE(wal.Sync().ok());  // no commit since: no fsync
    EXPECT_EQ(counter.Syncs("-wal"), before + 1);
    Insert(db, 1000);
    EXPECT_TRUE(wal.unsynced());
    EXPECT_EQ(counter.Syncs("-wal"), before + 1);  // NORMAL: the commit did not sync
    ASSERT_TRUE(wal.Sync().ok());
    EXPECT_FALSE(wal.unsynced());
    EXPECT_EQ(counter.Syncs("-wal"), before + 2);
  }
  sqlite3_close(db);
}

TEST(WalCheckpointerTest, SyncUnderFullIsANoOp) {
  const std::string path = TempDbPath("checkpointer_sync_full");
  sqlite3* db = OpenWal(path, "FULL");
  SyncCounter& counter = SyncCounter::Install();
  {
    WalCheckpointer wal(db, path, InCommit(10000, Durability::kFull));
    Insert(db, 1000);
    const int before = counter.Syncs("-wal");
    EXPECT_GT(before, 0);  // FULL: the commit synced the WAL itself
    ASSERT_TRUE(wal.Sync().ok());
    EXPECT_EQ(counter.Syncs("-wal"), before);
    EXPECT_TRUE(wal.unsynced());  // never cleared under kFull
  }
  sqlite3_close(db);
}

}  // namespace wal_checkpointer_test
}  // namespace
}  // namespace deniable::server
