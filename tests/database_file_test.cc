// The database file deleted, replaced or made read-only under a running server: no batch is
// acknowledged into a file that is gone (it would be lost at the next restart), the answer is
// UNAVAILABLE saying what happened, and the health service turns NOT_SERVING until the file is
// writable again.
#include <grpcpp/grpcpp.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "tests/support/report_batches.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Health = grpc::health::v1::HealthCheckResponse;

using testing::Batch;
constexpr int64_t kNow = testing::kBatchHour;

class DatabaseFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/deniable-dbfile-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/d.db";
    auto storage = server::SqliteStorage::Open({.path = path_});
    ASSERT_TRUE(storage.ok()) << storage.status();
    server::ServerOptions options;
    options.listen_address = "";
    options.health_check_interval = absl::Milliseconds(10);
    auto server = server::CollectorServer::Start(*std::move(storage), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = server_->InProcessChannel();
    reports_ = v1::ReportService::NewStub(channel);
    health_ = grpc::health::v1::Health::NewStub(channel);
    auto queries = v1::QueryService::NewStub(channel);
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    grpc::ClientContext context;
    ASSERT_TRUE(queries->CreateMetric(&context, create, &metric).ok());
    v1::SubmitReportsResponse response;
    ASSERT_TRUE(Submit(Batch('a', 3), &response).ok());
  }
  void TearDown() override {
    chmod(path_.c_str(), 0644);
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  grpc::Status Submit(const v1::SubmitReportsRequest& request,
                      v1::SubmitReportsResponse* response) {
    grpc::ClientContext context;
    return reports_->SubmitReports(&context, request, response);
  }
  Health::ServingStatus HealthStatus() {
    grpc::ClientContext context;
    Health response;
    if (!health_->Check(&context, grpc::health::v1::HealthCheckRequest(), &response).ok()) {
      return Health::UNKNOWN;
    }
    return response.status();
  }
  // Polls the health service until it says `want` (the watcher checks every 10 ms).
  bool HealthBecomes(Health::ServingStatus want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      if (HealthStatus() == want) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  }
  server::SqliteStorage* sqlite() {
    return static_cast<server::SqliteStorage*>(server_->storage());
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::string dir_, path_;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

TEST_F(DatabaseFileTest, DeletedFileStopsAcknowledgementsAndHealth) {
  ASSERT_EQ(std::remove(path_.c_str()), 0);
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(Batch('b', 4), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("was deleted"));
  EXPECT_THAT(s.error_message(), HasSubstr(path_));
  EXPECT_EQ(response.accepted(), 0u);
  EXPECT_TRUE(HealthBecomes(Health::NOT_SERVING));
}

TEST_F(DatabaseFileTest, ReplacedFileStopsAcknowledgementsAndHealth) {
  const std::string other = dir_ + "/other.db";
  {
    std::FILE* f = std::fopen(other.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  ASSERT_EQ(std::rename(other.c_str(), path_.c_str()), 0);
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(Batch('b', 4), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("was replaced"));
  EXPECT_TRUE(HealthBecomes(Health::NOT_SERVING));
}

TEST_F(DatabaseFileTest, ReadOnlyFileIsRefusedUntilWritableAgainThenTheRetryCountsOnce) {
  ASSERT_EQ(chmod(path_.c_str(), 0444), 0);
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(Batch('b', 4), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAVAILABLE) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("is read-only (mode 0444)"));
  EXPECT_TRUE(HealthBecomes(Health::NOT_SERVING));

  ASSERT_EQ(chmod(path_.c_str(), 0644), 0);
  EXPECT_TRUE(HealthBecomes(Health::SERVING));
  ASSERT_TRUE(Submit(Batch('b', 4), &response).ok());
  EXPECT_EQ(response.accepted() + response.duplicates(), 4u);
  EXPECT_EQ(*sqlite()->ReportCount(), 7);
}

// A constraint of the database failing inside a batch (as when two writers shared one file
// through a symlink: "UNIQUE constraint failed: recent_reports...") is a broken invariant: the
// client sees INTERNAL with a generic message (every SDK keeps the reports and retries), never
// ALREADY_EXISTS and never the database's text; nothing of the batch is stored, and the retry
// counts once the fault is gone.
TEST_F(DatabaseFileTest, ConstraintFailureInABatchIsInternalWithoutTheDatabasesText) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  auto exec = [db](const char* sql) {
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &error);
    std::string message = error != nullptr ? error : "";
    sqlite3_free(error);
    return rc == SQLITE_OK ? std::string() : message;
  };
  ASSERT_EQ(exec("CREATE TRIGGER broken BEFORE INSERT ON recent_reports BEGIN SELECT "
                 "RAISE(ABORT, 'UNIQUE constraint failed: recent_reports.seq'); END"),
            "");
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(Batch('b', 4), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("server fault"));
  EXPECT_THAT(s.error_message(), HasSubstr("nothing of it was stored"));
  EXPECT_THAT(s.error_message(), Not(HasSubstr("UNIQUE")));
  EXPECT_THAT(s.error_message(), Not(HasSubstr("recent_reports")));
  EXPECT_THAT(s.error_message(), Not(HasSubstr("sqlite")));
  EXPECT_EQ(response.accepted(), 0u);
  EXPECT_EQ(*sqlite()->ReportCount(), 3);

  ASSERT_EQ(exec("DROP TRIGGER broken"), "");
  sqlite3_close(db);
  ASSERT_TRUE(Submit(Batch('b', 4), &response).ok());
  EXPECT_EQ(response.accepted(), 4u);
  EXPECT_EQ(*sqlite()->ReportCount(), 7);
}

}  // namespace
}  // namespace deniable
