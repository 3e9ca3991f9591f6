// Issue 17's delete race at the ingestor: reports validated against a cached metric that the
// storage no longer has (deleted by another collector on a shared database, or between validation
// and commit) are rejected one by one with NOT_FOUND, at their own index, not permanent, and the
// registry forgets the metric; the other reports of the batch are stored.
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/report_stream.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace deleted_metric_ingest_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class DeletedMetricIngestTest : public ::testing::Test {
 protected:
  DeletedMetricIngestTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}) {}

  void SetUp() override {
    for (const char* name : {"gone", "kept"}) {
      v1::CreateMetricRequest create;
      create.set_name(name);
      create.mutable_design()->mutable_two_coin();
      ASSERT_TRUE(registry_.Create(create).ok());
    }
    // Both are cached now; the storage alone forgets "gone", as a delete by another collector
    // (or one committed after this collector validated) would.
    ASSERT_TRUE(registry_.Find("gone").ok());
    ASSERT_TRUE(storage_.DeleteMetric("gone").ok());
  }

  static v1::SubmitReportsRequest Batch() {
    v1::SubmitReportsRequest request;
    const char* metrics[] = {"kept", "gone", "kept", "gone"};
    for (int i = 0; i < 4; ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric(metrics[i]);
      r->set_design_version(1);
      r->set_bit(1);
      r->set_report_id(std::string(16, static_cast<char>('a' + i)));
      r->set_event_time_seconds(kNow);
    }
    return request;
  }

  static void ExpectDeletedAt(const v1::SubmitReportsResponse& response, uint32_t first,
                              uint32_t second) {
    ASSERT_EQ(response.rejections_size(), 2);
    EXPECT_EQ(response.rejections(0).index(), first);
    EXPECT_EQ(response.rejections(1).index(), second);
    for (const v1::ReportRejection& r : response.rejections()) {
      EXPECT_EQ(r.code(), static_cast<int32_t>(absl::StatusCode::kNotFound));
      EXPECT_THAT(r.reason(), HasSubstr("metric \"gone\" was deleted"));
      EXPECT_FALSE(r.permanent());
    }
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
};

TEST_F(DeletedMetricIngestTest, ReportsOfAMetricDeletedUnderTheCacheAreRejectedOneByOne) {
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(Batch());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 2u);
  ExpectDeletedAt(*response, 1, 3);
  EXPECT_EQ(storage_.ReportCount(), 2);
  EXPECT_THAT(response->rejections(0).reason(), HasSubstr("reports[1].metric"));
  // The registry forgot the metric: the next report naming it is an unknown metric.
  EXPECT_EQ(registry_.Find("gone").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DeletedMetricIngestTest, StreamRejectsTheDeletedMetricsReportsWithStreamIndexes) {
  ReportStream stream(&ingestor_);
  v1::SubmitReportsRequest first;
  *first.add_reports() = Batch().reports(0);
  ASSERT_TRUE(stream.Add(first).ok());
  ASSERT_TRUE(stream.Add(Batch()).ok());  // reports 1..4 of the stream; 0 is a duplicate of 1
  absl::Status flushed = absl::InternalError("not called");
  stream.Flush([&](absl::Status s) { flushed = std::move(s); });
  ASSERT_TRUE(flushed.ok()) << flushed;
  absl::StatusOr<v1::SubmitReportsResponse> totals = stream.Totals();
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->accepted() + totals->duplicates(), 3u);
  ExpectDeletedAt(*totals, 2, 4);
  EXPECT_THAT(totals->rejections(0).reason(), HasSubstr("message 1: reports[1].metric"));
}

}  // namespace deleted_metric_ingest_test
}  // namespace
}  // namespace deniable::server
