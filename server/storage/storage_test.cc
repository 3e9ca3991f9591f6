#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_error.h"
#include "server/storage/storage_test_util.h"
#include "server/storage/testing/test_postgres.h"

namespace deniable::server {
namespace {
namespace storage_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

using testing_util::CategoricalRow;
using testing_util::NewCategoricalMetric;
using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;
using testing_util::TestPostgres;
using testing_util::Yes;

// The storage conformance suite: every backend (memory, SQLite, PostgreSQL) passes the same tests.
struct StorageFactory {
  std::string name;
  // Opens a second storage on the same database (as a second collector would); nullptr when the
  // backend has no shared database (memory).
  // `max_label_values`: the cap on distinct values of each label key (label_values.h).
  std::function<std::unique_ptr<Storage>(const std::string& test, std::string* handle,
                                         int64_t max_label_values)>
      make;
  bool shared_database = false;
  friend void PrintTo(const StorageFactory& f, std::ostream* os) { *os << f.name; }
};

class StorageTest : public ::testing::TestWithParam<StorageFactory> {
 protected:
  void SetUp() override {
    if (GetParam().name == "postgresql") DENIABLE_SKIP_WITHOUT_POSTGRES();
    storage_ = GetParam().make("param", &handle_, kDefaultMaxLabelValues);
    ASSERT_NE(storage_, nullptr);
  }
  std::string handle_;  // the database: a file path or a PostgreSQL URI
  std::unique_ptr<Storage> storage_;
};

TEST_P(StorageTest, CreatedMetricIsFoundWithItsDesign) {
  absl::StatusOr<StoredMetric> created = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(created.ok()) << created.status();
  absl::StatusOr<StoredMetric> found = storage_->GetMetric("m");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->id, created->id);
  EXPECT_EQ(found->description, "question");
  ASSERT_EQ(found->designs.size(), 1u);
  EXPECT_EQ(found->designs[0].parameters, "params");
  EXPECT_DOUBLE_EQ(found->designs[0].a, 0.75);
}

TEST_P(StorageTest, CreateFailsWhenNameIsTaken) {
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("m")).ok());
  absl::StatusOr<StoredMetric> again = storage_->CreateMetric(NewMetric("m"));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(again.status().message(), HasSubstr("\"m\""));
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
}

TEST_P(StorageTest, GetFailsForUnknownMetric) {
  EXPECT_EQ(storage_->GetMetric("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StorageTest, ListIsOrderedByName) {
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("b")).ok());
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("a")).ok());
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "a");
  EXPECT_EQ((*all)[1].name, "b");
}

TEST_P(StorageTest, AppendCountsEachReportIdOnce) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  std::vector<ReportRow> batch = {Row(m->id, 1, true, 10), Row(m->id, 2, false, 10),
                                  Row(m->id, 1, true, 10)};  // id 1 twice in one batch
  absl::StatusOr<AppendResult> first = storage_->AppendReports(batch);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->accepted, 2);
  EXPECT_EQ(first->duplicates, 1);
  absl::StatusOr<AppendResult> resent = storage_->AppendReports(batch);  // a retry
  ASSERT_TRUE(resent.ok());
  EXPECT_EQ(resent->accepted, 0);
  EXPECT_EQ(resent->duplicates, 3);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_EQ(Yes((*counts)[0]), 1);
}

// Issue 26: first-in-day/week/month reports are counted beside the counts, in the same append
// and dedup (a duplicate adds no first), with their yes and support counts; unknown flags (-1)
// count as no first; the metric options round-trip.
TEST_P(StorageTest, WindowFirstsAreCountedWithTheirReportOnce) {
  StoredMetric once = NewMetric("survey");
  once.reporting_once = true;
  once.window_firsts_off = true;
  absl::StatusOr<StoredMetric> survey = storage_->CreateMetric(once);
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  absl::StatusOr<StoredMetric> vote = storage_->CreateMetric(NewCategoricalMetric("vote"));
  ASSERT_TRUE(survey.ok() && m.ok() && vote.ok());
  EXPECT_TRUE(survey->reporting_once && survey->window_firsts_off);
  EXPECT_TRUE(storage_->GetMetric("survey")->reporting_once);
  EXPECT_TRUE(storage_->GetMetric("survey")->window_firsts_off);
  EXPECT_FALSE(storage_->GetMetric("m")->reporting_once);
  auto with = [](ReportRow r, int firsts) {
    r.window_firsts = firsts;
    return r;
  };
  std::vector<ReportRow> batch = {with(Row(m->id, 1, true, 10), 7),
                                  with(Row(m->id, 2, false, 10), 1),
                                  with(Row(m->id, 3, true, 10), 0),
                                  Row(m->id, 4, true, 10),
                                  with(Row(m->id, 1, true, 10), 7),  // a duplicate: no first
                                  with(CategoricalRow(vote->id, 5, {1, 3}, 10), 3),
                                  with(CategoricalRow(vote->id, 6, {3}, 10), 1)};
  absl::StatusOr<AppendResult> r = storage_->AppendReports(batch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 6);
  ASSERT_TRUE(storage_->AppendReports({with(Row(m->id, 2, false, 10), 1)}).ok());  // a retry
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 1u);
  const CountRow& c = (*counts)[0];
  EXPECT_EQ(c.n, 4);
  EXPECT_EQ(c.firsts[0].n, 2);  // day: ids 1 and 2
  EXPECT_EQ(Yes(c.firsts[0]), 1);
  EXPECT_EQ(c.firsts[1].n, 1);  // week: id 1
  EXPECT_EQ(c.firsts[2].n, 1);  // month: id 1
  EXPECT_EQ(Yes(c.firsts[2]), 1);
  absl::StatusOr<std::vector<CountRow>> cat = storage_->ReadCounts(vote->id, 0, 1 << 30);
  ASSERT_TRUE(cat.ok()) << cat.status();
  ASSERT_EQ(cat->size(), 1u);
  EXPECT_EQ((*cat)[0].firsts[0].n, 2);
  EXPECT_THAT((*cat)[0].firsts[0].counters.Dense(), ElementsAre(0, 1, 0, 2));
  EXPECT_EQ((*cat)[0].firsts[1].n, 1);
  EXPECT_THAT((*cat)[0].firsts[1].counters.Dense(), ElementsAre(0, 1, 0, 1));
  EXPECT_EQ((*cat)[0].firsts[2].n, 0);
  ASSERT_TRUE(storage_->DeleteMetric("m").ok());
  absl::StatusOr<StoredMetric> again = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(storage_->ReadCounts(again->id, 0, 1 << 30)->empty());
}

TEST_P(StorageTest, ReadCountsKeepsHalfOpenRangeAndLabels) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  absl::StatusOr<StoredMetric> other = storage_->CreateMetric(NewMetric("other"));
  ASSERT_TRUE(m.ok() && other.ok());
  ASSERT_TRUE(
      storage_
          ->AppendReports({Row(m->id, 1, true, 10, "region=N"), Row(m->id, 2, true, 11, "region=S"),
                           Row(m->id, 3, false, 11, "region=S"), Row(m->id, 4, true, 12),
                           Row(other->id, 5, true, 11)})
          .ok());
  absl::StatusOr<std::vector<CountRow>> counts =
      storage_->ReadCounts(m->id, 11 * 3600, 12 * 3600);  // [11h, 12h)
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].event_time_seconds, 11 * 3600);
  EXPECT_EQ((*counts)[0].labels, "region=S");
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_EQ(Yes((*counts)[0]), 1);
}

TEST_P(StorageTest, MetricFieldsAndBinaryParametersRoundTrip) {
  StoredMetric metric = NewMetric("fields.m-1");
  metric.description = "a \"quoted\" question, with \\ and {braces}";
  metric.time_precision_seconds = 60;
  metric.min_reports = 7;
  metric.reporting_period_seconds = 600;
  metric.randomization = 2;
  metric.designs[0].parameters = std::string("\0\x01\xff\"\\", 5);
  metric.designs[0].b = 0.1;
  ASSERT_TRUE(storage_->CreateMetric(metric).ok());
  absl::StatusOr<StoredMetric> found = storage_->GetMetric("fields.m-1");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->description, metric.description);
  EXPECT_EQ(found->time_precision_seconds, 60u);
  EXPECT_EQ(found->min_reports, 7u);
  EXPECT_EQ(found->reporting_period_seconds, 600u);
  EXPECT_EQ(found->randomization, 2);
  EXPECT_EQ(found->created_time_seconds, 1000);
  ASSERT_EQ(found->designs.size(), 1u);
  EXPECT_EQ(found->designs[0].parameters, metric.designs[0].parameters);
  EXPECT_EQ(found->designs[0].b, 0.1);  // exact: no precision lost on the way
  EXPECT_EQ(found->designs[0].created_time_seconds, 1000);
}

TEST_P(StorageTest, AddDesignVersionAcceptsOnlyTheNextVersion) {
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("m")).ok());
  EXPECT_EQ(
      storage_->AddDesignVersion("nope", StoredDesign{2, "p2", 0.6, 0.4, 2000}).status().code(),
      absl::StatusCode::kNotFound);
  absl::StatusOr<StoredMetric> skipped =
      storage_->AddDesignVersion("m", StoredDesign{3, "p3", 0.6, 0.4, 2000});
  EXPECT_EQ(skipped.status().code(), absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<StoredMetric> added =
      storage_->AddDesignVersion("m", StoredDesign{2, "p2", 0.6, 0.4, 2000});
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_EQ(added->designs.size(), 2u);
  EXPECT_EQ(added->designs[1].version, 2u);
  EXPECT_EQ(
      storage_->AddDesignVersion("m", StoredDesign{2, "again", 0.6, 0.4, 2000}).status().code(),
      absl::StatusCode::kFailedPrecondition);
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  ASSERT_EQ((*all)[0].designs.size(), 2u);
  EXPECT_EQ((*all)[0].designs[1].parameters, "p2");
}

TEST_P(StorageTest, LaterBatchOfOneCallCountsARepeatedRowAsItsDuplicate) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  const std::vector<ReportRow> first = {Row(m->id, 1, true, 3), Row(m->id, 2, true, 3)};
  const std::vector<ReportRow> second = {Row(m->id, 2, true, 3), Row(m->id, 3, false, 4)};
  const absl::Span<const ReportRow> batches[] = {first, second};
  absl::StatusOr<std::vector<AppendResult>> got = storage_->AppendBatches(batches);
  if (got.status().code() == absl::StatusCode::kUnimplemented) GTEST_SKIP();
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].accepted, 2);
  EXPECT_EQ((*got)[0].duplicates, 0);
  EXPECT_EQ((*got)[1].accepted, 1);
  EXPECT_EQ((*got)[1].duplicates, 1);
}

// Per-metric results (the Prometheus metric label, docs/operations.md): each metric's own
// accepted and duplicates, summing to the totals, in AppendReports and AppendBatches alike.
MATCHER_P3(MetricCount, metric_id, accepted, duplicates, "") {
  return arg.metric_id == metric_id && arg.accepted == accepted && arg.duplicates == duplicates;
}

