#include "tools/cli/report_arrivals.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace deniable::tools {
namespace {
namespace report_arrivals_test {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

v1::ServerStats Stats(int64_t start, std::vector<std::pair<std::string, uint64_t>> accepted,
                      uint64_t rejected = 0) {
  v1::ServerStats s;
  s.set_start_time_seconds(start);
  for (const auto& [name, n] : accepted) {
    v1::MetricReportCounts* m = s.add_per_metric();
    m->set_metric(name);
    m->set_reports_accepted(n);
    m->set_reports_rejected(rejected);
  }
  return s;
}

TEST(ArrivalTrackerTest, TheFirstPollIsTheBaseline) {
  ArrivalTracker tracker({});
  EXPECT_THAT(tracker.Update(Stats(100, {{"a", 5}, {"b", 0}})), IsEmpty());
  EXPECT_THAT(tracker.Update(Stats(100, {{"a", 5}, {"b", 0}})), IsEmpty());
}

TEST(ArrivalTrackerTest, ReportsGrowthAndTheFirstArrival) {
  ArrivalTracker tracker({});
  tracker.Update(Stats(100, {{"a", 5}, {"b", 0}}));
  const std::vector<Arrival> arrivals = tracker.Update(Stats(100, {{"a", 7}, {"b", 3}}));
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(arrivals[0].metric, "a");
  EXPECT_EQ(arrivals[0].new_reports, 2u);
  EXPECT_EQ(arrivals[0].total, 7u);
  EXPECT_FALSE(arrivals[0].first);
  EXPECT_EQ(arrivals[1].metric, "b");
  EXPECT_EQ(arrivals[1].new_reports, 3u);
  EXPECT_TRUE(arrivals[1].first);
  // b's next reports are not its first.
  EXPECT_THAT(tracker.Update(Stats(100, {{"a", 7}, {"b", 4}})),
              ElementsAre(AllOf(Field(&Arrival::metric, "b"), Field(&Arrival::first, false),
                                Field(&Arrival::new_reports, 1u))));
}

TEST(ArrivalTrackerTest, AMetricThatAppearsLaterArrivesFirst) {
  ArrivalTracker tracker({});
  tracker.Update(Stats(100, {}));
  EXPECT_THAT(tracker.Update(Stats(100, {{"new", 1}})),
              ElementsAre(AllOf(Field(&Arrival::metric, "new"), Field(&Arrival::first, true))));
}

TEST(ArrivalTrackerTest, WatchesOnlyTheNamedMetrics) {
  ArrivalTracker tracker({"b"});
  tracker.Update(Stats(100, {{"a", 0}, {"b", 0}}));
  EXPECT_THAT(tracker.Update(Stats(100, {{"a", 4}, {"b", 1}})),
              ElementsAre(Field(&Arrival::metric, "b")));
}

TEST(ArrivalTrackerTest, CountsRejectedReports) {
  ArrivalTracker tracker({});
  tracker.Update(Stats(100, {{"a", 2}}, 0));
  EXPECT_THAT(tracker.Update(Stats(100, {{"a", 2}}, 3)),
              ElementsAre(AllOf(Field(&Arrival::new_reports, 0u), Field(&Arrival::total, 2u),
                                Field(&Arrival::new_rejected, 3u))));
}

TEST(ArrivalTrackerTest, AfterARestartEveryCountIsNew) {
  ArrivalTracker tracker({});
  tracker.Update(Stats(100, {{"a", 9}}));
  EXPECT_THAT(tracker.Update(Stats(200, {{"a", 2}})),
              ElementsAre(AllOf(Field(&Arrival::new_reports, 2u), Field(&Arrival::total, 2u),
                                Field(&Arrival::first, true))));
}

TEST(FormatArrivalTest, TextSaysCountsAndTheFirstArrival) {
  const absl::Time now = absl::FromUnixSeconds(1764198062);  // 2025-11-26T23:01:02Z
  EXPECT_EQ(FormatArrival(Arrival{"smoking", 3, 3, 0, true}, now, false),
            "2025-11-26T23:01:02Z  smoking  +3 reports (total 3)  first report of smoking arrived");
  EXPECT_EQ(FormatArrival(Arrival{"smoking", 1, 4, 2, false}, now, false),
            "2025-11-26T23:01:02Z  smoking  +1 report (total 4), 2 rejected");
}

TEST(FormatArrivalTest, JsonIsOneObjectWithoutAnswers) {
  const std::string line =
      FormatArrival(Arrival{"smoking", 3, 3, 0, true}, absl::FromUnixSeconds(1764198062), true);
  EXPECT_EQ(line, R"({"time":"2025-11-26T23:01:02Z","metric":"smoking","newReports":3,)"
                  R"("totalReports":3,"newRejected":0,"first":true})");
  EXPECT_THAT(line, Not(HasSubstr("yes")));
}

}  // namespace report_arrivals_test
}  // namespace
}  // namespace deniable::tools
