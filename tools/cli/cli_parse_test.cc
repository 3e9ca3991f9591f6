#include "tools/cli/cli_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace deniable::tools {
namespace {

using ::testing::HasSubstr;

TEST(ParseReportingPeriodTest, ReadsUnits) {
  EXPECT_EQ(*ParseReportingPeriod(""), 0u);
  EXPECT_EQ(*ParseReportingPeriod("3600"), 3600u);
  EXPECT_EQ(*ParseReportingPeriod("3600s"), 3600u);
  EXPECT_EQ(*ParseReportingPeriod("90m"), 5400u);
  EXPECT_EQ(*ParseReportingPeriod("12h"), 43200u);
  EXPECT_EQ(*ParseReportingPeriod("1d"), 86400u);
  EXPECT_EQ(*ParseReportingPeriod("2w"), 14u * 86400u);
}

TEST(ParseReportingPeriodTest, RefusesMalformedValuesNamingTheFlag) {
  for (const char* bad : {"d", "0d", "-1d", "1.5d", "1y", "+3h", "99999999999d", "1 d"}) {
    absl::StatusOr<uint32_t> parsed = ParseReportingPeriod(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("--reporting_period")) << bad;
  }
}

TEST(ParseRandomizationTest, ReadsBothPoliciesAndRefusesOthers) {
  EXPECT_EQ(*ParseRandomization(""), v1::RANDOMIZATION_UNSPECIFIED);
  EXPECT_EQ(*ParseRandomization("memoized"), v1::MEMOIZED);
  EXPECT_EQ(*ParseRandomization("fresh"), v1::FRESH_PER_PERIOD);
  EXPECT_THAT(std::string(ParseRandomization("FRESH").status().message()),
              HasSubstr("--randomization"));
}

// Issue 16: a level of 99.9999 % or more was printed as "100 %".
TEST(LevelLabelTest, NeverRoundsALevelBelowOneToOneHundred) {
  EXPECT_EQ(LevelLabel(0.95), "95");
  EXPECT_EQ(LevelLabel(0.999), "99.9");
  EXPECT_EQ(LevelLabel(0.9999999), "99.99999");
  EXPECT_EQ(LevelLabel(0.99999999), "99.999999");
  EXPECT_EQ(LevelLabel(0.9999999999999999), "99.99999999999999");
  EXPECT_EQ(LevelLabel(1.0), "100");
}

}  // namespace
}  // namespace deniable::tools
