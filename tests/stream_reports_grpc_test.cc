// StreamReports over gRPC (in-process channel): a stream's messages are validated like
// SubmitReports batches, stored while the stream goes on (a flush whenever none is in progress,
// the messages read meanwhile in the next) and acknowledged by one response with the totals,
// sent only once every report of the stream is durable.
#include <grpcpp/grpcpp.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "tests/gated_memory_storage.h"
#include "tests/support/eventually.h"

namespace deniable {
namespace {

using ::deniable::testing_util::Eventually;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class StreamReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto memory = std::make_unique<testing_util::GatedMemoryStorage>();
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

  void TearDown() override { storage_->Release(); }  // else the server's shutdown waits

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  testing_util::GatedMemoryStorage* storage_ = nullptr;
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
  // 'a' was handed to storage as soon as it was read (no flush was in progress); the error ends
  // the stream after that flush has committed, and the client re-sends (ids make that safe).
  EXPECT_EQ(storage_->ReportCount(), 1);
}

// The contract of docs/sdk.md: the response acknowledges the stream only once every report of
// it is durable, also when the stream ends while a flush is still committing; meanwhile the
// server reads on, buffering the next messages for the next flush.
TEST_F(StreamReportsTest, AnswersOnlyAfterEveryFlushHasCommittedAndReadsOnMeanwhile) {
  storage_->Hold();
  grpc::ClientContext context;
  v1::SubmitReportsResponse response;
  auto writer = reports_->StreamReports(&context, &response);
  ASSERT_TRUE(writer->Write(Message({'a', 'b'})));
  // The first message is being stored: its flush waits at the gate.
  ASSERT_TRUE(Eventually([&] { return storage_->waiting() == 1; }));
  // Read while that commit waits: held by the stream, not stored (2 in the flush + 2 pending,
  // under stream_flush_reports = 3 pending, so the server reads both).
  ASSERT_TRUE(writer->Write(Message({'c'})));
  ASSERT_TRUE(writer->Write(Message({'d'})));
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().buffered_rows() == 4; }));
  EXPECT_EQ(storage_->ReportCount(), 0);

  grpc::Status status;
  absl::Notification answered;
  std::thread closer([&] {
    writer->WritesDone();
    status = writer->Finish();
    answered.Notify();
  });
  // Not acknowledged while the first flush has not committed (a correct server never answers
  // here, whatever the wait).
  EXPECT_FALSE(answered.WaitForNotificationWithTimeout(absl::Milliseconds(300)));
  EXPECT_EQ(storage_->ReportCount(), 0);
  storage_->Release();
  closer.join();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.accepted(), 4u);
  // Everything acknowledged was stored before the answer.
  EXPECT_EQ(storage_->ReportCount(), 4);
  EXPECT_EQ(server_->stream_limits().buffered_rows(), 0);
}

// A message read while a flush commits that takes the stream's buffer to stream_flush_reports
// stops the reading until that flush is done: a stream holds at most about twice that many rows.
TEST_F(StreamReportsTest, PausesReadingWhileItsFlushCommitsOnceItsBufferIsFull) {
  storage_->Hold();
  grpc::ClientContext context;
  v1::SubmitReportsResponse response;
  auto writer = reports_->StreamReports(&context, &response);
  ASSERT_TRUE(writer->Write(Message({'a'})));
  ASSERT_TRUE(Eventually([&] { return storage_->waiting() == 1; }));
  ASSERT_TRUE(writer->Write(Message({'b', 'c', 'd'})));  // 3 pending: the buffer is full
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().buffered_rows() == 4; }));
  // The stream stops reading (no read is started until the flush commits), so the next
  // message waits in the transport (over the in-process transport the Write itself waits for
  // that read, so it runs on a thread of its own).
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().read_pauses() == 1; }));
  bool written = false;
  std::thread late([&] { written = writer->Write(Message({'e'})); });
  EXPECT_EQ(server_->stream_limits().buffered_rows(), 4) << "read although the buffer was full";
  storage_->Release();
  late.join();
  ASSERT_TRUE(written);
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.accepted(), 5u);
  EXPECT_EQ(storage_->ReportCount(), 5);
}

TEST_F(StreamReportsTest, RejectsAnEmptyStream) {
  v1::SubmitReportsResponse response;
  grpc::Status status = Stream({}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("stream"));
}

}  // namespace
}  // namespace deniable
