#include "server/core/ingestor.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace ingestor_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;  // on an hour boundary

class IngestorTest : public ::testing::Test {
 protected:
  IngestorTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{.max_batch_reports = 3}) {}

  void SetUp() override {
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  static v1::Report Valid(char id = 'a') {
    v1::Report r;
    r.set_metric("m");
    r.set_design_version(1);
    r.set_bit(1);
    r.set_report_id(std::string(16, id));
    r.set_event_time_seconds(kNow);
    return r;
  }

  // Submits `bad` after one valid report and expects the valid one stored and `bad` rejected
  // alone, at index 1, with `code` and a reason naming `field`.
  void ExpectRejected(const v1::Report& bad, absl::StatusCode code, const std::string& field,
                      bool permanent = true) {
    v1::SubmitReportsRequest request;
    *request.add_reports() = Valid('z');
    *request.add_reports() = bad;
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->accepted() + response->duplicates(), 1u);  // stored now or before
    ASSERT_EQ(response->rejections_size(), 1);
    const v1::ReportRejection& r = response->rejections(0);
    EXPECT_EQ(r.index(), 1u);
    EXPECT_EQ(r.code(), static_cast<int32_t>(code)) << r.reason();
    EXPECT_THAT(r.reason(), HasSubstr(field));
    EXPECT_EQ(r.permanent(), permanent);
    EXPECT_EQ(storage_.ReportCount(), 1) << "the valid report was not stored alone";
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
};

TEST_F(IngestorTest, AcceptsValidBatchAndCountsDuplicateOnce) {
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('a');
  *request.add_reports() = Valid('b');
  absl::StatusOr<v1::SubmitReportsResponse> first = ingestor_.Submit(request);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->accepted(), 2u);
  absl::StatusOr<v1::SubmitReportsResponse> retry = ingestor_.Submit(request);
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(retry->accepted(), 0u);
  EXPECT_EQ(retry->duplicates(), 2u);
  EXPECT_EQ(storage_.ReportCount(), 2);
}

TEST_F(IngestorTest, RejectsEmptyBatch) {
  absl::StatusOr<v1::SubmitReportsResponse> r = ingestor_.Submit(v1::SubmitReportsRequest());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("reports: the batch is empty"));
}

TEST_F(IngestorTest, RejectsOversizedBatch) {
  v1::SubmitReportsRequest request;
  for (char c : std::string("abcd")) *request.add_reports() = Valid(c);
  absl::StatusOr<v1::SubmitReportsResponse> r = ingestor_.Submit(request);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("more than the limit of 3"));
  EXPECT_EQ(storage_.ReportCount(), 0);
}

TEST_F(IngestorTest, RejectsUnknownMetricAsNotFound) {
  v1::Report r = Valid();
  r.set_metric("unknown");
  ExpectRejected(r, absl::StatusCode::kNotFound, "reports[1].metric", /*permanent=*/false);
}

TEST_F(IngestorTest, RejectsMalformedMetricNameWithABoundedEcho) {
  v1::Report r = Valid();
  r.set_metric(std::string(1 << 20, '\x01'));  // 1 MiB of control bytes
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "reports[1].metric: must match");
  v1::SubmitReportsRequest request;
  *request.add_reports() = r;
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_LT(response->rejections(0).reason().size(), 400u) << "the junk was echoed";
  EXPECT_THAT(response->rejections(0).reason(), HasSubstr("(1048576 bytes)"));
}

TEST_F(IngestorTest, BatchOfOnlyInvalidReportsIsAnsweredOkWithEveryRejection) {
  v1::SubmitReportsRequest request;
  for (int i = 0; i < 3; ++i) {
    *request.add_reports() = Valid(static_cast<char>('a' + i));
    request.mutable_reports(i)->set_bit(7);
  }
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 0u);
  ASSERT_EQ(response->rejections_size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(response->rejections(i).index(), static_cast<uint32_t>(i));
  EXPECT_EQ(storage_.ReportCount(), 0);
}

