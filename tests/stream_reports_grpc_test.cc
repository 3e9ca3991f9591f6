// StreamReports over gRPC (in-process channel): a stream's messages are validated like
// SubmitReports batches, stored (in flushes of stream_flush_reports) and acknowledged by one
// response with the totals.
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/memory_storage.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class StreamReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto memory = std::make_unique<server::MemoryStorage>();
    storage_ = memory.get();
    server::ServerOptions options;
    options.listen_address = "";
    options.ingest.stream_flush_reports = 3;  // flushes inside the stream, not only at its end
    auto server = server::CollectorServer::Start(
        std::make_unique<server::GroupCommitStorage>(std::move(memory)), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    reports_ = v1::ReportService::NewStub(server_->InProcessChannel());
    auto queries = v1::QueryService::NewStub(server_->InProcessChannel());
    v1::CreateMetricRequest create;
    create.set_name("drugs");
    create.mutable_design()->mutable_two_coin();
    grpc::ClientContext context;
    v1::Metric metric;
    ASSERT_TRUE(queries->CreateMetric(&context, create, &metric).ok());
  }

  static v1::SubmitReportsRequest Message(std::initializer_list<char> ids) {
    v1::SubmitReportsRequest m;
    for (char id : ids) {
      v1::Report* r = m.add_reports();
      r->set_metric("drugs");
      r->set_design_version(1);
      r->set_bit(1);
      r->set_report_id(std::string(16, id));
      r->set_event_time_seconds(kNow);
    }
    return m;
  }

  grpc::Status Stream(const std::vector<v1::SubmitReportsRequest>& messages,
                      v1::SubmitReportsResponse* response) {
    grpc::ClientContext context;
    auto writer = reports_->StreamReports(&context, response);
    for (const auto& m : messages) {
      if (!writer->Write(m)) break;
    }
    writer->WritesDone();
    return writer->Finish();
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  server::MemoryStorage* storage_ = nullptr;
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
};

TEST_F(StreamReportsTest, StoresEveryMessageAndReturnsTotalsCountingRepeatsOnce) {
  v1::SubmitReportsResponse response;
  grpc::Status status = Stream(
      {Message({'a', 'b'}), Message({'c', 'a'}), Message({'d'}), Message({'e', 'd'})}, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.accepted(), 5u);
  EXPECT_EQ(response.duplicates(), 2u);
  EXPECT_EQ(storage_->ReportCount(), 5);

  ASSERT_TRUE(Stream({Message({'a', 'b', 'c', 'd', 'e'})}, &response).ok());  // a full re-send
  EXPECT_EQ(response.accepted(), 0u);
  EXPECT_EQ(response.duplicates(), 5u);
}

TEST_F(StreamReportsTest, InvalidReportIsRejectedAloneWithItsStreamIndexAndMessage) {
  std::vector<v1::SubmitReportsRequest> messages = {Message({'a'}), Message({'b', 'c'})};
  messages[1].mutable_reports(1)->set_bit(2);
  v1::SubmitReportsResponse response;
  grpc::Status status = Stream(messages, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.accepted(), 2u);
  ASSERT_EQ(response.rejections_size(), 1);
  EXPECT_EQ(response.rejections(0).index(), 2u);  // the third report of the stream
  EXPECT_THAT(response.rejections(0).reason(), HasSubstr("message 1: reports[1].bit"));
  EXPECT_TRUE(response.rejections(0).permanent());
  EXPECT_EQ(storage_->ReportCount(), 2);
}

TEST_F(StreamReportsTest, MessageMalformedAsAWholeEndsTheStream) {
  std::vector<v1::SubmitReportsRequest> messages = {Message({'a'}), v1::SubmitReportsRequest()};
  v1::SubmitReportsResponse response;
  grpc::Status status = Stream(messages, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("message 1: reports: the batch is empty"));
  EXPECT_EQ(storage_->ReportCount(), 0);  // 'a' was still buffered: nothing stored
}

TEST_F(StreamReportsTest, RejectsAnEmptyStream) {
  v1::SubmitReportsResponse response;
  grpc::Status status = Stream({}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("stream"));
}

}  // namespace
}  // namespace deniable
