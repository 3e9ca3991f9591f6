// Historical imports over the collector's real gRPC port (docs/cli.md, "Importing historical
// data"): SubmitReports and StreamReports with `x-deniable-import: historical` are refused whole
// for a reporter token, accepted back to --max_import_age_seconds for an analyst token, and
// deduplicated exactly; without the header an old report is rejected as before.
#include <grpcpp/grpcpp.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/sqlite/sqlite_token_store.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;
constexpr int64_t kThreeYears = 3 * 365 * 86400;

class ImportGrpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/deniable-import-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = server::SqliteTokenStore::Open(dir_ + "/tokens.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto reporter = store_->Add(server::Role::kReporter, "app", absl::FromUnixSeconds(kNow));
    auto analyst = store_->Add(server::Role::kAnalyst, "alice", absl::FromUnixSeconds(kNow));
    ASSERT_TRUE(reporter.ok() && analyst.ok());
    reporter_token_ = reporter->token;
    analyst_token_ = analyst->token;
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.ingest.max_import_age = absl::Seconds(5 * 365 * 86400);
    server::TokenStore* raw = store_.get();
    auto auth =
        server::Authenticator::Create([raw] { return raw->List(); }, &clock_, absl::ZeroDuration());
    ASSERT_TRUE(auth.ok()) << auth.status();
    options.authenticator = *std::move(auth);
    auto storage = std::make_unique<server::MemoryStorage>();
    storage_ = storage.get();
    auto server = server::CollectorServer::Start(std::move(storage), &clock_, std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                       grpc::InsecureChannelCredentials());
    reports_ = v1::ReportService::NewStub(channel);
    auto queries = v1::QueryService::NewStub(channel);
    v1::CreateMetricRequest create;
    create.set_name("survey");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    auto context = Context(analyst_token_, false);
    grpc::Status s = queries->CreateMetric(context.get(), create, &metric);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token, bool import) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata("authorization", "Bearer " + token);
    if (import) context->AddMetadata("x-deniable-import", "historical");
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  static v1::SubmitReportsRequest Old(int n, char first = 'a') {
    v1::SubmitReportsRequest request;
    for (int i = 0; i < n; ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric("survey");
      r->set_design_version(1);
      r->set_bit(1);
      r->set_report_id(std::string(15, 'x') + static_cast<char>(first + i));
      r->set_event_time_seconds(kNow - kThreeYears);
    }
    return request;
  }

  grpc::Status Submit(const std::string& token, bool import, const v1::SubmitReportsRequest& req,
                      v1::SubmitReportsResponse* response) {
    auto context = Context(token, import);
    return reports_->SubmitReports(context.get(), req, response);
  }

  grpc::Status Stream(const std::string& token, bool import,
                      const std::vector<v1::SubmitReportsRequest>& messages,
                      v1::SubmitReportsResponse* response) {
    auto context = Context(token, import);
    auto writer = reports_->StreamReports(context.get(), response);
    for (const auto& m : messages) {
      if (!writer->Write(m)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::string dir_;
  std::unique_ptr<server::TokenStore> store_;
  std::string reporter_token_, analyst_token_;
  server::MemoryStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
};

TEST_F(ImportGrpcTest, ReporterTokenWithTheHeaderIsRefusedWholeNamingIt) {
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(reporter_token_, true, Old(2), &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("x-deniable-import:"));
  s = Stream(reporter_token_, true, {Old(2)}, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("x-deniable-import:"));
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(ImportGrpcTest, WithoutTheHeaderAnOldReportIsRejectedAsTooOld) {
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(reporter_token_, false, Old(1), &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(response.rejections_size(), 1);
  EXPECT_THAT(response.rejections(0).reason(), HasSubstr("is too old"));
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(ImportGrpcTest, AnalystImportsOldReportsOnceBySubmitAndByStream) {
  v1::SubmitReportsResponse response;
  grpc::Status s = Submit(analyst_token_, true, Old(3), &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.accepted(), 3u);
  EXPECT_EQ(response.rejections_size(), 0);

  // The same ids again, in a stream with two new ones: only the new ones are stored.
  v1::SubmitReportsResponse streamed;
  s = Stream(analyst_token_, true, {Old(3), Old(2, 'y')}, &streamed);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(streamed.accepted(), 2u);
  EXPECT_EQ(streamed.duplicates(), 3u);
  EXPECT_EQ(storage_->ReportCount(), 5);
}

}  // namespace
}  // namespace deniable
