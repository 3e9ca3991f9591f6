// `deniable-server backup` (BackupSqlite) of a live SqliteStorage while reports are appended and
// moved into the keyed file all the time: every copy must be one snapshot of both files, so that
// its counts equal its stored reports, it opens as a storage, and `migrate` of it verifies.
#include "server/storage/sqlite/sqlite_backup.h"

#include <sqlite3.h>

#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "server/storage/postgres/sqlite_to_postgres.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"
#include "server/storage/testing/test_postgres.h"

namespace deniable::server {
namespace {

using testing_util::NewMetric;
using testing_util::TempDbPath;

constexpr int kHours = 4;
constexpr int kBatch = 50;

// Appends batches of new reports to metric `metric` over kHours hours, from a thread, as many as
// Allow() has allowed; small max_recent_reports and move chunks make the storage move
// metric-hours into the keyed file all the time meanwhile.
class Appender {
 public:
  Appender(SqliteStorage* storage, int64_t metric) : storage_(storage), metric_(metric) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Appender() { Stop(); }
  void Stop() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }
  // Lets the thread append `batches` more batches.
  void Allow(int64_t batches) {
    absl::MutexLock lock(&mu_);
    allowed_ += batches;
  }
  // Waits until `more` batches were appended since the call (or the appender failed).
  void WaitForBatches(int64_t more) {
    absl::MutexLock lock(&mu_);
    target_ = batches_ + more;
    mu_.Await(absl::Condition(this, &Appender::Reached));
  }
  bool failed() {
    absl::MutexLock lock(&mu_);
    return failed_;
  }

 private:
  bool Reached() const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return batches_ >= target_ || failed_; }
  bool MayAppend() const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stop_ || batches_ < allowed_; }
  void Run() {
    uint64_t next_id = 1;
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &Appender::MayAppend));
        if (stop_) return;
      }
      std::vector<ReportRow> rows;
      for (int i = 0; i < kBatch; ++i, ++next_id) {
        ReportRow r;
        r.metric_id = metric_;
        r.design_version = 1;
        if (next_id % 3 == 0) r.counters = {0};
        r.report_id.fill(0x5a);
        for (int b = 0; b < 8; ++b) r.report_id[b] = static_cast<uint8_t>(next_id >> (8 * b));
        r.event_time_seconds = static_cast<int64_t>(next_id / kBatch % kHours + 1) * 3600;
        rows.push_back(std::move(r));
      }
      absl::StatusOr<AppendResult> result = storage_->AppendReports(rows);
      absl::MutexLock lock(&mu_);
      if (!result.ok() || result->accepted != kBatch) {
        ADD_FAILURE() << (result.ok() ? "duplicates" : result.status().ToString());
        failed_ = true;
        return;
      }
      ++batches_;
    }
  }

  SqliteStorage* storage_;
  int64_t metric_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t allowed_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t batches_ ABSL_GUARDED_BY(mu_) = 0;
  bool failed_ ABSL_GUARDED_BY(mu_) = false;
  int64_t target_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

std::unique_ptr<SqliteStorage> OpenLive(const std::string& path) {
  auto s = SqliteStorage::Open({.path = path,
                                .durability = Durability::kNormal,
                                .max_recent_reports = 1500,
                                .background_moves = true,
                                .move_chunk_rows = 200,
                                .bound_move_wal = false});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

int64_t CountsTotal(Storage& s, int64_t metric) {
  absl::StatusOr<std::vector<CountRow>> rows = s.ReadCounts(metric, 0, 1 << 30);
  EXPECT_TRUE(rows.ok()) << rows.status();
  int64_t n = 0;
  if (rows.ok()) {
    for (const CountRow& r : *rows) n += r.n;
  }
  return n;
}

void RemovePair(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-reports", "-reports-wal", "-reports-shm"}) {
    std::remove((path + suffix).c_str());
  }
}