TEST_P(StorageTest, AppendSplitsAcceptedAndDuplicatesByMetric) {
  absl::StatusOr<StoredMetric> a = storage_->CreateMetric(NewMetric("a"));
  absl::StatusOr<StoredMetric> b = storage_->CreateMetric(NewMetric("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(storage_->AppendReports({Row(a->id, 1, true, 10)}).ok());
  // a: id 1 stored before, id 2 new; b: ids 1 and 3 new (ids are per metric), id 3 again.
  absl::StatusOr<AppendResult> got = storage_->AppendReports(
      {Row(a->id, 1, true, 10), Row(b->id, 1, true, 10), Row(a->id, 2, false, 10),
       Row(b->id, 3, true, 11), Row(b->id, 3, true, 11)});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->accepted, 3);
  EXPECT_EQ(got->duplicates, 2);
  EXPECT_THAT(got->per_metric,
              ::testing::UnorderedElementsAre(MetricCount(a->id, 1, 1), MetricCount(b->id, 2, 1)));

  const std::vector<ReportRow> first = {Row(a->id, 5, true, 3)};
  const std::vector<ReportRow> second = {Row(a->id, 5, true, 3), Row(b->id, 5, false, 3)};
  const absl::Span<const ReportRow> batches[] = {first, second};
  absl::StatusOr<std::vector<AppendResult>> grouped = storage_->AppendBatches(batches);
  if (grouped.status().code() == absl::StatusCode::kUnimplemented) return;
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  ASSERT_EQ(grouped->size(), 2u);
  EXPECT_THAT((*grouped)[0].per_metric, ElementsAre(MetricCount(a->id, 1, 0)));
  EXPECT_THAT((*grouped)[1].per_metric,
              ::testing::UnorderedElementsAre(MetricCount(a->id, 0, 1), MetricCount(b->id, 1, 0)));
}

TEST_P(StorageTest, LabelsWithQuotesBackslashesAndBracesRoundTrip) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  const std::string odd = "a=\"x\\y\",b={1,2},c=NULL";
  ASSERT_TRUE(storage_->AppendReports({Row(m->id, 1, true, 2, odd), Row(m->id, 2, true, 2)}).ok());
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 2u);
  std::vector<std::string> labels = {(*counts)[0].labels, (*counts)[1].labels};
  std::sort(labels.begin(), labels.end());
  EXPECT_THAT(labels, ElementsAre("", odd));
}

// Threads append overlapping ids at once: each report is accepted by exactly one call.
TEST_P(StorageTest, ConcurrentAppendsOfOverlappingIdsCountEachReportOnce) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  constexpr int kThreads = 4, kIds = 600;
  std::atomic<int64_t> accepted{0}, duplicates{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int start = 0; start < kIds; start += 50) {
        std::vector<ReportRow> batch;
        // Thread t walks the ids in its own order, so batches of different threads overlap.
        for (int i = 0; i < 50; ++i) {
          const int id = (start + i + t * 150) % kIds;
          batch.push_back(Row(m->id, id, id % 3 == 0, 7 + id % 2));
        }
        absl::StatusOr<AppendResult> r = storage_->AppendReports(batch);
        ASSERT_TRUE(r.ok()) << r.status();
        accepted += r->accepted;
        duplicates += r->duplicates;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(accepted.load(), kIds);
  EXPECT_EQ(duplicates.load(), kThreads * kIds - kIds);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  int64_t n = 0, yes = 0;
  for (const CountRow& c : *counts) n += c.n, yes += Yes(c);
  EXPECT_EQ(n, kIds);
  EXPECT_EQ(yes, kIds / 3);
}

// The model check: seeded random multi-batch calls with many re-sent ids over a few metric-hours,
// two metrics and two label sets; every AppendResult and the counts must equal MemoryStorage's.
TEST_P(StorageTest, BehavesLikeTheModelOnASeededWorkload) {
  MemoryStorage model;
  const int64_t m1 = storage_->CreateMetric(NewMetric("m1"))->id;
  const int64_t m2 = storage_->CreateMetric(NewMetric("m2"))->id;
  const int64_t model_m1 = model.CreateMetric(NewMetric("m1"))->id;
  const int64_t model_m2 = model.CreateMetric(NewMetric("m2"))->id;
  std::mt19937_64 rng(20261123);
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int64_t accepted = 0, duplicates = 0;
  for (int round = 0; round < 150; ++round) {
    std::vector<std::vector<ReportRow>> batches(uniform(1, 3)), model_batches;
    for (auto& batch : batches) {
      const int rows = uniform(1, 25);
      for (int i = 0; i < rows; ++i) {
        const bool second = uniform(0, 3) == 0;
        batch.push_back(Row(second ? m2 : m1, uniform(0, 199), uniform(0, 1) == 1,
                            uniform(0, 5) * 9, uniform(0, 1) == 1 ? "k=v" : ""));
      }
      model_batches.push_back(batch);
      for (ReportRow& r : model_batches.back())
        r.metric_id = r.metric_id == m1 ? model_m1 : model_m2;
    }
    std::vector<absl::Span<const ReportRow>> spans(batches.begin(), batches.end());
    absl::StatusOr<std::vector<AppendResult>> got = storage_->AppendBatches(spans);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), batches.size());
    for (size_t b = 0; b < batches.size(); ++b) {
      absl::StatusOr<AppendResult> want = model.AppendReports(model_batches[b]);
      ASSERT_TRUE(want.ok());
      ASSERT_EQ((*got)[b].accepted, want->accepted) << "round " << round << " batch " << b;
      ASSERT_EQ((*got)[b].duplicates, want->duplicates) << "round " << round << " batch " << b;
      accepted += want->accepted;
      duplicates += want->duplicates;
    }
  }
  EXPECT_GT(accepted, 500);
  EXPECT_GT(duplicates, 500);
  for (auto [mine, theirs] : {std::pair{m1, model_m1}, std::pair{m2, model_m2}}) {
    absl::StatusOr<std::vector<CountRow>> got = storage_->ReadCounts(mine, 0, 1 << 30);
    absl::StatusOr<std::vector<CountRow>> want = model.ReadCounts(theirs, 0, 1 << 30);
    ASSERT_TRUE(got.ok() && want.ok()) << got.status();
    auto flat = [](const std::vector<CountRow>& rows) {
      std::vector<std::tuple<uint32_t, int64_t, std::string, int64_t, int64_t>> out;
      for (const CountRow& r : rows)
        out.emplace_back(r.design_version, r.event_time_seconds, r.labels, r.n, Yes(r));
      std::sort(out.begin(), out.end());
      return out;
    };
    EXPECT_EQ(flat(*got), flat(*want));
  }
}

// Two storages on one database, as two collectors: a report sent to both is counted once, and a
// design version added through one is read by the other.
TEST_P(StorageTest, SecondCollectorOnTheSameDatabaseSharesDedupAndDesigns) {
  if (!GetParam().shared_database) GTEST_SKIP() << "no shared database for this backend";
  auto other = PostgresStorage::Open({.uri = handle_});
  ASSERT_TRUE(other.ok()) << other.status();
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*other)->AppendReports({Row(m->id, 1, true, 5), Row(m->id, 2, false, 5)}).ok());
  absl::StatusOr<AppendResult> r =
      storage_->AppendReports({Row(m->id, 2, false, 5), Row(m->id, 3, true, 5)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  EXPECT_EQ(r->duplicates, 1);
  for (Storage* s : {storage_.get(), static_cast<Storage*>(other->get())}) {
    absl::StatusOr<std::vector<CountRow>> counts = s->ReadCounts(m->id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok());
    ASSERT_EQ(counts->size(), 1u);  // the two collectors' shards summed
    EXPECT_EQ((*counts)[0].n, 3);
    EXPECT_EQ(Yes((*counts)[0]), 2);
  }
  ASSERT_TRUE(storage_->AddDesignVersion("m", StoredDesign{2, "p2", 0.6, 0.4, 2000}).ok());
  absl::StatusOr<StoredMetric> seen = (*other)->GetMetric("m");
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->designs.size(), 2u);
  EXPECT_EQ((*other)->AddDesignVersion("m", StoredDesign{2, "p2", 0.6, 0.4, 2000}).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(StorageTest, CategoricalMetricKeepsItsCategoriesAndYesNoMetricHasNone) {
  ASSERT_TRUE(storage_->CreateMetric(NewCategoricalMetric("vote")).ok());
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("yes_no")).ok());
  absl::StatusOr<StoredMetric> vote = storage_->GetMetric("vote");
  ASSERT_TRUE(vote.ok()) << vote.status();
  EXPECT_THAT(vote->categories, ElementsAre("a", "b", "c", "d"));
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_THAT((*all)[0].categories, ElementsAre("a", "b", "c", "d"));
  EXPECT_TRUE((*all)[1].categories.empty());
}

TEST_P(StorageTest, CategoricalReportsCountTheirSupportOncePerReportBesideN) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewCategoricalMetric("vote"));
  absl::StatusOr<StoredMetric> yn = storage_->CreateMetric(NewMetric("yes_no"));
  ASSERT_TRUE(m.ok() && yn.ok());
  const std::vector<ReportRow> batch = {
      CategoricalRow(m->id, 1, {0}, 10),        CategoricalRow(m->id, 2, {0, 2}, 10),
      CategoricalRow(m->id, 3, {}, 10),         CategoricalRow(m->id, 1, {0}, 10),  // repeat
      CategoricalRow(m->id, 4, {1}, 10, "r=N"), Row(yn->id, 5, true, 10)};
  absl::StatusOr<AppendResult> first = storage_->AppendReports(batch);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->accepted, 5);
  EXPECT_EQ(first->duplicates, 1);
  absl::StatusOr<AppendResult> resent = storage_->AppendReports(batch);  // a retry
  ASSERT_TRUE(resent.ok());
  EXPECT_EQ(resent->accepted, 0);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 2u);
  std::sort(counts->begin(), counts->end(),
            [](const CountRow& x, const CountRow& y) { return x.labels < y.labels; });
  EXPECT_EQ((*counts)[0].labels, "");
  EXPECT_EQ((*counts)[0].n, 3);
  EXPECT_THAT((*counts)[0].counters.Dense(),
              ElementsAre(2, 0, 1));  // trailing zero category trimmed
  EXPECT_EQ((*counts)[1].labels, "r=N");
  EXPECT_EQ((*counts)[1].n, 1);
  EXPECT_THAT((*counts)[1].counters.Dense(), ElementsAre(0, 1));
  absl::StatusOr<std::vector<CountRow>> yes_no = storage_->ReadCounts(yn->id, 0, 1 << 30);
  ASSERT_TRUE(yes_no.ok());
  ASSERT_EQ(yes_no->size(), 1u);
  EXPECT_EQ(Yes((*yes_no)[0]), 1);
  EXPECT_THAT((*yes_no)[0].counters.Dense(), ElementsAre(1));  // counter 0 only
}

TEST_P(StorageTest, CategoricalBatchesOfOneCallShareDedupAndSupport) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewCategoricalMetric("vote"));
  ASSERT_TRUE(m.ok());
  const std::vector<ReportRow> a = {CategoricalRow(m->id, 1, {3}, 7)};
  const std::vector<ReportRow> b = {CategoricalRow(m->id, 1, {3}, 7),
                                    CategoricalRow(m->id, 2, {1, 3}, 7)};
  const absl::Span<const ReportRow> batches[] = {a, b};
  absl::StatusOr<std::vector<AppendResult>> r = storage_->AppendBatches(batches);
  if (absl::IsUnimplemented(r.status())) GTEST_SKIP() << "one batch per transaction";
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[1].duplicates, 1);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_THAT((*counts)[0].counters.Dense(), ElementsAre(0, 1, 0, 2));
}

