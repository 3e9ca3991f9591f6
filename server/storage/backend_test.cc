// OpenBackend (backend.h): what it opens for a SQLite file and for a PostgreSQL URI, the traits
// the server's later steps read, and the messages naming what could not be opened.
#include "server/storage/backend.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/testing/test_postgres.h"

namespace deniable::server {
namespace {
namespace backend_test {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_util::TestPostgres;

class SqliteBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/deniable-backend-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST(BackendKindTest, APostgresUriIsPostgresAndAnythingElseAFile) {
  EXPECT_EQ(BackendKindOf("postgresql://u@h/db"), BackendKind::kPostgres);
  EXPECT_EQ(BackendKindOf("postgres://u@h/db"), BackendKind::kPostgres);
  EXPECT_EQ(BackendKindOf("deniable.db"), BackendKind::kSqlite);
  EXPECT_EQ(BackendKindOf("/var/lib/postgresql.db"), BackendKind::kSqlite);
}

TEST_F(SqliteBackendTest, OpensStorageAndTokensOfTheFileWithSqliteTraits) {
  const std::string path = dir_ + "/collector.db";
  BackendOptions options;
  options.shared_rate_limit = true;  // no shared buckets for SQLite: the limit is in-process
  options.metric_cache_age = absl::Seconds(7);
  absl::StatusOr<Backend> backend = OpenBackend(path, options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_NE(backend->storage, nullptr);
  ASSERT_NE(backend->tokens, nullptr);
  EXPECT_EQ(backend->rate_buckets, nullptr);
  EXPECT_EQ(backend->traits.kind, BackendKind::kSqlite);
  EXPECT_EQ(backend->traits.db_for_log, path);
  EXPECT_EQ(backend->traits.sqlite_path, path);
  EXPECT_EQ(backend->traits.group_committers, 1);
  EXPECT_EQ(backend->traits.metric_cache_age, absl::InfiniteDuration())
      << "the only writer of its file caches designs for good";

  // The token store is the file's: a token added through it is listed by `tokens list`'s store.
  absl::StatusOr<NewToken> added =
      backend->tokens->Add(Role::kReporter, "app", absl::FromUnixSeconds(100));
  ASSERT_TRUE(added.ok()) << added.status();
  absl::StatusOr<std::unique_ptr<TokenStore>> store = OpenTokenStore(path);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::vector<TokenRecord>> listed = (*store)->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].hash, HashToken(added->token));
}

TEST_F(SqliteBackendTest, AFileThatIsNoCollectorDatabaseIsRefusedNamingTheDatabase) {
  const std::string path = dir_ + "/notes.txt";
  std::ofstream(path) << "not a database, just some text that SQLite cannot read as one\n";
  absl::StatusOr<Backend> backend = OpenBackend(path, BackendOptions());
  ASSERT_FALSE(backend.ok());
  EXPECT_THAT(std::string(backend.status().message()), StartsWith("cannot open the database: "));
}

class PostgresBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DENIABLE_SKIP_WITHOUT_POSTGRES();
    TestPostgres* pg = TestPostgres::Shared();
    ASSERT_NE(pg, nullptr);
    absl::StatusOr<std::string> uri = pg->NewDatabase();
    ASSERT_TRUE(uri.ok()) << uri.status();
    uri_ = *uri;
  }
  std::string uri_;
};

TEST_F(PostgresBackendTest, OpensStorageTokensAndSharedBucketsWithPostgresTraits) {
  BackendOptions options;
  options.shared_rate_limit = true;
  options.metric_cache_age = absl::Seconds(7);
  absl::StatusOr<Backend> backend = OpenBackend(uri_, options);
  ASSERT_TRUE(backend.ok()) << backend.status();
  ASSERT_NE(backend->storage, nullptr);
  ASSERT_NE(backend->tokens, nullptr);
  ASSERT_NE(backend->rate_buckets, nullptr);
  EXPECT_EQ(backend->traits.kind, BackendKind::kPostgres);
  EXPECT_EQ(backend->traits.db_for_log, RedactedConninfo(uri_));
  EXPECT_EQ(backend->traits.sqlite_path, "");
  EXPECT_EQ(backend->traits.group_committers, PostgresStorage::kWriteConnections);
  EXPECT_EQ(backend->traits.metric_cache_age, absl::Seconds(7))
      << "other collectors may add design versions";
  absl::StatusOr<SharedTake> take = backend->rate_buckets->Take("t:1", 1, 1, 5);
  ASSERT_TRUE(take.ok()) << take.status();
  EXPECT_TRUE(take->admitted);

  // Tokens added by `tokens add` on the URI reach the serving backend's store.
  absl::StatusOr<std::unique_ptr<TokenStore>> store = OpenTokenStore(uri_);
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<NewToken> added = (*store)->Add(Role::kAnalyst, "ops", absl::FromUnixSeconds(100));
  ASSERT_TRUE(added.ok()) << added.status();
  absl::StatusOr<std::vector<TokenRecord>> listed = backend->tokens->List();
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].role, Role::kAnalyst);
}

TEST_F(PostgresBackendTest, WithoutARateLimitNoBucketsAreOpened) {
  absl::StatusOr<Backend> backend = OpenBackend(uri_, BackendOptions());
  ASSERT_TRUE(backend.ok()) << backend.status();
  EXPECT_EQ(backend->rate_buckets, nullptr);
}

TEST_F(PostgresBackendTest, AnUnreachableDatabaseIsNamedWithoutItsPassword) {
  const std::string uri = "postgresql://deniable:s3cret@127.0.0.1:1/nowhere?connect_timeout=2";
  absl::StatusOr<Backend> backend = OpenBackend(uri, BackendOptions());
  ASSERT_FALSE(backend.ok());
  const std::string message(backend.status().message());
  EXPECT_THAT(message, StartsWith("cannot open the database postgresql://deniable@127.0.0.1:1/"));
  EXPECT_THAT(message, Not(HasSubstr("s3cret")));
}

}  // namespace backend_test
}  // namespace
}  // namespace deniable::server
