// Resources bounded by design (issue 18, docs/security.md section 6), over a real loopback port:
// an idle StreamReports call holds no server thread, streams beyond the server's limit are shed
// with RESOURCE_EXHAUSTED and counted, the buffers of all streams together stay bounded, and a
// connection carries at most max_streams_per_connection calls at once. The load test with 1000
// idle streams against the real binary is tests/load/resource_load_test.py.
#include <dirent.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/memory/memory_storage.h"
#include "tests/gated_memory_storage.h"
#include "tests/support/eventually.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

// Threads of this process (the server runs in it).
int ThreadCount() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  closedir(dir);
  return n;
}

using ::deniable::testing_util::Eventually;

// One open StreamReports call from the test's side.
struct OpenStream {
  grpc::ClientContext context;
  v1::SubmitReportsResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::SubmitReportsRequest>> writer;
};

class ResourceBoundsTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (gated_ != nullptr) gated_->Release();  // else the server's shutdown waits
  }

  // `gated`: the storage is a GatedMemoryStorage under group commit (gated_ set), as
  // deniable-server runs, so a held commit blocks no server thread.
  void Start(bool gated = false) {
    options_.listen_address = "127.0.0.1:0";
    std::unique_ptr<server::Storage> storage;
    if (gated) {
      auto memory = std::make_unique<testing_util::GatedMemoryStorage>();
      storage_ = gated_ = memory.get();
      storage = std::make_unique<server::GroupCommitStorage>(std::move(memory));
    } else {
      auto memory = std::make_unique<server::MemoryStorage>();
      storage_ = memory.get();
      storage = std::move(memory);
    }
    auto server = server::CollectorServer::Start(std::move(storage), &clock_, options_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = NewChannel(0);
    reports_ = v1::ReportService::NewStub(channel_);
    v1::CreateMetricRequest create;
    create.set_name("drugs");
    create.mutable_design()->mutable_two_coin();
    grpc::ClientContext context;
    v1::Metric metric;
    ASSERT_TRUE(v1::QueryService::NewStub(channel_)->CreateMetric(&context, create, &metric).ok());
  }

  // A channel with a connection of its own (channels with equal arguments share one).
  std::shared_ptr<grpc::Channel> NewChannel(int id) {
    grpc::ChannelArguments args;
    args.SetInt("deniable.test.connection", id);
    return grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server_->port()),
                                     grpc::InsecureChannelCredentials(), args);
  }

  // `n` reports with ids starting at `first`.
  static v1::SubmitReportsRequest Batch(int n, int first) {
    v1::SubmitReportsRequest request;
    for (int i = 0; i < n; ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric("drugs");
      r->set_design_version(1);
      r->set_bit(1);
      std::string id(16, 'x');
      const int value = first + i;
      for (int b = 0; b < 4; ++b) id[b] = static_cast<char>((value >> (8 * b)) & 0xff);
      r->set_report_id(id);
      r->set_event_time_seconds(kNow);
    }
    return request;
  }

  // Opens a stream on `stub` and sends one message of `n` reports; `served`: the server takes
  // the message (a shed stream may have ended before it is written).
  static std::unique_ptr<OpenStream> Open(v1::ReportService::Stub* stub, int n, int first,
                                          bool served = true) {
    auto stream = std::make_unique<OpenStream>();
    stream->context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    stream->writer = stub->StreamReports(&stream->context, &stream->response);
    const bool written = stream->writer->Write(Batch(n, first));
    if (served) {
      EXPECT_TRUE(written);
    }
    return stream;
  }

  static grpc::Status Close(OpenStream* stream) {
    stream->writer->WritesDone();
    return stream->writer->Finish();
  }

  // The value of a counter in the server's Prometheus registry (0 when absent).
  double Counter(const std::string& name) {
    for (const auto& family : server_->counters().registry()->Collect()) {
      if (family.name == name && !family.metric.empty()) return family.metric[0].counter.value;
    }
    return 0;
  }

  // The value of a gauge in the server's Prometheus registry (-1 when absent).
  double Gauge(const std::string& name) {
    for (const auto& family : server_->counters().registry()->Collect()) {
      if (family.name == name && !family.metric.empty()) return family.metric[0].gauge.value;
    }
    return -1;
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow)};
  server::ServerOptions options_;
  server::MemoryStorage* storage_ = nullptr;
  testing_util::GatedMemoryStorage* gated_ = nullptr;  // with Start(/*gated=*/true)
  std::unique_ptr<server::CollectorServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ReportService::Stub> reports_;
};

TEST_F(ResourceBoundsTest, IdleStreamsHoldNoServerThread) {
  options_.max_streams_per_connection = 0;
  Start();
  const int threads_before = ThreadCount();
  constexpr int kStreams = 300;
  std::vector<std::unique_ptr<OpenStream>> streams;
  for (int i = 0; i < kStreams; ++i) streams.push_back(Open(reports_.get(), 1, i));
  // Every stream has reached the server, had its message stored (a stream flushes whenever no
  // flush of it is in progress) and waits there for its next message.
  ASSERT_TRUE(Eventually([&] {
    return server_->stream_limits().open_streams() == kStreams &&
           storage_->ReportCount() == kStreams && server_->stream_limits().buffered_rows() == 0;
  })) << server_->stream_limits().open_streams()
      << " streams open";
  const int threads_held = ThreadCount();
  // On the synchronous API each of them held a handler thread (300 more); now none does.
  EXPECT_LT(threads_held - threads_before, 20) << "threads before " << threads_before << ", with "
                                               << kStreams << " idle streams: " << threads_held;
  for (auto& stream : streams) {
    ASSERT_TRUE(Close(stream.get()).ok());
    EXPECT_EQ(stream->response.accepted(), 1u);
  }
  EXPECT_EQ(storage_->ReportCount(), kStreams);
  EXPECT_TRUE(Eventually([&] { return server_->stream_limits().open_streams() == 0; }));
  EXPECT_EQ(server_->stream_limits().buffered_rows(), 0);
}