// DeleteMetric removes the metric, its designs, reports and counts at once; other metrics keep
// theirs; the name is free again and the new metric starts empty: its reports are not taken for
// duplicates of the deleted metric's (SQLite may give it the same id: its in-memory recent ids
// must have gone with the rows).
TEST_P(StorageTest, DeleteMetricRemovesEverythingOfThatMetricOnly) {
  // "m" is the newest metric, so SQLite gives its id to the next one.
  absl::StatusOr<StoredMetric> other = storage_->CreateMetric(NewMetric("a.other"));
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok() && other.ok());
  ASSERT_TRUE(storage_->AddDesignVersion("m", StoredDesign{2, "p2", 0.6, 0.4, 2000}).ok());
  ASSERT_TRUE(storage_
                  ->AppendReports({Row(m->id, 1, true, 10), Row(m->id, 2, false, 11, "k=v"),
                                   Row(other->id, 3, true, 10)})
                  .ok());

  ASSERT_TRUE(storage_->DeleteMetric("m").ok());

  EXPECT_EQ(storage_->GetMetric("m").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<CountRow>> gone = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(gone.ok()) << gone.status();
  EXPECT_TRUE(gone->empty());
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ((*all)[0].name, "a.other");
  absl::StatusOr<std::vector<CountRow>> kept = storage_->ReadCounts(other->id, 0, 1 << 30);
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].n, 1);
  EXPECT_EQ(storage_->DeleteMetric("m").code(), absl::StatusCode::kNotFound);

  // Category support goes with its metric too.
  absl::StatusOr<StoredMetric> vote = storage_->CreateMetric(NewCategoricalMetric("vote"));
  ASSERT_TRUE(vote.ok()) << vote.status();
  ASSERT_TRUE(storage_->AppendReports({CategoricalRow(vote->id, 9, {1, 2}, 10)}).ok());
  ASSERT_TRUE(storage_->DeleteMetric("vote").ok());
  absl::StatusOr<std::vector<CountRow>> vote_gone = storage_->ReadCounts(vote->id, 0, 1 << 30);
  ASSERT_TRUE(vote_gone.ok()) << vote_gone.status();
  EXPECT_TRUE(vote_gone->empty());

  absl::StatusOr<StoredMetric> again = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->designs.size(), 1u);
  absl::StatusOr<AppendResult> fresh =
      storage_->AppendReports({Row(again->id, 1, true, 10), Row(again->id, 2, false, 11, "k=v")});
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(fresh->accepted, 2);
  EXPECT_EQ(fresh->duplicates, 0);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(again->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[0].n + (*counts)[1].n, 2);
  EXPECT_EQ(storage_->DeleteMetric("never").code(), absl::StatusCode::kNotFound);
}

// Issue 17's deletion defects: a batch validated against metric "m" (the newest, so SQLite up to
// schema version 2 gave its id to the next metric) reaches the storage after "m" was deleted, by
// this collector or, on a shared database, by another one whose delete this collector's cache
// has not seen. Its rows of "m" are refused (missing_metrics), never stored under the dead id,
// and a metric created meanwhile gets a new id and counts nothing of them.
TEST_P(StorageTest, AppendAfterDeleteRefusesTheDeletedMetricsRowsAndNeverReusesItsId) {
  absl::StatusOr<StoredMetric> other = storage_->CreateMetric(NewMetric("a.other"));
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok() && other.ok());
  const std::vector<ReportRow> validated = {Row(m->id, 1, true, 10), Row(other->id, 2, true, 10),
                                            Row(m->id, 3, false, 11, "k=v")};
  // The delete comes from another collector on a shared database, else from this storage.
  std::unique_ptr<PostgresStorage> second;
  Storage* deleter = storage_.get();
  if (GetParam().shared_database) {
    auto opened = PostgresStorage::Open({.uri = handle_});
    ASSERT_TRUE(opened.ok()) << opened.status();
    second = *std::move(opened);
    deleter = second.get();
  }
  ASSERT_TRUE(deleter->DeleteMetric("m").ok());
  absl::StatusOr<StoredMetric> next = storage_->CreateMetric(NewMetric("n"));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_NE(next->id, m->id) << "a deleted metric's id was given to a new metric";

  absl::StatusOr<AppendResult> r = storage_->AppendReports(validated);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  EXPECT_EQ(r->duplicates, 0);
  EXPECT_THAT(r->missing_metrics, ElementsAre(m->id));
  ASSERT_EQ(r->per_metric.size(), 1u);
  EXPECT_EQ(r->per_metric[0].metric_id, other->id);
  for (int64_t id : {m->id, next->id}) {
    absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    EXPECT_TRUE(counts->empty()) << "metric " << id << " counted reports of a deleted metric";
  }
  absl::StatusOr<std::vector<CountRow>> kept = storage_->ReadCounts(other->id, 0, 1 << 30);
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].n, 1);

  // Batches of one call (group commit): only the batch holding the deleted metric's row says so.
  const std::vector<ReportRow> live = {Row(next->id, 4, true, 10)};
  const std::vector<ReportRow> dead = {Row(m->id, 5, true, 10), Row(next->id, 6, true, 10)};
  const absl::Span<const ReportRow> batches[] = {live, dead};
  absl::StatusOr<std::vector<AppendResult>> both = storage_->AppendBatches(batches);
  if (absl::IsUnimplemented(both.status())) return;
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_TRUE((*both)[0].missing_metrics.empty());
  EXPECT_EQ((*both)[0].accepted, 1);
  EXPECT_THAT((*both)[1].missing_metrics, ElementsAre(m->id));
  EXPECT_EQ((*both)[1].accepted, 1);
}

// Retention settings: stored at creation and by SetRetention, read back by GetMetric and
// ListMetrics, checked (nothing changes on a bad value), NOT_FOUND for an unknown metric.
TEST_P(StorageTest, RetentionIsStoredAtCreationAndBySetRetention) {
  StoredMetric created = NewMetric("m");
  created.retention_days = 30;
  created.retention_policy = kRetentionDropCounts;
  ASSERT_TRUE(storage_->CreateMetric(created).ok());
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("plain")).ok());
  absl::StatusOr<StoredMetric> m = storage_->GetMetric("m");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->retention_days, 30u);
  EXPECT_EQ(m->retention_policy, kRetentionDropCounts);
  absl::StatusOr<StoredMetric> plain = storage_->GetMetric("plain");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->retention_days, 0u);
  EXPECT_EQ(plain->retention_policy, kRetentionKeepCounts);

  absl::StatusOr<StoredMetric> set = storage_->SetRetention("plain", 7, kRetentionKeepCounts);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->retention_days, 7u);
  EXPECT_EQ(set->designs.size(), 1u);
  EXPECT_EQ(storage_->SetRetention("m", kMaxRetentionDays + 1, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(storage_->SetRetention("m", 1, 3).status().message(), HasSubstr("retention_policy"));
  EXPECT_EQ(storage_->SetRetention("nope", 1, 1).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<StoredMetric>> all = storage_->ListMetrics();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].retention_days, 30u);  // "m", unchanged by the refused calls
  EXPECT_EQ((*all)[0].retention_policy, kRetentionDropCounts);
  EXPECT_EQ((*all)[1].retention_days, 7u);
}

// ApplyRetention at a fake "now" (day 100), dedup window 2 days, one row per transaction:
//   keep   10 days, keep counts:  reports of days 80, 80, 81 dropped, day 95 kept; counts all kept
//   drop   10 days, drop counts:  days 81 and 89 23:00 dropped with their counts (cutoff = day
//                                 90 00:00, a whole reporting period), days 90 and 95 kept
//   forever (no retention):       days 80 and 95 kept
//   short  1 day, keep counts:    day 97 dropped; day 98 12:00 kept although older than a day
//                                 (inside the dedup window)
// PostgreSQL drops the day partitions 81, 89 and 97 whole (only expired rows) and deletes the rows
// of day 80 (which also holds "forever"'s report) one by one.
TEST_P(StorageTest, ApplyRetentionDropsExpiredReportsAndOnlyDropCountsMetricsCounts) {
  constexpr int64_t kDay = 24;  // Row() takes hours
  auto create = [&](const std::string& name, uint32_t days, int policy) {
    StoredMetric metric = name == "drop" ? NewCategoricalMetric(name) : NewMetric(name);
    metric.reporting_period_seconds = 86400;
    absl::StatusOr<StoredMetric> created = storage_->CreateMetric(metric);
    EXPECT_TRUE(created.ok()) << created.status();
    if (days > 0) {
      EXPECT_TRUE(storage_->SetRetention(name, days, policy).ok());
    }
    return created.ok() ? created->id : 0;
  };
  const int64_t keep = create("keep", 10, kRetentionKeepCounts);
  const int64_t drop = create("drop", 10, kRetentionDropCounts);
  const int64_t forever = create("forever", 0, kRetentionKeepCounts);
  const int64_t shrt = create("short", 1, kRetentionKeepCounts);
  const std::vector<ReportRow> expired = {Row(keep, 1, true, 80 * kDay + 1),
                                          Row(keep, 2, false, 80 * kDay + 1),
                                          Row(keep, 3, true, 81 * kDay),
                                          CategoricalRow(drop, 11, {0, 2}, 81 * kDay),
                                          CategoricalRow(drop, 13, {1}, 89 * kDay + 23),
                                          Row(shrt, 32, true, 97 * kDay)};
  const std::vector<ReportRow> kept = {Row(keep, 4, true, 95 * kDay),
                                       CategoricalRow(drop, 12, {2}, 95 * kDay),
                                       CategoricalRow(drop, 14, {3}, 90 * kDay),
                                       Row(forever, 21, true, 80 * kDay),
                                       Row(forever, 22, false, 95 * kDay),
                                       Row(shrt, 31, true, 98 * kDay + 12)};
  ASSERT_TRUE(storage_->AppendReports(expired).ok());
  ASSERT_TRUE(storage_->AppendReports(kept).ok());

  const RetentionOptions options{
      .now_seconds = 100 * 86400, .dedup_window_seconds = 2 * 86400, .batch_rows = 1};
  absl::StatusOr<RetentionResult> r = storage_->ApplyRetention(options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reports_dropped, 6);
  EXPECT_EQ(r->count_rows_dropped, 2);
  EXPECT_EQ(r->partitions_dropped, GetParam().name == "postgresql" ? 3 : 0);
  std::map<std::string, int64_t> by_metric;
  for (const MetricDropCount& m : r->per_metric) by_metric[m.name] = m.reports;
  EXPECT_EQ(by_metric, (std::map<std::string, int64_t>{{"drop", 2}, {"keep", 3}, {"short", 1}}));

  auto totals = [&](int64_t id) {
    absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(id, 0, 1LL << 40);
    EXPECT_TRUE(counts.ok()) << counts.status();
    std::vector<int64_t> n_by_day;
    for (const CountRow& c : *counts) n_by_day.push_back(c.event_time_seconds / 86400);
    return n_by_day;
  };
  EXPECT_THAT(totals(keep), ElementsAre(80, 81, 95));  // counts kept
  EXPECT_THAT(totals(drop), ElementsAre(90, 95));      // counts of the dropped periods gone
  EXPECT_THAT(totals(forever), ElementsAre(80, 95));
  EXPECT_THAT(totals(shrt), ElementsAre(97, 98));
  absl::StatusOr<std::vector<CountRow>> drop_counts = storage_->ReadCounts(drop, 0, 1LL << 40);
  ASSERT_TRUE(drop_counts.ok());
  EXPECT_THAT((*drop_counts)[0].counters.Dense(),
              ElementsAre(0, 0, 0, 1));  // day 90: only report 14
  EXPECT_THAT((*drop_counts)[1].counters.Dense(), ElementsAre(0, 0, 1));

  // A second run finds nothing more.
  absl::StatusOr<RetentionResult> again = storage_->ApplyRetention(options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->reports_dropped, 0);
  EXPECT_EQ(again->count_rows_dropped, 0);

  // Which reports are still stored: the kept ones are duplicates, the dropped ones are not
  // (their ids went with them, also from SQLite's in-memory recent ids).
  absl::StatusOr<AppendResult> resent_kept = storage_->AppendReports(kept);
  ASSERT_TRUE(resent_kept.ok()) << resent_kept.status();
  EXPECT_EQ(resent_kept->duplicates, 6);
  absl::StatusOr<AppendResult> resent_expired = storage_->AppendReports(expired);
  ASSERT_TRUE(resent_expired.ok()) << resent_expired.status();
  EXPECT_EQ(resent_expired->accepted, 6);
}

