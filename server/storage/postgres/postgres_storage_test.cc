// PostgresStorage beyond the conformance suite: concurrent starts, a newer schema, a database
// restart (UNAVAILABLE, then reconnecting by itself), error mapping and password redaction,
// shards summed by ReadCounts, and prepared statements across a lost session.
#include "server/storage/postgres/postgres_storage.h"

#include <prometheus/registry.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deniable/common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/auth/rate_limiter.h"
#include "server/metrics/metered_storage.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/postgres/postgres_rate_buckets.h"
#include "server/storage/postgres/postgres_schema.h"
#include "server/storage/postgres/postgres_token_store.h"
#include "server/storage/postgres/sqlite_to_postgres.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/storage_test_util.h"
#include "server/storage/testing/test_postgres.h"

namespace deniable::server {
namespace {
namespace postgres_storage_test {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TempDbPath;
using testing_util::TestPostgres;
using testing_util::Yes;

class PostgresStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DENIABLE_SKIP_WITHOUT_POSTGRES();
    pg_ = TestPostgres::Shared();
    ASSERT_NE(pg_, nullptr);
    absl::StatusOr<std::string> uri = pg_->NewDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
  }
  // Two collectors' storages on the database, with a yes/no metric "m" and a categorical metric
  // "c" (a, b, c, d) made through the first.
  struct TwoCollectors {
    std::unique_ptr<PostgresStorage> first, second;
    StoredMetric m, c;
  };
  void OpenTwoCollectors(TwoCollectors* t) {
    auto first = PostgresStorage::Open({.uri = uri_});
    auto second = PostgresStorage::Open({.uri = uri_});
    ASSERT_TRUE(first.ok() && second.ok());
    absl::StatusOr<StoredMetric> m = (*first)->CreateMetric(NewMetric("m"));
    absl::StatusOr<StoredMetric> c =
        (*first)->CreateMetric(testing_util::NewCategoricalMetric("c"));
    ASSERT_TRUE(m.ok() && c.ok());
    t->first = *std::move(first);
    t->second = *std::move(second);
    t->m = *m;
    t->c = *c;
  }

  TestPostgres* pg_ = nullptr;
  std::string uri_;
};

TEST_F(PostgresStorageTest, CollectorsStartingTogetherCreateTheSchemaOnce) {
  std::vector<std::thread> threads;
  std::vector<absl::Status> results(6);
  std::vector<int> shards(6);
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      auto s = PostgresStorage::Open({.uri = uri_});
      results[i] = s.status();
      if (s.ok()) shards[i] = (*s)->shard();
    });
  }
  for (auto& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  std::sort(shards.begin(), shards.end());
  EXPECT_EQ(std::unique(shards.begin(), shards.end()), shards.end()) << "each has its own shard";
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  absl::StatusOr<PgResult> v = (*conn)->Exec("SELECT count(*), max(version) FROM schema_version");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Int64(0, 0), kPostgresSchemaVersion);  // each migration step applied once
  EXPECT_EQ(v->Int64(0, 1), kPostgresSchemaVersion);
}

// Schema step 5 on a version 4 database: label_values is filled from the label sets of the
// counts, so the cap counts the values stored before it existed; DeleteMetric empties a metric's.
TEST_F(PostgresStorageTest, Version4DatabaseGetsItsLabelValuesFromTheCounts) {
  int64_t m = 0, other = 0;
  {
    auto s = PostgresStorage::Open({.uri = uri_});
    ASSERT_TRUE(s.ok()) << s.status();
    absl::StatusOr<StoredMetric> created = (*s)->CreateMetric(NewMetric("m"));
    absl::StatusOr<StoredMetric> created_other = (*s)->CreateMetric(NewMetric("other"));
    ASSERT_TRUE(created.ok() && created_other.ok());
    m = created->id;
    other = created_other->id;
    ASSERT_TRUE((*s)->AppendReports({Row(m, 1, true, 10, "device=a,region=N"),
                                     Row(m, 2, true, 10, "device=b"), Row(other, 3, true, 10)})
                    .ok());
  }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  // Back to version 4, as a database written before the cap (and before the window flags of
  // version 6, issue 26, and the counter vectors of version 7, issue 27).
  ASSERT_TRUE((*conn)
                  ->Exec("ALTER TABLE counts RENAME COLUMN counter0 TO yes; DROP TABLE "
                         "counter_chunks; CREATE TABLE category_counts(metric_id bigint NOT "
                         "NULL, event_time bigint NOT NULL, version integer NOT NULL, labels "
                         "text COLLATE \"C\" NOT NULL, shard integer NOT NULL, category integer "
                         "NOT NULL, support bigint NOT NULL, PRIMARY KEY (metric_id, event_time, "
                         "version, labels, shard, category))")
                  .ok());
  ASSERT_TRUE((*conn)->Exec("DROP TABLE label_values").ok());
  ASSERT_TRUE((*conn)->Exec("DROP TABLE first_counts").ok());
  ASSERT_TRUE((*conn)
                  ->Exec("ALTER TABLE metrics DROP COLUMN window_firsts_off, DROP COLUMN "
                         "reporting_once")
                  .ok());
  ASSERT_TRUE((*conn)->Exec("DELETE FROM schema_version WHERE version >= 5").ok());

  auto s = PostgresStorage::Open({.uri = uri_, .max_label_values = 2});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<PgResult> values = (*conn)->Exec(
      "SELECT string_agg(metric_id || ':' || key || '=' || value, ' ' ORDER BY key, value) "
      "FROM label_values");
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values->Text(0, 0), absl::StrCat(m, ":device=a ", m, ":device=b ", m, ":region=N"));
  absl::StatusOr<AppendResult> r =
      (*s)->AppendReports({Row(m, 4, true, 10, "device=c"), Row(m, 5, true, 10, "region=S"),
                           Row(other, 6, true, 10, "device=c")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->accepted, 2);
  ASSERT_EQ(r->label_refusals.size(), 1u);
  EXPECT_EQ(r->label_refusals[0].row, 0u);
  // Version 6: the old metrics keep the flags on; a flagged report counts its first.
  absl::StatusOr<StoredMetric> migrated = (*s)->GetMetric("other");
  ASSERT_TRUE(migrated.ok()) << migrated.status();
  EXPECT_FALSE(migrated->window_firsts_off);
  EXPECT_FALSE(migrated->reporting_once);
  ReportRow flagged = Row(other, 7, true, 11);
  flagged.window_firsts = 7;
  ASSERT_TRUE((*s)->AppendReports({flagged}).ok());
  absl::StatusOr<std::vector<CountRow>> counts = (*s)->ReadCounts(other, 11 * 3600, 12 * 3600);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].firsts[2].n, 1);
  EXPECT_EQ(Yes((*counts)[0].firsts[2]), 1);

  ASSERT_TRUE((*s)->DeleteMetric("m").ok());
  absl::StatusOr<PgResult> left =
      (*conn)->Exec("SELECT count(*) FROM label_values WHERE metric_id = $1", {absl::StrCat(m)});
  ASSERT_TRUE(left.ok());
  EXPECT_EQ(left->Int64(0, 0), 0);
}