TEST_F(ResourceBoundsTest, StreamsBeyondTheLimitAreShedWithResourceExhaustedAndCounted) {
  options_.max_concurrent_streams = 2;
  Start();
  auto first = Open(reports_.get(), 1, 0);
  auto second = Open(reports_.get(), 1, 1);
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().open_streams() == 2; }));
  EXPECT_EQ(Gauge("deniable_open_streams"), 2);

  auto shed = Open(reports_.get(), 1, 2, /*served=*/false);
  grpc::Status status = Close(shed.get());
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr("reports: too many open streams (the server's limit is 2)"));
  EXPECT_EQ(Counter("deniable_streams_shed_total"), 1);
  EXPECT_EQ(server_->counters().Snapshot().batches_rejected(), 1u);

  // The open streams are unaffected; once one has ended, a new stream is served.
  ASSERT_TRUE(Close(first.get()).ok());
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().open_streams() == 1; }));
  auto third = Open(reports_.get(), 1, 3);
  ASSERT_TRUE(Close(third.get()).ok());
  ASSERT_TRUE(Close(second.get()).ok());
  EXPECT_EQ(storage_->ReportCount(), 3);  // ids 0, 1, 3: the shed stream stored nothing
  EXPECT_EQ(Counter("deniable_streams_shed_total"), 1);
  EXPECT_TRUE(Eventually([&] { return Gauge("deniable_open_streams") == 0; }));
}

TEST_F(ResourceBoundsTest, StreamsPauseReadingWhileTheBuffersOfAllStreamsAreFull) {
  options_.ingest.stream_flush_reports = 1000;  // a stream alone would read everything below
  options_.max_stream_buffered_rows = 4;
  Start(/*gated=*/true);
  gated_->Hold();
  // Each stream hands its first message to storage at once; the commits wait at the gate, and
  // the rows count as held meanwhile.
  auto a = Open(reports_.get(), 3, 0);
  auto b = Open(reports_.get(), 2, 100);
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().buffered_rows() == 5; }));
  EXPECT_EQ(storage_->ReportCount(), 0);
  // 5 > 4: a message read now stays in its stream's buffer and that stream reads no further
  // until its flush has committed.
  ASSERT_TRUE(a->writer->Write(Batch(1, 3)));
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().buffered_rows() == 6; }));
  // The stream stopped reading after that message (no read started until its flush commits),
  // so the next one waits in the transport.
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().read_pauses() == 1; }));
  ASSERT_TRUE(a->writer->Write(Batch(1, 4)));  // not read while the buffers are full
  EXPECT_EQ(server_->stream_limits().buffered_rows(), 6) << "read although the buffers were full";
  gated_->Release();
  ASSERT_TRUE(Close(a.get()).ok());
  ASSERT_TRUE(Close(b.get()).ok());
  EXPECT_EQ(a->response.accepted(), 5u);
  EXPECT_EQ(b->response.accepted(), 2u);
  EXPECT_EQ(storage_->ReportCount(), 7);
  EXPECT_EQ(server_->stream_limits().buffered_rows(), 0);
}

TEST_F(ResourceBoundsTest, ConnectionCarriesAtMostMaxStreamsPerConnectionCalls) {
  options_.max_streams_per_connection = 2;
  Start();
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::health::v1::HealthCheckResponse serving;
  grpc::ClientContext health_context;
  ASSERT_TRUE(health->Check(&health_context, {}, &serving).ok());  // settings received
  auto first = Open(reports_.get(), 1, 0);
  auto second = Open(reports_.get(), 1, 1);
  ASSERT_TRUE(Eventually([&] { return server_->stream_limits().open_streams() == 2; }));

  // A third call on the same connection waits in the client; another connection is served.
  v1::SubmitReportsResponse response;
  grpc::ClientContext waits;
  waits.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  grpc::Status waited = reports_->SubmitReports(&waits, Batch(1, 7), &response);
  EXPECT_EQ(waited.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << waited.error_message();
  grpc::ClientContext other;
  other.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EXPECT_TRUE(v1::ReportService::NewStub(NewChannel(1))
                  ->SubmitReports(&other, Batch(1, 8), &response)
                  .ok());

  ASSERT_TRUE(Close(first.get()).ok());
  grpc::ClientContext after;
  after.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EXPECT_TRUE(reports_->SubmitReports(&after, Batch(1, 9), &response).ok());
  ASSERT_TRUE(Close(second.get()).ok());
  EXPECT_EQ(storage_->ReportCount(), 4);  // 0, 1, 8, 9: the call that timed out stored nothing
}

}  // namespace
}  // namespace deniable
