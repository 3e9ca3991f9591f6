// An SQLite VFS that wraps the default one and, when armed, fails writes with SQLITE_FULL (a full
// disk), syncs with SQLITE_IOERR_FSYNC (an I/O error at commit), or reads of a keyed reports
// file ("...-reports", its WAL included) with SQLITE_CORRUPT (a damaged file). Registered as the
// default VFS, so SqliteStorage picks it up without a hook. For tests only; arm/disarm are
// thread-safe.
#ifndef DENIABLE_TESTS_SUPPORT_FAULT_VFS_H_
#define DENIABLE_TESTS_SUPPORT_FAULT_VFS_H_

#include <sqlite3.h>

#include <atomic>
#include <cstring>

namespace deniable::testing {

enum class Fault { kNone, kDiskFull, kSyncError, kCorruptKeyed };

class FaultVfs {
 public:
  // Installs the VFS as SQLite's default (once per process).
  static void Install() {
    static const bool installed = [] {
      sqlite3_initialize();
      real() = sqlite3_vfs_find(nullptr);
      static sqlite3_vfs vfs = *real();
      vfs.zName = "deniable-fault";
      vfs.szOsFile = static_cast<int>(sizeof(File)) + real()->szOsFile;
      vfs.xOpen = &Open;
      vfs.pNext = nullptr;
      sqlite3_vfs_register(&vfs, 1);
      return true;
    }();
    (void)installed;
  }
  static void Arm(Fault fault) { fault_() = fault; }

 private:
  struct File {
    sqlite3_file base;
    sqlite3_file* real;
    bool keyed;  // a keyed reports file or its WAL
  };
  static sqlite3_vfs*& real() {
    static sqlite3_vfs* vfs = nullptr;
    return vfs;
  }
  static std::atomic<Fault>& fault_() {
    static std::atomic<Fault> f{Fault::kNone};
    return f;
  }
  static sqlite3_file* R(sqlite3_file* f) { return reinterpret_cast<File*>(f)->real; }

  static int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags,
                  int* out_flags) {
    File* f = reinterpret_cast<File*>(file);
    f->real = reinterpret_cast<sqlite3_file*>(f + 1);
    f->keyed = name != nullptr && std::strstr(name, "-reports") != nullptr;
    const int rc = real()->xOpen(real(), name, f->real, flags, out_flags);
    if (rc != SQLITE_OK || f->real->pMethods == nullptr) {
      f->base.pMethods = nullptr;
      return rc;
    }
    static sqlite3_io_methods methods = [] {
      sqlite3_io_methods m{};
      m.iVersion = 3;
      m.xClose = [](sqlite3_file* x) { return R(x)->pMethods->xClose(R(x)); };
      m.xRead = [](sqlite3_file* x, void* b, int n, sqlite3_int64 o) {
        if (fault_() == Fault::kCorruptKeyed && reinterpret_cast<File*>(x)->keyed) {
          return SQLITE_CORRUPT;
        }
        return R(x)->pMethods->xRead(R(x), b, n, o);
      };
      m.xWrite = [](sqlite3_file* x, const void* b, int n, sqlite3_int64 o) {
        if (fault_() == Fault::kDiskFull) return SQLITE_FULL;
        return R(x)->pMethods->xWrite(R(x), b, n, o);
      };
      m.xTruncate = [](sqlite3_file* x, sqlite3_int64 s) {
        return R(x)->pMethods->xTruncate(R(x), s);
      };
      m.xSync = [](sqlite3_file* x, int sync_flags) {
        if (fault_() == Fault::kSyncError) return SQLITE_IOERR_FSYNC;
        return R(x)->pMethods->xSync(R(x), sync_flags);
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
      m.xFetch = [](sqlite3_file* x, sqlite3_int64 o, int n, void** p) {
        return R(x)->pMethods->xFetch(R(x), o, n, p);
      };
      m.xUnfetch = [](sqlite3_file* x, sqlite3_int64 o, void* p) {
        return R(x)->pMethods->xUnfetch(R(x), o, p);
      };
      return m;
    }();
    f->base.pMethods = &methods;
    return SQLITE_OK;
  }
};

}  // namespace deniable::testing

#endif  // DENIABLE_TESTS_SUPPORT_FAULT_VFS_H_
