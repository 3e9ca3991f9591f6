// The access promises of docs/security.md over a real loopback port: bearer tokens and roles,
// TLS and mTLS, the rate limit, the counters, health without a token and draining on shutdown.
// Every rejection asserts its status code, that its message names the field, and that nothing
// was stored.
#include <grpcpp/grpcpp.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "deniable/v1/admin_service.grpc.pb.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"
#include "server/storage/sqlite/sqlite_token_store.h"
#include "tests/support/eventually.h"
#include "tests/support/test_tls.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

// MemoryStorage whose AppendReports can be held until the test releases it (an in-flight call).
class GatedStorage : public server::MemoryStorage {
 public:
  absl::StatusOr<server::AppendResult> AppendReports(
      absl::Span<const server::ReportRow> rows) override {
    if (gate_) {
      entered.Notify();
      release.WaitForNotification();
    }
    return MemoryStorage::AppendReports(rows);
  }
  bool gate_ = false;
  absl::Notification entered, release;
};

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/deniable-security-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto store = server::SqliteTokenStore::Open(dir_ + "/tokens.db");
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = *std::move(store);
    auto reporter = store_->Add(server::Role::kReporter, "app", absl::FromUnixSeconds(kNow));
    auto analyst = store_->Add(server::Role::kAnalyst, "alice", absl::FromUnixSeconds(kNow));
    ASSERT_TRUE(reporter.ok() && analyst.ok());
    reporter_token_ = reporter->token;
    reporter_id_ = reporter->record.id;
    analyst_token_ = analyst->token;
    options_.listen_address = "127.0.0.1:0";
    server::TokenStore* raw = store_.get();
    auto auth =
        server::Authenticator::Create([raw] { return raw->List(); }, &clock_, absl::ZeroDuration());
    ASSERT_TRUE(auth.ok()) << auth.status();
    options_.authenticator = *std::move(auth);
  }

  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Starts the server with options_ and connects over the loopback port in plaintext, creating
  // the metric "drugs" as the analyst.
  void Start(std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials(),
             const grpc::ChannelArguments& args = grpc::ChannelArguments()) {
    auto storage = std::make_unique<GatedStorage>();
    storage_ = storage.get();
    auto server = server::CollectorServer::Start(std::move(storage), &clock_, options_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ =
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()), creds, args);
    reports_ = v1::ReportService::NewStub(channel_);
    queries_ = v1::QueryService::NewStub(channel_);
    admin_ = v1::AdminService::NewStub(channel_);
    v1::CreateMetricRequest create;
    create.set_name("drugs");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    auto context = Context(analyst_token_);
    grpc::Status s = queries_->CreateMetric(context.get(), create, &metric);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  static std::unique_ptr<grpc::ClientContext> Context(const std::string& token) {
    auto context = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) context->AddMetadata("authorization", "Bearer " + token);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return context;
  }

  static v1::SubmitReportsRequest Batch(int n, char first = 'a') {
    v1::SubmitReportsRequest request;
    for (int i = 0; i < n; ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric("drugs");
      r->set_design_version(1);
      r->set_bit(1);
      r->set_report_id(std::string(15, 'x') + static_cast<char>(first + i));
      r->set_event_time_seconds(kNow);
    }
    return request;
  }

  grpc::Status Submit(const std::string& token, const v1::SubmitReportsRequest& request) {
    v1::SubmitReportsResponse response;
    return reports_->SubmitReports(Context(token).get(), request, &response);
  }

  grpc::Status SubmitWithHeader(const std::string& header) {
    grpc::ClientContext context;
    context.AddMetadata("authorization", header);
    v1::SubmitReportsResponse response;
    return reports_->SubmitReports(&context, Batch(1), &response);
  }

  v1::ServerStats Stats() {
    v1::ServerStats stats;
    EXPECT_TRUE(admin_->GetServerStats(Context(analyst_token_).get(), {}, &stats).ok());
    return stats;
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::string dir_;
  std::unique_ptr<server::TokenStore> store_;
  std::string reporter_token_, analyst_token_;
  int64_t reporter_id_ = 0;
  server::ServerOptions options_;
  GatedStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  std::unique_ptr<v1::AdminService::Stub> admin_;
};

