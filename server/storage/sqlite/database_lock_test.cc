#include "server/storage/sqlite/database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace database_lock_test {

using ::testing::HasSubstr;
using testing_util::NewMetric;
using testing_util::Row;

// A fresh directory holding the database "dir/deniable.db" and a subdirectory "dir/sub".
class DatabaseLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/database_lock_test_", getpid(), "_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/sub");
    db_ = dir_ + "/deniable.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Opens the database at `first`, checks that opening it at `second` fails naming `second` and
  // this process, that the first storage keeps working, and that `second` opens once the first
  // has closed (after `after_first_closed`, when given).
  void ExpectOneWriter(const std::string& first, const std::string& second,
                       const std::function<void()>& after_first_closed = {}) {
    auto a = SqliteStorage::Open({.path = first});
    ASSERT_TRUE(a.ok()) << a.status();
    auto b = SqliteStorage::Open({.path = second});
    EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition) << b.status();
    EXPECT_THAT(b.status().message(), HasSubstr(second));
    EXPECT_THAT(b.status().message(), HasSubstr(absl::StrCat("pid ", getpid())));
    absl::StatusOr<StoredMetric> m = (*a)->CreateMetric(NewMetric("m"));
    ASSERT_TRUE(m.ok()) << m.status();
    ASSERT_TRUE((*a)->AppendReports({Row(m->id, 1, true, 5)}).ok());
    a->reset();
    if (after_first_closed) after_first_closed();
    auto c = SqliteStorage::Open({.path = second});
    ASSERT_TRUE(c.ok()) << c.status();
    EXPECT_EQ(*(*c)->ReportCount(), 1);
    absl::StatusOr<AppendResult> again = (*c)->AppendReports({Row(m->id, 1, true, 5)});
    ASSERT_TRUE(again.ok()) << again.status();
    EXPECT_EQ(again->duplicates, 1);
  }

  std::string dir_;
  std::string db_;
};

TEST_F(DatabaseLockTest, SecondOpenThroughAHardLinkFails) {
  ASSERT_TRUE(DatabaseLock::Acquire(db_).ok());  // creates the file, then releases it
  const std::string link = dir_ + "/sub/hard.db";
  ASSERT_EQ(::link(db_.c_str(), link.c_str()), 0);
  ExpectOneWriter(db_, link, [&] {
    // The keyed reports file is looked for beside the name that opens the database: through a
    // hard link in another directory it is missing, and the open is refused rather than
    // deduplicating against an empty file; linked too, it opens.
    auto missing = SqliteStorage::Open({.path = link});
    EXPECT_EQ(missing.status().code(), absl::StatusCode::kDataLoss) << missing.status();
    EXPECT_THAT(missing.status().message(), HasSubstr(KeyedReportsPath(link)));
    ASSERT_EQ(::link(KeyedReportsPath(db_).c_str(), KeyedReportsPath(link).c_str()), 0);
  });
}

TEST_F(DatabaseLockTest, SecondOpenThroughASymlinkFails) {
  const std::string link = dir_ + "/sub/soft.db";
  ASSERT_EQ(::symlink(db_.c_str(), link.c_str()), 0);
  ExpectOneWriter(link, db_);
}

TEST_F(DatabaseLockTest, SecondOpenThroughAnotherSpellingOfThePathFails) {
  ExpectOneWriter(db_, dir_ + "/sub/../deniable.db");
}

TEST_F(DatabaseLockTest, SecondOpenThroughARelativePathFails) {
  const std::string relative = std::filesystem::relative(db_).string();
  ASSERT_NE(relative.front(), '/');
  ExpectOneWriter(db_, relative);
}

TEST_F(DatabaseLockTest, LockTakenByAnotherProcessIsRefusedNamingItsPid) {
  ASSERT_TRUE(DatabaseLock::Acquire(db_).ok());
  int ready[2], done[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(done), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // only async-signal-safe calls: open, flock, write, read, _exit
    const int fd = open(db_.c_str(), O_RDONLY);
    if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0) _exit(1);
    char c = 'x';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    if (read(done[0], &c, 1) < 0) _exit(3);
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  absl::StatusOr<DatabaseLock> lock = DatabaseLock::Acquire(dir_ + "/sub/../deniable.db");
  EXPECT_EQ(lock.status().code(), absl::StatusCode::kFailedPrecondition) << lock.status();
  EXPECT_THAT(lock.status().message(), HasSubstr(absl::StrCat("pid ", child, ",")));
  ASSERT_EQ(write(done[1], &c, 1), 1);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
  EXPECT_TRUE(DatabaseLock::Acquire(db_).ok());  // the child's lock left with it
}

// A refused second open must not close a descriptor of the file: POSIX drops every record lock
// of the process on a file when any descriptor of it closes, so the first storage's SQLite
// connections would lose their locks (sqlite.org/howtocorrupt.html, 2.2). Another process checks
// that the SHARED lock SQLite holds on the open database survives the refused open.
TEST_F(DatabaseLockTest, RefusedSecondOpenKeepsTheFirstStoragesSqliteLocks) {
  auto a = SqliteStorage::Open({.path = db_});
  ASSERT_TRUE(a.ok()) << a.status();
  // A process that wants SQLite's EXCLUSIVE lock (the SHARED byte range at 1 GiB + 2) sees a
  // holder while a connection is open: the test first checks that this detects the lock.
  auto shared_range_is_locked = [this] {
    const pid_t child = fork();
    if (child == 0) {
      const int fd = open(db_.c_str(), O_RDWR);
      struct flock fl {};
      fl.l_type = F_WRLCK;
      fl.l_whence = SEEK_SET;
      fl.l_start = 0x40000000 + 2;
      fl.l_len = 510;
      if (fd < 0 || fcntl(fd, F_GETLK, &fl) != 0) _exit(2);
      _exit(fl.l_type == F_UNLCK ? 0 : 1);
    }
    int wstatus = 0;
    waitpid(child, &wstatus, 0);
    return WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  };
  ASSERT_EQ(shared_range_is_locked(), 1);
  for (const std::string& other : {db_, dir_ + "/sub/../deniable.db"}) {
    auto b = SqliteStorage::Open({.path = other});
    EXPECT_EQ(b.status().code(), absl::StatusCode::kFailedPrecondition) << b.status();
  }
  EXPECT_EQ(shared_range_is_locked(), 1);
}

}  // namespace database_lock_test
}  // namespace
}  // namespace deniable::server
