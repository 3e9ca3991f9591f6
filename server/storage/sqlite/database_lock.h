// The one-writer lock of a SQLite database, taken on the file itself, not on its name.
//
// Deduplication of recent reports lives in the writer's memory (recent_hours.h), so two writers
// on one file would each accept the same report once. A lock keyed by the path ("<db>.lock", as
// before) let a second writer in through a hard link, a symlink, a bind mount or another spelling
// of the path ("dir/../db"). This lock is an flock(2) on the database file, so it follows the
// file's identity (device and inode) whatever name opened it:
//
//   absl::StatusOr<DatabaseLock> lock = DatabaseLock::Acquire("/data/deniable.db");
//   if (!lock.ok()) return lock.status();  // FAILED_PRECONDITION: another writer has it
//   ... open the database with SQLite; destroy the lock only after SQLite has closed it ...
//
// Why flock on the database file does not disturb SQLite: SQLite's unix VFS locks with POSIX
// advisory record locks (fcntl F_SETLK on bytes at 1 GiB, and on the -shm file). On Linux, flock
// locks and POSIX record locks are separate lock kinds that never conflict with each other
// (flock(2), "NOTES"), so holding LOCK_EX on the file leaves every SQLite lock, ours and other
// processes' (a read-only backup, the sqlite3 shell), as it was. The one interaction to avoid is
// POSIX's rule that closing *any* descriptor of a file drops all of the process's record locks on
// it (SQLite's howtocorrupt.html, section 2.2): so the descriptor is closed only when no SQLite
// connection of this process has the file open (after SQLite closed it, or when the lock was
// refused: a process-wide table of held files refuses a second Acquire of a held file before
// opening it). On NFS, Linux emulates flock with whole-file POSIX locks; SQLite's WAL mode does not
// work over network file systems anyway, and the collector's database must be on a local disk
// (docs/deploy.md).
//
// For servers of older versions, which locked "<db>.lock", Acquire also takes that lock and
// writes its pid there, so an old and a new server on the same path exclude each other too.
//
// Thread-safe: Acquire may be called from any thread. A DatabaseLock is movable, not copyable.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_DATABASE_LOCK_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_DATABASE_LOCK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace deniable::server {

class DatabaseLock {
 public:
  // Takes the exclusive writer lock of the database file at `db_path` (created, empty, if it does
  // not exist; an empty file is an empty SQLite database). The lock lasts until the DatabaseLock
  // is destroyed, and the kernel releases it when the process dies (a SIGKILL leaves no stale
  // lock). Errors: FAILED_PRECONDITION "database \"<db_path>\" is in use by another process (pid
  // N, ...)" when another process, or another DatabaseLock of this one, holds the file under any
  // name (N is "unknown" when /proc/locks does not show the holder); UNAVAILABLE if the file or
  // the legacy lock file cannot be opened or locked for another reason.
  static absl::StatusOr<DatabaseLock> Acquire(const std::string& db_path);

  DatabaseLock(DatabaseLock&& other) noexcept;
  DatabaseLock& operator=(DatabaseLock&& other) noexcept;
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;
  // Releases the lock. REQUIRES: no SQLite connection of this process has the file open.
  ~DatabaseLock();

  // Device and inode of the locked file.
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

 private:
  DatabaseLock() = default;
  void Release();

  int fd_ = -1;         // the database file, flocked
  int legacy_fd_ = -1;  // "<db>.lock", flocked
  uint64_t device_ = 0;
  uint64_t inode_ = 0;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_DATABASE_LOCK_H_