// The label sets counted for `metric_id`, each once.
std::set<std::string> CountedLabels(Storage& storage, int64_t metric_id) {
  absl::StatusOr<std::vector<CountRow>> counts = storage.ReadCounts(metric_id, 0, 1 << 30);
  EXPECT_TRUE(counts.ok()) << counts.status();
  std::set<std::string> labels;
  if (counts.ok()) {
    for (const CountRow& row : *counts) labels.insert(row.labels);
  }
  return labels;
}

// Issue 25: label values that identify devices were stored. With a cap of 2 values per key, a
// third value of `device` is refused alone (nothing of it stored or counted) while its batch's
// other reports, the values already stored, other keys and other metrics go on.
TEST_P(StorageTest, LabelValueCapRefusesANewValuePastItAndOnlyThatReport) {
  std::string handle;
  std::unique_ptr<Storage> storage = GetParam().make("cap", &handle, 2);
  ASSERT_NE(storage, nullptr);
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(NewMetric("m"));
  absl::StatusOr<StoredMetric> other = storage->CreateMetric(NewMetric("other"));
  ASSERT_TRUE(m.ok() && other.ok());
  absl::StatusOr<AppendResult> first = storage->AppendReports(
      {Row(m->id, 1, true, 10, "device=a"), Row(m->id, 2, true, 10, "device=b")});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->accepted, 2);
  EXPECT_TRUE(first->label_refusals.empty());

  const std::vector<ReportRow> batch = {
      Row(m->id, 3, true, 10, "device=a"),            // a stored value: accepted
      Row(m->id, 4, true, 10, "device=c"),            // a third value: refused
      Row(m->id, 5, false, 11, "region=N"),           // another key: accepted
      Row(other->id, 6, true, 10, "device=c"),        // another metric: accepted
      Row(m->id, 7, false, 10, "device=d,region=S"),  // refused whole: region=S not admitted
      Row(m->id, 8, true, 10, "device=b,region=T"),   // accepted: region's second value
  };
  absl::StatusOr<AppendResult> second = storage->AppendReports(batch);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->accepted, 4);
  EXPECT_EQ(second->duplicates, 0);
  ASSERT_EQ(second->label_refusals.size(), 2u);
  EXPECT_EQ(second->label_refusals[0].row, 1u);
  EXPECT_EQ(second->label_refusals[0].metric_id, m->id);
  EXPECT_EQ(second->label_refusals[0].key, "device");
  EXPECT_EQ(second->label_refusals[0].max_values, 2);
  EXPECT_EQ(second->label_refusals[1].row, 4u);
  EXPECT_EQ(second->label_refusals[1].key, "device");
  EXPECT_EQ(CountedLabels(*storage, m->id),
            (std::set<std::string>{"device=a", "device=b", "region=N", "device=b,region=T"}));
  EXPECT_EQ(CountedLabels(*storage, other->id), (std::set<std::string>{"device=c"}));

  // Refused again when re-sent (nothing of it was stored: not a duplicate), while the stored
  // reports are duplicates and region now has its two values (N, T): S stays refused.
  absl::StatusOr<AppendResult> again = storage->AppendReports(batch);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->accepted, 0);
  EXPECT_EQ(again->duplicates, 4);
  ASSERT_EQ(again->label_refusals.size(), 2u);
  absl::StatusOr<AppendResult> region =
      storage->AppendReports({Row(m->id, 9, true, 12, "region=S")});
  ASSERT_TRUE(region.ok()) << region.status();
  ASSERT_EQ(region->label_refusals.size(), 1u);
  EXPECT_EQ(region->label_refusals[0].key, "region");
  absl::StatusOr<std::vector<CountRow>> counts = storage->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  int64_t n = 0;
  for (const CountRow& row : *counts) n += row.n;
  EXPECT_EQ(n, 5);  // ids 1, 2, 3, 5, 8
}

// Within one transaction the cap counts the values admitted earlier in it, also across the
// batches of one AppendBatches call.
TEST_P(StorageTest, LabelValueCapCountsValuesAdmittedEarlierInTheSameCall) {
  std::string handle;
  std::unique_ptr<Storage> storage = GetParam().make("cap_call", &handle, 2);
  ASSERT_NE(storage, nullptr);
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  const std::vector<ReportRow> one = {Row(m->id, 1, true, 10, "k=x"),
                                      Row(m->id, 2, true, 10, "k=y")};
  const std::vector<ReportRow> two = {Row(m->id, 3, true, 10, "k=z"),
                                      Row(m->id, 4, true, 10, "k=x")};
  const absl::Span<const ReportRow> batches[] = {one, two};
  absl::StatusOr<std::vector<AppendResult>> results = storage->AppendBatches(batches);
  if (absl::IsUnimplemented(results.status())) {
    results = std::vector<AppendResult>{*storage->AppendReports(one), *storage->AppendReports(two)};
  }
  ASSERT_TRUE(results.ok()) << results.status();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].accepted, 2);
  EXPECT_EQ((*results)[1].accepted, 1);
  ASSERT_EQ((*results)[1].label_refusals.size(), 1u);
  EXPECT_EQ((*results)[1].label_refusals[0].row, 0u);
  EXPECT_EQ(CountedLabels(*storage, m->id), (std::set<std::string>{"k=x", "k=y"}));
}

TEST_P(StorageTest, LabelValueCapZeroStoresEveryValue) {
  std::string handle;
  std::unique_ptr<Storage> storage = GetParam().make("cap_none", &handle, 0);
  ASSERT_NE(storage, nullptr);
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  std::vector<ReportRow> rows;
  for (int i = 0; i < 50; ++i) rows.push_back(Row(m->id, i, true, 10, absl::StrCat("v=", i)));
  absl::StatusOr<AppendResult> r = storage->AppendReports(rows);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 50);
  EXPECT_TRUE(r->label_refusals.empty());
}

// A deleted metric's values go with it: a metric created afterwards (a new id) starts with none,
// and the other metric keeps its own.
TEST_P(StorageTest, DeleteMetricForgetsItsLabelValues) {
  std::string handle;
  std::unique_ptr<Storage> storage = GetParam().make("cap_delete", &handle, 1);
  ASSERT_NE(storage, nullptr);
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(NewMetric("m"));
  absl::StatusOr<StoredMetric> kept = storage->CreateMetric(NewMetric("kept"));
  ASSERT_TRUE(m.ok() && kept.ok());
  ASSERT_TRUE(
      storage->AppendReports({Row(m->id, 1, true, 10, "k=x"), Row(kept->id, 2, true, 10, "k=x")})
          .ok());
  ASSERT_TRUE(storage->DeleteMetric("m").ok());
  absl::StatusOr<StoredMetric> again = storage->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(again.ok());
  absl::StatusOr<AppendResult> r = storage->AppendReports(
      {Row(again->id, 3, true, 10, "k=y"), Row(kept->id, 4, true, 10, "k=y")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 1);
  ASSERT_EQ(r->label_refusals.size(), 1u);
  EXPECT_EQ(r->label_refusals[0].metric_id, kept->id);
}

// The keys are capped as well (--max_label_keys, default 32), so that an identifier cannot move
// from the value into the key (d41d8cd98f00=1).
TEST_P(StorageTest, LabelKeyCapRefusesAKeyPastItAndKeepsTheKnownOnes) {
  std::string handle;
  std::unique_ptr<Storage> storage = GetParam().make("key_cap", &handle, kDefaultMaxLabelValues);
  ASSERT_NE(storage, nullptr);
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  std::vector<ReportRow> rows;
  for (int i = 0; i < kDefaultMaxLabelKeys; ++i) {
    rows.push_back(Row(m->id, i, true, 10, absl::StrCat("k", i, "=1")));
  }
  rows.push_back(Row(m->id, 100, true, 10, "d41d8cd98f00=1"));
  rows.push_back(Row(m->id, 101, true, 10, "k0=2"));  // a known key: a value as any other
  absl::StatusOr<AppendResult> r = storage->AppendReports(rows);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, kDefaultMaxLabelKeys + 1);
  ASSERT_EQ(r->label_refusals.size(), 1u);
  EXPECT_EQ(r->label_refusals[0].row, static_cast<size_t>(kDefaultMaxLabelKeys));
  EXPECT_EQ(r->label_refusals[0].key, "d41d8cd98f00");
  EXPECT_TRUE(r->label_refusals[0].new_key);
  EXPECT_EQ(r->label_refusals[0].max_keys, kDefaultMaxLabelKeys);
}

