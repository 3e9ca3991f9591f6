// Today's messages reach the new server (issue 27): Report's categorical and numeric payloads
// moved into a oneof and Prevalence gained its kind, keeping every field's number. Two frozen
// requests of one report per kind (yes/no, k-RR, 1BitMean, dBitFlip):
//   - tests/golden/wire_v6_submit_reports.hex: the binary wire as commit d15df5a's proto encoded
//     it (gRPC SDKs of that release): today's messages parse it and write it back byte for byte,
//     and the collector counts every report;
//   - tests/golden/wire_v6_submit_reports.json: the JSON body the JS SDK sends over HTTP (with
//     "bit": 0 beside categorical and numeric), through the HTTP API's handler.
// Each metric then answers with its kind set in Prevalence.kind.
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/http/json_api.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable {
namespace {

constexpr int64_t kNow = 1'699'999'200 + 1800;  // the golden reports' hour, plus half an hour

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last line of the .hex file, decoded (the lines before it are comments).
std::string GoldenWire() {
  const std::string text =
      ReadFile(std::string(DENIABLE_GOLDEN_DIR) + "/wire_v6_submit_reports.hex");
  std::vector<std::string> lines = absl::StrSplit(text, '\n', absl::SkipEmpty());
  return lines.empty() ? "" : absl::HexStringToBytes(lines.back());
}

class WireCompatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.listen_address = "";  // in-process only
    options.query.default_min_reports = 1;
    auto server =
        server::CollectorServer::Start(std::make_unique<server::MemoryStorage>(), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    reports_ = v1::ReportService::NewStub(server_->InProcessChannel());
    queries_ = v1::QueryService::NewStub(server_->InProcessChannel());
    v1::CreateMetricRequest yes_no;
    yes_no.set_name("yes_no");
    yes_no.mutable_design()->mutable_two_coin();
    Create(yes_no);
    v1::CreateMetricRequest vote;
    vote.set_name("vote");
    for (const char* c : {"Y", "N", "U", "A"}) vote.add_categories(c);
    vote.mutable_design()->mutable_categorical()->set_mechanism(v1::K_RR);
    vote.mutable_design()->mutable_categorical()->set_epsilon(std::log(3.0));
    Create(vote);
    for (auto [name, mechanism, buckets] :
         {std::tuple{"mean", v1::ONE_BIT_MEAN, 0}, std::tuple{"hist", v1::D_BIT_FLIP, 2}}) {
      v1::CreateMetricRequest numeric;
      numeric.set_name(name);
      numeric.mutable_range()->set_lo(0);
      numeric.mutable_range()->set_hi(200);
      numeric.mutable_design()->mutable_numeric()->set_mechanism(mechanism);
      numeric.mutable_design()->mutable_numeric()->set_epsilon(std::log(3.0));
      numeric.mutable_design()->mutable_numeric()->set_buckets(static_cast<uint32_t>(buckets));
      if (buckets > 0) numeric.mutable_design()->mutable_numeric()->set_sampled_buckets(1);
      Create(numeric);
    }
  }

  void Create(const v1::CreateMetricRequest& request) {
    v1::Metric metric;
    grpc::ClientContext context;
    const grpc::Status status = queries_->CreateMetric(&context, request, &metric);
    ASSERT_TRUE(status.ok()) << request.name() << ": " << status.error_message();
  }

  v1::Prevalence Prevalence(const std::string& metric) {
    v1::GetPrevalenceRequest request;
    request.set_metric(metric);
    v1::Prevalence p;
    grpc::ClientContext context;
    const grpc::Status status = queries_->GetPrevalence(&context, request, &p);
    EXPECT_TRUE(status.ok()) << metric << ": " << status.error_message();
    return p;
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
};

TEST_F(WireCompatTest, OldBinaryAndJsonReportsAreCountedAndEachEstimateNamesItsKind) {
  const std::string wire = GoldenWire();
  ASSERT_FALSE(wire.empty());
  v1::SubmitReportsRequest request;
  ASSERT_TRUE(request.ParseFromString(wire));
  ASSERT_EQ(request.reports_size(), 5);
  EXPECT_EQ(request.reports(2).payload_case(), v1::Report::kCategorical);
  EXPECT_EQ(request.reports(4).payload_case(), v1::Report::kNumeric);
  EXPECT_EQ(request.reports(0).payload_case(), v1::Report::PAYLOAD_NOT_SET);
  EXPECT_EQ(request.SerializeAsString(), wire) << "today's messages write the old wire unchanged";
  {
    v1::SubmitReportsResponse response;
    grpc::ClientContext context;
    const grpc::Status status = reports_->SubmitReports(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.accepted(), 5u);
    EXPECT_EQ(response.rejections_size(), 0) << response.DebugString();
  }

  server::http::JsonApi api(server_->core());
  const server::http::JsonReply reply =
      api.Call("deniable.v1.ReportService/SubmitReports",
               ReadFile(std::string(DENIABLE_GOLDEN_DIR) + "/wire_v6_submit_reports.json"), "",
               "ipv4:127.0.0.1:5000");
  ASSERT_EQ(reply.http_status, 200) << reply.body;
  EXPECT_THAT(reply.body, ::testing::HasSubstr("\"accepted\":5,")) << reply.body;

  const v1::Prevalence yes_no = Prevalence("yes_no");
  EXPECT_EQ(yes_no.n(), 4);
  EXPECT_EQ(yes_no.yes_count(), 2);
  EXPECT_EQ(yes_no.kind_case(), v1::Prevalence::kYesNo);
  const v1::Prevalence vote = Prevalence("vote");
  EXPECT_EQ(vote.n(), 2);
  ASSERT_EQ(vote.shares_size(), 4);
  EXPECT_EQ(vote.shares(0).support_count(), 1);  // the JSON report's category 0
  EXPECT_EQ(vote.shares(2).support_count(), 1);  // the binary report's category 2
  EXPECT_EQ(vote.kind_case(), v1::Prevalence::kCategorical);
  EXPECT_EQ(vote.categorical().categories(), 4u);
  const v1::Prevalence mean = Prevalence("mean");
  EXPECT_EQ(mean.n(), 2);
  EXPECT_EQ(mean.yes_count(), 1);
  EXPECT_EQ(mean.kind_case(), v1::Prevalence::kNumeric);
  const v1::Prevalence hist = Prevalence("hist");
  EXPECT_EQ(hist.n(), 2);
  EXPECT_EQ(hist.kind_case(), v1::Prevalence::kNumeric);
  ASSERT_EQ(hist.numeric().buckets_size(), 2);
  EXPECT_EQ(hist.numeric().buckets(0).sampled(), 1);  // JSON: bucket 0, bit 1
  EXPECT_EQ(hist.numeric().buckets(0).ones(), 1);
  EXPECT_EQ(hist.numeric().buckets(1).sampled(), 1);  // binary: bucket 1, bit 1
  EXPECT_EQ(hist.numeric().buckets(1).ones(), 1);
}

}  // namespace
}  // namespace deniable
