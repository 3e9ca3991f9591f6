// The fsyncs of docs/storage.md's invariant 11 that the seeded crash harness
// (crash_consistency_test.cc) reaches too rarely to prove, each driven here to the one state it
// exists for: under durability=normal, with each file's checkpoints (and so its syncs) set so
// that one file is synced at every commit and the other never, a power loss
// (tests/support/power_loss_vfs.h) right after the step that relies on the other file. Each test
// fails when its fsync is taken out; the retention test shows the state of an fsync that is not
// there (before retention's keyed deletes) reached and consistent.
#include <sqlite3.h>

#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"
#include "tests/support/power_loss_vfs.h"

namespace deniable::server {
namespace {

using deniable::testing::PowerLossVfs;
using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;

constexpr int kReports = 20;
constexpr int64_t kHour = 1;         // the reports' hour: expired at kNow
constexpr int64_t kNow = 3 * 86400;  // retention's clock: 1 day of retention cuts at day 2
constexpr int kNever = 1 << 20;      // checkpoint pages no test reaches: never synced
constexpr int kEveryCommit = 1;      // a checkpoint (and its sync) after every commit

class SyncOrderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    vfs_ = &PowerLossVfs::Install();
    path_ = TempDbPath("sync_order");
    options_.path = path_;
    options_.background_moves = false;
    options_.max_recent_reports = 1 << 20;  // moves only when the test asks
    options_.bound_move_wal = false;
  }
  void TearDown() override {
    storage_.reset();
    vfs_->ClearFailedSyncs();
    for (const char* suffix : {"", "-wal", "-shm", "-reports", "-reports-wal", "-reports-shm"}) {
      std::remove((path_ + suffix).c_str());
    }
  }

  absl::Status Open(Durability durability, int database_pages, int keyed_pages) {
    storage_.reset();
    options_.durability = durability;
    options_.wal_autocheckpoint_pages = database_pages;
    options_.keyed_wal_autocheckpoint_pages = keyed_pages;
    absl::StatusOr<std::unique_ptr<SqliteStorage>> s = SqliteStorage::Open(options_);
    if (!s.ok()) return s.status();
    storage_ = *std::move(s);
    return absl::OkStatus();
  }

  // Under durability=full (every commit synced): an hourly metric with kReports reports in
  // kHour, moved to the keyed file when `move`, then a clean close.
  void Setup(bool move) {
    ASSERT_TRUE(Open(Durability::kFull, kNever, kNever).ok());
    StoredMetric m = NewMetric("m");
    m.reporting_period_seconds = 3600;
    absl::StatusOr<StoredMetric> created = storage_->CreateMetric(m);
    ASSERT_TRUE(created.ok()) << created.status();
    metric_id_ = created->id;
    std::vector<ReportRow> rows;
    for (int i = 0; i < kReports; ++i) rows.push_back(Row(metric_id_, i, i % 2 == 0, kHour));
    absl::StatusOr<AppendResult> appended = storage_->AppendReports(rows);
    ASSERT_TRUE(appended.ok()) << appended.status();
    ASSERT_EQ(appended->accepted, kReports);
    if (move) {
      ASSERT_TRUE(storage_->MoveRecentReports().ok());
    }
    storage_.reset();
  }

  absl::Status Retention(int policy) {
    absl::StatusOr<StoredMetric> m = storage_->SetRetention("m", 1, policy);
    if (!m.ok()) return m.status();
    RetentionOptions options;
    options.now_seconds = kNow;
    options.batch_rows = 4;  // several keyed transactions
    return storage_->ApplyRetention(options).status();
  }

  // A power loss now, then the open (under normal, no checkpoint syncs).
  absl::Status PowerLossAndOpen() {
    vfs_->CrashNow();
    storage_.reset();
    if (!vfs_->Restore()) return absl::InternalError("a file is still open");
    return Open(Durability::kNormal, kNever, kNever);
  }

  // The metric's reports visible in stored_reports (on a connection of the test's own).
  int64_t Visible() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    EXPECT_TRUE(AttachKeyedReports(db, path_).ok());
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM stored_reports WHERE metric_id = ?", -1,
                                 &st, nullptr),
              SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_bind_int64(st, 1, metric_id_);
    int64_t n = -1;
    if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
  }
  // Sum of counts.n of the metric (0 when it is gone).
  int64_t Counted() {
    absl::StatusOr<std::vector<CountRow>> rows = storage_->ReadCounts(metric_id_, 0, 1 << 30);
    EXPECT_TRUE(rows.ok()) << rows.status();
    int64_t n = 0;
    if (rows.ok()) {
      for (const CountRow& r : *rows) n += r.n;
    }
    return n;
  }

  PowerLossVfs* vfs_ = nullptr;
  std::string path_;
  SqliteOptions options_;
  std::unique_ptr<SqliteStorage> storage_;
  int64_t metric_id_ = 0;
};

