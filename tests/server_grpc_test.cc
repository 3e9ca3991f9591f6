// The collector over gRPC (in-process channel): the wire contract end to end, statuses and
// messages as clients see them, and nothing stored by a rejected batch.
#include <grpcpp/grpcpp.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"
#include "deniable/v1/admin_service.grpc.pb.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/http/json_api.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class ServerGrpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto storage = std::make_unique<server::MemoryStorage>();
    storage_ = storage.get();
    server::ServerOptions options;
    options.listen_address = "";  // in-process only
    options.query.default_min_reports = 1;
    auto server = server::CollectorServer::Start(std::move(storage), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = server_->InProcessChannel();
    reports_ = v1::ReportService::NewStub(channel_);
    queries_ = v1::QueryService::NewStub(channel_);

    v1::CreateMetricRequest create;
    create.set_name("drugs");
    create.set_description("Do you take drugs?");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    grpc::ClientContext context;
    ASSERT_TRUE(queries_->CreateMetric(&context, create, &metric).ok());
  }

  static v1::Report Valid(char id) {
    v1::Report r;
    r.set_metric("drugs");
    r.set_design_version(1);
    r.set_bit(1);
    r.set_report_id(std::string(16, id));
    r.set_event_time_seconds(kNow);
    return r;
  }

  grpc::Status Submit(const v1::SubmitReportsRequest& request,
                      v1::SubmitReportsResponse* response) {
    grpc::ClientContext context;
    return reports_->SubmitReports(&context, request, response);
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  server::MemoryStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  std::ostringstream log_;
};

