// The WAL stays bounded under continuous ingestion while readers keep reading
// (SqliteOptions::wal_autocheckpoint_pages): the writer's RESTART checkpoint waits for readers
// that hold old snapshots, so the WAL restarts from its beginning, and journal_size_limit
// truncates its file. With SQLite's PASSIVE autocheckpoint a reader always holding a snapshot
// kept the WAL from ever restarting.
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace wal_bound_test {

using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;

int64_t FileSize(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

TEST(WalBoundTest, WalStaysBelowTheLimitWhileAReaderKeepsReading) {
  constexpr int64_t kLimit = 1 << 20;  // 1 MiB
  constexpr int kAppends = 400;
  constexpr int kRowsPerAppend = 200;
  const std::string path = TempDbPath("wal_bound");
  auto opened = SqliteStorage::Open({.path = path,
                                     .durability = Durability::kNormal,
                                     .wal_autocheckpoint_pages = 64,  // 256 KiB
                                     .wal_restart_wait_tries = 10000,
                                     .wal_size_limit_bytes = kLimit,
                                     .background_moves = false});
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStorage& storage = **opened;
  absl::StatusOr<StoredMetric> m = storage.CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok()) << m.status();

  // A reader on its own connection, as a dashboard's queries: one short transaction after the
  // other, two statements each, without pause.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0};
  std::thread reader([&] {
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return;
    sqlite3_busy_timeout(db, 5000);
    while (!stop.load()) {
      if (sqlite3_exec(db,
                       "BEGIN; SELECT sum(n) FROM counts; SELECT count(*) FROM recent_reports; "
                       "COMMIT;",
                       nullptr, nullptr, nullptr) == SQLITE_OK) {
        ++reads;
      } else {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      }
    }
    sqlite3_close(db);
  });

  int64_t largest_wal = 0;
  for (int a = 0; a < kAppends; ++a) {
    std::vector<ReportRow> rows;
    for (int i = 0; i < kRowsPerAppend; ++i) {
      ReportRow r = Row(m->id, 0, i % 2 == 0, 500 + a % 7);
      const int id = a * kRowsPerAppend + i;
      for (int b = 0; b < 4; ++b) r.report_id[1 + b] = static_cast<uint8_t>(id >> (8 * b));
      rows.push_back(r);
    }
    absl::StatusOr<AppendResult> appended = storage.AppendReports(rows);
    ASSERT_TRUE(appended.ok()) << appended.status();
    ASSERT_EQ(appended->accepted, kRowsPerAppend);
    largest_wal = std::max(largest_wal, FileSize(path + "-wal"));
  }
  stop = true;
  reader.join();

  EXPECT_GT(reads.load(), 0);
  const SqliteStorage::CheckpointCounts checkpoints = storage.Checkpoints();
  EXPECT_GT(checkpoints.restarted, 0);
  EXPECT_LE(largest_wal, kLimit) << "restarted " << checkpoints.restarted << ", busy "
                                 << checkpoints.busy;
  EXPECT_LE(FileSize(path + "-wal"), kLimit);
  EXPECT_EQ(*storage.ReportCount(), int64_t{kAppends} * kRowsPerAppend);
}

// Readers on three connections, each running short transactions back to back, so that some
// reader holds a snapshot at every moment, while the background mover moves the hour being
// written (random ids: a move takes its rows out of the hour's recent pages at random places).
// The WAL stays under its limit: the moves' transactions are sized to the WAL they write and
// their reads hold no snapshot for long, and the RESTART checkpoints get through the readers.
TEST(WalBoundTest, WalStaysBelowTheLimitWithReadersBackToBackAndMovesRunning) {
  constexpr int64_t kLimit = 1 << 20;  // 1 MiB
  constexpr int kAppends = 100;
  constexpr int kRowsPerAppend = 200;
  const std::string path = TempDbPath("wal_bound_readers");
  auto opened = SqliteStorage::Open({.path = path,
                                     .durability = Durability::kNormal,
                                     .wal_autocheckpoint_pages = 128,  // 512 KiB
                                     .wal_restart_wait_tries = 10000,
                                     .wal_size_limit_bytes = kLimit,
                                     .max_recent_reports = 4000,
                                     .bound_move_wal = true});
  ASSERT_TRUE(opened.ok()) << opened.status();
  SqliteStorage& storage = **opened;
  absl::StatusOr<StoredMetric> m = storage.CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok()) << m.status();

  std::atomic<bool> stop{false};
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      sqlite3* db = nullptr;
      if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) return;
      sqlite3_busy_timeout(db, 5000);
      while (!stop.load()) {
        if (sqlite3_exec(
                db,
                "BEGIN; SELECT sum(n) FROM counts; SELECT count(*) FROM recent_reports; COMMIT;",
                nullptr, nullptr, nullptr) == SQLITE_OK) {
          ++reads;
        } else {
          sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        }
      }
      sqlite3_close(db);
    });
  }

  std::mt19937_64 gen(25);  // seeded: the same ids every run
  int64_t largest_wal = 0;
  for (int a = 0; a < kAppends; ++a) {
    std::vector<ReportRow> rows;
    for (int i = 0; i < kRowsPerAppend; ++i) {
      ReportRow r = Row(m->id, 0, i % 2 == 0, 500);
      for (int b = 0; b < 2; ++b) {
        const uint64_t word = gen();
        for (int k = 0; k < 8; ++k) r.report_id[8 * b + k] = static_cast<uint8_t>(word >> (8 * k));
      }
      rows.push_back(r);
    }
    absl::StatusOr<AppendResult> appended = storage.AppendReports(rows);
    ASSERT_TRUE(appended.ok()) << appended.status();
    ASSERT_EQ(appended->accepted, kRowsPerAppend);
    largest_wal =
        std::max({largest_wal, FileSize(path + "-wal"), FileSize(KeyedReportsPath(path) + "-wal")});
  }
  ASSERT_TRUE(storage.MoveRecentReports().ok());
  largest_wal =
      std::max({largest_wal, FileSize(path + "-wal"), FileSize(KeyedReportsPath(path) + "-wal")});
  stop = true;
  for (std::thread& t : readers) t.join();

  EXPECT_GT(reads.load(), 0);
  const SqliteStorage::CheckpointCounts checkpoints = storage.Checkpoints();
  EXPECT_GT(checkpoints.restarted, 0);
  EXPECT_LE(largest_wal, kLimit) << "attempts " << checkpoints.attempts << ", restarted "
                                 << checkpoints.restarted << ", busy " << checkpoints.busy
                                 << ", largest commit " << checkpoints.largest_commit_pages
                                 << " pages";
  EXPECT_LE(checkpoints.largest_wal_pages * 4096, kLimit);
  EXPECT_EQ(storage.RecentReportCount(), 0);
  EXPECT_EQ(*storage.ReportCount(), int64_t{kAppends} * kRowsPerAppend);
}

}  // namespace wal_bound_test
}  // namespace
}  // namespace deniable::server