// Retention dropping counts deletes an expired hour's keyed reports, then its counts. The keyed
// file is never synced by a checkpoint here and the database at every commit: without the fsync
// of X.db-reports-wal before the counts go, the power loss undoes the keyed deletes and keeps
// the counts' delete, and the hour's 20 reports are visible with no count.
TEST_F(SyncOrderTest, RetentionDropsCountsOnlyOnceItsKeyedDeletesAreDurable) {
  ASSERT_NO_FATAL_FAILURE(Setup(/*move=*/true));
  ASSERT_TRUE(Open(Durability::kNormal, kEveryCommit, kNever).ok());
  ASSERT_EQ(Visible(), kReports);
  ASSERT_TRUE(Retention(kRetentionDropCounts).ok());
  ASSERT_TRUE(PowerLossAndOpen().ok());
  EXPECT_LE(Visible(), Counted()) << "visible reports of the expired hour that no count holds";
  EXPECT_EQ(Visible(), 0);  // the keyed deletes were durable before the counts' delete
  ASSERT_TRUE(Retention(kRetentionDropCounts).ok());
  EXPECT_EQ(Visible(), 0);
  EXPECT_EQ(Counted(), 0);
}

// No fsync of X.db-wal comes before retention's keyed deletes (docs/storage.md, invariant 11):
// the power loss here undoes the database's deletes (the move's of the moved rows, retention's
// of the recent ones) and keeps the keyed file's (its reports and the hour's watermark, synced
// at every commit). The hour's recent rows are then visible again, no longer behind a
// watermark, each once and counted, and the next pass deletes them.
TEST_F(SyncOrderTest, RetentionsKeyedDeletesNeedNoSyncOfTheDatabasesDeletes) {
  ASSERT_NO_FATAL_FAILURE(Setup(/*move=*/false));
  ASSERT_TRUE(Open(Durability::kNormal, kNever, kEveryCommit).ok());
  ASSERT_TRUE(storage_->MoveRecentReports().ok());  // copies synced; the delete of rows not
  ASSERT_TRUE(Retention(kRetentionKeepCounts).ok());
  ASSERT_EQ(Visible(), 0);
  ASSERT_TRUE(PowerLossAndOpen().ok());
  EXPECT_EQ(Visible(), kReports) << "the state this test is for was not reached";
  EXPECT_EQ(Counted(), kReports);
  ASSERT_TRUE(Retention(kRetentionKeepCounts).ok());
  EXPECT_EQ(Visible(), 0);
  EXPECT_EQ(Counted(), kReports);  // kept, as the policy says
}

// DeleteMetric whose fsync of X.db-wal fails leaves its keyed rows to the next open, which
// deletes them: it must make the database's delete durable first. Without that fsync the power
// loss after the open keeps the keyed deletes (synced at every commit) and undoes the metric's
// delete, and the pair is refused ("the database ... is older than its keyed reports file") or
// the metric is back with its counts and without its moved reports.
TEST_F(SyncOrderTest, TheOpensDeleteOfAGoneMetricsKeyedRowsWaitsForTheDatabasesDelete) {
  ASSERT_NO_FATAL_FAILURE(Setup(/*move=*/true));
  ASSERT_TRUE(Open(Durability::kNormal, kNever, kEveryCommit).ok());
  // A first commit, so that the delete's is not the one that starts X.db-wal (which syncs the
  // WAL's header even under durability=normal).
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("other")).ok());
  vfs_->FailSyncs(path_ + "-wal");
  absl::Status deleted = storage_->DeleteMetric("m");
  ASSERT_TRUE(deleted.ok()) << deleted;  // the keyed rows are left (logged)
  storage_.reset();                      // the process ends (a SIGKILL would do)
  vfs_->ClearFailedSyncs();
  ASSERT_TRUE(Open(Durability::kNormal, kNever, kEveryCommit).ok());
  EXPECT_EQ(Visible(), 0);
  absl::Status opened = PowerLossAndOpen();
  ASSERT_TRUE(opened.ok()) << opened;
  EXPECT_TRUE(absl::IsNotFound(storage_->GetMetric("m").status()));
  EXPECT_EQ(Visible(), 0);
  EXPECT_EQ(Counted(), 0);
}

}  // namespace
}  // namespace deniable::server
