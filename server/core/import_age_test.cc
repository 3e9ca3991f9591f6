// The age rule of historical imports (ingestor.h, ReportOrigin::kImport): an import reaches back
// to max(max_report_age, max_import_age), a device batch to max_report_age only, imports are
// refused whole while max_import_age is zero, and everything else (future skew, dedup) is the
// same for both.
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/report_stream.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace import_age_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;  // on an hour boundary
constexpr int64_t kDay = 86400;
constexpr int64_t kThreeYears = 3 * 365 * kDay;

// Counts what the ingestor tells its sink about imports.
class ImportSink : public ReportOutcomeSink {
 public:
  void RecordStored(absl::string_view, int64_t accepted, int64_t duplicates) override {
    stored += accepted;
    stored_duplicates += duplicates;
  }
  void RecordReportRejected(absl::string_view, absl::StatusCode) override {}
  void RecordImported(absl::string_view metric, int64_t accepted, int64_t duplicates) override {
    EXPECT_EQ(metric, "m");
    imported += accepted;
    imported_duplicates += duplicates;
  }
  int64_t stored = 0, stored_duplicates = 0, imported = 0, imported_duplicates = 0;
};

class ImportAgeTest : public ::testing::Test {
 protected:
  explicit ImportAgeTest(absl::Duration max_import_age = absl::Seconds(5 * 365 * kDay))
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_,
                  IngestOptions{.max_report_age = absl::Seconds(30 * kDay),
                                .max_import_age = max_import_age}) {
    ingestor_.set_outcome_sink(&sink_);
  }

  void SetUp() override {
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  static v1::SubmitReportsRequest At(int64_t event_time, char id = 'a') {
    v1::SubmitReportsRequest request;
    v1::Report* r = request.add_reports();
    r->set_metric("m");
    r->set_design_version(1);
    r->set_bit(1);
    r->set_report_id(std::string(16, id));
    r->set_event_time_seconds(event_time);
    return request;
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  ImportSink sink_;
};

TEST_F(ImportAgeTest, ImportAcceptsAThreeYearOldReportThatADeviceBatchMayNotSend) {
  const v1::SubmitReportsRequest old = At(kNow - kThreeYears);
  absl::StatusOr<v1::SubmitReportsResponse> device = ingestor_.Submit(old);
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_EQ(device->rejections_size(), 1);
  EXPECT_THAT(device->rejections(0).reason(), HasSubstr("maximum report age is 720h"));
  EXPECT_EQ(storage_.ReportCount(), 0);

  absl::StatusOr<v1::SubmitReportsResponse> import = ingestor_.Submit(old, ReportOrigin::kImport);
  ASSERT_TRUE(import.ok()) << import.status();
  EXPECT_EQ(import->accepted(), 1u);
  EXPECT_EQ(import->rejections_size(), 0);
  EXPECT_EQ(storage_.ReportCount(), 1);
  EXPECT_EQ(sink_.imported, 1);
  EXPECT_EQ(sink_.stored, 1);
}

TEST_F(ImportAgeTest, ImportBoundIsMaxImportAgeToTheSecond) {
  const int64_t earliest = kNow - 5 * 365 * kDay;  // a multiple of 3600: kNow and a day are
  absl::StatusOr<v1::SubmitReportsResponse> at_bound =
      ingestor_.Submit(At(earliest, 'a'), ReportOrigin::kImport);
  ASSERT_TRUE(at_bound.ok()) << at_bound.status();
  EXPECT_EQ(at_bound->accepted(), 1u);

  absl::StatusOr<v1::SubmitReportsResponse> beyond =
      ingestor_.Submit(At(earliest - 3600, 'b'), ReportOrigin::kImport);
  ASSERT_TRUE(beyond.ok()) << beyond.status();
  ASSERT_EQ(beyond->rejections_size(), 1);
  EXPECT_EQ(beyond->rejections(0).code(), static_cast<int32_t>(absl::StatusCode::kInvalidArgument));
  EXPECT_TRUE(beyond->rejections(0).permanent());
  EXPECT_THAT(beyond->rejections(0).reason(),
              HasSubstr("reports[0].event_time_seconds: " + std::to_string(earliest - 3600) +
                        " is too old (earliest allowed is " + std::to_string(earliest) +
                        ", the server's maximum import age is 43800h)"));
}

TEST_F(ImportAgeTest, ImportKeepsTheFutureSkewLimit) {
  absl::StatusOr<v1::SubmitReportsResponse> future =
      ingestor_.Submit(At(kNow + 2 * 3600), ReportOrigin::kImport);
  ASSERT_TRUE(future.ok()) << future.status();
  ASSERT_EQ(future->rejections_size(), 1);
  EXPECT_THAT(future->rejections(0).reason(), HasSubstr("is in the future"));
}

TEST_F(ImportAgeTest, RepeatedImportOfTheSameIdsIsCountedOnce) {
  v1::SubmitReportsRequest batch = At(kNow - kThreeYears, 'a');
  *batch.add_reports() = At(kNow - kThreeYears + kDay, 'b').reports(0);
  absl::StatusOr<v1::SubmitReportsResponse> first = ingestor_.Submit(batch, ReportOrigin::kImport);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->accepted(), 2u);
  absl::StatusOr<v1::SubmitReportsResponse> again = ingestor_.Submit(batch, ReportOrigin::kImport);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->accepted(), 0u);
  EXPECT_EQ(again->duplicates(), 2u);
  EXPECT_EQ(storage_.ReportCount(), 2);
  EXPECT_EQ(sink_.imported, 2);
  EXPECT_EQ(sink_.imported_duplicates, 2);
}