// Two collectors on one database admitting new values of one metric at the same time: the cap
// holds across them (PostgreSQL: the metric's label-values lock).
TEST_P(StorageTest, LabelValueCapHoldsAcrossConcurrentCollectors) {
  std::string handle;
  std::unique_ptr<Storage> storage = GetParam().make("cap_race", &handle, 5);
  ASSERT_NE(storage, nullptr);
  std::unique_ptr<Storage> second;
  if (GetParam().shared_database) {
    auto opened = PostgresStorage::Open({.uri = handle, .max_label_values = 5});
    ASSERT_TRUE(opened.ok()) << opened.status();
    second = *std::move(opened);
  }
  absl::StatusOr<StoredMetric> m = storage->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  constexpr int kThreads = 4, kValues = 25;
  std::atomic<int> accepted{0}, refused{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    Storage* s = (second != nullptr && t % 2 == 1) ? second.get() : storage.get();
    threads.emplace_back([&, s, t] {
      for (int v = 0; v < kValues; ++v) {
        const int id = t * kValues + v;
        absl::StatusOr<AppendResult> r =
            s->AppendReports({Row(m->id, id, true, 10, absl::StrCat("device=d", id))});
        if (!r.ok()) {
          ++failed;
          continue;
        }
        accepted += static_cast<int>(r->accepted);
        refused += static_cast<int>(r->label_refusals.size());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(accepted.load(), 5);
  EXPECT_EQ(refused.load(), kThreads * kValues - 5);
  EXPECT_EQ(CountedLabels(*storage, m->id).size(), 5u);
}

// A counter's count, whichever form a count row holds its counters in.
[[maybe_unused]] int64_t CountOf(int64_t count) { return count; }
template <typename Entry>
int64_t CountOf(const Entry& entry) {
  return entry.second;
}
template <typename Counters>
int64_t SumOf(const Counters& counters) {
  int64_t sum = 0;
  for (const auto& entry : counters) sum += CountOf(entry);
  return sum;
}

// The exact counts of one (event time, labels) of a large layout: n, the counters and the
// windows' firsts, as std::map so that the test needs nothing of the storages' forms.
struct ModelRow {
  int64_t n = 0;
  std::map<uint32_t, int64_t> counters;
  std::array<std::pair<int64_t, std::map<uint32_t, int64_t>>, 3> firsts;
};

// Checks `got` (one metric's ReadCounts) against `want`, counter by counter.
void ExpectCountsEqual(const std::vector<CountRow>& got,
                       const std::map<std::pair<int64_t, std::string>, ModelRow>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const CountRow& row : got) {
    auto it = want.find({row.event_time_seconds, row.labels});
    ASSERT_NE(it, want.end()) << row.event_time_seconds << " " << row.labels;
    const ModelRow& m = it->second;
    EXPECT_EQ(row.n, m.n);
    int64_t sum = 0;
    for (const auto& [j, count] : m.counters) {
      ASSERT_EQ(CounterAt(row.counters, j), count) << "counter " << j;
      sum += count;
    }
    EXPECT_EQ(SumOf(row.counters), sum);  // and no counter the model does not have
    for (size_t w = 0; w < 3; ++w) {
      EXPECT_EQ(row.firsts[w].n, m.firsts[w].first) << "window " << w;
      int64_t first_sum = 0;
      for (const auto& [j, count] : m.firsts[w].second) {
        ASSERT_EQ(CounterAt(row.firsts[w].counters, j), count)
            << "window " << w << " counter " << j;
        first_sum += count;
      }
      EXPECT_EQ(SumOf(row.firsts[w].counters), first_sum) << "window " << w;
    }
  }
}

// Issue 37: a sketch's layout of 16 384 x 2 counters ([trials, ones] per cell), of which one
// report touches one cell's two counters (or its trials only). Seeded random cells over three
// hours and two label sets, a fifth of the reports re-sent (in the same call, a later call or
// a later batch of one call), random window flags: every sum, n and window first equals an
// exact model, and every duplicate is recognised.
TEST_P(StorageTest, LargeLayoutCountsMatchAnExactModel) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("sketch"));
  ASSERT_TRUE(m.ok()) << m.status();
  constexpr uint32_t kCells = 16384;
  std::mt19937_64 rng(20261202);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::map<std::pair<int64_t, std::string>, ModelRow> model;
  std::vector<ReportRow> sent;
  int64_t accepted = 0, duplicates = 0, want_duplicates = 0;
  for (int call = 0; call < 12; ++call) {
    std::vector<std::vector<ReportRow>> batches(static_cast<size_t>(uniform(1, 3)));
    for (auto& batch : batches) {
      const int64_t rows = uniform(50, 250);
      for (int64_t i = 0; i < rows; ++i) {
        if (!sent.empty() && uniform(0, 4) == 0) {  // a re-sent report
          batch.push_back(
              sent[static_cast<size_t>(uniform(0, static_cast<int64_t>(sent.size()) - 1))]);
          ++want_duplicates;
          continue;
        }
        ReportRow r;
        r.metric_id = m->id;
        r.design_version = 1;
        const uint64_t id = sent.size() + 1;
        r.report_id.fill(0);
        for (int b = 0; b < 8; ++b)
          r.report_id[static_cast<size_t>(b)] = static_cast<uint8_t>(id >> (8 * b));
        r.report_id[15] = static_cast<uint8_t>(uniform(0, 255));
        r.event_time_seconds = uniform(0, 2) * 3600;
        r.labels = uniform(0, 1) == 1 ? "k=v" : "";
        const uint32_t cell = static_cast<uint32_t>(uniform(0, kCells - 1));
        r.counters.push_back(2 * cell);                              // trials
        if (uniform(0, 1) == 1) r.counters.push_back(2 * cell + 1);  // ones
        r.window_firsts = static_cast<int>(uniform(-1, 7));
        ModelRow& row = model[{r.event_time_seconds, r.labels}];
        ++row.n;
        for (uint32_t j : r.counters) ++row.counters[j];
        for (int w = 0; w < 3; ++w) {
          if (r.window_firsts <= 0 || (r.window_firsts & (1 << w)) == 0) continue;
          ++row.firsts[static_cast<size_t>(w)].first;
          for (uint32_t j : r.counters) ++row.firsts[static_cast<size_t>(w)].second[j];
        }
        sent.push_back(r);
        batch.push_back(r);
      }
    }
    std::vector<absl::Span<const ReportRow>> spans(batches.begin(), batches.end());
    absl::StatusOr<std::vector<AppendResult>> got = storage_->AppendBatches(spans);
    if (!got.ok() && absl::IsUnimplemented(got.status())) {  // one batch per transaction
      std::vector<AppendResult> one_by_one;
      for (const auto& batch : batches) {
        absl::StatusOr<AppendResult> r = storage_->AppendReports(batch);
        ASSERT_TRUE(r.ok()) << r.status();
        one_by_one.push_back(*r);
      }
      got = one_by_one;
    }
    ASSERT_TRUE(got.ok()) << got.status();
    for (const AppendResult& r : *got) {
      accepted += r.accepted;
      duplicates += r.duplicates;
    }
  }
  EXPECT_EQ(accepted, static_cast<int64_t>(sent.size()));
  EXPECT_EQ(duplicates, want_duplicates);
  EXPECT_GT(want_duplicates, 200);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ExpectCountsEqual(*counts, model);
  // A range of one hour reads that hour only.
  absl::StatusOr<std::vector<CountRow>> hour = storage_->ReadCounts(m->id, 3600, 7200);
  ASSERT_TRUE(hour.ok()) << hour.status();
  std::map<std::pair<int64_t, std::string>, ModelRow> one_hour;
  for (const auto& [key, row] : model) {
    if (key.first == 3600) one_hour[key] = row;
  }
  ExpectCountsEqual(*hour, one_hour);
}

// Issue 37: counter indices are uint32_t end to end. Counters past 65 535 (a uint16_t index
// wrapped them to a small one) and past 999 in a window's firsts (PostgreSQL coded them as
// win * 1000 + counter + 1, so window 0's counter 1000 read as window 1's n) keep their index.
TEST_P(StorageTest, CounterIndicesPastSixteenBitsAndTheirFirstsKeepTheirIndex) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("wide"));
  ASSERT_TRUE(m.ok()) << m.status();
  const std::vector<uint32_t> wide = {0, 1000, 65535, 65536, 65537, (1u << 21) - 1, (1u << 24) - 2};
  std::vector<ReportRow> batch;
  for (int id = 0; id < 3; ++id) {
    ReportRow r = Row(m->id, id, false, 4);
    for (size_t i = static_cast<size_t>(id); i < wide.size(); ++i) r.counters.push_back(wide[i]);
    r.window_firsts = id == 0 ? 1 : 6;  // day; week and month
    batch.push_back(r);
  }
  ASSERT_TRUE(storage_->AppendReports(batch).ok());
  absl::StatusOr<AppendResult> again = storage_->AppendReports(batch);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->duplicates, 3);
  absl::StatusOr<std::vector<CountRow>> counts = storage_->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  std::map<std::pair<int64_t, std::string>, ModelRow> want;
  ModelRow& row = want[{4 * 3600, ""}];
  row.n = 3;
  for (int id = 0; id < 3; ++id) {
    for (size_t i = static_cast<size_t>(id); i < wide.size(); ++i) {
      ++row.counters[wide[i]];
      for (int w : id == 0 ? std::vector<int>{0} : std::vector<int>{1, 2}) {
        ++row.firsts[static_cast<size_t>(w)].second[wide[i]];
      }
    }
  }
  row.firsts[0].first = 1;
  row.firsts[1].first = 2;
  row.firsts[2].first = 2;
  ExpectCountsEqual(*counts, want);
}