// Issue 26: `deniable-server migrate` carries each report's window flags, so PostgreSQL counts
// the same first reports as the SQLite database (and the verification compares them).
TEST_F(PostgresStorageTest, MigrationFromSqliteCarriesTheWindowFirsts) {
  const std::string path = TempDbPath("migrate_firsts");
  int64_t id = 0;
  {
    auto sqlite = SqliteStorage::Open({.path = path, .background_moves = false});
    ASSERT_TRUE(sqlite.ok()) << sqlite.status();
    absl::StatusOr<StoredMetric> m = (*sqlite)->CreateMetric(NewMetric("m"));
    ASSERT_TRUE(m.ok());
    id = m->id;
    ReportRow first = Row(id, 1, true, 10);
    first.window_firsts = 7;
    ReportRow day = Row(id, 2, false, 10);
    day.window_firsts = 1;
    ASSERT_TRUE((*sqlite)->AppendReports({first, day, Row(id, 3, true, 10)}).ok());
    ASSERT_TRUE((*sqlite)->MoveRecentReports().ok());  // one moved, one recent
    ReportRow recent = Row(id, 4, true, 11);
    recent.window_firsts = 3;
    ASSERT_TRUE((*sqlite)->AppendReports({recent}).ok());
  }
  absl::StatusOr<MigrationSummary> summary =
      MigrateSqliteToPostgres(path, uri_, [](const std::string&) {});
  ASSERT_TRUE(summary.ok()) << summary.status();
  auto pg = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(pg.ok()) << pg.status();
  absl::StatusOr<StoredMetric> m = (*pg)->GetMetric("m");
  ASSERT_TRUE(m.ok());
  absl::StatusOr<std::vector<CountRow>> counts = (*pg)->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 2u);
  EXPECT_EQ((*counts)[0].firsts[0].n, 2);
  EXPECT_EQ(Yes((*counts)[0].firsts[0]), 1);
  EXPECT_EQ((*counts)[0].firsts[2].n, 1);
  EXPECT_EQ((*counts)[1].firsts[1].n, 1);
}

