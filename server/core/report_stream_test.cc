#include "server/core/report_stream.h"

#include <cstdint>
#include <string>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/core_test_util.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace report_stream_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;  // on an hour boundary

class ReportStreamTest : public ::testing::Test {
 protected:
  ReportStreamTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}) {}

  void SetUp() override {
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  // A message of `valid` good reports followed by `invalid` reports with bit 2.
  v1::SubmitReportsRequest Message(int valid, int invalid) {
    v1::SubmitReportsRequest request =
        testing_util::CountedBatch("m", valid + invalid, 0, kNow, 1, &next_id_);
    for (int i = valid; i < valid + invalid; ++i) request.mutable_reports(i)->set_bit(2);
    return request;
  }

  static absl::StatusOr<v1::SubmitReportsResponse> FlushAndTotal(ReportStream& stream) {
    absl::Status flushed;
    absl::Notification done;
    stream.Flush([&](absl::Status s) {
      flushed = s;
      done.Notify();
    });
    done.WaitForNotification();
    if (!flushed.ok()) return flushed;
    return stream.Totals();
  }

  uint64_t next_id_ = 1;
  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
};

TEST_F(ReportStreamTest, ListsTheFirstRejectionsAndCountsTheRestWhenTheCapIsPassed) {
  ReportStream stream(&ingestor_, /*max_listed_rejections=*/5);
  for (int k = 0; k < 4; ++k) ASSERT_TRUE(stream.Add(Message(/*valid=*/2, /*invalid=*/3)).ok());
  absl::StatusOr<v1::SubmitReportsResponse> totals = FlushAndTotal(stream);
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->accepted(), 8u);
  ASSERT_EQ(totals->rejections_size(), 5);
  EXPECT_EQ(totals->rejections_omitted(), 7u);
  EXPECT_EQ(totals->accepted() + totals->duplicates() + totals->rejections_size() +
                totals->rejections_omitted(),
            20u);
  // The listed ones are the stream's first, in order, with stream-wide indexes.
  EXPECT_EQ(totals->rejections(0).index(), 2u);
  EXPECT_EQ(totals->rejections(3).index(), 7u);
  EXPECT_EQ(totals->rejections(4).index(), 8u);
  EXPECT_THAT(totals->rejections(4).reason(), HasSubstr("message 1: "));
  EXPECT_EQ(storage_.ReportCount(), 8) << "valid reports beside the unlisted rejections";
}

TEST_F(ReportStreamTest, ListsEveryRejectionUnderTheDefaultCap) {
  ReportStream stream(&ingestor_);
  ASSERT_TRUE(stream.Add(Message(1, 999)).ok());
  absl::StatusOr<v1::SubmitReportsResponse> totals = FlushAndTotal(stream);
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->rejections_size(), 999);
  EXPECT_EQ(totals->rejections_omitted(), 0u);
}

TEST_F(ReportStreamTest, DefaultCapKeepsAThousandOfALongInvalidStream) {
  ReportStream stream(&ingestor_);
  for (int k = 0; k < 30; ++k) ASSERT_TRUE(stream.Add(Message(0, 100)).ok());
  absl::StatusOr<v1::SubmitReportsResponse> totals = FlushAndTotal(stream);
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->rejections_size(), ReportStream::kMaxListedRejections);
  EXPECT_EQ(totals->rejections_omitted(), 2000u);
  EXPECT_EQ(totals->rejections(999).index(), 999u);
}

}  // namespace report_stream_test
}  // namespace
}  // namespace deniable::server
