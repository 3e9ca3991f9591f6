#include "server/storage/group_commit_storage.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace group_commit_storage_test {

using ::testing::ElementsAre;

constexpr uint8_t kPoison = 0xFF;  // a batch holding this id byte fails in FaultyStorage

// Rows are of metric 1, which every storage of these tests creates first (a storage refuses rows
// of a metric it does not have).
template <typename S>
std::unique_ptr<S> WithMetric(std::unique_ptr<S> storage) {
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(testing_util::NewMetric("m"));
  EXPECT_TRUE(m.ok() && m->id == 1) << m.status();
  return storage;
}

ReportRow Row(uint32_t id, bool bit = true, int64_t hour = 100) {
  ReportRow r;
  r.metric_id = 1;
  r.design_version = 1;
  if (bit) r.counters = {0};
  r.report_id.fill(0);
  r.report_id[0] = static_cast<uint8_t>(id);
  r.report_id[1] = static_cast<uint8_t>(id >> 8);
  r.report_id[2] = static_cast<uint8_t>(id >> 16);
  r.event_time_seconds = hour * 3600;
  return r;
}

std::vector<ReportRow> Rows(uint32_t first, uint32_t count) {
  std::vector<ReportRow> rows;
  for (uint32_t i = 0; i < count; ++i) rows.push_back(Row(first + i));
  return rows;
}

bool HasPoison(absl::Span<const ReportRow> rows) {
  for (const ReportRow& r : rows) {
    if (r.report_id[15] == kPoison) return true;
  }
  return false;
}

// MemoryStorage whose appends can be held at a gate, that records the group sizes it sees and
// that fails (writing nothing) any transaction holding a poisoned row.
class FaultyStorage : public MemoryStorage {
 public:
  FaultyStorage() { EXPECT_TRUE(CreateMetric(testing_util::NewMetric("m")).ok()); }
  absl::StatusOr<AppendResult> AppendReports(absl::Span<const ReportRow> rows) override {
    const absl::Span<const ReportRow> one[] = {rows};
    absl::StatusOr<std::vector<AppendResult>> r = AppendBatches(one);
    if (!r.ok()) return r.status();
    return r->front();
  }
  absl::StatusOr<std::vector<AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const ReportRow>> batches) override {
    {
      absl::MutexLock lock(&mu_);
      group_sizes_.push_back(static_cast<int>(batches.size()));
      ++inside_;
      mu_.Await(absl::Condition(&open_));
      --inside_;
    }
    for (absl::Span<const ReportRow> b : batches) {
      if (HasPoison(b)) return absl::InternalError("poisoned batch");
    }
    return MemoryStorage::AppendBatches(batches);
  }
  void Close() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }
  void Open() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  void WaitUntilInside() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(
        +[](int* inside) { return *inside > 0; }, &inside_));
  }
  // Whether `n` appends are held at the gate at once within `timeout`.
  bool InsideAtOnce(int n, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return inside_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
  }
  std::vector<int> group_sizes() {
    absl::MutexLock lock(&mu_);
    return group_sizes_;
  }

 private:
  absl::Mutex mu_;
  bool open_ = true;
  int inside_ = 0;
  std::vector<int> group_sizes_;
};

// Starts AppendReports(rows) on a thread; done() tells whether it has returned.
class Call {
 public:
  Call(GroupCommitStorage* storage, std::vector<ReportRow> rows) : rows_(std::move(rows)) {
    thread_ = std::thread([this, storage] {
      absl::StatusOr<AppendResult> r = storage->AppendReports(rows_);
      absl::MutexLock lock(&mu_);
      result_ = std::move(r);
      done_ = true;
    });
  }
  ~Call() {
    if (thread_.joinable()) thread_.join();
  }
  bool done() {
    absl::MutexLock lock(&mu_);
    return done_;
  }
  absl::StatusOr<AppendResult> Wait() {
    if (thread_.joinable()) thread_.join();
    absl::MutexLock lock(&mu_);
    return result_;
  }

 private:
  std::vector<ReportRow> rows_;
  absl::Mutex mu_;
  bool done_ = false;
  absl::StatusOr<AppendResult> result_;
  std::thread thread_;
};

// Waits (bounded) until `n` calls are queued behind the committer.
void WaitForQueued(GroupCommitStorage& storage, int n) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (storage.QueuedCalls() < n + 1 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(storage.QueuedCalls(), n + 1);
}

TEST(GroupCommitStorageTest, CallsWaitingBehindACommitShareTheNextTransaction) {
  auto owned = std::make_unique<FaultyStorage>();
  FaultyStorage* target = owned.get();
  GroupCommitStorage storage(std::move(owned));
  target->Close();
  Call first(&storage, Rows(0, 2));
  target->WaitUntilInside();
  std::vector<std::unique_ptr<Call>> waiting;
  for (uint32_t i = 0; i < 3; ++i)
    waiting.push_back(std::make_unique<Call>(&storage, Rows(10 + 10 * i, 3)));
  WaitForQueued(storage, 3);
  // Nothing is acknowledged while the transaction is held.
  EXPECT_FALSE(first.done());
  for (auto& c : waiting) EXPECT_FALSE(c->done());
  target->Open();
  absl::StatusOr<AppendResult> r = first.Wait();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 2);
  for (auto& c : waiting) {
    absl::StatusOr<AppendResult> w = c->Wait();
    ASSERT_TRUE(w.ok()) << w.status();
    EXPECT_EQ(w->accepted, 3);
    EXPECT_EQ(w->duplicates, 0);
  }
  EXPECT_THAT(target->group_sizes(), ElementsAre(1, 3));
  EXPECT_EQ(storage.stats().groups, 2);
  EXPECT_EQ(target->ReportCount(), 11);
}

