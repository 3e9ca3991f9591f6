#include "tools/cli/survey_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
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
class RegionRejectingCollector : public client::ReportTransport {
 public:
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    v1::GetDesignResponse response;
    response.set_metric(metric);
    DesignToProto(Design::TwoCoin(), 1, response.mutable_design());
    response.set_time_precision_seconds(3600);
    return response;
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

}  // namespace survey_replay_test
}  // namespace
}  // namespace deniable::tools
