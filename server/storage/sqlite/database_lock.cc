#include "server/storage/sqlite/database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"

namespace deniable::server {
namespace {

using FileId = std::pair<uint64_t, uint64_t>;  // st_dev, st_ino

// The files this process holds a DatabaseLock on.
struct HeldFiles {
  absl::Mutex mu;
  absl::flat_hash_set<FileId> held ABSL_GUARDED_BY(mu);
  // Descriptors that may not be closed (see Acquire): a file replaced by a held one between
  // stat and open. Kept open, never closed; each is one lost race.
  std::vector<int> parked ABSL_GUARDED_BY(mu);
};

HeldFiles& Held() {
  static HeldFiles* held = new HeldFiles;  // never destroyed: locks may outlive exit
  return *held;
}

// The pid holding an flock on the file (from /proc/locks), or "unknown".
std::string FlockHolder(const struct stat& st) {
  std::ifstream in("/proc/locks");
  std::string line;
  const unsigned want_major = major(st.st_dev);
  const unsigned want_minor = minor(st.st_dev);
  while (std::getline(in, line)) {
    // "1: FLOCK  ADVISORY  WRITE 1234 fe:00:10953705 0 EOF"; waiters have "->" after "1:".
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 6 || f[1] != "FLOCK") continue;
    unsigned maj = 0, min = 0;
    uint64_t ino = 0;
    if (std::sscanf(f[5].c_str(), "%x:%x:%" SCNu64, &maj, &min, &ino) != 3) continue;
    if (maj == want_major && min == want_minor && ino == static_cast<uint64_t>(st.st_ino)) {
      return f[4];
    }
  }
  return "unknown";
}

// The pid written in the legacy lock file, or "unknown".
std::string PidInFile(int fd) {
  char buf[32] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

absl::Status InUse(const std::string& db_path, absl::string_view pid, absl::string_view how) {
  return absl::FailedPreconditionError(
      absl::StrCat("database \"", db_path, "\" is in use by another process (pid ", pid, ", ", how,
                   "): a database has one writer; stop that process or use another --db"));
}

// The lock older versions took: an flock on "<db_path>.lock", holding our pid.
absl::StatusOr<int> LockLegacyFile(const std::string& db_path) {
  const std::string path = db_path + ".lock";
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open the lock file \"", path, "\": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    const std::string holder = PidInFile(fd);
    close(fd);
    if (err == EWOULDBLOCK) {
      return InUse(db_path, holder, absl::StrCat("which holds \"", path, "\""));
    }
    return absl::UnavailableError(absl::StrCat("cannot lock \"", path, "\": ", std::strerror(err)));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot write the lock file \"", path, "\": ", std::strerror(err)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<DatabaseLock> DatabaseLock::Acquire(const std::string& db_path) {
  HeldFiles& files = Held();
  absl::MutexLock lock(&files.mu);
  // A file this process holds is refused before it is opened: closing a descriptor of it would
  // drop the POSIX locks of the SQLite connections that have it open (see the header).
  struct stat st {};
  if (stat(db_path.c_str(), &st) == 0 &&
      files.held.contains(FileId(static_cast<uint64_t>(st.st_dev), st.st_ino))) {
    return InUse(db_path, absl::StrCat(getpid()), "this process, under this or another name");
  }
  const int fd = open(db_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot open the database \"", db_path, "\": ", std::strerror(errno)));
  }
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot stat the database \"", db_path, "\": ", std::strerror(err)));
  }
  const FileId id(static_cast<uint64_t>(st.st_dev), st.st_ino);
  if (files.held.contains(id)) {  // the name was pointed at a held file since the stat above
    files.parked.push_back(fd);
    return InUse(db_path, absl::StrCat(getpid()), "this process, under this or another name");
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(fd);  // no connection of this process has the file open: it is not in `held`
    if (err == EWOULDBLOCK) {
      return InUse(db_path, FlockHolder(st), "which holds the file under this or another name");
    }
    return absl::UnavailableError(
        absl::StrCat("cannot lock the database \"", db_path, "\": ", std::strerror(err)));
  }
  absl::StatusOr<int> legacy = LockLegacyFile(db_path);
  if (!legacy.ok()) {
    close(fd);
    return legacy.status();
  }
  files.held.insert(id);
  DatabaseLock result;
  result.fd_ = fd;
  result.legacy_fd_ = *legacy;
  result.device_ = id.first;
  result.inode_ = id.second;
  return result;
}

DatabaseLock::DatabaseLock(DatabaseLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      legacy_fd_(std::exchange(other.legacy_fd_, -1)),
      device_(other.device_),
      inode_(other.inode_) {}

DatabaseLock& DatabaseLock::operator=(DatabaseLock&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    legacy_fd_ = std::exchange(other.legacy_fd_, -1);
    device_ = other.device_;
    inode_ = other.inode_;
  }
  return *this;
}

DatabaseLock::~DatabaseLock() { Release(); }

void DatabaseLock::Release() {
  if (fd_ < 0) return;
  HeldFiles& files = Held();
  absl::MutexLock lock(&files.mu);
  // The legacy lock file stays (deleting it would race with a process about to lock it).
  close(legacy_fd_);
  close(fd_);
  files.held.erase(FileId(device_, inode_));
  fd_ = legacy_fd_ = -1;
}

}  // namespace deniable::server