TEST(GroupCommitStorageTest, FailingBatchDoesNotFailTheOthersInItsGroup) {
  auto owned = std::make_unique<FaultyStorage>();
  FaultyStorage* target = owned.get();
  GroupCommitStorage storage(std::move(owned));
  target->Close();
  Call first(&storage, Rows(0, 1));
  target->WaitUntilInside();
  std::vector<ReportRow> poisoned = Rows(100, 4);
  poisoned[2].report_id[15] = kPoison;
  Call good_a(&storage, Rows(200, 5));
  Call bad(&storage, poisoned);
  Call good_b(&storage, Rows(300, 6));
  WaitForQueued(storage, 3);
  target->Open();
  ASSERT_TRUE(first.Wait().ok());
  absl::StatusOr<AppendResult> a = good_a.Wait();
  absl::StatusOr<AppendResult> b = good_b.Wait();
  absl::StatusOr<AppendResult> x = bad.Wait();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->accepted, 5);
  EXPECT_EQ(b->accepted, 6);
  EXPECT_EQ(x.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(storage.stats().fallbacks, 1);
  // Nothing of the failed batch was stored: 1 + 5 + 6.
  EXPECT_EQ(target->ReportCount(), 12);
}

TEST(GroupCommitStorageTest, SingleFailingBatchGetsItsError) {
  GroupCommitStorage storage(std::make_unique<FaultyStorage>());
  std::vector<ReportRow> rows = Rows(0, 2);
  rows[1].report_id[15] = kPoison;
  EXPECT_EQ(storage.AppendReports(rows).status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(storage.stats().fallbacks, 0);
}

TEST(GroupCommitStorageTest, RowRepeatedAcrossGroupedBatchesCountsOnceForTheLaterBatch) {
  auto owned = std::make_unique<FaultyStorage>();
  FaultyStorage* target = owned.get();
  GroupCommitStorage storage(std::move(owned));
  target->Close();
  Call first(&storage, Rows(0, 1));
  target->WaitUntilInside();
  Call earlier(&storage, Rows(10, 4));  // ids 10..13
  WaitForQueued(storage, 1);
  Call later(&storage, Rows(12, 4));  // ids 12..15: two repeat `earlier`
  WaitForQueued(storage, 2);
  target->Open();
  ASSERT_TRUE(first.Wait().ok());
  absl::StatusOr<AppendResult> e = earlier.Wait();
  absl::StatusOr<AppendResult> l = later.Wait();
  ASSERT_TRUE(e.ok() && l.ok());
  EXPECT_EQ(e->accepted, 4);
  EXPECT_EQ(e->duplicates, 0);
  EXPECT_EQ(l->accepted, 2);
  EXPECT_EQ(l->duplicates, 2);
  EXPECT_THAT(target->group_sizes(), ElementsAre(1, 2));
}

std::string TempDbPath(const std::string& name) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/group_commit_test_", name, "_", ::getpid(), ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
  return path;
}

// Many threads on SQLite, with ids overlapping between neighbours: every call's counts add up,
// the totals equal the distinct ids, a re-sent batch is all duplicates, and every acknowledged
// report is in the database after reopening it.
TEST(GroupCommitStorageTest, ConcurrentCallersGetExactCountsAndAcknowledgedReportsSurviveReopen) {
  const std::string path = TempDbPath("concurrent");
  constexpr int kThreads = 8;
  constexpr int kCalls = 40;
  constexpr uint32_t kBatch = 25;
  std::atomic<int64_t> accepted{0};
  std::atomic<int> failures{0};
  {
    absl::StatusOr<std::unique_ptr<SqliteStorage>> sqlite =
        SqliteStorage::Open({.path = path, .durability = Durability::kNormal});
    ASSERT_TRUE(sqlite.ok()) << sqlite.status();
    GroupCommitStorage storage(WithMetric(*std::move(sqlite)));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int c = 0; c < kCalls; ++c) {
          // Thread t's call c covers ids [base, base + kBatch); thread t + 1 starts half a batch
          // later, so neighbours overlap.
          const uint32_t base = static_cast<uint32_t>(c * 1000 + t * (kBatch / 2));
          std::vector<ReportRow> rows = Rows(base, kBatch);
          absl::StatusOr<AppendResult> r = storage.AppendReports(rows);
          if (!r.ok() || r->accepted + r->duplicates != kBatch) {
            ++failures;
            continue;
          }
          accepted += r->accepted;
          absl::StatusOr<AppendResult> again = storage.AppendReports(rows);
          if (!again.ok() || again->accepted != 0 || again->duplicates != kBatch) ++failures;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_LT(storage.stats().groups, 2 * kThreads * kCalls) << "no call shared a commit";
  }
  EXPECT_EQ(failures.load(), 0);
  // Distinct ids per call index c: [c*1000, c*1000 + (kThreads - 1) * 12 + 25).
  const int64_t distinct = kCalls * ((kThreads - 1) * (kBatch / 2) + kBatch);
  EXPECT_EQ(accepted.load(), distinct);
  absl::StatusOr<std::unique_ptr<SqliteStorage>> reopened = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  absl::StatusOr<int64_t> stored = (*reopened)->ReportCount();
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(*stored, distinct);
  absl::StatusOr<std::vector<CountRow>> counts = (*reopened)->ReadCounts(1, 0, 1'000'000);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ(counts->front().n, distinct);
}

