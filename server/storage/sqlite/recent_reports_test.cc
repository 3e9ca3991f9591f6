// SqliteStorage's two report tables (recent_reports in arrival order, reports in key order) must
// behave exactly like one deduplicated set: checked against MemoryStorage as the model over a
// seeded random workload that moves metric-hours, reopens the database and re-sends ids.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace recent_reports_test {

using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;
using testing_util::Yes;

std::unique_ptr<SqliteStorage> OpenOrDie(const std::string& path, int64_t max_recent,
                                         bool background = false) {
  auto s = SqliteStorage::Open(
      {.path = path, .max_recent_reports = max_recent, .background_moves = background});
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *std::move(s) : nullptr;
}

std::vector<std::tuple<uint32_t, int64_t, std::string, int64_t, int64_t>> Counts(Storage& s,
                                                                                 int64_t metric) {
  std::vector<std::tuple<uint32_t, int64_t, std::string, int64_t, int64_t>> out;
  absl::StatusOr<std::vector<CountRow>> rows = s.ReadCounts(metric, 0, 1 << 30);
  EXPECT_TRUE(rows.ok()) << rows.status();
  if (!rows.ok()) return out;
  for (const CountRow& r : *rows)
    out.emplace_back(r.design_version, r.event_time_seconds, r.labels, r.n, Yes(r));
  std::sort(out.begin(), out.end());
  return out;
}