// Issue 37: a heavy-hitters sketch of 1 114 112 counters (17 x 65 536), 2 counters a report, at
// the edges of the 1 024-counter chunks (1 023 | 1 024, 2 047 | 2 048), past 65 535 and at the
// last counter; reports of one chunk arrive in one call, in later calls (the stored chunk merges
// with the added one, offsets interleaved) and, on a shared database, from a second collector
// (another shard), with window firsts. Every counter, n and first equals the model's, and a
// re-sent report changes nothing.
TEST_P(StorageTest, HeavyHittersCountersPastAChunkAndSixteenBitsMergeExactly) {
  absl::StatusOr<StoredMetric> m = storage_->CreateMetric(NewMetric("hh"));
  ASSERT_TRUE(m.ok()) << m.status();
  constexpr uint32_t kLayout = 1'114'112;
  const std::vector<std::pair<uint32_t, uint32_t>> pairs = {{1, 1023},
                                                            {1024, 1025},
                                                            {2047, 2048},
                                                            {1023, 1024},
                                                            {65534, 65535},
                                                            {65535, 65536},
                                                            {65536, 65537},
                                                            {1000, 66560},
                                                            {1025, 2047},
                                                            {0, 65536},
                                                            {kLayout - 2, kLayout - 1},
                                                            {1, kLayout - 1}};
  std::unique_ptr<Storage> second;
  if (GetParam().shared_database) {
    auto other = PostgresStorage::Open({.uri = handle_});
    ASSERT_TRUE(other.ok()) << other.status();
    second = *std::move(other);
  }
  std::map<std::pair<int64_t, std::string>, ModelRow> want;
  std::vector<ReportRow> all;
  int id = 0;
  for (int call = 0; call < 3; ++call) {
    std::vector<ReportRow> batch;
    for (size_t p = 0; p < pairs.size(); ++p) {
      if ((p + static_cast<size_t>(call)) % 2 == 0 && call > 0) continue;
      ReportRow r = Row(m->id, ++id, false, 6 + static_cast<int64_t>(p % 2));
      r.counters = {pairs[p].first, pairs[p].second};
      r.window_firsts = static_cast<int>((p + static_cast<size_t>(call)) % 8);
      ModelRow& row = want[{r.event_time_seconds, ""}];
      ++row.n;
      for (uint32_t j : r.counters) ++row.counters[j];
      for (int w = 0; w < 3; ++w) {
        if ((r.window_firsts & (1 << w)) == 0) continue;
        ++row.firsts[static_cast<size_t>(w)].first;
        for (uint32_t j : r.counters) ++row.firsts[static_cast<size_t>(w)].second[j];
      }
      batch.push_back(r);
      all.push_back(r);
    }
    Storage* to = call == 1 && second != nullptr ? second.get() : storage_.get();
    absl::StatusOr<AppendResult> r = to->AppendReports(batch);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->accepted, static_cast<int64_t>(batch.size()));
  }
  absl::StatusOr<AppendResult> again = storage_->AppendReports(all);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->duplicates, static_cast<int64_t>(all.size()));
  for (Storage* s : {storage_.get(), second.get()}) {
    if (s == nullptr) continue;
    absl::StatusOr<std::vector<CountRow>> counts = s->ReadCounts(m->id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    ExpectCountsEqual(*counts, want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllStorages, StorageTest,
    ::testing::Values(StorageFactory{"memory",
                                     [](const std::string&, std::string*,
                                        int64_t max_label_values) -> std::unique_ptr<Storage> {
                                       return std::make_unique<MemoryStorage>(max_label_values);
                                     }},
                      StorageFactory{"sqlite",
                                     [](const std::string& test, std::string* handle,
                                        int64_t max_label_values) -> std::unique_ptr<Storage> {
                                       *handle = TempDbPath(test);
                                       auto s = SqliteStorage::Open(
                                           {.path = *handle, .max_label_values = max_label_values});
                                       EXPECT_TRUE(s.ok()) << s.status();
                                       return s.ok() ? *std::move(s) : nullptr;
                                     }},
                      StorageFactory{"postgresql",
                                     [](const std::string&, std::string* handle,
                                        int64_t max_label_values) -> std::unique_ptr<Storage> {
                                       TestPostgres* pg = TestPostgres::Shared();
                                       if (pg == nullptr) return nullptr;
                                       absl::StatusOr<std::string> uri = pg->NewDatabase();
                                       EXPECT_TRUE(uri.ok()) << uri.status();
                                       if (!uri.ok()) return nullptr;
                                       *handle = *uri;
                                       auto s = PostgresStorage::Open(
                                           {.uri = *uri, .max_label_values = max_label_values});
                                       EXPECT_TRUE(s.ok()) << s.status();
                                       return s.ok() ? *std::move(s) : nullptr;
                                     },
                                     /*shared_database=*/true}),
    [](const ::testing::TestParamInfo<StorageFactory>& param) { return param.param.name; });

TEST(SqliteStorageTest, ReportsAndCountsSurviveReopen) {
  const std::string path = TempDbPath("reopen");
  int64_t id = 0;
  {
    auto s = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewMetric("m"));
    ASSERT_TRUE(m.ok());
    id = m->id;
    ASSERT_TRUE((*s)->AppendReports({Row(id, 1, true, 5), Row(id, 2, false, 5)}).ok());
  }
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*(*s)->ReportCount(), 2);
  absl::StatusOr<std::vector<CountRow>> counts = (*s)->ReadCounts(id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 2);
  EXPECT_EQ(*(*s)->IntegrityCheck(), "ok");
  // A retry after the restart is still recognised.
  absl::StatusOr<AppendResult> again = (*s)->AppendReports({Row(id, 1, true, 5)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->duplicates, 1);
}

TEST(SqliteStorageTest, CategoricalSupportSurvivesTheRecentReportsMoveAndReopen) {
  const std::string path = TempDbPath("categorical_move");
  int64_t id = 0;
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false, .move_chunk_rows = 1});
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewCategoricalMetric("vote"));
    ASSERT_TRUE(m.ok());
    id = m->id;
    ASSERT_TRUE((*s)->AppendReports({CategoricalRow(id, 1, {2}, 5), CategoricalRow(id, 2, {}, 5),
                                     CategoricalRow(id, 3, {0, 3}, 5)})
                    .ok());
    ASSERT_TRUE((*s)->MoveRecentReports().ok());
    EXPECT_EQ((*s)->RecentReportCount(), 0);
    // A moved report is still a duplicate and adds no support.
    absl::StatusOr<AppendResult> again = (*s)->AppendReports({CategoricalRow(id, 1, {2}, 5)});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->duplicates, 1);
  }
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<CountRow>> counts = (*s)->ReadCounts(id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 3);
  EXPECT_THAT((*counts)[0].counters.Dense(), ElementsAre(1, 0, 1, 1));
  EXPECT_EQ(*(*s)->IntegrityCheck(), "ok");
  // The moved rows keep their supported categories (what sqlite_to_postgres copies).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(KeyedReportsPath(path).c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT bit, support FROM reports ORDER BY report_id", -1, &st,
                               nullptr),
            SQLITE_OK);
  std::vector<std::vector<uint32_t>> supports;
  while (sqlite3_step(st) == SQLITE_ROW) {
    std::optional<std::string> support;
    if (sqlite3_column_type(st, 1) != SQLITE_NULL) {
      support.emplace(static_cast<const char*>(sqlite3_column_blob(st, 1)),
                      sqlite3_column_bytes(st, 1));
    }
    absl::StatusOr<absl::InlinedVector<uint32_t, 8>> counters =
        DecodeCounters(sqlite3_column_int64(st, 0), support, "reports");
    ASSERT_TRUE(counters.ok()) << counters.status();
    supports.emplace_back(counters->begin(), counters->end());
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_THAT(supports, ElementsAre(ElementsAre(2), ElementsAre(), ElementsAre(0, 3)));
}

// Window flags survive the move to the keyed table and a reopen (what sqlite_to_postgres copies).
TEST(SqliteStorageTest, WindowFirstsSurviveTheRecentReportsMoveAndReopen) {
  const std::string path = TempDbPath("firsts_move");
  int64_t id = 0;
  {
    auto s = SqliteStorage::Open({.path = path, .background_moves = false, .move_chunk_rows = 1});
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewMetric("m"));
    ASSERT_TRUE(m.ok());
    id = m->id;
    ReportRow first = Row(id, 1, true, 5);
    first.window_firsts = 3;
    ASSERT_TRUE((*s)->AppendReports({first, Row(id, 2, true, 5)}).ok());
    ASSERT_TRUE((*s)->MoveRecentReports().ok());
  }
  auto s = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<CountRow>> counts = (*s)->ReadCounts(id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].firsts[1].n, 1);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(KeyedReportsPath(path).c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT coalesce(firsts, -1) FROM reports ORDER BY report_id",
                               -1, &st, nullptr),
            SQLITE_OK);
  std::vector<int64_t> firsts;
  while (sqlite3_step(st) == SQLITE_ROW) firsts.push_back(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_THAT(firsts, ElementsAre(3, -1));
}

// The one rule every backend counts window firsts by: n (-1) then each counter, per window set.
TEST(WindowFirstsTest, EachWindowSetCountsItsNThenItsCounters) {
  std::vector<std::pair<int, int>> added;
  const auto add = [&](int window, int counter) { added.emplace_back(window, counter); };
  ForEachWindowFirst(0b101, {0, 3}, add);  // day and month, counters 0 and 3
  EXPECT_THAT(added, ElementsAre(std::pair(0, -1), std::pair(0, 0), std::pair(0, 3),
                                 std::pair(2, -1), std::pair(2, 0), std::pair(2, 3)));
  added.clear();
  ForEachWindowFirst(-1, {0}, add);    // unknown: never a first
  ForEachWindowFirst(0, {0}, add);     // first in no window
  ForEachWindowFirst(0b010, {}, add);  // a "no": n only
  EXPECT_THAT(added, ElementsAre(std::pair(1, -1)));

  CountRow row;
  AddWindowFirsts(&row, 0b011, std::vector<uint32_t>{0, 2});
  AddWindowFirsts(&row, 0b001, std::vector<uint32_t>{2});
  EXPECT_EQ(row.firsts[0].n, 2);
  EXPECT_THAT(row.firsts[0].counters.Dense(), ElementsAre(1, 0, 2));
  EXPECT_EQ(row.firsts[1].n, 1);
  EXPECT_THAT(row.firsts[1].counters.Dense(), ElementsAre(1, 0, 1));
  EXPECT_EQ(row.firsts[2].n, 0);
}

TEST(SupportEncodingTest, RoundTripsAndTellsNoSupportFromYesNo) {
  EXPECT_EQ(EncodeCounters({}).support, std::nullopt);  // bit 0, no support
  EXPECT_EQ(EncodeCounters({}).bit, 0);
  EXPECT_EQ(EncodeCounters({0}).support, std::nullopt);  // bit 1, no support
  EXPECT_EQ(EncodeCounters({0}).bit, kStoredBitCounter0);
  const StoredCounters some = EncodeCounters({0, 7, 8, 255});
  EXPECT_EQ(some.bit, kStoredBitCounter0 | kStoredBitSparse);
  EXPECT_THAT(DecodeCounters(some.bit, some.support, "reports").value(), ElementsAre(0, 7, 8, 255));
  EXPECT_EQ(EncodeCounters({9}).support->size(), 1u);
  EXPECT_THAT(DecodeCounters(1, std::nullopt, "reports").value(), ElementsAre(0));
  EXPECT_THAT(DecodeCounters(0, std::nullopt, "reports").value(), ElementsAre());
  // A categorical report as version 2 to 6 stored it (bit 0, the bitmap of its categories),
  // and as 7 to 9 did (bit = counter 0, the bitmap of every counter).
  EXPECT_THAT(DecodeCounters(0, std::string(1, '\x05'), "reports").value(), ElementsAre(0, 2));
  EXPECT_THAT(DecodeCounters(1, std::string("\x01\x02", 2), "reports").value(), ElementsAre(0, 9));
  EXPECT_THAT(SplitCategories(JoinCategories({"Y", "N", "U", "A"})),
              ElementsAre("Y", "N", "U", "A"));
  EXPECT_TRUE(SplitCategories("").empty());
}

