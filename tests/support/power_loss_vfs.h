// An SQLite VFS for crash-consistency tests: it keeps, for every file it opened, what was written
// since that file's last xSync, and a simulated power loss drops all of it. The model is leveldb's
// FaultInjectionTestEnv (db/fault_injection_test.cc), for files written in place: before each
// write (and truncate) over bytes the file had at its last sync, their synced content is kept in
// memory (an undo record); xSync forgets the records and takes the file's size as its synced
// size. Restore(), with every connection closed, writes the records back newest first and
// truncates each file to its synced size, so the database, its -wal, the keyed reports file and
// its -wal are exactly what their last syncs made durable. A file created and never synced is
// deleted; every "-shm" beside a tracked file is deleted (shared memory is lost with the power;
// SQLite rebuilds it from the WAL).
//
// Power loss: CrashAtSync(k) loses the power at the k-th sync from then on (that sync does not
// happen), CrashNow() at once. From then until Restore() every write, truncate, sync and delete
// fails (SQLITE_IOERR_*), as on a machine without power: nothing more reaches the files, and the
// storage's operations fail, unacknowledged. Reads still see what was written (the page cache
// of a process that does not know yet).
//
// Not modeled: torn (partial) writes of a page; deletes and renames are durable at once (a
// created, never synced file is undone, but an unlink whose directory was not synced is not
// brought back). The real xSync is not called (durability is what this VFS models), so tests
// run at memory speed.
//
// A failing disk: FailSyncs(path) makes every sync of `path` fail (SQLITE_IOERR_FSYNC, as an
// fsync that returns EIO) and make nothing durable, until ClearFailedSyncs(); the power stays on.
//
// A full disk: FullAt(path, bytes) makes every write to `path` that reaches past `bytes` fail with
// SQLITE_FULL (as a disk with no free block would), until ClearFull().
//
// Registered as SQLite's default VFS by Install(), so SqliteStorage uses it without a hook. For
// tests only; thread-safe.
#ifndef DENIABLE_TESTS_SUPPORT_POWER_LOSS_VFS_H_
#define DENIABLE_TESTS_SUPPORT_POWER_LOSS_VFS_H_

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace deniable::testing {

class PowerLossVfs {
 public:
  // Installs the VFS as SQLite's default (once per process) and returns it.
  static PowerLossVfs& Install() {
    static PowerLossVfs* const self = [] {
      sqlite3_initialize();
      auto* vfs = new PowerLossVfs();
      vfs->real_ = sqlite3_vfs_find(nullptr);
      vfs->vfs_ = *vfs->real_;
      vfs->vfs_.zName = "deniable-power-loss";
      vfs->vfs_.szOsFile = static_cast<int>(sizeof(File)) + vfs->real_->szOsFile;
      vfs->vfs_.pAppData = vfs;
      vfs->vfs_.xOpen = &Open;
      vfs->vfs_.xDelete = &Delete;
      vfs->vfs_.pNext = nullptr;
      sqlite3_vfs_register(&vfs->vfs_, 1);
      return vfs;
    }();
    return *self;
  }

  // Loses the power at the k-th xSync from now (k >= 1; 0 disarms).
  void CrashAtSync(int64_t k) {
    std::lock_guard<std::mutex> l(mu_);
    countdown_ = k;
  }
  // Loses the power now (if not lost already).
  void CrashNow() {
    std::lock_guard<std::mutex> l(mu_);
    LoseLocked();
  }
  bool crashed() {
    std::lock_guard<std::mutex> l(mu_);
    return crashed_;
  }
  // Power losses so far.
  int64_t power_losses() {
    std::lock_guard<std::mutex> l(mu_);
    return power_losses_;
  }
  // Completed syncs of the file `path` (all its lives: a deleted and re-created -wal goes on
  // counting).
  int64_t Syncs(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = syncs_.find(Normal(path));
    return it == syncs_.end() ? 0 : it->second;
  }
  // Completed syncs of every file.
  int64_t TotalSyncs() {
    std::lock_guard<std::mutex> l(mu_);
    return total_syncs_;
  }
  // Writes to `path` past `bytes` fail with SQLITE_FULL from now on (see above).
  void FullAt(const std::string& path, int64_t bytes) {
    std::lock_guard<std::mutex> l(mu_);
    full_at_[Normal(path)] = bytes;
  }
  void ClearFull() {
    std::lock_guard<std::mutex> l(mu_);
    full_at_.clear();
  }
  // Every sync of `path` fails from now on, making nothing durable (see above).
  void FailSyncs(const std::string& path) {
    std::lock_guard<std::mutex> l(mu_);
    failing_syncs_.insert(Normal(path));
  }
  void ClearFailedSyncs() {
    std::lock_guard<std::mutex> l(mu_);
    failing_syncs_.clear();
  }
  // Files open through the VFS now.
  int open_files() {
    std::lock_guard<std::mutex> l(mu_);
    return open_files_;
  }

  // Brings every tracked file back to its content at its last sync (see above) and turns the
  // power on again. Every connection must be closed (returns false, changing nothing, if a file
  // is still open or a POSIX call fails).
  bool Restore() {
    std::lock_guard<std::mutex> l(mu_);
    if (open_files_ != 0) return false;
    bool ok = true;
    for (auto& [path, image] : images_) {
      ::unlink((path + "-shm").c_str());
      if (!image.synced_exists) {
        ::unlink(path.c_str());
        continue;
      }
      const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
      if (fd < 0) {
        ok = false;
        continue;
      }
      for (auto it = image.undo.rbegin(); it != image.undo.rend(); ++it) {
        if (::pwrite(fd, it->second.data(), it->second.size(), it->first) !=
            static_cast<ssize_t>(it->second.size())) {
          ok = false;
        }
      }
      if (::ftruncate(fd, image.synced_size) != 0) ok = false;
      ::close(fd);
      image.undo.clear();
    }
    for (auto it = images_.begin(); it != images_.end();) {
      it = it->second.synced_exists ? std::next(it) : images_.erase(it);
    }
    crashed_ = false;
    countdown_ = 0;
    return ok;
  }

 private:
  // A file's durable state: whether it exists and its size at its last sync, and the synced
  // bytes written over since (offset, old content), oldest first.
  struct Image {
    bool synced_exists = false;
    int64_t synced_size = 0;
    std::vector<std::pair<int64_t, std::string>> undo;
  };
  struct File {
    sqlite3_file base;
    sqlite3_file* real;
    PowerLossVfs* vfs;
    std::string* path;  // nullptr: a temporary file, not tracked
  };

  PowerLossVfs() = default;

  // A path with each run of '/' made one, as SQLite spells the names it opens: the paths tests
  // pass ("/tmp/" + "/x.db") then name the same file (before, "//" matched nothing, and the
  // loss window of durability=normal was checked against a WAL sync count that stayed 0).
  static std::string Normal(const std::string& path) {
    std::string out;
    for (char c : path) {
      if (c != '/' || out.empty() || out.back() != '/') out.push_back(c);
    }
    return out;
  }

  void LoseLocked() {
    if (crashed_) return;
    crashed_ = true;
    countdown_ = 0;
    ++power_losses_;
  }
  static File* F(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
  static sqlite3_file* R(sqlite3_file* f) { return F(f)->real; }

  // Keeps the synced content of [offset, offset + n) that a write or truncate will change.
  void SaveLocked(File* f, int64_t offset, int64_t n) {
    Image& image = images_[*f->path];
    if (!image.synced_exists || offset >= image.synced_size) return;
    n = std::min(n, image.synced_size - offset);
    std::string old(static_cast<size_t>(n), '\0');
    (void)f->real->pMethods->xRead(f->real, old.data(), static_cast<int>(n), offset);
    image.undo.emplace_back(offset, std::move(old));
  }

  static int Open(sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags,
                  int* out_flags) {
    auto* self = static_cast<PowerLossVfs*>(vfs->pAppData);
    File* f = F(file);
    f->real = reinterpret_cast<sqlite3_file*>(f + 1);
    f->vfs = self;
    f->path = nullptr;
    struct stat st;
    const bool existed = name != nullptr && ::stat(name, &st) == 0;
    const int rc = self->real_->xOpen(self->real_, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK || f->real->pMethods == nullptr) {
      f->base.pMethods = nullptr;
      return rc;
    }
    {
      std::lock_guard<std::mutex> l(self->mu_);
      ++self->open_files_;
      if (name != nullptr && (flags & SQLITE_OPEN_DELETEONCLOSE) == 0) {
        f->path = new std::string(Normal(name));
        if (!self->images_.contains(*f->path)) {
          // First seen: what is on disk now counts as synced (created by this open: nothing).
          Image& image = self->images_[*f->path];
          image.synced_exists = existed;
          image.synced_size = existed ? static_cast<int64_t>(st.st_size) : 0;
        }
      }
    }
    f->base.pMethods = &Methods();
    return SQLITE_OK;
  }

  static int Delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
    auto* self = static_cast<PowerLossVfs*>(vfs->pAppData);
    std::lock_guard<std::mutex> l(self->mu_);
    if (self->crashed_) return SQLITE_IOERR_DELETE;
    const int rc = self->real_->xDelete(self->real_, name, sync_dir);
    if (rc == SQLITE_OK || rc == SQLITE_IOERR_DELETE_NOENT) {
      self->images_.erase(Normal(name));  // a file opened at this path again is new
    }
    return rc;
  }

  static const sqlite3_io_methods& Methods() {
    static const sqlite3_io_methods methods = [] {
      sqlite3_io_methods m{};
      m.iVersion = 3;
      m.xClose = [](sqlite3_file* x) {
        File* f = F(x);
        const int rc = f->real->pMethods->xClose(f->real);
        std::lock_guard<std::mutex> l(f->vfs->mu_);
        --f->vfs->open_files_;
        delete f->path;
        f->path = nullptr;
        return rc;
      };
      m.xRead = [](sqlite3_file* x, void* b, int n, sqlite3_int64 o) {
        return R(x)->pMethods->xRead(R(x), b, n, o);
      };
      m.xWrite = [](sqlite3_file* x, const void* b, int n, sqlite3_int64 o) {
        File* f = F(x);
        std::lock_guard<std::mutex> l(f->vfs->mu_);
        if (f->vfs->crashed_) return SQLITE_IOERR_WRITE;
        if (f->path != nullptr) {
          auto full = f->vfs->full_at_.find(*f->path);
          if (full != f->vfs->full_at_.end() && o + n > full->second) return SQLITE_FULL;
        }
        if (f->path != nullptr) f->vfs->SaveLocked(f, o, n);
        return f->real->pMethods->xWrite(f->real, b, n, o);
      };
      m.xTruncate = [](sqlite3_file* x, sqlite3_int64 s) {
        File* f = F(x);
        std::lock_guard<std::mutex> l(f->vfs->mu_);
        if (f->vfs->crashed_) return SQLITE_IOERR_TRUNCATE;
        if (f->path != nullptr) f->vfs->SaveLocked(f, s, INT64_MAX / 2);
        return f->real->pMethods->xTruncate(f->real, s);
      };
      m.xSync = [](sqlite3_file* x, int /*sync_flags*/) {
        File* f = F(x);
        PowerLossVfs* vfs = f->vfs;
        std::lock_guard<std::mutex> l(vfs->mu_);
        if (vfs->crashed_) return SQLITE_IOERR_FSYNC;
        if (vfs->countdown_ > 0 && --vfs->countdown_ == 0) {
          vfs->LoseLocked();
          return SQLITE_IOERR_FSYNC;
        }
        if (f->path != nullptr && vfs->failing_syncs_.contains(*f->path)) {
          return SQLITE_IOERR_FSYNC;
        }
        ++vfs->total_syncs_;
        if (f->path == nullptr) return SQLITE_OK;
        Image& image = vfs->images_[*f->path];
        sqlite3_int64 size = 0;
        const int rc = f->real->pMethods->xFileSize(f->real, &size);
        if (rc != SQLITE_OK) return rc;
        image.synced_exists = true;
        image.synced_size = size;
        image.undo.clear();
        ++vfs->syncs_[*f->path];
        return SQLITE_OK;
      };
      m.xFileSize = [](sqlite3_file* x, sqlite3_int64* s) {
        return R(x)->pMethods->xFileSize(R(x), s);
      };
      m.xLock = [](sqlite3_file* x, int l) { return R(x)->pMethods->xLock(R(x), l); };
      m.xUnlock = [](sqlite3_file* x, int l) { return R(x)->pMethods->xUnlock(R(x), l); };
      m.xCheckReservedLock = [](sqlite3_file* x, int* r) {
        return R(x)->pMethods->xCheckReservedLock(R(x), r);
      };
      m.xFileControl = [](sqlite3_file* x, int op, void* a) {
        // A size hint grows the file outside xWrite and xTruncate: not needed, refused.
        if (op == SQLITE_FCNTL_SIZE_HINT || op == SQLITE_FCNTL_CHUNK_SIZE) return SQLITE_NOTFOUND;
        return R(x)->pMethods->xFileControl(R(x), op, a);
      };
      m.xSectorSize = [](sqlite3_file* x) { return R(x)->pMethods->xSectorSize(R(x)); };
      m.xDeviceCharacteristics = [](sqlite3_file* x) {
        return R(x)->pMethods->xDeviceCharacteristics(R(x));
      };
      m.xShmMap = [](sqlite3_file* x, int p, int s, int e, void volatile** o) {
        return R(x)->pMethods->xShmMap(R(x), p, s, e, o);
      };
      m.xShmLock = [](sqlite3_file* x, int o, int n, int lock_flags) {
        return R(x)->pMethods->xShmLock(R(x), o, n, lock_flags);
      };
      m.xShmBarrier = [](sqlite3_file* x) { R(x)->pMethods->xShmBarrier(R(x)); };
      m.xShmUnmap = [](sqlite3_file* x, int d) { return R(x)->pMethods->xShmUnmap(R(x), d); };
      // No memory-mapped reads: every read goes through xRead.
      m.xFetch = [](sqlite3_file*, sqlite3_int64, int, void** p) {
        *p = nullptr;
        return SQLITE_OK;
      };
      m.xUnfetch = [](sqlite3_file*, sqlite3_int64, void*) { return SQLITE_OK; };
      return m;
    }();
    return methods;
  }

  sqlite3_vfs* real_ = nullptr;
  sqlite3_vfs vfs_{};
  std::mutex mu_;
  std::map<std::string, Image> images_;
  std::map<std::string, int64_t> syncs_;
  std::map<std::string, int64_t> full_at_;
  std::set<std::string> failing_syncs_;
  int64_t countdown_ = 0;
  bool crashed_ = false;
  int64_t power_losses_ = 0;
  int64_t total_syncs_ = 0;
  int open_files_ = 0;
};

}  // namespace deniable::testing

#endif  // DENIABLE_TESTS_SUPPORT_POWER_LOSS_VFS_H_