TEST_F(ImportAgeTest, DeviceReportsAreNotCountedAsImported) {
  absl::StatusOr<v1::SubmitReportsResponse> device = ingestor_.Submit(At(kNow));
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->accepted(), 1u);
  EXPECT_EQ(sink_.stored, 1);
  EXPECT_EQ(sink_.imported, 0);
}

TEST_F(ImportAgeTest, StreamOfAnImportIsJudgedAsAnImport) {
  ReportStream stream(&ingestor_, ReportStream::kMaxListedRejections, ReportOrigin::kImport);
  ASSERT_TRUE(stream.Add(At(kNow - kThreeYears, 'a')).ok());
  ASSERT_TRUE(stream.Add(At(kNow - kThreeYears, 'a')).ok());  // the same id again
  absl::Notification flushed;
  absl::Status status;
  stream.Flush([&](absl::Status s) {
    status = s;
    flushed.Notify();
  });
  flushed.WaitForNotification();
  ASSERT_TRUE(status.ok()) << status;
  absl::StatusOr<v1::SubmitReportsResponse> totals = stream.Totals();
  ASSERT_TRUE(totals.ok()) << totals.status();
  EXPECT_EQ(totals->accepted(), 1u);
  EXPECT_EQ(totals->duplicates(), 1u);
  EXPECT_EQ(totals->rejections_size(), 0);
  EXPECT_EQ(sink_.imported, 1);
}

