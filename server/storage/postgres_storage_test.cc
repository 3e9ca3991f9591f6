// PostgresStorage beyond the conformance suite: concurrent starts, a newer schema, a database
// restart (UNAVAILABLE, then reconnecting by itself), error mapping and password redaction.
#include "server/storage/postgres_storage.h"

#include <prometheus/registry.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/auth/postgres_token_store.h"
#include "server/metrics/metered_storage.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/postgres_schema.h"
#include "server/storage/storage_test_util.h"
#include "server/storage/testing/test_postgres.h"

namespace deniable::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing_util::NewMetric;
using testing_util::Row;
using testing_util::TestPostgres;

class PostgresStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!TestPostgres::Installed()) GTEST_SKIP() << TestPostgres::kNotInstalled;
    pg_ = TestPostgres::Shared();
    ASSERT_NE(pg_, nullptr);
    absl::StatusOr<std::string> uri = pg_->NewDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
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

}  // namespace
}  // namespace deniable::server
