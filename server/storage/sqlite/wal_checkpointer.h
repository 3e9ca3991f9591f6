// The checkpoints of one SQLite file's WAL, and the fsync of its commits under
// durability=normal: the one piece both of SqliteStorage's writers use, the database's
// (write_db_) and the keyed reports file's (keyed_db_), each with a WalCheckpointer of its own.
//
//   WalCheckpointer wal(db, path, {.checkpoint_pages = 10000, .durability = Durability::kNormal,
//                                  .when = WalCheckpointer::When::kInCommit});
//   ... commits on db ...         // the WAL hook counts them and checkpoints (kInCommit)
//   DENIABLE_RETURN_IF_ERROR(wal.Sync());  // before a commit of the other file relies on them
//
// It installs itself as the connection's WAL hook (sqlite3_wal_hook, replacing SQLite's PASSIVE
// autocheckpoint, which readers can starve: SqliteOptions::wal_autocheckpoint_pages). Once the
// WAL holds checkpoint_pages pages it runs SQLITE_CHECKPOINT_RESTART, which copies the WAL into
// the file and waits (at most restart_wait_tries busy-handler calls, about 1 ms each) until no
// reader reads an older snapshot, so that the next commit writes the WAL from its beginning.
//
// Not thread-safe: every call, and every commit on the connection (the hook runs inside it),
// must hold the file's writer lock, the caller's mutex (SqliteStorage: write_mu_ for the
// database's, move_mu_ for the keyed file's). Only largest_wal_pages() may be called without it.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_WAL_CHECKPOINTER_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_WAL_CHECKPOINTER_H_

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace deniable::server {

// synchronous=FULL (every commit is synced: a committed batch survives a power loss) or NORMAL
// (the WAL is synced at checkpoints and by WalCheckpointer::Sync; docs/storage.md, invariants
// 11-13). SqliteOptions::durability.
enum class Durability { kFull, kNormal };

class WalCheckpointer {
 public:
  // Where the checkpoint runs.
  enum class When {
    // In the WAL hook, after every commit of the connection, whoever makes it (the database's
    // writer). A RESTART that finds a reader in the way copies what it can; PASSIVE checkpoints
    // then follow each commit until the WAL has grown by a quarter of checkpoint_pages, when a
    // RESTART is tried again.
    kInCommit,
    // Only when the owner calls Checkpoint() after a transaction (the keyed file's writer: after
    // each keyed transaction and each transaction of the legacy copy). A RESTART that finds a
    // reader in the way is tried again at the next call that finds the WAL at checkpoint_pages.
    kAfterTransaction,
  };
  struct Options {
    int checkpoint_pages = 10000;    // the WAL's size, in pages, that calls for a checkpoint (>= 1)
    int restart_wait_tries = 200;    // busy-handler calls a RESTART waits for readers (>= 0)
    int busy_timeout_millis = 5000;  // the connection's busy timeout, put back after a RESTART
    Durability durability = Durability::kFull;
    When when = When::kInCommit;
  };
  // What the checkpointer saw since it was constructed. attempts = restarted + busy (RESTART
  // checkpoints run; restarted: the WAL restarts from its beginning; busy: a reader was in the
  // way); passive: PASSIVE checkpoints (kInCommit only); the largest WAL after a commit and the
  // most pages one commit wrote, in pages.
  struct Counts {
    int64_t attempts = 0;
    int64_t restarted = 0;
    int64_t busy = 0;
    int64_t passive = 0;
    int64_t largest_wal_pages = 0;
    int64_t largest_commit_pages = 0;
  };

  // Installs the WAL hook on `db` (the file's writing connection, in WAL mode), replacing any.
  // `path` names the file in Sync()'s errors. `db` must stay open while this lives. The file
  // counts as unsynced at first (what an earlier process committed may not be durable).
  WalCheckpointer(sqlite3* db, std::string path, const Options& options);
  // Removes the hook: destroy it before closing `db`.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // When::kAfterTransaction: a RESTART checkpoint when the WAL after the last commit holds
  // checkpoint_pages pages or more (else nothing). Call it after a transaction's commit, outside
  // any transaction of the connection. No-op under When::kInCommit (the hook checkpoints).
  void Checkpoint();

  // Under Durability::kNormal, makes the file's commits so far durable: an fsync of its WAL,
  // when a commit came since the last Sync() (or since construction). Under kFull every commit
  // is synced already: no-op, OK. Errors: as SqliteError (the fsync's code, e.g. UNAVAILABLE
  // for a full disk, DATA_LOSS for an I/O error), naming the file; the file stays unsynced.
  absl::Status Sync();

  // A commit came since the last Sync() under kNormal (or since construction); under kFull
  // Sync() never clears it.
  bool unsynced() const { return unsynced_; }
  // Commits seen since construction (SqliteStorage raises the database's generation only when
  // it changed since the last raise).
  int64_t commits() const { return commits_; }
  // The WAL's size after the last commit, in pages (0 after a RESTART: the next commit writes
  // from the WAL's beginning).
  int wal_pages() const { return last_wal_pages_; }
  // The pages the last commit wrote to the WAL (a move sizes its next transaction with it).
  int last_commit_pages() const { return last_commit_pages_; }
  int checkpoint_pages() const { return options_.checkpoint_pages; }
  Counts counts() const;
  // The largest WAL after a commit, in pages. Thread-safe (no lock needed).
  int64_t largest_wal_pages() const { return largest_wal_pages_.load(std::memory_order_relaxed); }

 private:
  // sqlite3_wal_hook's callback: OnCommit of `self`.
  static int Hook(void* self, sqlite3* db, const char* schema, int pages);
  // Counts a commit that left the WAL at `pages` pages; under kInCommit, checkpoints.
  void OnCommit(int pages);
  // kInCommit's checkpoint after a commit that left the WAL at `pages` pages.
  void CheckpointInCommit(int pages);
  // A RESTART checkpoint; true when it restarted the WAL.
  bool Restart();

  sqlite3* const db_;
  const std::string path_;
  const Options options_;
  bool unsynced_ = true;
  int64_t commits_ = 0;
  int last_wal_pages_ = 0;
  int last_commit_pages_ = 0;
  // After a RESTART found a reader in the way (kInCommit): no new wait before the WAL reaches
  // this size.
  int next_restart_pages_ = 0;
  Counts counts_;
  std::atomic<int64_t> largest_wal_pages_{0};
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_WAL_CHECKPOINTER_H_
