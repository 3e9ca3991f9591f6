// Issue 25: the storage's cap on distinct label values reaches devices as a rejection of the
// report alone: INVALID_ARGUMENT naming the report's label and the cap, permanent, counted by the
// outcome sink; the other reports of the batch (or stream) are stored.
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/core_test_util.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/report_stream.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace label_cap_ingest_test {

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class RecordingSink : public ReportOutcomeSink {
 public:
  void RecordStored(absl::string_view, int64_t, int64_t) override {}
  void RecordReportRejected(absl::string_view metric, absl::StatusCode code) override {
    rejected.emplace_back(std::string(metric), code);
  }
  void RecordImported(absl::string_view, int64_t, int64_t) override {}
  void RecordLabelValueRefused(absl::string_view metric) override { refused.emplace_back(metric); }
  std::vector<std::pair<std::string, absl::StatusCode>> rejected;
  std::vector<std::string> refused;
};

class LabelCapIngestTest : public ::testing::Test {
 protected:
  LabelCapIngestTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        storage_(/*max_label_values=*/2),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}) {}

  void SetUp() override {
    ASSERT_TRUE(registry_.Create(testing_util::TwoCoinMetric("m")).ok());
    ingestor_.set_outcome_sink(&sink_);
  }

  static v1::SubmitReportsRequest Batch(const std::vector<std::string>& devices, char first_id) {
    v1::SubmitReportsRequest request;
    for (size_t i = 0; i < devices.size(); ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric("m");
      r->set_design_version(1);
      r->set_bit(1);
      r->set_report_id(std::string(16, static_cast<char>(first_id + i)));
      r->set_event_time_seconds(kNow);
      (*r->mutable_labels())["device"] = devices[i];
    }
    return request;
  }

  static constexpr char kReason[] =
      "reports[2].labels[\"device\"]: metric \"m\" already has 2 distinct values of label "
      "\"device\" (--max_label_values); labels must be low-cardinality and never identify a "
      "device";

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  RecordingSink sink_;
};

TEST_F(LabelCapIngestTest, ANewValuePastTheCapIsRejectedAloneAndPermanently) {
  absl::StatusOr<v1::SubmitReportsResponse> response =
      ingestor_.Submit(Batch({"a", "b", "c", "a"}, 'a'));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 3u);
  ASSERT_EQ(response->rejections_size(), 1);
  const v1::ReportRejection& r = response->rejections(0);
  EXPECT_EQ(r.index(), 2u);
  EXPECT_EQ(r.code(), static_cast<int32_t>(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(r.permanent());
  EXPECT_EQ(r.reason(), kReason);
  EXPECT_EQ(storage_.ReportCount(), 3);
  EXPECT_EQ(sink_.refused, std::vector<std::string>{"m"});
  ASSERT_EQ(sink_.rejected.size(), 1u);
  EXPECT_EQ(sink_.rejected[0],
            std::make_pair(std::string("m"), absl::StatusCode::kInvalidArgument));

  // Sent again: the same verdict (permanent means it), the others are duplicates.
  response = ingestor_.Submit(Batch({"a", "b", "c", "a"}, 'a'));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->duplicates(), 3u);
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_EQ(response->rejections(0).reason(), kReason);
  EXPECT_EQ(sink_.refused.size(), 2u);
}

TEST_F(LabelCapIngestTest, SubmitAsyncAndStreamsRejectTheRefusedReportAtItsIndex) {
  absl::StatusOr<v1::SubmitReportsResponse> async = absl::InternalError("not called");
  ingestor_.SubmitAsync(Batch({"a", "b", "c"}, 'a'),
                        [&](absl::StatusOr<v1::SubmitReportsResponse> r) { async = std::move(r); });
  ASSERT_TRUE(async.ok()) << async.status();
  ASSERT_EQ(async->rejections_size(), 1);
  EXPECT_EQ(async->rejections(0).reason(), kReason);

  ReportStream stream(&ingestor_);
  ASSERT_TRUE(stream.Add(Batch({"a"}, 'k')).ok());
  ASSERT_TRUE(stream.Add(Batch({"b", "d", "a"}, 'm')).ok());  // stream reports 1..3
  absl::Status flushed = absl::InternalError("not called");
  stream.Flush([&](absl::Status s) { flushed = std::move(s); });
  ASSERT_TRUE(flushed.ok()) << flushed;
  absl::StatusOr<v1::SubmitReportsResponse> totals = stream.Totals();
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->accepted(), 3u);
  ASSERT_EQ(totals->rejections_size(), 1);
  EXPECT_EQ(totals->rejections(0).index(), 2u);
  EXPECT_TRUE(totals->rejections(0).permanent());
  EXPECT_THAT(totals->rejections(0).reason(),
              ::testing::StartsWith("message 1: reports[1].labels[\"device\"]: metric \"m\""));
  EXPECT_EQ(sink_.refused.size(), 2u);
}

TEST(LabelKeyCapIngestTest, AKeyPastTheCapIsRejectedNamingTheKeyCap) {
  FakeClock clock(absl::FromUnixSeconds(kNow));
  MemoryStorage storage(/*max_label_values=*/1000, /*max_label_keys=*/1);
  MetricRegistry registry(&storage, &clock);
  Ingestor ingestor(&registry, &storage, &clock, IngestOptions{});
  ASSERT_TRUE(registry.Create(testing_util::TwoCoinMetric("m")).ok());
  v1::SubmitReportsRequest request;
  for (const char* key : {"region", "d41d8cd98f00"}) {
    v1::Report* r = request.add_reports();
    r->set_metric("m");
    r->set_design_version(1);
    r->set_bit(1);
    r->set_report_id(std::string(16, key[0]));
    r->set_event_time_seconds(kNow);
    (*r->mutable_labels())[key] = "1";
  }
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 1u);
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_TRUE(response->rejections(0).permanent());
  EXPECT_EQ(response->rejections(0).reason(),
            "reports[1].labels[\"d41d8cd98f00\"]: metric \"m\" already has 1 distinct label keys "
            "(--max_label_keys); labels must be low-cardinality and never identify a device");
}

}  // namespace label_cap_ingest_test
}  // namespace
}  // namespace deniable::server