TEST_F(ServerGrpcTest, HealthIsServing) {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  grpc::health::v1::HealthCheckResponse response;
  ASSERT_TRUE(health->Check(&context, grpc::health::v1::HealthCheckRequest(), &response).ok());
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

TEST_F(ServerGrpcTest, GetDesignReturnsChannelAndEpsilon) {
  grpc::ClientContext context;
  v1::GetDesignRequest request;
  request.set_metric("drugs");
  v1::GetDesignResponse response;
  ASSERT_TRUE(reports_->GetDesign(&context, request, &response).ok());
  EXPECT_TRUE(response.design().parameters().has_two_coin());
  EXPECT_DOUBLE_EQ(response.design().a(), 0.75);
  EXPECT_DOUBLE_EQ(response.design().b(), 0.25);
  EXPECT_NEAR(response.design().epsilon(), std::log(3.0), 1e-12);
  EXPECT_EQ(response.time_precision_seconds(), 3600u);
}

// Issue 39: a gRPC call enters the CollectorCore once, its checks (token, role, rate limit,
// shedding) included: one entry per SubmitReports batch, per query, per GetServerStats, and for
// a stream one when it opens and one per message.
TEST_F(ServerGrpcTest, EachCallEntersTheCoreOnce) {
  server::CollectorCore* core = server_->core();
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('a');
  v1::SubmitReportsResponse response;
  int64_t before = core->entries();
  ASSERT_TRUE(Submit(request, &response).ok());
  EXPECT_EQ(core->entries() - before, 1) << "SubmitReports";

  before = core->entries();
  grpc::ClientContext query_context;
  v1::GetPrevalenceRequest query;
  query.set_metric("drugs");
  v1::Prevalence prevalence;
  ASSERT_TRUE(queries_->GetPrevalence(&query_context, query, &prevalence).ok());
  EXPECT_EQ(core->entries() - before, 1) << "GetPrevalence";

  before = core->entries();
  auto admin = v1::AdminService::NewStub(channel_);
  grpc::ClientContext stats_context;
  v1::ServerStats stats;
  ASSERT_TRUE(admin->GetServerStats(&stats_context, v1::GetServerStatsRequest(), &stats).ok());
  EXPECT_EQ(core->entries() - before, 1) << "GetServerStats";

  before = core->entries();
  grpc::ClientContext stream_context;
  auto writer = reports_->StreamReports(&stream_context, &response);
  for (char id : {'b', 'c'}) {
    v1::SubmitReportsRequest message;
    *message.add_reports() = Valid(id);
    ASSERT_TRUE(writer->Write(message));
  }
  ASSERT_TRUE(writer->WritesDone());
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(response.accepted(), 2u);
  EXPECT_EQ(core->entries() - before, 1 + 2) << "StreamReports: the open and two messages";
}

// Issue 39: an HTTP call enters the core once too. The listener authorizes from the headers
// (JsonApi::Authorize, the entry) and runs or refuses the call later, once the body is in or a
// header check failed (Run, Refuse: inside that entry, CollectorCore::ContinueCall).
TEST_F(ServerGrpcTest, EachHttpCallEntersTheCoreOnce) {
  server::CollectorCore* core = server_->core();
  server::http::JsonApi api(core);
  const std::string submit = "deniable.v1.ReportService/SubmitReports";
  const std::string prevalence = "deniable.v1.QueryService/GetPrevalence";
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('h');
  std::string body;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(request, &body).ok());

  int64_t before = core->entries();
  server::http::JsonReply reply = api.Call(submit, body, "", "ipv4:127.0.0.1:5000");
  ASSERT_EQ(reply.http_status, 200) << reply.body;
  EXPECT_THAT(reply.body, HasSubstr("\"accepted\":1"));
  EXPECT_EQ(core->entries() - before, 1) << "SubmitReports";

  before = core->entries();
  reply = api.Call(prevalence, R"({"metric":"drugs"})", "", "ipv4:127.0.0.1:5000");
  ASSERT_EQ(reply.http_status, 200) << reply.body;
  EXPECT_EQ(core->entries() - before, 1) << "GetPrevalence";

  // As the listener: the headers first, the body later.
  before = core->entries();
  absl::StatusOr<server::Caller> caller =
      api.Authorize(prevalence, "", "ipv4:127.0.0.1:5000", std::nullopt);
  ASSERT_TRUE(caller.ok()) << caller.status();
  reply = api.Run(prevalence, *caller, R"({"metric":"drugs"})");
  ASSERT_EQ(reply.http_status, 200) << reply.body;
  EXPECT_EQ(core->entries() - before, 1) << "Authorize, then Run";

  // A batch refused after its headers (a wrong content type): logged and counted as a refused
  // batch, in the same entry.
  before = core->entries();
  caller = api.Authorize(submit, "", "ipv4:127.0.0.1:5000", std::nullopt);
  ASSERT_TRUE(caller.ok()) << caller.status();
  reply = api.Refuse(submit, absl::InvalidArgumentError("content-type: not JSON"), 415);
  EXPECT_EQ(reply.http_status, 415);
  EXPECT_EQ(core->entries() - before, 1) << "Authorize, then Refuse";
}

TEST_F(ServerGrpcTest, SubmitThenQueryCountsDuplicateIdOnce) {
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('a');
  *request.add_reports() = Valid('b');
  request.mutable_reports(1)->set_bit(0);
  v1::SubmitReportsResponse response;
  ASSERT_TRUE(Submit(request, &response).ok());
  EXPECT_EQ(response.accepted(), 2u);
  ASSERT_TRUE(Submit(request, &response).ok());  // the same batch again, as after a lost ack
  EXPECT_EQ(response.accepted(), 0u);
  EXPECT_EQ(response.duplicates(), 2u);

  grpc::ClientContext context;
  v1::GetPrevalenceRequest query;
  query.set_metric("drugs");
  v1::Prevalence prevalence;
  ASSERT_TRUE(queries_->GetPrevalence(&context, query, &prevalence).ok());
  EXPECT_EQ(prevalence.n(), 2);
  EXPECT_EQ(prevalence.yes_count(), 1);
  EXPECT_DOUBLE_EQ(prevalence.estimate_unbiased(), 2 * 0.5 - 0.5);
}

struct BadReportCase {
  std::string name;
  std::function<void(v1::Report*)> mutate;
  grpc::StatusCode code;
  std::string field;
  friend void PrintTo(const BadReportCase& c, std::ostream* os) { *os << c.name; }
};