// A delete removes the metric's reports from both report tables (moved and recent), on disk.
// Issue 37: the sparse stored form of a report's counters, and malformed ones refused by name.
TEST(SupportEncodingTest, SparseFormCostsWhatAReportTouchesAndMalformedOnesAreDataLoss) {
  const StoredCounters two = EncodeCounters({(1u << 21) - 2, (1u << 21) - 1});
  EXPECT_EQ(two.bit, kStoredBitSparse);
  ASSERT_TRUE(two.support.has_value());
  EXPECT_LE(two.support->size(), 4u);  // a bitmap of the layout took 256 KiB
  EXPECT_THAT(DecodeCounters(two.bit, two.support, "reports").value(),
              ElementsAre((1u << 21) - 2, (1u << 21) - 1));
  for (const std::string& bad : {std::string("\x80", 1),                 // truncated
                                 std::string("\x01\x00", 2),             // an index repeated
                                 std::string("\x80\x80\x80\x08", 4)}) {  // 2^24
    absl::StatusOr<absl::InlinedVector<uint32_t, 8>> got =
        DecodeCounters(kStoredBitSparse, bad, "recent_reports");
    EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_THAT(got.status().message(), HasSubstr("recent_reports"));
  }
  EXPECT_EQ(DecodeCounters(kStoredBitSparse, std::nullopt, "reports").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(SparseCountersTest, AddsInAnyOrderDropsZerosAndMerges) {
  SparseCounters c;
  c.Add(5, 2);
  c.Add(1, 1);  // before the end: inserted in order
  c.Add(9, 0);  // nothing
  c.Add(5, 1);
  EXPECT_EQ(c.ToString(), "1:1,5:3");
  EXPECT_EQ(c.At(5), 3);
  EXPECT_EQ(c.At(4), 0);
  EXPECT_EQ(c.DenseLength(), 6u);
  EXPECT_THAT(c.Dense(), ElementsAre(0, 1, 0, 0, 0, 3));
  c.Add(1, -1);  // a sum of 0 is no entry
  EXPECT_EQ(c.ToString(), "5:3");
  SparseCounters d = SparseCounters::FromDense(std::vector<int64_t>{0, 4, 0, 0, 0, -3, 0, 7});
  c.AddAll(d);
  EXPECT_EQ(c.ToString(), "1:4,7:7");
  EXPECT_EQ(c, SparseCounters::FromDense(c.Dense()));
}

TEST(CounterChunksTest, RoundTripMergeAndMalformedBlobsAreDataLoss) {
  const std::vector<ChunkCell> a = {{0, 1}, {7, 300}, {1023, 5}};
  const std::vector<ChunkCell> b = {{7, 1}, {8, 2}};
  const std::string merged =
      MergeCounterChunks(EncodeCounterChunk(a), EncodeCounterChunk(b), "counter_chunks").value();
  std::vector<ChunkCell> got;
  ASSERT_TRUE(DecodeCounterChunk(merged, "counter_chunks", [&](uint32_t o, int64_t sum) {
                got.emplace_back(o, sum);
              }).ok());
  EXPECT_EQ(got, (std::vector<ChunkCell>{{0, 1}, {7, 301}, {8, 2}, {1023, 5}}));
  for (const std::string& bad : {std::string("\x01", 1),              // a sum missing
                                 std::string("\x01\x01\x00\x01", 4),  // counter repeated
                                 std::string("\x80\x08\x01", 3),      // offset 1024
                                 std::string("\x01\x00", 2)}) {       // a sum of 0
    absl::Status status = DecodeCounterChunk(bad, "counter_chunks", [](uint32_t, int64_t) {});
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << absl::CEscape(bad);
    EXPECT_THAT(status.message(), HasSubstr("counter_chunks"));
  }
}

// Issue 40: the merge is one pass writing the result straight into its buffer; it re-encodes the
// offsets after an inserted cell and sums whose varint grows, and equals an exact model on
// seeded random chunks.
TEST(CounterChunksTest, MergeInOnePassEqualsAnExactModel) {
  auto cells = [](absl::string_view blob) {
    std::vector<ChunkCell> got;
    EXPECT_TRUE(DecodeCounterChunk(blob, "counter_chunks", [&](uint32_t o, int64_t sum) {
                  got.emplace_back(o, sum);
                }).ok());
    return got;
  };
  auto merge = [](const std::vector<ChunkCell>& a, const std::vector<ChunkCell>& b) {
    return MergeCounterChunks(EncodeCounterChunk(a), EncodeCounterChunk(b), "counter_chunks")
        .value();
  };
  // Before the first cell, between two (the next offset's difference shrinks), after the last,
  // a sum growing from 1 to 2 varint bytes, and empty sides.
  EXPECT_EQ(cells(merge({{5, 127}, {900, 1}}, {{0, 3}, {5, 1}, {6, 2}, {1023, 1}})),
            (std::vector<ChunkCell>{{0, 3}, {5, 128}, {6, 2}, {900, 1}, {1023, 1}}));
  EXPECT_EQ(cells(merge({}, {{1, 1}})), (std::vector<ChunkCell>{{1, 1}}));
  EXPECT_EQ(cells(merge({{1, 1}}, {})), (std::vector<ChunkCell>{{1, 1}}));
  EXPECT_EQ(merge({}, {}), "");
  std::mt19937_64 gen(40);
  for (int round = 0; round < 200; ++round) {
    std::map<uint32_t, int64_t> model;
    std::vector<ChunkCell> sides[2];
    for (std::vector<ChunkCell>& side : sides) {
      std::map<uint32_t, int64_t> one;
      const int n = static_cast<int>(gen() % 40);
      for (int i = 0; i < n; ++i) {
        one[static_cast<uint32_t>(gen() % kCounterChunkCounters)] +=
            1 + static_cast<int64_t>(gen() % (i % 3 == 0 ? 100000 : 200));
      }
      for (const auto& [offset, sum] : one) {
        side.emplace_back(offset, sum);
        model[offset] += sum;
      }
    }
    EXPECT_EQ(cells(merge(sides[0], sides[1])),
              (std::vector<ChunkCell>(model.begin(), model.end())))
        << "round " << round;
  }
}

// A merged sum past 2^63 - 1 is DATA_LOSS naming the table; before, the sum wrapped and the
// merge stored a chunk that every later read refused.
// A counter_deltas blob holds counter indices over the whole layout: past a chunk's 1 024 is
// fine, past kMaxCounterLayoutLength (or a repeat) is DATA_LOSS naming the table.
TEST(CounterChunksTest, DeltaBlobsSpanTheLayoutAndMalformedOnesAreDataLoss) {
  const uint32_t last = static_cast<uint32_t>(kMaxCounterLayoutLength - 1);
  std::vector<ChunkCell> got;
  ASSERT_TRUE(DecodeCounterDelta(EncodeCounterChunk({{1, 2}, {70000, 1}, {last, 5}}),
                                 "counter_deltas",
                                 [&](uint32_t j, int64_t sum) { got.emplace_back(j, sum); })
                  .ok());
  EXPECT_THAT(got, ElementsAre(ChunkCell{1, 2}, ChunkCell{70000, 1}, ChunkCell{last, 5}));
  for (const std::string& bad : {EncodeCounterChunk({{last + 1, 1}}), std::string("\x01"),
                                 std::string("\x05\x01\x00\x01", 4)}) {
    absl::Status status = DecodeCounterDelta(bad, "counter_deltas", [](uint32_t, int64_t) {});
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_THAT(status.message(), HasSubstr("counter_deltas"));
  }
}

TEST(CounterChunksTest, AMergedSumPastTheLargestIsDataLossNamingTheTable) {
  const int64_t largest = std::numeric_limits<int64_t>::max();
  absl::StatusOr<std::string> merged = MergeCounterChunks(
      EncodeCounterChunk({{3, largest - 1}}), EncodeCounterChunk({{3, 2}}), "counter_chunks");
  EXPECT_EQ(merged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(merged.status().message(), HasSubstr("counter_chunks"));
  absl::StatusOr<std::string> at_the_largest = MergeCounterChunks(
      EncodeCounterChunk({{3, largest - 2}}), EncodeCounterChunk({{3, 2}}), "counter_chunks");
  ASSERT_TRUE(at_the_largest.ok()) << at_the_largest.status();
  std::vector<ChunkCell> got;
  ASSERT_TRUE(DecodeCounterChunk(*at_the_largest, "counter_chunks", [&](uint32_t o, int64_t sum) {
                got.emplace_back(o, sum);
              }).ok());
  EXPECT_EQ(got, (std::vector<ChunkCell>{{3, largest}}));
}

// The number that `sql` (one integer) gives on the database at `path`, read on a connection of
// its own.
int64_t QueryOne(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  EXPECT_EQ(sqlite3_step(st), SQLITE_ROW) << sql;
  const int64_t v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

// Runs `sql` on the database at `path` on a connection of its own.
void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
}

// Issue 37 in the files: a report touching 2 counters of a 2^21-counter sketch stores a few
// bytes of support and writes one delta row per window it counts in (issue 40), which the
// kCounterDeltaFold-th transaction folds into one chunk row per window; a damaged chunk is
// DATA_LOSS naming counter_chunks, for the read and for the fold that would merge into it, and a
// damaged delta DATA_LOSS naming counter_deltas.
TEST(SqliteStorageTest, ALargeLayoutsReportCostsWhatItTouchesAndDamageIsNamed) {
  const std::string path = TempDbPath("sparse_cost");
  auto storage = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<StoredMetric> m = (*storage)->CreateMetric(NewMetric("sketch"));
  ASSERT_TRUE(m.ok());
  ReportRow r = Row(m->id, 1, false, 3);
  r.counters = {(1u << 21) - 2, (1u << 21) - 1};
  r.window_firsts = 1;
  uint8_t next_id = 0;
  auto append = [&]() {
    r.report_id[1] = next_id++;  // a new report
    return (*storage)->AppendReports({r});
  };
  ASSERT_TRUE(append().ok());
  EXPECT_LE(QueryOne(path, "SELECT length(support) FROM recent_reports"), 4);
  EXPECT_EQ(QueryOne(path, "SELECT bit FROM recent_reports"), kStoredBitSparse);
  // Every report's and the day's firsts: a delta row each, no chunk yet.
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_deltas"), 2);
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_chunks"), 0);
  for (int t = 1; t < kCounterDeltaFold; ++t) ASSERT_TRUE(append().ok());
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_deltas"), 0);
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_chunks"), 2);
  ExecSql(path, "UPDATE counter_chunks SET sums = x'80'");
  absl::StatusOr<std::vector<CountRow>> counts = (*storage)->ReadCounts(m->id, 0, 1 << 30);
  EXPECT_EQ(counts.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(counts.status().message(), HasSubstr("counter_chunks"));
  // The deltas go in; the fold into the damaged chunk fails, whole.
  for (int t = 1; t < kCounterDeltaFold; ++t) ASSERT_TRUE(append().ok());
  const int64_t stored = *(*storage)->ReportCount();
  absl::StatusOr<AppendResult> folded = append();
  EXPECT_EQ(folded.status().code(), absl::StatusCode::kDataLoss) << folded.status();
  EXPECT_EQ(*(*storage)->ReportCount(), stored);
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_deltas"), 2 * (kCounterDeltaFold - 1));
  // A damaged delta row (a truncated varint pair), the chunks gone.
  ExecSql(path, "DELETE FROM counter_chunks; UPDATE counter_deltas SET sums = x'01'");
  counts = (*storage)->ReadCounts(m->id, 0, 1 << 30);
  EXPECT_EQ(counts.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(counts.status().message(), HasSubstr("counter_deltas"));
}

// Issue 40: an append writes one counter_deltas row per key and window per transaction instead of
// upserting chunks, and the transaction that would write a key's kCounterDeltaFold-th row folds
// them into counter_chunks: after t transactions into one key, t % kCounterDeltaFold rows remain
// (a read reads at most kCounterDeltaFold - 1), and the counts equal an exact model throughout.
TEST(SqliteStorageTest, CounterDeltasAreFoldedEveryKTransactionsAndCountsStayExact) {
  const std::string path = TempDbPath("counter_deltas_fold");
  auto storage = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<StoredMetric> m = (*storage)->CreateMetric(NewMetric("sketch"));
  ASSERT_TRUE(m.ok());
  std::mt19937_64 rng(40);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::map<uint32_t, int64_t> every;  // counter j >= 1 -> sum, every report
  std::map<uint32_t, int64_t> day;    // the day's firsts
  int64_t n = 0;
  uint64_t next_id = 1;
  constexpr int kTransactions = 3 * kCounterDeltaFold + 5;
  for (int t = 1; t <= kTransactions; ++t) {
    std::vector<ReportRow> batch;
    for (int64_t i = uniform(1, 40); i > 0; --i) {
      ReportRow r = Row(m->id, 1, false, 3);
      for (int b = 0; b < 8; ++b)
        r.report_id[static_cast<size_t>(b)] = static_cast<uint8_t>(next_id >> (8 * b));
      ++next_id;
      // Two counters of a 2^21-counter layout, often in the same chunks.
      const uint32_t a = static_cast<uint32_t>(uniform(1, (1 << 21) - 2));
      const uint32_t b =
          uniform(0, 1) == 1 ? a + 1 : static_cast<uint32_t>(uniform(a + 1, (1 << 21) - 1));
      r.counters = {a, b};
      r.window_firsts = static_cast<int>(uniform(0, 1));
      ++n;
      for (uint32_t j : r.counters) {
        ++every[j];
        if (r.window_firsts == 1) ++day[j];
      }
      batch.push_back(r);
    }
    absl::StatusOr<AppendResult> got = (*storage)->AppendReports(batch);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->accepted, static_cast<int64_t>(batch.size()));
    // Every report's key has one delta row per transaction since its last fold.
    ASSERT_EQ(QueryOne(path, "SELECT count(*) FROM counter_deltas WHERE win = -1"),
              t % kCounterDeltaFold)
        << "after transaction " << t;
    ASSERT_LE(QueryOne(path,
                       "SELECT coalesce(max(k), 0) FROM (SELECT count(*) AS k FROM counter_deltas "
                       "GROUP BY metric_id, event_time, version, labelset_id, win)"),
              kCounterDeltaFold - 1);
    if (t % 7 != 0 && t != kTransactions) continue;
    absl::StatusOr<std::vector<CountRow>> counts = (*storage)->ReadCounts(m->id, 0, 1 << 30);
    ASSERT_TRUE(counts.ok()) << counts.status();
    ASSERT_EQ(counts->size(), 1u);
    const CountRow& row = (*counts)[0];
    EXPECT_EQ(row.n, n);
    SparseCounters want;
    for (const auto& [j, sum] : every) want.Add(j, sum);
    SparseCounters want_day;
    for (const auto& [j, sum] : day) want_day.Add(j, sum);
    EXPECT_EQ(row.counters, want) << "after transaction " << t;
    EXPECT_EQ(row.firsts[0].counters, want_day) << "after transaction " << t;
  }
  EXPECT_GT(QueryOne(path, "SELECT count(*) FROM counter_chunks"), 0);
  // The same counts after a reopen.
  storage->reset();
  storage = SqliteStorage::Open({.path = path, .background_moves = false});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<std::vector<CountRow>> counts = (*storage)->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].counters.size(), every.size());
  // DeleteMetric takes the deltas with the chunks.
  ASSERT_TRUE((*storage)->DeleteMetric("sketch").ok());
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_deltas"), 0);
  EXPECT_EQ(QueryOne(path, "SELECT count(*) FROM counter_chunks"), 0);
}

TEST(SqliteStorageTest, DeleteMetricRemovesMovedAndRecentReports) {
  auto s = SqliteStorage::Open({.path = TempDbPath("delete")});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewMetric("m"));
  absl::StatusOr<StoredMetric> other = (*s)->CreateMetric(NewMetric("other"));
  ASSERT_TRUE(m.ok() && other.ok());
  ASSERT_TRUE((*s)->AppendReports({Row(m->id, 1, true, 5), Row(other->id, 2, true, 5)}).ok());
  ASSERT_TRUE((*s)->MoveRecentReports().ok());
  ASSERT_TRUE((*s)->AppendReports({Row(m->id, 3, true, 5), Row(m->id, 4, true, 6)}).ok());
  ASSERT_EQ(*(*s)->ReportCount(), 4);
  ASSERT_TRUE((*s)->DeleteMetric("m").ok());
  EXPECT_EQ(*(*s)->ReportCount(), 1);
  EXPECT_EQ((*s)->RecentReportCount(), 0);
  EXPECT_EQ(*(*s)->IntegrityCheck(), "ok");
}

// Schema version 3: AUTOINCREMENT keeps a deleted metric's id out of use across a restart too
// (a plain INTEGER PRIMARY KEY would give the largest id + 1 again).
TEST(SqliteStorageTest, DeletedMetricIdIsNotReusedAfterReopen) {
  const std::string path = TempDbPath("no_reuse");
  int64_t deleted_id = 0;
  {
    auto storage = SqliteStorage::Open({.path = path});
    ASSERT_TRUE(storage.ok()) << storage.status();
    ASSERT_TRUE((*storage)->CreateMetric(NewMetric("a")).ok());
    absl::StatusOr<StoredMetric> b = (*storage)->CreateMetric(NewMetric("b"));
    ASSERT_TRUE(b.ok());
    deleted_id = b->id;
    ASSERT_TRUE((*storage)->DeleteMetric("b").ok());
  }
  auto storage = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(storage.ok()) << storage.status();
  absl::StatusOr<StoredMetric> c = (*storage)->CreateMetric(NewMetric("c"));
  ASSERT_TRUE(c.ok());
  EXPECT_GT(c->id, deleted_id);
}

// Retention reaches the keyed table too (reports moved out of recent_reports), and a metric-hour
// emptied by retention leaves the in-memory recent ids: a later report of it is new.
TEST(SqliteStorageTest, RetentionDropsMovedAndRecentReports) {
  auto storage =
      SqliteStorage::Open({.path = TempDbPath("retention_moved"), .background_moves = false});
  ASSERT_TRUE(storage.ok()) << storage.status();
  StoredMetric metric = NewMetric("m");
  metric.retention_days = 5;
  absl::StatusOr<StoredMetric> m = (*storage)->CreateMetric(metric);
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE((*storage)->AppendReports({Row(m->id, 1, true, 1), Row(m->id, 2, true, 2)}).ok());
  ASSERT_TRUE((*storage)->MoveRecentReports().ok());
  ASSERT_TRUE(
      (*storage)->AppendReports({Row(m->id, 3, true, 2), Row(m->id, 4, true, 24 * 9)}).ok());
  absl::StatusOr<RetentionResult> r = (*storage)->ApplyRetention(
      {.now_seconds = 10 * 86400, .dedup_window_seconds = 0, .batch_rows = 1});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reports_dropped, 3);
  EXPECT_EQ(*(*storage)->ReportCount(), 1);
  EXPECT_EQ((*storage)->RecentReportCount(), 1);
  absl::StatusOr<AppendResult> again = (*storage)->AppendReports({Row(m->id, 3, true, 2)});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->accepted, 1);
  EXPECT_EQ(*(*storage)->IntegrityCheck(), "ok");
}