// Issue 37: schema step 8 on a version 7 database (one counter_sums row per key, shard and
// counter; first_counts rows of counters >= 1) written by two collectors: the chunks it builds
// read back every counter, n and window first as before, counter_sums is gone and first_counts
// keeps only n and counter 0; later appends merge into the migrated chunks.
TEST_F(PostgresStorageTest, Version7CounterSumsMigrateIntoChunksKeepingEverySum) {
  int64_t metric = 0;
  std::vector<CountRow> before;
  std::vector<ReportRow> rows;
  {
    auto first = PostgresStorage::Open({.uri = uri_});
    auto second = PostgresStorage::Open({.uri = uri_});
    ASSERT_TRUE(first.ok() && second.ok());
    absl::StatusOr<StoredMetric> m = (*first)->CreateMetric(NewMetric("hh"));
    ASSERT_TRUE(m.ok()) << m.status();
    metric = m->id;
    const std::vector<std::vector<uint32_t>> touched = {
        {0, 5}, {5, 1023}, {1023, 1024}, {65535, 65536}, {1, 1'114'111}, {1024, 65536}};
    for (int i = 0; i < 24; ++i) {
      ReportRow r = Row(metric, i + 1, false, 3 + i % 2, i % 3 == 0 ? "region=N" : "");
      const std::vector<uint32_t>& t = touched[static_cast<size_t>(i) % touched.size()];
      r.counters.assign(t.begin(), t.end());
      r.window_firsts = i % 8;
      rows.push_back(r);
      ASSERT_TRUE((i % 2 == 0 ? *first : *second)->AppendReports({r}).ok());
    }
    absl::StatusOr<std::vector<CountRow>> read = (*first)->ReadCounts(metric, 0, 1L << 40);
    ASSERT_TRUE(read.ok()) << read.status();
    before = *read;
  }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  // Back to version 7: the chunks as one row per counter (counter_sums; first_counts' windows).
  ASSERT_TRUE((*conn)
                  ->Exec(R"sql(
CREATE TABLE counter_sums(
  metric_id bigint NOT NULL, event_time bigint NOT NULL, version integer NOT NULL,
  labels text COLLATE "C" NOT NULL, shard integer NOT NULL, counter integer NOT NULL,
  total bigint NOT NULL, PRIMARY KEY (metric_id, event_time, version, labels, shard, counter));
INSERT INTO counter_sums SELECT metric_id, event_time, version, labels, shard, chunk * 1024 + o, s
  FROM counter_chunks, unnest(offsets, sums) AS u(o, s) WHERE win = -1;
INSERT INTO first_counts SELECT metric_id, event_time, version, labels, shard, win,
  chunk * 1024 + o, s FROM counter_chunks, unnest(offsets, sums) AS u(o, s) WHERE win >= 0;
DROP TABLE counter_chunks;
DELETE FROM schema_version WHERE version >= 8;
)sql")
                  .ok());
  absl::StatusOr<PgResult> old_rows = (*conn)->Exec(
      "SELECT (SELECT count(DISTINCT shard) FROM counter_sums), (SELECT count(*) "
      "FROM first_counts WHERE counter >= 1)");
  ASSERT_TRUE(old_rows.ok()) << old_rows.status();
  ASSERT_EQ(old_rows->Int64(0, 0), 2) << "two collectors' shards";
  ASSERT_GT(old_rows->Int64(0, 1), 0);

  auto s = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<std::vector<CountRow>> after = (*s)->ReadCounts(metric, 0, 1L << 40);
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_EQ(after->size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ((*after)[i].event_time_seconds, before[i].event_time_seconds);
    EXPECT_EQ((*after)[i].labels, before[i].labels);
    EXPECT_EQ((*after)[i].n, before[i].n);
    EXPECT_EQ((*after)[i].counters.Dense(), before[i].counters.Dense()) << i;
    for (size_t w = 0; w < 3; ++w) {
      EXPECT_EQ((*after)[i].firsts[w].n, before[i].firsts[w].n);
      EXPECT_EQ((*after)[i].firsts[w].counters.Dense(), before[i].firsts[w].counters.Dense())
          << i << " window " << w;
    }
  }
  absl::StatusOr<PgResult> left = (*conn)->Exec(
      "SELECT (SELECT count(*) FROM pg_class WHERE relname = 'counter_sums'), (SELECT count(*) "
      "FROM first_counts WHERE counter >= 1), (SELECT max(version) FROM schema_version)");
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_EQ(left->Int64(0, 0), 0) << "counter_sums dropped";
  EXPECT_EQ(left->Int64(0, 1), 0) << "first_counts keeps n and counter 0";
  EXPECT_EQ(left->Int64(0, 2), kPostgresSchemaVersion);
  // The migrated chunks take further counts (a re-send of every report is a duplicate).
  ReportRow more = Row(metric, 100, false, 3);
  more.counters = {1023, 1'114'111};
  rows.push_back(more);
  absl::StatusOr<AppendResult> appended = (*s)->AppendReports(rows);
  ASSERT_TRUE(appended.ok()) << appended.status();
  EXPECT_EQ(appended->accepted, 1);
  absl::StatusOr<std::vector<CountRow>> grown = (*s)->ReadCounts(metric, 3 * 3600, 4 * 3600);
  ASSERT_TRUE(grown.ok()) << grown.status();
  int64_t c1023 = 0, c_last = 0;
  for (const CountRow& row : *grown) {
    const std::vector<int64_t> dense = row.counters.Dense();
    if (dense.size() > 1023) c1023 += dense[1023];
    if (dense.size() > 1'114'111) c_last += dense[1'114'111];
  }
  int64_t want1023 = 1, want_last = 1;
  for (const CountRow& row : before) {
    if (row.event_time_seconds != 3 * 3600) continue;
    const std::vector<int64_t> dense = row.counters.Dense();
    if (dense.size() > 1023) want1023 += dense[1023];
    if (dense.size() > 1'114'111) want_last += dense[1'114'111];
  }
  EXPECT_EQ(c1023, want1023);
  EXPECT_EQ(c_last, want_last);
}

// A version 7 counter_sums row outside the stored ranges stops step 8 with DATA_LOSS naming the
// table (the database stays at version 7), never a wrong count.
TEST_F(PostgresStorageTest, Version7CounterSumOutOfRangeIsDataLossNamingTheTable) {
  { ASSERT_TRUE(PostgresStorage::Open({.uri = uri_}).ok()); }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)
                  ->Exec(R"sql(
DROP TABLE counter_chunks;
CREATE TABLE counter_sums(
  metric_id bigint NOT NULL, event_time bigint NOT NULL, version integer NOT NULL,
  labels text COLLATE "C" NOT NULL, shard integer NOT NULL, counter integer NOT NULL,
  total bigint NOT NULL, PRIMARY KEY (metric_id, event_time, version, labels, shard, counter));
INSERT INTO counter_sums VALUES (1, 0, 1, '', 0, -5, 3);
DELETE FROM schema_version WHERE version >= 8;
)sql")
                  .ok());
  auto s = PostgresStorage::Open({.uri = uri_});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.status().message(), HasSubstr("counter_sums"));
  absl::StatusOr<PgResult> v = (*conn)->Exec("SELECT max(version) FROM schema_version");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Int64(0, 0), 7);
}