// Retention drops report rows but keeps counts: an import older than the metric's retention
// would be dropped by the next run, and a repeat of it could not be recognised as a duplicate.
// Imports therefore stop at the retention horizon, and a repeat after a retention run adds nothing.
TEST_F(ImportAgeTest, ImportStopsAtTheMetricsRetentionSoARepeatAfterRetentionCountsNothing) {
  v1::SetRetentionRequest retention;
  retention.set_metric("m");
  retention.set_retention_days(365);
  ASSERT_TRUE(registry_.SetRetention(retention).ok());

  absl::StatusOr<v1::SubmitReportsResponse> too_old =
      ingestor_.Submit(At(kNow - kThreeYears, 'a'), ReportOrigin::kImport);
  ASSERT_TRUE(too_old.ok()) << too_old.status();
  ASSERT_EQ(too_old->rejections_size(), 1);
  EXPECT_TRUE(too_old->rejections(0).permanent());
  EXPECT_THAT(too_old->rejections(0).reason(),
              HasSubstr("reports[0].event_time_seconds: " + std::to_string(kNow - kThreeYears) +
                        " is older than metric \"m\"'s retention of 365 days"));
  EXPECT_EQ(storage_.ReportCount(), 0);

  // 200 days old: inside the retention, imported once.
  const v1::SubmitReportsRequest batch = At(kNow - 200 * kDay, 'b');
  ASSERT_EQ(ingestor_.Submit(batch, ReportOrigin::kImport)->accepted(), 1u);

  // 200 days later the report is 400 days old: retention drops its row and keeps its count, and
  // the same import again is refused rather than counted a second time.
  clock_.Advance(absl::Seconds(200 * kDay));
  absl::StatusOr<RetentionResult> dropped = storage_.ApplyRetention(
      RetentionOptions{.now_seconds = kNow + 200 * kDay, .dedup_window_seconds = 30 * kDay});
  ASSERT_TRUE(dropped.ok()) << dropped.status();
  EXPECT_EQ(dropped->reports_dropped, 1);
  absl::StatusOr<v1::SubmitReportsResponse> again = ingestor_.Submit(batch, ReportOrigin::kImport);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->accepted(), 0u);
  ASSERT_EQ(again->rejections_size(), 1);
  EXPECT_THAT(again->rejections(0).reason(), HasSubstr("retention of 365 days"));
  EXPECT_EQ(sink_.imported, 1);
}

// Device reports are judged by --max_report_age_seconds only: a metric's retention shorter than
// the dedup window does not refuse them (retention never drops inside that window).
TEST_F(ImportAgeTest, RetentionDoesNotRefuseDeviceReports) {
  v1::SetRetentionRequest retention;
  retention.set_metric("m");
  retention.set_retention_days(1);
  ASSERT_TRUE(registry_.SetRetention(retention).ok());
  absl::StatusOr<v1::SubmitReportsResponse> device = ingestor_.Submit(At(kNow - 10 * kDay));
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->accepted(), 1u);
}

class ImportsOffTest : public ImportAgeTest {
 protected:
  ImportsOffTest() : ImportAgeTest(absl::ZeroDuration()) {}
};

TEST_F(ImportsOffTest, AnImportIsRefusedWholeAndStoresNothing) {
  v1::SubmitReportsRequest batch = At(kNow, 'a');  // even a report of now
  absl::StatusOr<v1::SubmitReportsResponse> import = ingestor_.Submit(batch, ReportOrigin::kImport);
  EXPECT_EQ(import.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(import.status().message(), HasSubstr("x-deniable-import:"));
  EXPECT_THAT(import.status().message(), HasSubstr("--max_import_age_seconds"));
  EXPECT_EQ(storage_.ReportCount(), 0);

  ReportStream stream(&ingestor_, ReportStream::kMaxListedRejections, ReportOrigin::kImport);
  absl::Status added = stream.Add(batch);
  EXPECT_EQ(added.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(added.message(), HasSubstr("message 0: x-deniable-import:"));

  absl::StatusOr<v1::SubmitReportsResponse> device = ingestor_.Submit(batch);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ(device->accepted(), 1u);
}

class ShortImportAgeTest : public ImportAgeTest {
 protected:
  ShortImportAgeTest() : ImportAgeTest(absl::Seconds(kDay)) {}
};

TEST_F(ShortImportAgeTest, AnImportNeverReachesLessFarBackThanADevice) {
  absl::StatusOr<v1::SubmitReportsResponse> import =
      ingestor_.Submit(At(kNow - 20 * kDay), ReportOrigin::kImport);
  ASSERT_TRUE(import.ok()) << import.status();
  EXPECT_EQ(import->accepted(), 1u);
}

}  // namespace import_age_test
}  // namespace
}  // namespace deniable::server
