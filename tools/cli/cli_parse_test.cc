#include "tools/cli/cli_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace deniable::tools {
namespace {
namespace cli_parse_test {

using ::testing::AllOf;
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

// Issue 29: time flags in the forms people write, with "now" passed in.
const absl::Time kNow = absl::FromUnixSeconds(1793534400);  // 2026-11-01T12:00:00Z
constexpr int64_t kDay = 86400;

int64_t TimeOf(absl::string_view text) {
  absl::StatusOr<int64_t> parsed = ParseTimeFlag("--start", text, kNow);
  EXPECT_TRUE(parsed.ok()) << text << ": " << parsed.status();
  return parsed.value_or(-1);
}

TEST(ParseTimeFlagTest, ReadsDatesAsMidnightUtc) {
  EXPECT_EQ(TimeOf("2026-11-01"), 1793491200);
  EXPECT_EQ(TimeOf("1970-01-01"), 0);
}

TEST(ParseTimeFlagTest, ReadsRfc3339DateTimesWithTheirOffset) {
  EXPECT_EQ(TimeOf("2026-11-01T12:00:00Z"), 1793534400);
  EXPECT_EQ(TimeOf("2026-11-01t12:00:00z"), 1793534400);
  EXPECT_EQ(TimeOf("2026-11-01T14:00:00+02:00"), 1793534400);
  EXPECT_EQ(TimeOf("2026-11-01T07:30:00-04:30"), 1793534400);
  EXPECT_EQ(TimeOf("2026-11-01T12:00:00.999Z"), 1793534400);  // rounded down
}

TEST(ParseTimeFlagTest, ReadsTimesBeforeNow) {
  EXPECT_EQ(TimeOf("now"), 1793534400);
  EXPECT_EQ(TimeOf("-7d"), 1793534400 - 7 * kDay);
  EXPECT_EQ(TimeOf("-2w"), 1793534400 - 14 * kDay);
  EXPECT_EQ(TimeOf("-24h"), 1793534400 - kDay);
  EXPECT_EQ(TimeOf("-90m"), 1793534400 - 5400);
  EXPECT_EQ(TimeOf("-1h30m"), 1793534400 - 5400);
  EXPECT_EQ(TimeOf("-300s"), 1793534400 - 300);
}

TEST(ParseTimeFlagTest, ReadsUnixSeconds) {
  EXPECT_EQ(TimeOf("1793491200"), 1793491200);
  EXPECT_EQ(TimeOf("0"), 0);
}

TEST(ParseTimeFlagTest, RefusesOtherTextNamingTheFlagAndTheForms) {
  for (const char* bad : {"",
                          "yesterday",
                          "7d",
                          "+7d",
                          "-7",
                          "-0d",
                          "-0s",
                          "-d",
                          "-1.5d",
                          "-1y",
                          "-inf",
                          "2026-11-1",
                          "2026-13-01",
                          "2026-11-01T12:00:00",
                          "2026-11-01 12:00:00Z",
                          "11/01/2026",
                          "1e9",
                          "-1",
                          "99999999999999999999",
                          " now"}) {
    absl::StatusOr<int64_t> parsed = ParseTimeFlag("--end2", bad, kNow);
    ASSERT_FALSE(parsed.ok()) << bad << " gave " << *parsed;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(parsed.status().message()),
                AllOf(HasSubstr("--end2"), HasSubstr("2026-11-01T12:00:00Z"), HasSubstr("-7d"),
                      HasSubstr("Unix seconds")))
        << bad;
  }
}

TEST(ParseTimeFlagTest, RefusesTimesBefore1970) {
  absl::StatusOr<int64_t> parsed = ParseTimeFlag("--start", "1969-12-31", kNow);
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("before 1970"));
}

TEST(TimeWindowTest, PrevalenceDefaultsToEveryReport) {
  absl::StatusOr<TimeWindow> w = PrevalenceWindow({}, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start_seconds, 0);
  EXPECT_EQ(w->end_seconds, 0);
  w = PrevalenceWindow({.start = "-7d"}, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start_seconds, 1793534400 - 7 * kDay);
  EXPECT_EQ(w->end_seconds, 0);
  EXPECT_THAT(std::string(PrevalenceWindow({.end = "tomorrow"}, kNow).status().message()),
              HasSubstr("--end"));
}

TEST(TimeWindowTest, SeriesDefaultsToTheLast30Days) {
  absl::StatusOr<TimeWindow> w = SeriesWindow({}, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->end_seconds, 1793534400);
  EXPECT_EQ(w->start_seconds, 1793534400 - 30 * kDay);
  w = SeriesWindow({.end = "2026-10-01"}, kNow);  // 30 days before a given end
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start_seconds, w->end_seconds - 30 * kDay);
  w = SeriesWindow({.start = "-7d"}, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->start_seconds, 1793534400 - 7 * kDay);
  EXPECT_EQ(w->end_seconds, 1793534400);
}

TEST(TimeWindowTest, SeriesRefusesZeroNamingTheFlag) {
  EXPECT_THAT(std::string(SeriesWindow({.start = "0"}, kNow).status().message()),
              HasSubstr("--start: a series needs a start"));
  EXPECT_THAT(std::string(SeriesWindow({.end = "0"}, kNow).status().message()),
              HasSubstr("--end: a series needs an end"));
}