// Issue 37: reports of a 1 114 112-counter sketch cost the chunks they touch: 300 reports of one
// hour, 2 counters each in chunks 1 and 1 088 (the last), from two collectors, leave one
// counter_chunks row per (shard, chunk), not one per touched counter, and read back exactly. A
// damaged chunk (an offset past the chunk) is DATA_LOSS naming counter_chunks on read.
TEST_F(PostgresStorageTest, ALargeLayoutsChunksCostWhatTheyTouchAndDamageIsNamed) {
  auto first = PostgresStorage::Open({.uri = uri_});
  auto second = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(first.ok() && second.ok());
  absl::StatusOr<StoredMetric> m = (*first)->CreateMetric(NewMetric("hh"));
  ASSERT_TRUE(m.ok()) << m.status();
  std::map<uint32_t, int64_t> want;
  for (int half = 0; half < 2; ++half) {
    std::vector<ReportRow> batch;
    for (int i = 0; i < 150; ++i) {
      ReportRow r = Row(m->id, half * 1000 + i + 1, false, 9);
      const auto c = static_cast<uint32_t>((i * 7 + half) % 1024);
      r.counters = {1024 + c, 1'113'088 + (c * 3) % 1024};
      for (uint32_t j : r.counters) ++want[j];
      batch.push_back(r);
    }
    // Each collector in three calls, so that stored chunks merge with added ones.
    for (size_t from = 0; from < batch.size(); from += 50) {
      std::vector<ReportRow> part(batch.begin() + static_cast<std::ptrdiff_t>(from),
                                  batch.begin() + static_cast<std::ptrdiff_t>(from + 50));
      ASSERT_TRUE((half == 0 ? *first : *second)->AppendReports(part).ok());
    }
  }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  absl::StatusOr<PgResult> stored =
      (*conn)->Exec("SELECT count(*), count(DISTINCT shard) FROM counter_chunks");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->Int64(0, 0), 4) << "2 shards x 2 chunks";
  EXPECT_EQ(stored->Int64(0, 1), 2);
  absl::StatusOr<std::vector<CountRow>> counts = (*first)->ReadCounts(m->id, 0, 1L << 40);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 300);
  std::map<uint32_t, int64_t> got;
  for (const auto& [j, v] : (*counts)[0].counters) got[j] = v;
  EXPECT_EQ(got, want);

  ASSERT_TRUE((*conn)
                  ->Exec("UPDATE counter_chunks SET offsets = offsets || 5000, sums = sums || "
                         "1::bigint WHERE chunk = 1")
                  .ok());
  absl::StatusOr<std::vector<CountRow>> damaged = (*first)->ReadCounts(m->id, 0, 1L << 40);
  EXPECT_EQ(damaged.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(damaged.status().message(), HasSubstr("counter_chunks"));
}

// deniable_merge_chunk (schema version 9) gives what the SQL merge of version 8 gave, on both of
// its paths (up to 16 cells added: binary search and splice; more: one pass), for fixed-seed
// random chunks and the edges (nothing stored, nothing added, first and last offsets).
TEST_F(PostgresStorageTest, ChunkMergeFunctionAddsLikeTheSqlMergeOnBothPaths) {
  { ASSERT_TRUE(PostgresStorage::Open({.uri = uri_}).ok()); }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  using Chunk = std::map<int, int64_t>;
  auto arrays = [](const Chunk& c) {
    std::string o = "{", s = "{";
    for (const auto& [offset, sum] : c) {
      absl::StrAppend(&o, o.size() > 1 ? "," : "", offset);
      absl::StrAppend(&s, s.size() > 1 ? "," : "", sum);
    }
    return std::make_pair(o + "}", s + "}");
  };
  std::vector<std::pair<Chunk, Chunk>> cases = {
      {{}, {{0, 1}}},
      {{{5, 2}}, {}},
      {{{0, 1}, {1023, 4}}, {{0, 2}, {512, 1}, {1023, 1}}},
      {{{3, 1}, {7, 1}}, {{1, 1}, {5, 1}, {9, 1}}},
  };
  std::mt19937 rng(37);
  for (int i = 0; i < 60; ++i) {
    Chunk stored, added;
    const int n = static_cast<int>(rng() % 200), m = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) stored[static_cast<int>(rng() % 1024)] += 1 + rng() % 9;
    for (int k = 0; k < m; ++k) added[static_cast<int>(rng() % 1024)] += 1 + rng() % 9;
    cases.emplace_back(stored, added);
  }
  for (const auto& [stored, added] : cases) {
    Chunk want = stored;
    for (const auto& [offset, sum] : added) want[offset] += sum;
    const auto [so, ss] = arrays(stored);
    const auto [ao, as] = arrays(added);
    absl::StatusOr<PgResult> got = (*conn)->Exec(
        "SELECT o, s FROM deniable_merge_chunk($1::integer[], $2::bigint[], $3::integer[], "
        "$4::bigint[])",
        {so, ss, ao, as});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->Text(0, 0), arrays(want).first) << so << " + " << ao;
    EXPECT_EQ(got->Text(0, 1), arrays(want).second) << ss << " + " << as;
  }
}

// A version 8 database (no deniable_merge_chunk) gets the function from step 9 and keeps
// counting into the chunks it has, also from two collectors at once.
TEST_F(PostgresStorageTest, Version8DatabaseGetsTheChunkMergeFunctionAndKeepsCounting) {
  int64_t metric = 0;
  {
    auto s = PostgresStorage::Open({.uri = uri_});
    ASSERT_TRUE(s.ok());
    absl::StatusOr<StoredMetric> m = (*s)->CreateMetric(NewMetric("sketch"));
    ASSERT_TRUE(m.ok()) << m.status();
    metric = m->id;
    ReportRow r = Row(metric, 1, false, 3);
    r.counters = {1, 1023, 2048};
    ASSERT_TRUE((*s)->AppendReports({r}).ok());
  }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)
                  ->Exec("DROP FUNCTION deniable_merge_chunk(integer[], bigint[], integer[], "
                         "bigint[]); DELETE FROM schema_version WHERE version >= 9")
                  .ok());
  auto first = PostgresStorage::Open({.uri = uri_});
  auto second = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(first.ok() && second.ok());
  absl::StatusOr<PgResult> v = (*conn)->Exec(
      "SELECT max(version), (SELECT count(*) FROM pg_proc WHERE proname = "
      "'deniable_merge_chunk') FROM schema_version");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->Int64(0, 0), kPostgresSchemaVersion);
  EXPECT_EQ(v->Int64(0, 1), 1);
  std::vector<int64_t> want(2049, 0);
  want[1] = want[1023] = want[2048] = 1;
  for (int i = 2; i < 40; ++i) {
    ReportRow r = Row(metric, i, false, 3);
    r.counters = {static_cast<uint32_t>(i), 1023, static_cast<uint32_t>(1024 + i)};
    for (uint32_t c : r.counters) ++want[c];
    ASSERT_TRUE((i % 2 == 0 ? *first : *second)->AppendReports({r}).ok());
  }
  absl::StatusOr<std::vector<CountRow>> read = (*first)->ReadCounts(metric, 0, 1L << 40);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ((*read)[0].n, 39);
  std::vector<int64_t> dense = (*read)[0].counters.Dense();
  dense.resize(want.size());
  EXPECT_EQ(dense, want);
}

