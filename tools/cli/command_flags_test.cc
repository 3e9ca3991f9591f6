#include "tools/cli/command_flags.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::tools {
namespace {
namespace command_flags_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CommandFlagsTest, FlagNamesReadEveryFormAndSkipValuesAndTheCommand) {
  EXPECT_THAT(FlagNames({"series", "--metric=m", "-start=5", "--json", "--end", "7", "--level",
                         "-0.5", "--", "--ignored"}),
              ElementsAre("metric", "start", "json", "end", "level"));
}

// Issue 17: `series --group_by=...` was silently ignored.
TEST(CommandFlagsTest, ACommandRejectsAnotherCommandsFlagNamingIt) {
  const CommandSpec* series = FindCommand("series");
  ASSERT_NE(series, nullptr);
  absl::Status s = CheckCommandFlags(*series, {"metric", "group_by"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("series: --group_by is not a flag of this command"));
  EXPECT_THAT(s.message(), HasSubstr("--bucket"));
  EXPECT_TRUE(CheckCommandFlags(*series, {"metric", "start", "end", "bucket", "json", "target",
                                          "token", "nojson"})
                  .ok());
  EXPECT_FALSE(CheckCommandFlags(*FindCommand("health"), {"metric"}).ok());
  EXPECT_FALSE(CheckCommandFlags(*FindCommand("plan"), {"group_by"}).ok());
  EXPECT_TRUE(CheckCommandFlags(*FindCommand("prevalence"), {"group_by"}).ok());
  EXPECT_EQ(FindCommand("nope"), nullptr);
}

TEST(CommandFlagsTest, ExitCodesTellUsageNotFoundUnavailableAndAccessApart) {
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kOk), 0);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kInternal), 1);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kInvalidArgument), 2);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kNotFound), 3);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kUnavailable), 4);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kDeadlineExceeded), 4);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kUnauthenticated), 5);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kPermissionDenied), 5);
  EXPECT_EQ(ExitCodeFor(absl::StatusCode::kFailedPrecondition), 6);
}

// Issue 41: --interval_kind and --anytime_tuned_reports belong to prevalence and series only.
TEST(CommandFlagsTest, AnytimeFlagsBelongToPrevalenceAndSeries) {
  for (const char* name : {"prevalence", "series"}) {
    const CommandSpec* command = FindCommand(name);
    ASSERT_NE(command, nullptr);
    EXPECT_TRUE(
        CheckCommandFlags(*command, {"metric", "interval_kind", "anytime_tuned_reports"}).ok());
  }
  const CommandSpec* difference = FindCommand("difference");
  ASSERT_NE(difference, nullptr);
  EXPECT_FALSE(CheckCommandFlags(*difference, {"metric", "interval_kind"}).ok());
}

}  // namespace command_flags_test
}  // namespace
}  // namespace deniable::tools