TEST(TimeWindowTest, DifferenceOfOneMetricComparesTheLast30DaysWithThe30DaysBefore) {
  absl::StatusOr<std::pair<TimeWindow, TimeWindow>> w = DifferenceWindows({}, true, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->second.end_seconds, 1793534400);
  EXPECT_EQ(w->second.start_seconds, 1793534400 - 30 * kDay);
  EXPECT_EQ(w->first.end_seconds, 1793534400 - 30 * kDay);
  EXPECT_EQ(w->first.start_seconds, 1793534400 - 60 * kDay);
}

TEST(TimeWindowTest, DifferenceFirstWindowDefaultsToTheSecondsLengthBeforeIt) {
  absl::StatusOr<std::pair<TimeWindow, TimeWindow>> w =
      DifferenceWindows({.start2 = "-7d"}, true, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->second.start_seconds, 1793534400 - 7 * kDay);
  EXPECT_EQ(w->second.end_seconds, 1793534400);
  EXPECT_EQ(w->first.end_seconds, 1793534400 - 7 * kDay);
  EXPECT_EQ(w->first.start_seconds, 1793534400 - 14 * kDay);
  // Every flag given: taken as written ("0" keeps its meaning: the beginning, no end).
  w = DifferenceWindows({.start = "0", .end = "2026-10-01", .start2 = "2026-10-01", .end2 = "0"},
                        true, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->first.start_seconds, 0);
  EXPECT_EQ(w->first.end_seconds, 1790812800);
  EXPECT_EQ(w->second.start_seconds, 1790812800);
  EXPECT_EQ(w->second.end_seconds, 0);
}

TEST(TimeWindowTest, DifferenceOfTwoMetricsDefaultsToTheSameLast30Days) {
  absl::StatusOr<std::pair<TimeWindow, TimeWindow>> w = DifferenceWindows({}, false, kNow);
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->first.start_seconds, 1793534400 - 30 * kDay);
  EXPECT_EQ(w->first.end_seconds, 1793534400);
  EXPECT_EQ(w->second.start_seconds, w->first.start_seconds);
  EXPECT_EQ(w->second.end_seconds, w->first.end_seconds);
  EXPECT_THAT(std::string(DifferenceWindows({.start2 = "x"}, false, kNow).status().message()),
              HasSubstr("--start2"));
}

// Issue 16: a level of 99.9999 % or more was printed as "100 %".
// `top --window=W` (issue 40): the whole window holding --start (default now), which the collector
// counts by devices.
TEST(TimeWindowTest, CalendarWindowHoldsTheStart) {
  // 2026-12-02 (a Wednesday) 06:30 UTC.
  const int64_t day = 1796169600;  // 2026-12-02 00:00 UTC
  const absl::Time at = absl::FromUnixSeconds(day + 6 * 3600 + 1800);
  absl::StatusOr<TimeWindow> w = CalendarWindowRange("day", {}, at);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->start_seconds, day);
  EXPECT_EQ(w->end_seconds, day + 86400);
  w = CalendarWindowRange("week", {}, at);
  EXPECT_EQ(w->start_seconds, day - 2 * 86400);  // Monday 2026-11-30
  EXPECT_EQ(w->end_seconds, day + 5 * 86400);
  w = CalendarWindowRange("month", {.start = "2026-11-15"}, at);
  EXPECT_EQ(w->start_seconds, 1793491200);  // 2026-11-01
  EXPECT_EQ(w->end_seconds, day - 86400);   // 2026-12-01
  EXPECT_THAT(std::string(CalendarWindowRange("hour", {}, at).status().message()),
              HasSubstr("--window"));
  EXPECT_THAT(std::string(CalendarWindowRange("day", {.end = "now"}, at).status().message()),
              HasSubstr("--end"));
  EXPECT_THAT(std::string(CalendarWindowRange("day", {.start = "0"}, at).status().message()),
              HasSubstr("--start"));
}

TEST(LevelLabelTest, NeverRoundsALevelBelowOneToOneHundred) {
  EXPECT_EQ(LevelLabel(0.95), "95");
  EXPECT_EQ(LevelLabel(0.999), "99.9");
  EXPECT_EQ(LevelLabel(0.9999999), "99.99999");
  EXPECT_EQ(LevelLabel(0.99999999), "99.999999");
  EXPECT_EQ(LevelLabel(0.9999999999999999), "99.99999999999999");
  EXPECT_EQ(LevelLabel(1.0), "100");
}

TEST(ParseIntervalKindTest, FixedOrAnytime) {
  EXPECT_EQ(*ParseIntervalKind(""), v1::INTERVAL_KIND_UNSPECIFIED);
  EXPECT_EQ(*ParseIntervalKind("fixed"), v1::FIXED_N);
  EXPECT_EQ(*ParseIntervalKind("anytime"), v1::ANYTIME);
  absl::StatusOr<v1::IntervalKind> bad = ParseIntervalKind("always");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("--interval_kind: must be fixed or anytime"));
}

}  // namespace cli_parse_test
}  // namespace
}  // namespace deniable::tools