TEST_F(PostgresStorageTest, NewerSchemaIsRefusedNamingBothVersions) {
  ASSERT_TRUE(PostgresStorage::Open({.uri = uri_}).ok());
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  ASSERT_TRUE((*conn)->Exec("INSERT INTO schema_version VALUES (99)").ok());
  auto s = PostgresStorage::Open({.uri = uri_});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.status().message(), HasSubstr("version 99"));
}

TEST_F(PostgresStorageTest, UnreachableDatabaseIsUnavailableAndThePasswordIsNeverShown) {
  auto s = PostgresStorage::Open(
      {.uri = "postgresql://deniable:s3cret-pw@127.0.0.1:1/deniable?connect_timeout=2"});
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.status().message(), HasSubstr("127.0.0.1:1/deniable"));
  EXPECT_THAT(s.status().message(), Not(HasSubstr("s3cret-pw")));
  EXPECT_EQ(RedactedConninfo("postgresql://u:pw@h:5/d"), "postgresql://u@h:5/d");
  EXPECT_THAT(RedactedConninfo("postgresql://u:pw@h:5/d?sslmode=nonsense"), Not(HasSubstr("pw")));
  EXPECT_EQ(PostgresStorage::Open({.uri = ""}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PostgresErrorTest, FailuresThatMayPassAreUnavailableAndOnlyBugsAreInternal) {
  struct Case {
    const char* state;
    absl::StatusCode want;
  };
  for (const Case& c :
       {Case{"", absl::StatusCode::kUnavailable}, Case{"08006", absl::StatusCode::kUnavailable},
        Case{"57P01", absl::StatusCode::kUnavailable},
        Case{"57P03", absl::StatusCode::kUnavailable},
        Case{"40001", absl::StatusCode::kUnavailable},
        Case{"40P01", absl::StatusCode::kUnavailable},
        Case{"53100", absl::StatusCode::kUnavailable},
        Case{"58030", absl::StatusCode::kUnavailable}, Case{"XX001", absl::StatusCode::kDataLoss},
        Case{"XX002", absl::StatusCode::kDataLoss}, Case{"23505", absl::StatusCode::kAlreadyExists},
        Case{"42601", absl::StatusCode::kInternal}, Case{"22P02", absl::StatusCode::kInternal}}) {
    const absl::Status s = PostgresError(c.state, "detail", "writing");
    EXPECT_EQ(s.code(), c.want) << "SQLSTATE " << c.state << ": " << s;
    EXPECT_THAT(s.message(), HasSubstr("writing"));
  }
}

// PostgreSQL restarts under a running storage (behind metering and group commit, as in the
// server): calls and Health() (the gRPC health service) answer UNAVAILABLE while it is down,
// nothing is half-written, and the storage reconnects by itself.
TEST_F(PostgresStorageTest, DatabaseRestartIsUnavailableThenRecoveredWithoutLosingAnything) {
  auto opened = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(opened.ok()) << opened.status();
  PostgresStorage* raw = opened->get();
  prometheus::Registry registry;
  GroupCommitStorage storage(std::make_unique<MeteredStorage>(*std::move(opened), registry));
  absl::StatusOr<StoredMetric> m = storage.CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  ASSERT_TRUE(storage.AppendReports({Row(m->id, 1, true, 5), Row(m->id, 2, false, 5)}).ok());

  ASSERT_TRUE(pg_->Stop().ok());
  absl::StatusOr<AppendResult> down = storage.AppendReports({Row(m->id, 3, true, 5)});
  EXPECT_EQ(down.status().code(), absl::StatusCode::kUnavailable) << down.status();
  EXPECT_EQ(storage.Health().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(storage.GetMetric("m").status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(pg_->StartAgain().ok());

  // The device retries: the same batch is stored once, and the old reports are still there.
  absl::StatusOr<AppendResult> retry =
      storage.AppendReports({Row(m->id, 3, true, 5), Row(m->id, 1, true, 5)});
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(retry->accepted, 1);
  EXPECT_EQ(retry->duplicates, 1);
  EXPECT_TRUE(storage.Health().ok());
  absl::StatusOr<std::vector<CountRow>> counts = storage.ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  ASSERT_EQ(counts->size(), 1u);
  EXPECT_EQ((*counts)[0].n, 3);
  EXPECT_EQ(*raw->ReportCount(), 3);
}

// Appends of kCopyRows rows or more go through COPY into a staging table: the same results as the
// unnest path (duplicates within the call and against stored rows, labels with COPY's special
// characters), and the staging table is made again on a new session after the connection broke.
TEST_F(PostgresStorageTest, LargeAppendsThroughCopyCountExactlyOnceAlsoAfterAReconnect) {
  auto opened = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(opened.ok()) << opened.status();
  PostgresStorage& storage = **opened;
  absl::StatusOr<StoredMetric> m = storage.CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  const std::string odd = "os=a\tb\\c\nd\re\"f";
  std::vector<ReportRow> stored, big, overlap;
  for (int i = 0; i < 500; ++i) stored.push_back(Row(m->id, i, i % 2 == 0, 5));
  ASSERT_TRUE(storage.AppendReports(stored).ok());
  const int n = static_cast<int>(PostgresStorage::kCopyRows) + 500;
  for (int i = 0; i < n; ++i) big.push_back(Row(m->id, i, i % 2 == 0, 5, i % 3 == 0 ? odd : ""));
  for (int i = n - 1000; i < n + 10; ++i) overlap.push_back(Row(m->id, i, i % 2 == 0, 5));
  const absl::Span<const ReportRow> batches[] = {big, overlap};
  absl::StatusOr<std::vector<AppendResult>> got = storage.AppendBatches(batches);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)[0].accepted, n - 500);
  EXPECT_EQ((*got)[0].duplicates, 500);
  EXPECT_EQ((*got)[1].accepted, 10);
  EXPECT_EQ((*got)[1].duplicates, 1000);
  absl::StatusOr<std::vector<CountRow>> counts = storage.ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(counts.ok()) << counts.status();
  int64_t total = 0, with_odd = 0;
  for (const CountRow& c : *counts) {
    total += c.n;
    if (c.labels == odd) with_odd += c.n;
  }
  EXPECT_EQ(total, n + 10);
  EXPECT_EQ(with_odd, (n - 500 + 2) / 3) << "labels round-trip through COPY's text format";

  // Break every session of the storage; the next large append reconnects and stages again.
  auto admin = PgConnection::Connect(uri_);
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE((*admin)
                  ->Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                         "datname = current_database() AND pid <> pg_backend_pid()")
                  .ok());
  std::vector<ReportRow> more;
  for (int i = n; i < n + static_cast<int>(PostgresStorage::kCopyRows); ++i) {
    more.push_back(Row(m->id, i - 10, true, 5));
  }
  absl::StatusOr<AppendResult> after = storage.AppendReports(more);
  if (!after.ok()) {
    EXPECT_EQ(after.status().code(), absl::StatusCode::kUnavailable) << after.status();
    after = storage.AppendReports(more);  // the device's retry
  }
  ASSERT_TRUE(after.ok()) << after.status();
  // Ids n-10 .. n+9 were stored above (by `big` and by `overlap`).
  EXPECT_EQ(after->accepted, static_cast<int64_t>(PostgresStorage::kCopyRows) - 20);
  EXPECT_EQ(after->duplicates, 20);
  (void)storage.Health();  // the reading session learns it was cut, and reconnects
  absl::StatusOr<int64_t> stored_now = storage.ReportCount();
  ASSERT_TRUE(stored_now.ok()) << stored_now.status();
  EXPECT_EQ(*stored_now, n + 10 + static_cast<int64_t>(PostgresStorage::kCopyRows) - 20);
}