TEST(SqliteStorageTest, OpenRefusesInMemoryPath) {
  auto s = SqliteStorage::Open({.path = ":memory:"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("path"));
}

TEST(SqliteStorageTest, OpenFailsForUnwritableDirectory) {
  auto s = SqliteStorage::Open({.path = "/nonexistent-dir/deniable.db"});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("/nonexistent-dir/deniable.db"));
}

TEST(SqliteStorageTest, SecondOpenOfTheSameDatabaseFailsNamingThePathAndTheHolder) {
  const std::string path = TempDbPath("one_writer");
  auto first = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = SqliteStorage::Open({.path = path});
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr(path));
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("pid ", getpid())));
  // The first storage is untouched and keeps working.
  absl::StatusOr<StoredMetric> m = (*first)->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_TRUE((*first)->AppendReports({Row(m->id, 1, true, 5)}).ok());
  first->reset();
  // Once the holder has closed, the database opens again.
  auto third = SqliteStorage::Open({.path = path});
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ(*(*third)->ReportCount(), 1);
}

TEST(SqliteErrorTest, FailuresThatMayPassAreUnavailableAndOnlyBugsAreInternal) {
  struct Case {
    int code;
    absl::StatusCode want;
  };
  for (const Case& c : {Case{SQLITE_FULL, absl::StatusCode::kUnavailable},
                        Case{SQLITE_IOERR, absl::StatusCode::kUnavailable},
                        Case{SQLITE_IOERR_WRITE, absl::StatusCode::kUnavailable},
                        Case{SQLITE_IOERR_FSYNC, absl::StatusCode::kUnavailable},
                        Case{SQLITE_BUSY, absl::StatusCode::kUnavailable},
                        Case{SQLITE_LOCKED, absl::StatusCode::kUnavailable},
                        Case{SQLITE_READONLY, absl::StatusCode::kUnavailable},
                        Case{SQLITE_CANTOPEN, absl::StatusCode::kUnavailable},
                        Case{SQLITE_NOMEM, absl::StatusCode::kUnavailable},
                        Case{SQLITE_CORRUPT, absl::StatusCode::kDataLoss},
                        Case{SQLITE_NOTADB, absl::StatusCode::kDataLoss},
                        Case{SQLITE_CONSTRAINT_PRIMARYKEY, absl::StatusCode::kAlreadyExists},
                        Case{SQLITE_MISUSE, absl::StatusCode::kInternal},
                        Case{SQLITE_ERROR, absl::StatusCode::kInternal}}) {
    const absl::Status s = SqliteError(nullptr, c.code, "writing");
    EXPECT_EQ(s.code(), c.want) << "sqlite code " << c.code << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("writing"));
  }
  EXPECT_THAT(SqliteError(nullptr, SQLITE_FULL, "commit").message(), HasSubstr("disk is full"));
}

// What a client sees of a storage failure: the summary, never the database's own text, and an
// unexpected constraint failure as INTERNAL, never ALREADY_EXISTS (docs/operations.md).
TEST(StorageErrorTest, ClientsSeeTheSummaryAndAConstraintFailureAsInternal) {
  const absl::Status constraint = SqliteError(nullptr, SQLITE_CONSTRAINT_PRIMARYKEY, "step");
  EXPECT_TRUE(IsStorageFailure(constraint));
  const absl::Status client = ClientVisibleStatus(constraint);
  EXPECT_EQ(client.code(), absl::StatusCode::kInternal) << client;
  EXPECT_THAT(client.message(), Not(HasSubstr("constraint failed:")));
  EXPECT_THAT(client.message(), Not(HasSubstr("sqlite")));
  EXPECT_THAT(client.message(), Not(HasSubstr("step")));
  EXPECT_FALSE(IsStorageFailure(client));

  const absl::Status pg = ClientVisibleStatus(PostgresError("23505", "duplicate key", "insert"));
  EXPECT_EQ(pg.code(), absl::StatusCode::kInternal) << pg;
  EXPECT_THAT(pg.message(), Not(HasSubstr("SQLSTATE")));

  const absl::Status full = ClientVisibleStatus(SqliteError(nullptr, SQLITE_FULL, "commit"));
  EXPECT_EQ(full.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(full.message(), "storage: the disk is full, retry later");
  const absl::Status io = ClientVisibleStatus(SqliteError(nullptr, SQLITE_IOERR_FSYNC, "commit"));
  EXPECT_EQ(io.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(io.message(), HasSubstr("I/O error"));
  EXPECT_THAT(io.message(), Not(HasSubstr("sqlite")));
  EXPECT_EQ(ClientVisibleStatus(SqliteError(nullptr, SQLITE_CORRUPT, "read")).code(),
            absl::StatusCode::kDataLoss);

  // Statuses the storage words itself for clients pass unchanged.
  const absl::Status taken = absl::AlreadyExistsError("metric \"m\" already exists");
  EXPECT_EQ(ClientVisibleStatus(taken), taken);
}

// A metric name taken stays ALREADY_EXISTS for the client, on every backend.
TEST_P(StorageTest, NameTakenIsAlreadyExistsForTheClientToo) {
  ASSERT_TRUE(storage_->CreateMetric(NewMetric("m")).ok());
  const absl::Status again = ClientVisibleStatus(storage_->CreateMetric(NewMetric("m")).status());
  EXPECT_EQ(again.code(), absl::StatusCode::kAlreadyExists) << again;
  EXPECT_THAT(again.message(), HasSubstr("\"m\""));
}

}  // namespace storage_test
}  // namespace
}  // namespace deniable::server