TEST(RecentReportsTest, MovedHoursStillDeduplicate) {
  const std::string path = TempDbPath("moved");
  std::unique_ptr<SqliteStorage> s = OpenOrDie(path, 1000);
  ASSERT_NE(s, nullptr);
  const int64_t m = s->CreateMetric(NewMetric("m"))->id;
  ASSERT_TRUE(s->AppendReports({Row(m, 1, true, 5), Row(m, 2, false, 5)}).ok());
  EXPECT_EQ(s->RecentReportCount(), 2);
  ASSERT_TRUE(s->MoveRecentReports().ok());
  EXPECT_EQ(s->RecentReportCount(), 0);
  EXPECT_EQ(*s->ReportCount(), 2);

  // Id 1 is in the keyed table, id 3 is new: one duplicate, one accepted into recent_reports.
  absl::StatusOr<AppendResult> r = s->AppendReports({Row(m, 1, true, 5), Row(m, 3, true, 5)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  EXPECT_EQ(r->duplicates, 1);
  EXPECT_EQ(s->RecentReportCount(), 1);

  // After a restart the recent id is known again, and so is the moved one.
  s.reset();
  s = OpenOrDie(path, 1000);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->RecentReportCount(), 1);
  r = s->AppendReports({Row(m, 1, true, 5), Row(m, 3, true, 5), Row(m, 4, false, 5)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  EXPECT_EQ(r->duplicates, 2);
  EXPECT_EQ(*s->ReportCount(), 4);
  EXPECT_EQ(*s->IntegrityCheck(), "ok");
}

// A metric-hour with moved and recent rows gets its moved-ids filter again at a restart (built
// from its keyed ids; before, the restart dropped it and each new id paid a keyed lookup), and
// still deduplicates exactly: the moved ids and the recent ones are duplicates.
TEST(RecentReportsTest, AMovedHoursFilterIsBuiltAgainAtARestart) {
  const std::string path = TempDbPath("filter_restart");
  std::unique_ptr<SqliteStorage> s = OpenOrDie(path, 1000);
  ASSERT_NE(s, nullptr);
  const int64_t m = s->CreateMetric(NewMetric("m"))->id;
  std::vector<ReportRow> rows;
  for (int i = 1; i <= 100; ++i) rows.push_back(Row(m, i, i % 2 == 0, 5));
  ASSERT_TRUE(s->AppendReports(rows).ok());
  ASSERT_TRUE(s->MoveRecentReports().ok());
  ASSERT_TRUE(s->AppendReports({Row(m, 101, true, 5), Row(m, 102, true, 5)}).ok());
  EXPECT_EQ(s->RecentReportCount(), 2);
  s.reset();
  s = OpenOrDie(path, 1000);
  ASSERT_NE(s, nullptr);
  EXPECT_GT(s->MovedIdsFilterBytes(), 0);
  rows.clear();
  for (int i = 1; i <= 103; ++i) rows.push_back(Row(m, i, true, 5));
  absl::StatusOr<AppendResult> r = s->AppendReports(rows);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->duplicates, 102);
  EXPECT_EQ(r->accepted, 1);
  EXPECT_EQ(*s->ReportCount(), 103);
}

TEST(RecentReportsTest, OverflowMovesLeastRecentlyWrittenHoursFirst) {
  std::unique_ptr<SqliteStorage> s = OpenOrDie(TempDbPath("overflow"), 4);
  ASSERT_NE(s, nullptr);
  const int64_t m = s->CreateMetric(NewMetric("m"))->id;
  ASSERT_TRUE(s->AppendReports({Row(m, 1, true, 1), Row(m, 2, true, 1)}).ok());
  ASSERT_TRUE(s->AppendReports({Row(m, 3, true, 2), Row(m, 4, true, 2)}).ok());
  EXPECT_EQ(s->RecentReportCount(), 4);
  // A fifth recent report exceeds 4: hour 1 (oldest write) moves, leaving at most 4 / 2 = 2 ...
  ASSERT_TRUE(s->AppendReports({Row(m, 5, true, 3)}).ok());
  // ... which takes hours 1 and 2 (written before hour 3) out of memory.
  EXPECT_EQ(s->RecentReportCount(), 1);
  EXPECT_EQ(*s->ReportCount(), 5);
  absl::StatusOr<AppendResult> r = s->AppendReports(
      {Row(m, 1, true, 1), Row(m, 4, true, 2), Row(m, 5, true, 3), Row(m, 6, true, 1)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  EXPECT_EQ(r->duplicates, 3);
}

// The model check: random batches with many re-sent ids over a few metric-hours and two label
// sets, grouped into multi-batch transactions as group commit does, with a tiny recent limit (so
// metric-hours move all the time), forced moves and reopenings. Every AppendResult and the
// counts must equal MemoryStorage's.
class RecentReportsModelTest : public ::testing::TestWithParam<bool> {};

TEST_P(RecentReportsModelTest, BehavesLikeOneDeduplicatedSet) {
  const bool background = GetParam();
  const std::string path = TempDbPath(background ? "model_bg" : "model");
  constexpr int64_t kMaxRecent = 40;
  std::unique_ptr<SqliteStorage> sqlite = OpenOrDie(path, kMaxRecent, background);
  ASSERT_NE(sqlite, nullptr);
  MemoryStorage model;
  const int64_t m1 = sqlite->CreateMetric(NewMetric("m1"))->id;
  const int64_t m2 = sqlite->CreateMetric(NewMetric("m2"))->id;
  ASSERT_EQ(model.CreateMetric(NewMetric("m1"))->id, m1);
  ASSERT_EQ(model.CreateMetric(NewMetric("m2"))->id, m2);

  std::mt19937_64 rng(20261121);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int64_t accepted = 0, duplicates = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<std::vector<ReportRow>> batches(uniform(1, 3));
    for (auto& batch : batches) {
      const int rows = uniform(1, 25);
      for (int i = 0; i < rows; ++i) {
        batch.push_back(Row(uniform(0, 3) == 0 ? m2 : m1, uniform(0, 299), uniform(0, 1) == 1,
                            uniform(0, 5), uniform(0, 1) == 1 ? "k=v" : ""));
      }
    }
    std::vector<absl::Span<const ReportRow>> spans(batches.begin(), batches.end());
    absl::StatusOr<std::vector<AppendResult>> got = sqlite->AppendBatches(spans);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), batches.size());
    for (size_t b = 0; b < batches.size(); ++b) {
      absl::StatusOr<AppendResult> want = model.AppendReports(batches[b]);
      ASSERT_TRUE(want.ok());
      ASSERT_EQ((*got)[b].accepted, want->accepted) << "round " << round << " batch " << b;
      ASSERT_EQ((*got)[b].duplicates, want->duplicates) << "round " << round << " batch " << b;
      accepted += want->accepted;
      duplicates += want->duplicates;
    }
    // In the foreground the append that overflows moves before it returns.
    if (!background) {
      ASSERT_LE(sqlite->RecentReportCount(), kMaxRecent);
    }
    if (round % 53 == 52) {
      ASSERT_TRUE(sqlite->MoveRecentReports().ok());
    }
    if (round % 71 == 70) {
      sqlite.reset();
      sqlite = OpenOrDie(path, kMaxRecent, background);
      ASSERT_NE(sqlite, nullptr);
    }
  }
  // The workload really exercised both outcomes.
  EXPECT_GT(accepted, 1000);
  EXPECT_GT(duplicates, 1000);
  EXPECT_EQ(*sqlite->ReportCount(), model.ReportCount());
  EXPECT_EQ(Counts(*sqlite, m1), Counts(model, m1));
  EXPECT_EQ(Counts(*sqlite, m2), Counts(model, m2));
  EXPECT_EQ(*sqlite->IntegrityCheck(), "ok");
}

INSTANTIATE_TEST_SUITE_P(Moves, RecentReportsModelTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "Background" : "Foreground";
                         });

