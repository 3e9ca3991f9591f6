#include "tools/cli/survey_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace deniable::tools {
namespace {

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

}  // namespace
}  // namespace deniable::tools