// Two collectors' limiters on one database take from one bucket per token: what one takes, the
// other cannot. The refill rate is tiny (0.001 reports/s), so the few seconds a test takes add no
// whole report and every figure is exact.
TEST_F(PostgresStorageTest, RateLimitOfATokenIsSharedByCollectorsAndPeersStayLocal) {
  auto first = PostgresRateBuckets::Open(uri_);
  auto second = PostgresRateBuckets::Open(uri_);
  ASSERT_TRUE(first.ok() && second.ok()) << first.status() << second.status();
  FakeClock clock(absl::FromUnixSeconds(1700000000));
  const RateLimitOptions options{.reports_per_second = 0.001, .burst = 10, .shared = nullptr};
  RateLimitOptions a = options, b = options;
  a.shared = *std::move(first);
  b.shared = *std::move(second);
  RateLimiter collector1(a, &clock), collector2(b, &clock);

  EXPECT_TRUE(collector1.Admit("t:7", 6).ok());
  const absl::Status refused = collector2.Admit("t:7", 6);
  EXPECT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused;
  EXPECT_THAT(refused.message(), HasSubstr("retry in 199")) << "4 left, 6 wanted, 0.001/s: ~2000 s";
  EXPECT_TRUE(collector2.Admit("t:7", 4).ok()) << "the refusal took nothing";
  EXPECT_EQ(collector1.Admit("t:7", 1).code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(collector1.Admit("t:8", 10).ok()) << "another token has its own bucket";
  // Tokenless keys (salted per process) are not shared: each collector has its own bucket.
  EXPECT_TRUE(collector1.Admit("p:x", 10).ok());
  EXPECT_TRUE(collector2.Admit("p:x", 10).ok());
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  EXPECT_EQ((*conn)->Exec("SELECT string_agg(key, ',' ORDER BY key) FROM rate_buckets")->Text(0, 0),
            "t:7,t:8");

  // PostgreSQL down: each collector falls back to its own bucket (full for a key it never saw).
  ASSERT_TRUE(pg_->Stop().ok());
  EXPECT_TRUE(collector1.Admit("t:7", 10).ok());
  EXPECT_EQ(collector1.Admit("t:7", 1).code(), absl::StatusCode::kResourceExhausted);
  ASSERT_TRUE(pg_->StartAgain().ok());
  // The first call after the restart may still find the old session broken (then the local
  // bucket, where "t:8" is full, admits it); the next one is back on the shared bucket, which
  // collector 1 emptied before the restart.
  (void)collector1.Admit("t:8", 1);
  EXPECT_EQ(collector1.Admit("t:8", 1).code(), absl::StatusCode::kResourceExhausted);
}

// ReadCounts reads every shard's row as stored and sums them itself (docs/benchmarks.md): two
// collectors (two writing sessions each, so up to four shards an hour) give one row per (event
// time, version, labels), in event-time order, with n, yes and each category's support summed.
TEST_F(PostgresStorageTest, ReadCountsSumsEveryCollectorsShardsInEventTimeOrder) {
  TwoCollectors t;
  ASSERT_NO_FATAL_FAILURE(OpenTwoCollectors(&t));
  std::unique_ptr<PostgresStorage>*first = &t.first, *second = &t.second;
  const StoredMetric *m = &t.m, *c = &t.c;
  int id = 0;
  for (PostgresStorage* s : {first->get(), second->get()}) {
    for (int call = 0; call < 4; ++call) {  // calls spread over the two writing sessions
      ASSERT_TRUE(s->AppendReports({Row(m->id, ++id, true, 5), Row(m->id, ++id, false, 5),
                                    Row(m->id, ++id, true, 3), Row(m->id, ++id, true, 5, "k=x"),
                                    testing_util::CategoricalRow(c->id, ++id, {0, 2}, 5),
                                    testing_util::CategoricalRow(c->id, ++id, {2}, 5)})
                      .ok());
    }
  }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  absl::StatusOr<PgResult> shards = (*conn)->Exec(
      "SELECT count(*) FROM counts WHERE metric_id = $1 AND event_time = $2 AND labels = ''",
      {absl::StrCat(m->id), absl::StrCat(5 * 3600)});
  ASSERT_TRUE(shards.ok()) << shards.status();
  EXPECT_GE(shards->Int64(0, 0), 2) << "the rows of at least two shards are summed";

  absl::StatusOr<std::vector<CountRow>> rows = (*second)->ReadCounts(m->id, 0, 1 << 30);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].event_time_seconds, 3 * 3600);
  EXPECT_EQ((*rows)[0].n, 8);
  EXPECT_EQ(Yes((*rows)[0]), 8);
  EXPECT_EQ((*rows)[1].event_time_seconds, 5 * 3600);
  EXPECT_EQ((*rows)[1].labels, "");
  EXPECT_EQ((*rows)[1].n, 16);
  EXPECT_EQ(Yes((*rows)[1]), 8);
  EXPECT_EQ((*rows)[2].labels, "k=x");
  EXPECT_EQ((*rows)[2].n, 8);
  absl::StatusOr<std::vector<CountRow>> cats = (*first)->ReadCounts(c->id, 0, 1 << 30);
  ASSERT_TRUE(cats.ok()) << cats.status();
  ASSERT_EQ(cats->size(), 1u);
  EXPECT_EQ((*cats)[0].n, 16);
  EXPECT_THAT((*cats)[0].counters.Dense(), ::testing::ElementsAre(8, 0, 16));
}