class ServerGrpcBadReportTest : public ServerGrpcTest,
                                public ::testing::WithParamInterface<BadReportCase> {};

TEST_P(ServerGrpcBadReportTest, RejectsOnlyTheBadReportNamingTheFieldAndStoresTheOther) {
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('a');
  v1::Report* bad = request.add_reports();
  *bad = Valid('b');
  GetParam().mutate(bad);
  v1::SubmitReportsResponse response;
  grpc::Status status = Submit(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.accepted(), 1u);
  ASSERT_EQ(response.rejections_size(), 1);
  EXPECT_EQ(response.rejections(0).index(), 1u);
  EXPECT_EQ(response.rejections(0).code(), static_cast<int32_t>(GetParam().code));
  EXPECT_THAT(response.rejections(0).reason(), HasSubstr(GetParam().field));
  EXPECT_EQ(response.rejections(0).permanent(), GetParam().code != grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(storage_->ReportCount(), 1);
}

INSTANTIATE_TEST_SUITE_P(
    EachInvalidInput, ServerGrpcBadReportTest,
    ::testing::Values(
        BadReportCase{"UnknownMetric", [](v1::Report* r) { r->set_metric("other"); },
                      grpc::StatusCode::NOT_FOUND, "reports[1].metric"},
        BadReportCase{"WrongDesignVersion", [](v1::Report* r) { r->set_design_version(7); },
                      grpc::StatusCode::INVALID_ARGUMENT, "reports[1].design_version"},
        BadReportCase{"BitIsTwo", [](v1::Report* r) { r->set_bit(2); },
                      grpc::StatusCode::INVALID_ARGUMENT, "reports[1].bit"},
        BadReportCase{"MissingReportId", [](v1::Report* r) { r->clear_report_id(); },
                      grpc::StatusCode::INVALID_ARGUMENT, "reports[1].report_id"},
        BadReportCase{"ShortReportId", [](v1::Report* r) { r->set_report_id("abc"); },
                      grpc::StatusCode::INVALID_ARGUMENT, "reports[1].report_id"},
        BadReportCase{"UnroundedTime", [](v1::Report* r) { r->set_event_time_seconds(kNow + 1); },
                      grpc::StatusCode::INVALID_ARGUMENT, "reports[1].event_time_seconds"},
        BadReportCase{"FreeTextLabel",
                      [](v1::Report* r) { (*r->mutable_labels())["note"] = "hello world"; },
                      grpc::StatusCode::INVALID_ARGUMENT, "reports[1].labels"}),
    [](const ::testing::TestParamInfo<BadReportCase>& param) { return param.param.name; });

TEST_F(ServerGrpcTest, RejectsEmptyAndOversizedBatches) {
  v1::SubmitReportsResponse response;
  grpc::Status empty = Submit(v1::SubmitReportsRequest(), &response);
  EXPECT_EQ(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(empty.error_message(), HasSubstr("reports"));
  v1::SubmitReportsRequest big;
  for (int i = 0; i < 10001; ++i) {
    v1::Report* r = big.add_reports();
    *r = Valid('x');
    std::string id(16, '\0');
    id[0] = static_cast<char>(i & 0xff);
    id[1] = static_cast<char>(i >> 8);
    r->set_report_id(id);
  }
  grpc::Status oversized = Submit(big, &response);
  EXPECT_EQ(oversized.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(oversized.error_message(), HasSubstr("limit of 10000"));
  EXPECT_EQ(storage_->ReportCount(), 0);
}

// The largest message the server accepts (2 MiB), made of control bytes that C-escaping would
// quadruple: neither the status nor the log may grow with it.
TEST_F(ServerGrpcTest, HostileJunkIsEchoedBoundedInStatusesAndLogs) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log_);
  spdlog::default_logger()->sinks().push_back(sink);
  const std::string junk((2 << 20) - 1024, '\x01');

  grpc::ClientContext design_context;
  v1::GetDesignRequest get;
  get.set_metric(junk);
  v1::GetDesignResponse design;
  grpc::Status status = reports_->GetDesign(&design_context, get, &design);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("metric: must match"));
  EXPECT_THAT(status.error_message(), HasSubstr(absl::StrCat("(", junk.size(), " bytes)")));
  EXPECT_LT(status.error_message().size(), 512u);

  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('a');
  request.mutable_reports(0)->set_metric(junk);
  v1::SubmitReportsResponse response;
  status = Submit(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message().substr(0, 200);
  ASSERT_EQ(response.rejections_size(), 1);
  EXPECT_LT(response.rejections(0).reason().size(), 512u);
  EXPECT_TRUE(response.rejections(0).permanent());

  v1::SubmitReportsRequest labels;
  *labels.add_reports() = Valid('b');
  (*labels.mutable_reports(0)->mutable_labels())["k"] = junk;
  status = Submit(labels, &response);
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(response.rejections_size(), 1);
  EXPECT_LT(response.rejections(0).reason().size(), 512u);

  spdlog::default_logger()->flush();
  spdlog::default_logger()->sinks().pop_back();
  EXPECT_LT(log_.str().size(), 4096u) << "the log grew with the junk";
  EXPECT_EQ(storage_->ReportCount(), 0);
}

TEST_F(ServerGrpcTest, CreateMetricRejectsInvalidDesignNamingTheParameter) {
  v1::CreateMetricRequest create;
  create.set_name("bad");
  create.mutable_design()->mutable_forced_response()->set_p(1.5);
  grpc::ClientContext context;
  v1::Metric metric;
  grpc::Status status = queries_->CreateMetric(&context, create, &metric);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("design.forced_response: p must be"));

  create.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(std::nan(""));
  grpc::ClientContext context2;
  status = queries_->CreateMetric(&context2, create, &metric);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("epsilon"));

  grpc::ClientContext context3;
  v1::ListMetricsResponse list;
  ASSERT_TRUE(queries_->ListMetrics(&context3, v1::ListMetricsRequest(), &list).ok());
  EXPECT_EQ(list.metrics_size(), 1);  // only "drugs"
}