TEST(GroupCommitStorageTest, AsyncCallbackRunsOnlyAfterItsTransactionCommits) {
  auto owned = std::make_unique<FaultyStorage>();
  FaultyStorage* target = owned.get();
  GroupCommitStorage storage(std::move(owned));
  target->Close();
  Call first(&storage, Rows(0, 1));
  target->WaitUntilInside();
  const std::vector<ReportRow> rows = {Row(7), Row(8), Row(7)};
  absl::Notification called;
  absl::StatusOr<AppendResult> result;
  storage.AppendReportsAsync(rows, [&](absl::StatusOr<AppendResult> r) {
    result = std::move(r);
    called.Notify();
  });
  WaitForQueued(storage, 1);
  EXPECT_FALSE(called.HasBeenNotified());
  target->Open();
  ASSERT_TRUE(called.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->accepted, 2);
  EXPECT_EQ(result->duplicates, 1);
  EXPECT_TRUE(first.Wait().ok());
}

TEST(GroupCommitStorageTest, DestructorCommitsWhatIsQueued) {
  auto owned = std::make_unique<FaultyStorage>();
  FaultyStorage* target = owned.get();
  std::atomic<int> first{0};
  std::atomic<int> second{0};
  const std::vector<ReportRow> first_rows = Rows(0, 5);
  const std::vector<ReportRow> second_rows = Rows(100, 7);
  auto storage = std::make_unique<GroupCommitStorage>(std::move(owned));
  GroupCommitStorage* raw = storage.get();
  target->Close();
  raw->AppendReportsAsync(first_rows, [&](absl::StatusOr<AppendResult> r) {
    if (r.ok() && r->accepted == 5) ++first;
  });
  target->WaitUntilInside();  // the committer holds the first batch at the gate
  raw->AppendReportsAsync(second_rows, [&](absl::StatusOr<AppendResult> r) {
    if (r.ok() && r->accepted == 7) ++second;
  });
  // The second writer is queued, not inside the committer, when the destructor begins.
  ASSERT_EQ(raw->QueuedCalls(), 2);
  std::thread destroyer([&] { storage.reset(); });
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!raw->Stopping() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
  ASSERT_TRUE(raw->Stopping());
  EXPECT_EQ(second.load(), 0);
  target->Open();
  destroyer.join();
  EXPECT_EQ(first.load(), 1);
  // (target died with the storage: the callbacks' accepted counts prove the commits.)
  EXPECT_EQ(second.load(), 1) << "the queued writer was dropped by the destructor";
}

TEST(GroupCommitStorageTest, BackpressureStillAdmitsABatchLargerThanTheQueueBound) {
  GroupCommitStorage storage(WithMetric(std::make_unique<MemoryStorage>()),
                             {.max_group_rows = 4, .max_queued_rows = 4});
  absl::StatusOr<AppendResult> r = storage.AppendReports(Rows(0, 10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 10);
}

// With two committers a second group commits while the first is still in its transaction (the
// PostgreSQL setting: one group per writing session); each caller still gets its own result.
TEST(GroupCommitCommittersTest, TwoCommittersRunTwoGroupsAtOnce) {
  auto faulty = std::make_unique<FaultyStorage>();
  FaultyStorage* target = faulty.get();
  GroupCommitStorage storage(std::move(faulty), GroupCommitOptions{.committers = 2});
  target->Close();
  Call first(&storage, Rows(0, 3));
  target->WaitUntilInside();
  Call second(&storage, Rows(2, 3));  // id 2 repeats one of the first call's
  EXPECT_TRUE(target->InsideAtOnce(2, absl::Seconds(10))) << "the second group waited";
  target->Open();
  absl::StatusOr<AppendResult> a = first.Wait(), b = second.Wait();
  ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
  EXPECT_EQ(a->accepted + b->accepted, 5);
  EXPECT_EQ(a->duplicates + b->duplicates, 1);
  EXPECT_THAT(target->group_sizes(), ElementsAre(1, 1));
  EXPECT_EQ(storage.stats().groups, 2);
}

}  // namespace group_commit_storage_test
}  // namespace
}  // namespace deniable::server