// ApplyRetention folds the count rows of closed hours into one shard: the counts a query reads
// are unchanged, each hour keeps one row per key however many collectors wrote in it, a late
// report adds to its writer's shard again and the next run folds that too; the current hours
// are left alone.
TEST_F(PostgresStorageTest, RetentionFoldsTheShardsOfClosedHoursAndKeepsEveryCount) {
  TwoCollectors t;
  ASSERT_NO_FATAL_FAILURE(OpenTwoCollectors(&t));
  std::unique_ptr<PostgresStorage>*first = &t.first, *second = &t.second;
  const StoredMetric *m = &t.m, *c = &t.c;
  const int64_t now_hour = 500000;  // hours since 1970; hour 5 is long closed
  int id = 0;
  for (PostgresStorage* s : {first->get(), second->get()}) {
    for (int call = 0; call < 4; ++call) {
      ASSERT_TRUE(s->AppendReports({Row(m->id, ++id, true, 5), Row(m->id, ++id, false, 5, "k=x"),
                                    Row(m->id, ++id, true, now_hour),
                                    testing_util::CategoricalRow(c->id, ++id, {0, 2}, 5)})
                      .ok());
    }
  }
  auto conn = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok());
  auto rows_at = [&](const char* table, int64_t hour) {
    absl::StatusOr<PgResult> r =
        (*conn)->Exec(absl::StrCat("SELECT count(*), count(DISTINCT shard) FROM ", table,
                                   " WHERE event_time = $1"),
                      {absl::StrCat(hour * 3600)});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::make_pair(r->Int64(0, 0), r->Int64(0, 1)) : std::make_pair(-1L, -1L);
  };
  ASSERT_GE(rows_at("counts", 5).second, 2) << "several shards wrote hour 5";
  const absl::StatusOr<std::vector<CountRow>> before = (*first)->ReadCounts(m->id, 0, 1L << 40);
  ASSERT_TRUE(before.ok());

  RetentionOptions options;
  options.now_seconds = now_hour * 3600 + 600;
  absl::StatusOr<RetentionResult> folded = (*second)->ApplyRetention(options);
  ASSERT_TRUE(folded.ok()) << folded.status();
  EXPECT_GT(folded->count_rows_folded, 0);
  EXPECT_EQ(rows_at("counts", 5), std::make_pair(3L, 1L)) << "m '', m k=x, c: one row each";
  EXPECT_EQ(rows_at("counter_chunks", 5), std::make_pair(1L, 1L))
      << "chunk 0 of c, holding category 2 (category 0 is counts.counter0)";
  EXPECT_GE(rows_at("counts", now_hour).second, 2) << "the current hour is not folded";
  absl::StatusOr<std::vector<CountRow>> after = (*first)->ReadCounts(m->id, 0, 1L << 40);
  ASSERT_TRUE(after.ok());
  ASSERT_EQ(after->size(), before->size());
  for (size_t i = 0; i < after->size(); ++i) {
    EXPECT_EQ((*after)[i].event_time_seconds, (*before)[i].event_time_seconds);
    EXPECT_EQ((*after)[i].labels, (*before)[i].labels);
    EXPECT_EQ((*after)[i].n, (*before)[i].n);
    EXPECT_EQ(Yes((*after)[i]), Yes((*before)[i]));
  }
  absl::StatusOr<std::vector<CountRow>> cats = (*first)->ReadCounts(c->id, 0, 1L << 40);
  ASSERT_TRUE(cats.ok() && cats->size() == 1u);
  EXPECT_EQ((*cats)[0].n, 8);
  EXPECT_THAT((*cats)[0].counters.Dense(), ::testing::ElementsAre(8, 0, 8));

  // A late report for hour 5, then the next run.
  ASSERT_TRUE((*first)->AppendReports({Row(m->id, ++id, true, 5)}).ok());
  EXPECT_EQ(rows_at("counts", 5).first, 4);
  absl::StatusOr<RetentionResult> again = (*first)->ApplyRetention(options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->count_rows_folded, 1);
  EXPECT_EQ(rows_at("counts", 5), std::make_pair(3L, 1L));
  absl::StatusOr<std::vector<CountRow>> late = (*second)->ReadCounts(m->id, 0, 6 * 3600);
  ASSERT_TRUE(late.ok() && late->size() == 2u);
  EXPECT_EQ((*late)[0].n, 9);  // hour 5, no labels: 8 + the late one
  EXPECT_EQ(Yes((*late)[0]), 9);
}