TEST_F(ServerGrpcTest, TailsSaysYesIsReturnedWithInfiniteEpsilonAndAWarning) {
  v1::CreateMetricRequest create;
  create.set_name("tails");
  create.mutable_design()->mutable_tails_says_yes();
  grpc::ClientContext context;
  v1::Metric metric;
  ASSERT_TRUE(queries_->CreateMetric(&context, create, &metric).ok());
  EXPECT_TRUE(metric.design().parameters().has_tails_says_yes());
  EXPECT_DOUBLE_EQ(metric.design().a(), 1.0);
  EXPECT_DOUBLE_EQ(metric.design().b(), 0.5);
  EXPECT_TRUE(metric.design().epsilon_infinite());
  EXPECT_TRUE(std::isinf(metric.design().epsilon()));
  EXPECT_EQ(metric.design().warning(), "a \"no\" report reveals the true answer");
}

TEST_F(ServerGrpcTest, CreateMetricRejectsTakenName) {
  v1::CreateMetricRequest create;
  create.set_name("drugs");
  create.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(1.0);
  grpc::ClientContext context;
  v1::Metric metric;
  EXPECT_EQ(queries_->CreateMetric(&context, create, &metric).error_code(),
            grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(ServerGrpcTest, SdkReportsOverGrpcAreCounted) {
  client::SecureBitGen gen;
  client::ReporterOptions options;
  options.one_report_per_period = false;  // each Report() stands for a device
  std::unique_ptr<client::Reporter> reporter = client::Reporter::CreateForTesting(
      client::MakeGrpcTransport(channel_), options, gen, &clock_);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(reporter->Report("drugs", i < 10).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(storage_->ReportCount(), 50);
}

// Issue 16: a device reporting on every launch was counted once per launch.
TEST_F(ServerGrpcTest, OneDeviceIsCountedOncePerReportingPeriod) {
  client::SecureBitGen gen;
  std::unique_ptr<client::Reporter> reporter = client::Reporter::CreateForTesting(
      client::MakeGrpcTransport(channel_), client::ReporterOptions{}, gen, &clock_);
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(reporter->Report("drugs", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(storage_->ReportCount(), 1);
  EXPECT_EQ(reporter->Ledger()->at("drugs").reports_repeated_in_period, 49);
}

TEST_F(ServerGrpcTest, GetDesignCarriesTheMetricsPeriodAndRandomization) {
  v1::CreateMetricRequest create;
  create.set_name("hourly");
  create.mutable_design()->mutable_two_coin();
  create.set_reporting_period_seconds(7200);
  create.set_randomization(v1::FRESH_PER_PERIOD);
  grpc::ClientContext create_context;
  v1::Metric metric;
  ASSERT_TRUE(queries_->CreateMetric(&create_context, create, &metric).ok());
  EXPECT_EQ(metric.reporting_period_seconds(), 7200u);
  grpc::ClientContext context;
  v1::GetDesignRequest request;
  request.set_metric("hourly");
  v1::GetDesignResponse response;
  ASSERT_TRUE(reports_->GetDesign(&context, request, &response).ok());
  EXPECT_EQ(response.reporting_period_seconds(), 7200u);
  EXPECT_EQ(response.randomization(), v1::FRESH_PER_PERIOD);
}

// Issue 25: a label value past the cap (--max_label_values, here 1) reaches a device over gRPC as
// a permanent INVALID_ARGUMENT rejection of that report alone, naming the label and the cap, and
// is counted in /metrics as deniable_label_values_refused_total{metric}.
TEST(ServerGrpcLabelCapTest, ANewLabelValuePastTheCapIsRejectedPermanentlyAndCounted) {
  FakeClock clock{absl::FromUnixSeconds(kNow)};
  server::ServerOptions options;
  options.listen_address = "";
  auto server = server::CollectorServer::Start(
      std::make_unique<server::MemoryStorage>(/*max_label_values=*/1), &clock, options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = (*server)->InProcessChannel();
  auto queries = v1::QueryService::NewStub(channel);
  auto reports = v1::ReportService::NewStub(channel);
  v1::CreateMetricRequest create;
  create.set_name("drugs");
  create.mutable_design()->mutable_two_coin();
  v1::Metric metric;
  grpc::ClientContext create_context;
  ASSERT_TRUE(queries->CreateMetric(&create_context, create, &metric).ok());

  v1::SubmitReportsRequest request;
  for (const char* device : {"d41d8cd98f00", "0cc175b9c0f1"}) {
    v1::Report* r = request.add_reports();
    r->set_metric("drugs");
    r->set_design_version(1);
    r->set_bit(1);
    r->set_report_id(std::string(16, device[0]));
    r->set_event_time_seconds(kNow);
    (*r->mutable_labels())["device"] = device;
  }
  v1::SubmitReportsResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(reports->SubmitReports(&context, request, &response).ok());
  EXPECT_EQ(response.accepted(), 1u);
  ASSERT_EQ(response.rejections_size(), 1);
  EXPECT_EQ(response.rejections(0).index(), 1u);
  EXPECT_EQ(response.rejections(0).code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(response.rejections(0).permanent());
  EXPECT_EQ(response.rejections(0).reason(),
            "reports[1].labels[\"device\"]: metric \"drugs\" already has 1 distinct values of "
            "label \"device\" (--max_label_values); labels must be low-cardinality and never "
            "identify a device");
  double refused = -1;
  for (const auto& family : (*server)->counters().registry()->Collect()) {
    if (family.name != "deniable_label_values_refused_total") continue;
    for (const auto& m : family.metric) {
      if (m.label.size() == 1 && m.label[0].value == "drugs") refused = m.counter.value;
    }
  }
  EXPECT_EQ(refused, 1);
  EXPECT_EQ((*server)->counters().Snapshot().reports_rejected(), 1u);
}

}  // namespace
}  // namespace deniable
