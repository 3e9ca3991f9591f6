#include "tools/cli/survey_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deniable/client/transport.h"
#include "deniable/convert/design_convert.h"

namespace deniable::tools {
namespace {
namespace survey_replay_test {

using ::testing::HasSubstr;

// A CSV in the test's temporary directory, removed at the end of the test.
class SurveyFile {
 public:
  explicit SurveyFile(const std::string& contents)
      : path_(::testing::TempDir() + "/survey_" + std::to_string(::getpid()) + ".csv") {
    std::ofstream(path_) << contents;
  }
  ~SurveyFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

constexpr char kWithBlanks[] = "region,vote\nN,Y\nS,\nN,N\nS,  \nN,Y\n";

// Issue 16: blank answers were silently counted as "no".
TEST(ReadSurveyTest, RefusesABlankAnswerByDefaultNamingTheRecordAndTheFlag) {
  SurveyFile file(kWithBlanks);
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey({file.path(), "vote", "Y", {}});
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr("record 3"));
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr("--blank"));
}

TEST(ReadSurveyTest, CountsBlankAnswersAsNoWhenTold) {
  SurveyFile file(kWithBlanks);
  SurveySpec spec{file.path(), "vote", "Y", {}, BlankAnswers::kNo};
  int64_t skipped = -1;
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec, &skipped);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 5u);
  EXPECT_FALSE((*rows)[1].answer);
  EXPECT_FALSE((*rows)[3].answer);
  EXPECT_EQ(skipped, 0);
}

TEST(ReadSurveyTest, LeavesBlankAnswersOutWhenTold) {
  SurveyFile file(kWithBlanks);
  SurveySpec spec{file.path(), "vote", "Y", {"region"}, BlankAnswers::kSkip};
  int64_t skipped = 0;
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec, &skipped);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ(skipped, 2);
  for (const SurveyRow& row : *rows) EXPECT_EQ(row.labels.at("region"), "N");
}

TEST(ReadSurveyTest, AFileWithoutBlanksReadsTheSameUnderEveryChoice) {
  SurveyFile file("vote\nY\nN\nY\n");
  for (BlankAnswers blank : {BlankAnswers::kRefuse, BlankAnswers::kNo, BlankAnswers::kSkip}) {
    absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey({file.path(), "vote", "Y", {}, blank});
    ASSERT_TRUE(rows.ok()) << rows.status();
    ASSERT_EQ(rows->size(), 3u);
    EXPECT_TRUE((*rows)[0].answer);
    EXPECT_FALSE((*rows)[1].answer);
  }
}

// A collector for metric "m" (two coins) that stores every report except those labelled
// region = "X", which it rejects for good, one by one, as a current collector does.
// The design every collector of these tests serves: two-coin, hourly precision.
v1::GetDesignResponse TwoCoinDesign(const std::string& metric) {
  v1::GetDesignResponse response;
  response.set_metric(metric);
  DesignToProto(Design::TwoCoin(), 1, response.mutable_design());
  response.set_time_precision_seconds(3600);
  return response;
}

class RegionRejectingCollector : public client::ReportTransport {
 public:
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    return TwoCoinDesign(metric);
  }
  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    v1::SubmitReportsResponse response;
    for (int i = 0; i < request.reports_size(); ++i) {
      auto it = request.reports(i).labels().find("region");
      if (it != request.reports(i).labels().end() && it->second == "X") {
        v1::ReportRejection* r = response.add_rejections();
        r->set_index(static_cast<uint32_t>(i));
        r->set_code(static_cast<int>(absl::StatusCode::kInvalidArgument));
        r->set_reason(absl::StrCat("reports[", i, "].labels: region \"X\" is not allowed"));
        r->set_permanent(true);
      } else {
        response.set_accepted(response.accepted() + 1);
      }
    }
    ++stored_batches;
    return response;
  }
  int stored_batches = 0;
};

// Issue 11: replay counted a rejected report as a device and printed nothing about it.
TEST(ReplaySurveyTest, ReportsRejectedForGoodAreListedWithTheirRecordAndLeftOutOfTheCount) {
  SurveyFile file("region,vote\nN,Y\nX,Y\nS,N\nX,N\nN,N\n");
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey({file.path(), "vote", "Y", {"region"}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto collector = std::make_shared<RegionRejectingCollector>();
  client::ReporterOptions options;
  options.one_report_per_period = false;
  absl::BitGen bits;
  absl::BitGenRef gen(bits);
  absl::StatusOr<ReplayResult> result = ReplaySurvey(*rows, "m", collector, options, &gen);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->devices, 3);
  EXPECT_EQ(result->true_yes, 1);  // record 2 (N, Y); record 3 (X, Y) was rejected
  ASSERT_EQ(result->rejections.size(), 2u);
  EXPECT_EQ(result->rejections[0].record, 3);
  EXPECT_EQ(result->rejections[1].record, 5);
  EXPECT_THAT(result->rejections[0].reason, HasSubstr("region \"X\" is not allowed"));
  EXPECT_EQ(collector->stored_batches, 5);  // the replay went on after each rejection
}

// A collector whose SubmitReports holds each call until `want` calls are in flight at once, or
// every one of `total` reports has arrived (at most 2 s), so that max_in_flight shows how many
// devices reported at the same time.
// Thread-safe; every report's id is kept.
class BarrierCollector : public client::ReportTransport {
 public:
  BarrierCollector(int want, int total) : want_(want), total_(total) {}
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    return TwoCoinDesign(metric);
  }
  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    absl::MutexLock lock(&mu_);
    ++in_flight_;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    mu_.AwaitWithTimeout(absl::Condition(this, &BarrierCollector::Enough), absl::Seconds(2));
    v1::SubmitReportsResponse response;
    for (const v1::Report& report : request.reports()) {
      ids_.push_back(report.report_id());
      response.set_accepted(response.accepted() + 1);
    }
    --in_flight_;
    return response;
  }
  int max_in_flight() {
    absl::MutexLock lock(&mu_);
    return max_in_flight_;
  }
  std::vector<std::string> ids() {
    absl::MutexLock lock(&mu_);
    return ids_;
  }

 private:
  bool Enough() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return in_flight_ >= want_ || static_cast<int>(ids_.size()) + in_flight_ >= total_;
  }
  const int want_;
  const int total_;
  mutable absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  int max_in_flight_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> ids_ ABSL_GUARDED_BY(mu_);
};

// Devices in flight: 4 devices report at once (the collector sees 4 calls together; one after
// another it would see 1), each row once, and the result is the rows' own.
TEST(ReplaySurveyTest, DevicesInFlightReportAtOnceEachRowOnce) {
  std::string csv = "vote\n";
  for (int i = 0; i < 12; ++i) csv += (i % 3 == 0) ? "Y\n" : "N\n";
  SurveyFile file(csv);
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey({file.path(), "vote", "Y", {}});
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto collector = std::make_shared<BarrierCollector>(4, 12);
  client::ReporterOptions options;
  options.one_report_per_period = false;
  std::vector<int64_t> progress;
  absl::StatusOr<ReplayResult> result = ReplaySurvey(
      *rows, "m", collector, options, nullptr, nullptr,
      [&progress](int64_t done, int64_t) { progress.push_back(done); }, nullptr, 4);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(collector->max_in_flight(), 4);
  EXPECT_EQ(result->devices, 12);
  EXPECT_EQ(result->true_yes, 4);
  std::vector<std::string> ids = collector->ids();
  EXPECT_EQ(ids.size(), 12u);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());  // 12 devices, 12 distinct reports
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), 12);
}

}  // namespace survey_replay_test
}  // namespace
}  // namespace deniable::tools