TEST_F(IngestorTest, SubmitAsyncAnswersABatchOfOnlyInvalidReportsWithoutStorage) {
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid();
  request.mutable_reports(0)->set_report_id("short");
  absl::StatusOr<v1::SubmitReportsResponse> got = absl::InternalError("not called");
  ingestor_.SubmitAsync(request,
                        [&](absl::StatusOr<v1::SubmitReportsResponse> r) { got = std::move(r); });
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->rejections_size(), 1);
  EXPECT_THAT(got->rejections(0).reason(), HasSubstr("reports[0].report_id"));
}

TEST(IngestorBigBatchTest, OneStaleReportInAThousandIsRejectedAloneWithItsIndex) {
  FakeClock clock(absl::FromUnixSeconds(kNow));
  MemoryStorage storage;
  MetricRegistry registry(&storage, &clock);
  Ingestor ingestor(&registry, &storage, &clock, IngestOptions{});
  v1::CreateMetricRequest create;
  create.set_name("m");
  create.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(registry.Create(create).ok());
  v1::SubmitReportsRequest request;
  for (int i = 0; i < 1000; ++i) {
    v1::Report* r = request.add_reports();
    r->set_metric("m");
    r->set_design_version(1);
    r->set_bit(static_cast<uint32_t>(i % 2));
    std::string id(16, '\0');
    id[0] = static_cast<char>(i & 0xff);
    id[1] = static_cast<char>(i >> 8);
    r->set_report_id(id);
    r->set_event_time_seconds(kNow);
  }
  // A device offline for 31 days: older than the default maximum age of 30 days.
  request.mutable_reports(637)->set_event_time_seconds(kNow - 31 * 86400);
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 999u);
  EXPECT_EQ(response->duplicates(), 0u);
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_EQ(response->rejections(0).index(), 637u);
  EXPECT_EQ(response->rejections(0).code(),
            static_cast<int32_t>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(response->rejections(0).reason(),
              HasSubstr("reports[637].event_time_seconds: " + std::to_string(kNow - 31 * 86400) +
                        " is too old"));
  EXPECT_TRUE(response->rejections(0).permanent());
  EXPECT_EQ(storage.ReportCount(), 999);
}

TEST_F(IngestorTest, RejectsWrongDesignVersion) {
  v1::Report r = Valid();
  r.set_design_version(2);
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "reports[1].design_version");
}

// Issue 17: a device that cached "two_coin v1" from another collector (or from a database the
// operator recreated) must not have its bits debiased with this collector's v1.
TEST_F(IngestorTest, RejectsADesignFingerprintThatIsNotTheCollectorsAsFailedPrecondition) {
  absl::StatusOr<v1::GetDesignResponse> here = DesignForDevice(registry_, "m");
  ASSERT_TRUE(here.ok()) << here.status();
  ASSERT_NE(here->design_fingerprint(), 0u);

  // Another collector: v1 of "m" is symmetric_epsilon 0.5.
  MemoryStorage other_storage;
  MetricRegistry other(&other_storage, &clock_);
  v1::CreateMetricRequest create;
  create.set_name("m");
  create.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(0.5);
  ASSERT_TRUE(other.Create(create).ok());
  absl::StatusOr<v1::GetDesignResponse> there = DesignForDevice(other, "m");
  ASSERT_TRUE(there.ok()) << there.status();
  EXPECT_NE(there->design_fingerprint(), here->design_fingerprint());
  v1::Report r = Valid('b');
  r.set_design_fingerprint(there->design_fingerprint());
  ExpectRejected(r, absl::StatusCode::kFailedPrecondition, "reports[1].design_fingerprint");
}