// A prepared statement lives as long as its session: after the session is lost, the call that
// finds it lost answers UNAVAILABLE and the next one reconnects, prepares it again and runs it.
TEST_F(PostgresStorageTest, PreparedStatementIsPreparedAgainOnTheNewSession) {
  auto conn = PgConnection::Connect(uri_);
  auto admin = PgConnection::Connect(uri_);
  ASSERT_TRUE(conn.ok() && admin.ok());
  constexpr char kSql[] = "SELECT $1::bigint + 1";
  absl::StatusOr<PgResult> r = (*conn)->ExecPrepared("plus_one", kSql, {"41"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Int64(0, 0), 42);
  r = (*conn)->ExecPrepared("plus_one", kSql, {"1"});  // bound and run only
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Int64(0, 0), 2);
  absl::StatusOr<PgResult> pid = (*conn)->Exec("SELECT pg_backend_pid()");
  ASSERT_TRUE(pid.ok());
  ASSERT_TRUE((*admin)->Exec("SELECT pg_terminate_backend($1)", {pid->Text(0, 0)}).ok());
  r = (*conn)->ExecPrepared("plus_one", kSql, {"6"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  r = (*conn)->ExecPrepared("plus_one", kSql, {"6"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->Int64(0, 0), 7);
  EXPECT_EQ((*conn)->reconnects(), 1);
}

// An append in flight holds a KEY SHARE lock on its metric's row until it commits; adding a design
// version must not wait for it (FOR NO KEY UPDATE), or a new version would reach the other
// collectors only after the ingestion of the moment.
TEST_F(PostgresStorageTest, AddingADesignVersionDoesNotWaitForAppendsInFlight) {
  auto opened = PostgresStorage::Open({.uri = uri_});
  ASSERT_TRUE(opened.ok());
  absl::StatusOr<StoredMetric> m = (*opened)->CreateMetric(NewMetric("m"));
  ASSERT_TRUE(m.ok());
  auto append = PgConnection::Connect(uri_);
  ASSERT_TRUE(append.ok());
  ASSERT_TRUE((*append)->Exec("BEGIN").ok());
  ASSERT_TRUE(
      (*append)
          ->Exec("SELECT id FROM metrics WHERE id = $1 FOR KEY SHARE", {absl::StrCat(m->id)})
          .ok());
  std::promise<absl::Status> added;
  std::thread adder([&] {
    added.set_value(
        (*opened)->AddDesignVersion("m", StoredDesign{2, "params2", 0.6, 0.3, 2000}).status());
  });
  std::future<absl::Status> result = added.get_future();
  const bool in_time = result.wait_for(std::chrono::seconds(20)) == std::future_status::ready;
  ASSERT_TRUE((*append)->Exec("COMMIT").ok());  // releases the lock either way
  adder.join();
  EXPECT_TRUE(in_time) << "AddDesignVersion waited for the append's transaction";
  EXPECT_TRUE(result.get().ok());
}

TEST_F(PostgresStorageTest, TokensAreSharedThroughTheDatabase) {
  auto first = PostgresTokenStore::Open(uri_);
  auto second = PostgresTokenStore::Open(uri_);
  ASSERT_TRUE(first.ok() && second.ok()) << first.status();
  absl::StatusOr<NewToken> added = (*first)->Add(Role::kAnalyst, "ops", absl::FromUnixSeconds(5));
  ASSERT_TRUE(added.ok()) << added.status();
  absl::StatusOr<std::vector<TokenRecord>> seen = (*second)->List();
  ASSERT_TRUE(seen.ok());
  ASSERT_EQ(seen->size(), 1u);
  EXPECT_EQ((*seen)[0].hash, HashToken(added->token));
  EXPECT_EQ((*seen)[0].role, Role::kAnalyst);
  ASSERT_TRUE((*second)->Revoke(added->record.id, absl::FromUnixSeconds(9)).ok());
  EXPECT_EQ((*first)->Revoke(added->record.id, absl::FromUnixSeconds(9)).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(*(*first)->List()->at(0).revoked_time_seconds, 9);
  EXPECT_FALSE(*(*first)->Import((*seen)[0])) << "same hash: not imported twice";
}

}  // namespace postgres_storage_test
}  // namespace
}  // namespace deniable::server