// A crash after a move's copy phase (its watermark's moved_seq set in the keyed file) and before
// its delete leaves every row in both files. This builds that state by hand; readers count each
// report once, and the next open deletes the recent copies.
TEST(RecentReportsTest, InterruptedMoveIsCompletedAtOpen) {
  const std::string path = TempDbPath("interrupted");
  int64_t m = 0;
  {
    std::unique_ptr<SqliteStorage> s = OpenOrDie(path, 1000);
    ASSERT_NE(s, nullptr);
    m = s->CreateMetric(NewMetric("m"))->id;
    ASSERT_TRUE(
        s->AppendReports({Row(m, 1, true, 5), Row(m, 2, false, 5), Row(m, 3, true, 5)}).ok());
  }
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_TRUE(AttachKeyedReports(db, path).ok());
    ASSERT_EQ(sqlite3_exec(db,
                           "BEGIN; INSERT INTO keyed.reports(metric_id, event_time, report_id, "
                           "version, bit, labelset_id) SELECT metric_id, event_time, report_id, "
                           "version, bit, labelset_id FROM recent_reports; COMMIT; BEGIN; "
                           "INSERT INTO keyed.watermarks SELECT metric_id, event_time, max(seq), "
                           "max(seq), NULL FROM recent_reports GROUP BY metric_id, event_time; "
                           "COMMIT;",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM stored_reports", -1, &st, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
    EXPECT_EQ(sqlite3_column_int64(st, 0), 3);
    sqlite3_finalize(st);
    sqlite3_close(db);
  }
  std::unique_ptr<SqliteStorage> s = OpenOrDie(path, 1000);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(*s->ReportCount(), 3);
  EXPECT_EQ(s->RecentReportCount(), 0);
  absl::StatusOr<AppendResult> r =
      s->AppendReports({Row(m, 1, true, 5), Row(m, 2, false, 5), Row(m, 3, true, 5)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->duplicates, 3);
  ASSERT_TRUE(s->MoveRecentReports().ok());
  EXPECT_EQ(*s->ReportCount(), 3);
  EXPECT_EQ(Counts(*s, m).size(), 1u);
  EXPECT_EQ(std::get<3>(Counts(*s, m)[0]), 3);
}

// A crash during a move's copy phase leaves rows behind the hour's watermark in both files
// (copied into the keyed `reports`, not yet deleted from `recent_reports`). Readers count them
// once, and the next open keeps one copy of each report.
TEST(RecentReportsTest, CrashBehindTheWatermarkCountsEachReportOnce) {
  const std::string path = TempDbPath("watermark");
  int64_t m = 0;
  {
    std::unique_ptr<SqliteStorage> s = OpenOrDie(path, 1000);
    ASSERT_NE(s, nullptr);
    m = s->CreateMetric(NewMetric("m"))->id;
    std::vector<ReportRow> rows;
    for (int i = 1; i <= 10; ++i) rows.push_back(Row(m, i, i % 2 == 0, 5));
    ASSERT_TRUE(s->AppendReports(rows).ok());
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_TRUE(AttachKeyedReports(db, path).ok());
  auto count = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    int64_t n = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
      n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
  };
  // The four smallest ids copied, the watermark at the fourth.
  ASSERT_EQ(sqlite3_exec(db,
                         "BEGIN; INSERT INTO keyed.watermarks SELECT metric_id, event_time, 0, "
                         "max(seq), NULL FROM recent_reports GROUP BY metric_id, event_time; "
                         "UPDATE keyed.watermarks SET last_id = (SELECT report_id FROM "
                         "recent_reports ORDER BY report_id LIMIT 1 OFFSET 3); INSERT INTO "
                         "keyed.reports(metric_id, event_time, report_id, version, bit, "
                         "labelset_id) SELECT metric_id, event_time, report_id, version, bit, "
                         "labelset_id FROM recent_reports ORDER BY report_id LIMIT 4; COMMIT;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  EXPECT_EQ(count("SELECT count(*) FROM keyed.reports"), 4);
  EXPECT_EQ(count("SELECT count(*) FROM recent_reports"), 10);
  EXPECT_EQ(count("SELECT count(*) FROM stored_reports"), 10);
  EXPECT_EQ(count("SELECT count(DISTINCT report_id) FROM stored_reports"), 10);
  sqlite3_close(db);

  std::unique_ptr<SqliteStorage> s = OpenOrDie(path, 1000);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(*s->ReportCount(), 10);
  EXPECT_EQ(s->RecentReportCount(), 6);
  std::vector<ReportRow> again;
  for (int i = 1; i <= 11; ++i) again.push_back(Row(m, i, i % 2 == 0, 5));
  absl::StatusOr<AppendResult> r = s->AppendReports(again);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->duplicates, 10);
  EXPECT_EQ(r->accepted, 1);
  ASSERT_TRUE(s->MoveRecentReports().ok());
  EXPECT_EQ(s->RecentReportCount(), 0);
  EXPECT_EQ(*s->ReportCount(), 11);
  EXPECT_EQ(std::get<3>(Counts(*s, m)[0]), 11);
}

// Appends go on while the mover thread works through a large metric-hour.
TEST(RecentReportsTest, BackgroundMoveKeepsEveryReportOnce) {
  std::unique_ptr<SqliteStorage> s = OpenOrDie(TempDbPath("background"), 20'000, true);
  ASSERT_NE(s, nullptr);
  const int64_t m = s->CreateMetric(NewMetric("m"))->id;
  int64_t accepted = 0;
  for (int round = 0; round < 40; ++round) {
    std::vector<ReportRow> batch;
    for (int i = 0; i < 2000; ++i) {
      ReportRow r = Row(m, 0, i % 2 == 0, 7);
      const int64_t n = round * 2000 + i;
      std::memcpy(r.report_id.data(), &n, sizeof n);
      batch.push_back(r);
    }
    // Every batch also re-sends the previous batch's first report.
    if (round > 0) {
      ReportRow again = Row(m, 0, true, 7);
      const int64_t n = (round - 1) * 2000;
      std::memcpy(again.report_id.data(), &n, sizeof n);
      batch.push_back(again);
    }
    absl::StatusOr<AppendResult> r = s->AppendReports(batch);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->accepted, 2000);
    EXPECT_EQ(r->duplicates, round > 0 ? 1 : 0);
    accepted += r->accepted;
  }
  ASSERT_TRUE(s->MoveRecentReports().ok());
  EXPECT_EQ(s->RecentReportCount(), 0);
  EXPECT_EQ(*s->ReportCount(), accepted);
  EXPECT_EQ(std::get<3>(Counts(*s, m)[0]), accepted);
}

// A move runs in many transactions; readers in between must see every report exactly once, both
// through ReportCount and through the stored_reports view on another connection.
TEST(RecentReportsTest, ReaderDuringAMoveNeverSeesARowTwice) {
  const std::string path = TempDbPath("move_reader");
  auto opened =
      SqliteStorage::Open({.path = path, .background_moves = false, .move_chunk_rows = 100});
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<SqliteStorage> s = *std::move(opened);
  const int64_t m = s->CreateMetric(NewMetric("m"))->id;
  constexpr int64_t kReports = 5000;
  std::vector<ReportRow> batch;
  for (int64_t n = 0; n < kReports; ++n) {
    ReportRow r = Row(m, 0, n % 3 == 0, 9);
    std::memcpy(r.report_id.data(), &n, sizeof n);
    batch.push_back(r);
  }
  ASSERT_TRUE(s->AppendReports(batch).ok());

  sqlite3* view_db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &view_db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  ASSERT_TRUE(AttachKeyedReports(view_db, path).ok());
  std::atomic<bool> moving{true};
  std::atomic<int> reads{0};
  std::atomic<int> wrong{0};
  std::atomic<int64_t> last_wrong{0};
  std::thread reader([&] {
    while (moving.load()) {
      absl::StatusOr<int64_t> n = s->ReportCount();
      int64_t in_view = -1;
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(view_db, "SELECT count(*) FROM stored_reports", -1, &st, nullptr) ==
              SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        in_view = sqlite3_column_int64(st, 0);
      }
      sqlite3_finalize(st);
      if (!n.ok() || *n != kReports || in_view != kReports) {
        ++wrong;
        last_wrong = n.ok() && *n != kReports ? *n : in_view;
      }
      ++reads;
    }
  });
  while (reads.load() == 0) std::this_thread::yield();
  const int before = reads.load();
  const absl::Status moved = s->MoveRecentReports();
  const int during = reads.load() - before;
  moving = false;
  reader.join();
  sqlite3_close(view_db);
  ASSERT_TRUE(moved.ok()) << moved;
  EXPECT_EQ(s->RecentReportCount(), 0);
  EXPECT_EQ(wrong.load(), 0) << "a reader saw " << last_wrong.load() << " reports instead of "
                             << kReports << " during the move";
  EXPECT_GT(during, 0) << "the reader never ran during the move";
  EXPECT_EQ(*s->ReportCount(), kReports);
}

}  // namespace recent_reports_test
}  // namespace
}  // namespace deniable::server