TEST_F(SecurityTest, RejectsSubmitWithoutTokenAsUnauthenticatedAndStoresNothing) {
  Start();
  grpc::Status s = Submit("", Batch(3));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("authorization: missing"));
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(SecurityTest, RejectsUnknownTokenAndMalformedHeaderAsUnauthenticated) {
  Start();
  grpc::Status unknown = Submit("dn_not-a-token", Batch(1));
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(unknown.error_message(), HasSubstr("authorization: unknown or revoked token"));
  EXPECT_THAT(unknown.error_message(), Not(HasSubstr("dn_not-a-token")));
  grpc::Status basic = SubmitWithHeader("Basic " + reporter_token_);
  EXPECT_EQ(basic.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(basic.error_message(), HasSubstr("authorization: must be \"Bearer <token>\""));
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(SecurityTest, RejectsAnalystSubmittingReportsAsPermissionDenied) {
  Start();
  grpc::Status s = Submit(analyst_token_, Batch(2));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("has role analyst; SubmitReports needs role reporter"));
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(SecurityTest, RejectsReporterCreatingMetricsOrQueryingAsPermissionDenied) {
  Start();
  v1::CreateMetricRequest create;
  create.set_name("other");
  create.mutable_design()->mutable_two_coin();
  v1::Metric metric;
  grpc::Status created = queries_->CreateMetric(Context(reporter_token_).get(), create, &metric);
  EXPECT_EQ(created.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(created.error_message(), HasSubstr("CreateMetric needs role analyst"));
  auto listed = storage_->ListMetrics();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u) << "a refused CreateMetric stored a metric";

  v1::GetPrevalenceRequest query;
  query.set_metric("drugs");
  v1::Prevalence prevalence;
  grpc::Status queried =
      queries_->GetPrevalence(Context(reporter_token_).get(), query, &prevalence);
  EXPECT_EQ(queried.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  v1::ServerStats stats;
  grpc::Status admin = admin_->GetServerStats(Context(reporter_token_).get(), {}, &stats);
  EXPECT_EQ(admin.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST_F(SecurityTest, ReporterFetchesDesignAndSubmits) {
  Start();
  v1::GetDesignRequest get;
  get.set_metric("drugs");
  v1::GetDesignResponse design;
  ASSERT_TRUE(reports_->GetDesign(Context(reporter_token_).get(), get, &design).ok());
  EXPECT_DOUBLE_EQ(design.design().a(), 0.75);
  ASSERT_TRUE(Submit(reporter_token_, Batch(3)).ok());
  EXPECT_EQ(storage_->ReportCount(), 3);
}

TEST_F(SecurityTest, RevokedTokenIsRefused) {
  Start();
  ASSERT_TRUE(Submit(reporter_token_, Batch(1)).ok());
  ASSERT_TRUE(store_->Revoke(reporter_id_, absl::FromUnixSeconds(kNow)).ok());
  grpc::Status s = Submit(reporter_token_, Batch(1, 'q'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(s.error_message(), HasSubstr("authorization: unknown or revoked token"));
  EXPECT_EQ(storage_->ReportCount(), 1);
}

TEST_F(SecurityTest, RevocationEndsAnOpenStreamBeforeItsNextMessageIsStored) {
  Start();
  v1::SubmitReportsResponse response;
  auto context = Context(reporter_token_);
  std::unique_ptr<grpc::ClientWriter<v1::SubmitReportsRequest>> writer =
      reports_->StreamReports(context.get(), &response);
  ASSERT_TRUE(writer->Write(Batch(2, 'a')));
  // The first message is stored before the revocation: the stream flushes it on its own, and
  // the test waits for that state rather than guessing whether the flush has committed yet.
  ASSERT_TRUE(testing_util::Eventually([&] { return storage_->ReportCount() == 2; }));
  // Revoked while the stream is open (this test reloads the token list on every check).
  ASSERT_TRUE(store_->Revoke(reporter_id_, absl::FromUnixSeconds(kNow)).ok());
  writer->Write(Batch(2, 'k'));
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("authorization: unknown or revoked token"));
  // Nothing sent after the revocation is stored: only the first message's two reports.
  EXPECT_EQ(storage_->ReportCount(), 2);
}

TEST_F(SecurityTest, HealthNeedsNoToken) {
  Start();
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(Context("").get(), {}, &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(SecurityTest, TokensAreStoredOnlyAsTheirSha256) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ + "/tokens.db").c_str(), &db), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT * FROM auth_tokens", -1, &st, nullptr), SQLITE_OK);
  int rows = 0;
  bool saw_hash = false;
  const server::TokenHash expected = server::HashToken(reporter_token_);
  while (sqlite3_step(st) == SQLITE_ROW) {
    ++rows;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      const void* blob = sqlite3_column_blob(st, c);
      const std::string value(static_cast<const char*>(blob),
                              blob ? static_cast<size_t>(sqlite3_column_bytes(st, c)) : 0);
      EXPECT_THAT(value, Not(HasSubstr(reporter_token_.substr(3))));
      EXPECT_THAT(value, Not(HasSubstr(analyst_token_.substr(3))));
      if (value == std::string(expected.begin(), expected.end())) saw_hash = true;
    }
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  EXPECT_EQ(rows, 2);
  EXPECT_TRUE(saw_hash);
}

TEST_F(SecurityTest, RateLimitAnswersResourceExhaustedAndStoresNothing) {
  options_.rate_limit = {.reports_per_second = 2, .burst = 4};
  Start();
  ASSERT_TRUE(Submit(reporter_token_, Batch(3, 'a')).ok());
  grpc::Status s = Submit(reporter_token_, Batch(2, 'k'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("reports: rate limit of 2 reports/s (burst 4)"));
  EXPECT_EQ(storage_->ReportCount(), 3);
  clock_.Advance(absl::Seconds(1));  // refills 2 reports: 1 + 2 = 3 >= 2
  EXPECT_TRUE(Submit(reporter_token_, Batch(2, 'k')).ok());
  EXPECT_EQ(storage_->ReportCount(), 5);
  grpc::Status too_big = Submit(reporter_token_, Batch(5, 'p'));
  EXPECT_EQ(too_big.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(too_big.error_message(), HasSubstr("larger than the burst"));
  EXPECT_EQ(Stats().rejected_rate_limited(), 2u);
}

TEST_F(SecurityTest, RateLimitAppliesToEachMessageOfAStream) {
  options_.rate_limit = {.reports_per_second = 2, .burst = 4};
  Start();
  v1::SubmitReportsResponse response;
  auto context = Context(reporter_token_);
  std::unique_ptr<grpc::ClientWriter<v1::SubmitReportsRequest>> writer =
      reports_->StreamReports(context.get(), &response);
  ASSERT_TRUE(writer->Write(Batch(3, 'a')));
  writer->Write(Batch(2, 'k'));  // over the burst: the server ends the stream
  writer->WritesDone();
  grpc::Status s = writer->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(s.error_message(), HasSubstr("reports: rate limit"));
  EXPECT_LE(storage_->ReportCount(), 3);  // the refused message is never stored
  EXPECT_EQ(Stats().rejected_rate_limited(), 1u);
}

// Issue 41: one token's reports flagged first in a window (the "devices" of an active-device
// estimate) are limited per metric and window; a report past the limit is refused alone
// (RESOURCE_EXHAUSTED, permanent) and counted in /metrics; unflagged reports still pass; each
// window (the next day) has its own budget, while the week's is shared by its days.
TEST_F(SecurityTest, ForgedWindowFirstsAreLimitedPerTokenMetricAndWindow) {
  options_.ingest.max_window_firsts_per_token = 3;
  Start();
  auto flagged = [](v1::SubmitReportsRequest batch, bool week) {
    for (v1::Report& r : *batch.mutable_reports()) {
      r.mutable_window_firsts()->set_day(true);
      r.mutable_window_firsts()->set_week(week);
    }
    return batch;
  };
  v1::SubmitReportsResponse response;
  grpc::Status s = reports_->SubmitReports(Context(reporter_token_).get(),
                                           flagged(Batch(5, 'a'), true), &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.accepted(), 3u);
  ASSERT_EQ(response.rejections_size(), 2);
  for (const v1::ReportRejection& r : response.rejections()) {
    EXPECT_EQ(r.code(), static_cast<int32_t>(grpc::StatusCode::RESOURCE_EXHAUSTED));
    EXPECT_TRUE(r.permanent());
    EXPECT_THAT(r.reason(), HasSubstr("window_firsts.day: this token already sent 3 reports of "
                                      "metric \"drugs\" flagged first in the day starting "
                                      "2023-11-14"));
  }
  EXPECT_EQ(response.rejections(0).index(), 3u);
  // Unflagged reports are not first reports: not limited.
  ASSERT_TRUE(Submit(reporter_token_, Batch(4, 'k')).ok());
  EXPECT_EQ(storage_->ReportCount(), 7);
  // The next day (kNow is a Tuesday): the day's budget is new, the week's is spent.
  clock_.Advance(absl::Hours(24));
  auto next_day = [](v1::SubmitReportsRequest batch) {
    for (v1::Report& r : *batch.mutable_reports()) r.set_event_time_seconds(kNow + 86400);
    return batch;
  };
  ASSERT_TRUE(reports_
                  ->SubmitReports(Context(reporter_token_).get(),
                                  next_day(flagged(Batch(2, 'p'), true)), &response)
                  .ok());
  EXPECT_EQ(response.accepted(), 0u);
  ASSERT_EQ(response.rejections_size(), 2);
  EXPECT_THAT(response.rejections(0).reason(), HasSubstr("window_firsts.week"));
  ASSERT_TRUE(reports_
                  ->SubmitReports(Context(reporter_token_).get(),
                                  next_day(flagged(Batch(2, 'u'), false)), &response)
                  .ok());
  EXPECT_EQ(response.accepted(), 2u);
  const std::string scraped =
      prometheus::TextSerializer().Serialize(server_->core()->counters()->registry()->Collect());
  EXPECT_THAT(scraped, HasSubstr("deniable_window_firsts_refused_total{metric=\"drugs\"} 4"));
}

// On by default where tokens are on (docs/security.md): the documented default.
TEST_F(SecurityTest, WindowFirstsLimitIsOnByDefault) {
  EXPECT_EQ(server::ServerOptions{}.ingest.max_window_firsts_per_token, 100000);
}

TEST_F(SecurityTest, StatsCountAcceptedAndRejectedBatchesByReason) {
  Start();
  ASSERT_TRUE(Submit(reporter_token_, Batch(3)).ok());
  ASSERT_TRUE(Submit(reporter_token_, Batch(1)).ok());  // a duplicate
  // One bad report of two: the call succeeds, the report is counted as rejected on its own.
  v1::SubmitReportsRequest bad = Batch(2, 'm');
  bad.mutable_reports(1)->set_bit(2);
  EXPECT_TRUE(Submit(reporter_token_, bad).ok());
  EXPECT_EQ(Submit(reporter_token_, v1::SubmitReportsRequest()).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(Submit("", Batch(1)).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Submit(analyst_token_, Batch(1)).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  const v1::ServerStats stats = Stats();
  EXPECT_EQ(stats.batches_accepted(), 3u);
  EXPECT_EQ(stats.reports_accepted(), 4u);
  EXPECT_EQ(stats.reports_duplicate(), 1u);
  EXPECT_EQ(stats.batches_rejected(), 3u);
  EXPECT_EQ(stats.reports_rejected(), 3u);  // the bad report, and the 1 + 1 of refused calls
  EXPECT_EQ(stats.rejected_invalid(), 1u);
  EXPECT_EQ(stats.rejected_unauthenticated(), 1u);
  EXPECT_EQ(stats.rejected_permission_denied(), 1u);
  EXPECT_EQ(stats.start_time_seconds(), kNow);
}

TEST_F(SecurityTest, ServesOverTlsAndRefusesPlaintextClients) {
  const testing::TestCertificate cert = testing::MakeSelfSignedCertificate();
  ASSERT_FALSE(cert.cert_pem.empty());
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({cert.key_pem, cert.cert_pem});
  options_.credentials = grpc::SslServerCredentials(ssl);
  grpc::SslCredentialsOptions client;
  client.pem_root_certs = cert.cert_pem;
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  Start(grpc::SslCredentials(client), args);  // creates the metric over TLS
  ASSERT_TRUE(Submit(reporter_token_, Batch(2)).ok());
  EXPECT_EQ(storage_->ReportCount(), 2);

  auto plain = v1::ReportService::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(server_->port()), grpc::InsecureChannelCredentials()));
  v1::SubmitReportsResponse response;
  auto context = Context(reporter_token_);
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  EXPECT_FALSE(plain->SubmitReports(context.get(), Batch(1, 'z'), &response).ok());
  EXPECT_EQ(storage_->ReportCount(), 2);
}

TEST_F(SecurityTest, MutualTlsRefusesClientsWithoutATrustedCertificate) {
  const testing::TestCertificate server_cert = testing::MakeSelfSignedCertificate();
  const testing::TestCertificate client_cert = testing::MakeSelfSignedCertificate("device");
  const testing::TestCertificate stranger = testing::MakeSelfSignedCertificate("device");
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_key_cert_pairs.push_back({server_cert.key_pem, server_cert.cert_pem});
  ssl.pem_root_certs = client_cert.cert_pem;
  options_.credentials = grpc::SslServerCredentials(ssl);
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  grpc::SslCredentialsOptions trusted{server_cert.cert_pem, client_cert.key_pem,
                                      client_cert.cert_pem};
  Start(grpc::SslCredentials(trusted), args);
  ASSERT_TRUE(Submit(reporter_token_, Batch(1)).ok());

  for (const grpc::SslCredentialsOptions& untrusted :
       {grpc::SslCredentialsOptions{server_cert.cert_pem, "", ""},
        grpc::SslCredentialsOptions{server_cert.cert_pem, stranger.key_pem, stranger.cert_pem}}) {
    auto stub = v1::ReportService::NewStub(grpc::CreateCustomChannel(
        "127.0.0.1:" + std::to_string(server_->port()), grpc::SslCredentials(untrusted), args));
    v1::SubmitReportsResponse response;
    auto context = Context(reporter_token_);
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    EXPECT_FALSE(stub->SubmitReports(context.get(), Batch(1, 'z'), &response).ok());
  }
  EXPECT_EQ(storage_->ReportCount(), 1);
}

TEST_F(SecurityTest, HealthTurnsNotServingWhileDrainingAndInFlightCallsFinish) {
  Start();
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext watch_context;
  auto watch = health->Watch(&watch_context, {});
  grpc::health::v1::HealthCheckResponse update;
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), grpc::health::v1::HealthCheckResponse::SERVING);

  storage_->gate_ = true;
  grpc::Status in_flight;
  std::thread submitter([&] { in_flight = Submit(reporter_token_, Batch(2)); });
  storage_->entered.WaitForNotification();
  std::thread stopper([&] { server_->Shutdown(absl::Seconds(10)); });
  ASSERT_TRUE(watch->Read(&update));
  EXPECT_EQ(update.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  watch_context.TryCancel();  // the watch is itself a call that Shutdown would wait for
  (void)watch->Finish();
  storage_->release.Notify();
  submitter.join();
  stopper.join();
  EXPECT_TRUE(in_flight.ok()) << in_flight.error_message();
  EXPECT_EQ(storage_->ReportCount(), 2);
}

}  // namespace
}  // namespace deniable