TEST_F(IngestorTest, DesignFingerprintTellsARecreatedDatabaseFromTheOriginal) {
  // The same design under the same name, created an hour later in a new database.
  FakeClock later(absl::FromUnixSeconds(kNow + 3600));
  MemoryStorage recreated_storage;
  MetricRegistry recreated(&recreated_storage, &later);
  v1::CreateMetricRequest create;
  create.set_name("m");
  create.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(recreated.Create(create).ok());
  EXPECT_NE(DesignForDevice(recreated, "m")->design_fingerprint(),
            DesignForDevice(registry_, "m")->design_fingerprint());
}

TEST_F(IngestorTest, AcceptsTheCollectorsFingerprintAndNoFingerprintFromOlderSdks) {
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid('a');  // no fingerprint: an SDK older than the field
  *request.add_reports() = Valid('b');
  request.mutable_reports(1)->set_design_fingerprint(
      DesignForDevice(registry_, "m")->design_fingerprint());
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 2u);
  EXPECT_EQ(response->rejections_size(), 0);
}

TEST_F(IngestorTest, RejectsBitOtherThanZeroOrOne) {
  v1::Report r = Valid();
  r.set_bit(2);
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "reports[1].bit: must be 0 or 1, but is 2");
}

TEST_F(IngestorTest, RejectsMissingReportId) {
  v1::Report r = Valid();
  r.clear_report_id();
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "reports[1].report_id");
}

TEST_F(IngestorTest, RejectsMalformedReportId) {
  v1::Report r = Valid();
  r.set_report_id(std::string(15, 'x'));
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "must be 16 bytes, but is 15 bytes");
}

TEST_F(IngestorTest, RejectsUnroundedEventTime) {
  v1::Report r = Valid();
  r.set_event_time_seconds(kNow + 17);
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "reports[1].event_time_seconds");
}

TEST_F(IngestorTest, RejectsMissingEventTime) {
  v1::Report r = Valid();
  r.clear_event_time_seconds();
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "reports[1].event_time_seconds");
}

TEST_F(IngestorTest, RejectsEventTimeFarInTheFuture) {
  v1::Report r = Valid();
  r.set_event_time_seconds(kNow + 2 * 3600);
  ExpectRejected(r, absl::StatusCode::kInvalidArgument, "is in the future");
}

TEST_F(IngestorTest, RejectsEventTimeOlderThanMaxReportAge) {
  v1::Report r = Valid();
  r.set_event_time_seconds(kNow - 31 * 86400);  // the default maximum age is 30 days
  ExpectRejected(
      r, absl::StatusCode::kInvalidArgument,
      "reports[1].event_time_seconds: " + std::to_string(kNow - 31 * 86400) + " is too old");
}

TEST_F(IngestorTest, AcceptsEventTimeJustInsideMaxReportAge) {
  v1::SubmitReportsRequest request;
  *request.add_reports() = Valid();
  request.mutable_reports(0)->set_event_time_seconds(kNow - 30 * 86400);
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 1u);
}

TEST_F(IngestorTest, RejectsMalformedLabels) {
  v1::Report bad_key = Valid();
  (*bad_key.mutable_labels())["Region"] = "N";
  ExpectRejected(bad_key, absl::StatusCode::kInvalidArgument, "reports[1].labels[\"Region\"]");
  v1::Report free_text = Valid();
  (*free_text.mutable_labels())["region"] = "I live at 5 Main St";
  ExpectRejected(free_text, absl::StatusCode::kInvalidArgument, "value must match");
  v1::Report too_many = Valid();
  for (const char* k : {"a", "b", "c", "d", "e"}) (*too_many.mutable_labels())[k] = "x";
  ExpectRejected(too_many, absl::StatusCode::kInvalidArgument, "at most 4 labels");
}

TEST(CanonicalLabelsTest, SortsByKey) {
  google::protobuf::Map<std::string, std::string> labels;
  labels["version"] = "1.2";
  labels["region"] = "N";
  absl::StatusOr<std::string> c = CanonicalLabels(labels, "labels");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, "region=N,version=1.2");
}

}  // namespace ingestor_test
}  // namespace
}  // namespace deniable::server