// Each of 25 backups taken while appends and moves run holds counts equal to its stored reports
// (verified by BackupSqlite itself, and again by opening the copy as a storage), and opens.
TEST(SqliteBackupTest, BackupsDuringMovesAreSnapshotsOfBothFiles) {
  const std::string path = TempDbPath("backup_live");
  std::unique_ptr<SqliteStorage> live = OpenLive(path);
  ASSERT_NE(live, nullptr);
  const int64_t m = live->CreateMetric(NewMetric("m"))->id;
  Appender appender(live.get(), m);
  int retried = 0;
  for (int i = 0; i < 25; ++i) {
    // The appender appends 40 more batches (2000 reports, over max_recent_reports: moves run)
    // while the backup copies; at least 10 of them go in before it starts.
    appender.Allow(40);
    appender.WaitForBatches(10);
    ASSERT_FALSE(appender.failed());
    const std::string out = TempDbPath(absl::StrCat("backup_copy", i));
    absl::StatusOr<BackupSummary> summary = BackupSqlite(path, out);
    ASSERT_TRUE(summary.ok()) << "backup " << i << ": " << summary.status();
    EXPECT_EQ(summary->reports, summary->counted_reports) << "backup " << i;
    EXPECT_GT(summary->reports, 0);
    if (summary->snapshot_attempts > 1) ++retried;

    {
      auto copy = SqliteStorage::Open({.path = out, .background_moves = false});
      ASSERT_TRUE(copy.ok()) << "backup " << i << ": " << copy.status();
      absl::StatusOr<int64_t> stored = (*copy)->ReportCount();
      ASSERT_TRUE(stored.ok()) << stored.status();
      EXPECT_EQ(*stored, summary->reports) << "backup " << i;
      EXPECT_EQ(CountsTotal(**copy, m), *stored) << "backup " << i;
      EXPECT_EQ(*(*copy)->IntegrityCheck(), "ok");
    }
    RemovePair(out);
  }
  appender.Stop();
  ASSERT_FALSE(appender.failed());
  // The live storage moved reports meanwhile (else the test proved nothing).
  EXPECT_LT(live->RecentReportCount(), *live->ReportCount());
  std::printf("25 backups during moves; %d needed more than one snapshot attempt\n", retried);
}

// A copy whose counts and stored reports disagree (reports appended in the keyed file that no
// count row counts, as a copy of two instants had) fails verification with DATA_LOSS.
TEST(SqliteBackupTest, VerifyFailsWhenCountsAndReportsDisagree) {
  const std::string path = TempDbPath("backup_mismatch");
  {
    std::unique_ptr<SqliteStorage> s = OpenLive(path);
    ASSERT_NE(s, nullptr);
    const int64_t m = s->CreateMetric(NewMetric("m"))->id;
    ASSERT_TRUE(s->AppendReports({testing_util::Row(m, 1, true, 5)}).ok());
    ASSERT_TRUE(s->MoveRecentReports().ok());
  }
  sqlite3* keyed = nullptr;
  ASSERT_EQ(sqlite3_open((path + "-reports").c_str(), &keyed), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(keyed,
                         "INSERT INTO reports SELECT metric_id, event_time, randomblob(16), "
                         "version, bit, labelset_id, support, firsts FROM reports",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(keyed);
  const std::string out = TempDbPath("backup_mismatch_copy");
  absl::StatusOr<BackupSummary> summary = BackupSqlite(path, out);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kDataLoss) << summary.status();
  EXPECT_NE(summary.status().message().find("metric \"m\" hour 18000 has 2 stored reports but "
                                            "counts 1"),
            std::string::npos)
      << summary.status();
  FILE* f = std::fopen(out.c_str(), "r");
  EXPECT_EQ(f, nullptr) << "no copy is left behind";
  if (f != nullptr) std::fclose(f);
}

// `deniable-server migrate` of a backup taken during moves verifies (its counts equal the
// reports it copies into PostgreSQL).
TEST(SqliteBackupTest, MigrateOfBackupTakenDuringMovesVerifies) {
  DENIABLE_SKIP_WITHOUT_POSTGRES();
  testing_util::TestPostgres* pg = testing_util::TestPostgres::Shared();
  ASSERT_NE(pg, nullptr);
  const std::string path = TempDbPath("backup_migrate");
  std::unique_ptr<SqliteStorage> live = OpenLive(path);
  ASSERT_NE(live, nullptr);
  const int64_t m = live->CreateMetric(NewMetric("m"))->id;
  const std::string out = TempDbPath("backup_migrate_copy");
  absl::StatusOr<BackupSummary> summary;
  {
    Appender appender(live.get(), m);
    appender.Allow(400);
    appender.WaitForBatches(200);
    summary = BackupSqlite(path, out);
    appender.Stop();
    ASSERT_FALSE(appender.failed());
  }
  ASSERT_TRUE(summary.ok()) << summary.status();
  absl::StatusOr<std::string> uri = pg->NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status();
  absl::StatusOr<MigrationSummary> migrated =
      MigrateSqliteToPostgres(out, *uri, [](const std::string&) {});
  ASSERT_TRUE(migrated.ok()) << migrated.status();
  EXPECT_EQ(migrated->reports, summary->reports);
  EXPECT_EQ(migrated->reports_copied, summary->reports);
  RemovePair(out);
}

}  // namespace
}  // namespace deniable::server
