#include "tools/cli/replay_times.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "deniable/client/transport.h"
#include "deniable/convert/design_convert.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {
namespace {
namespace replay_times_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'795'435'200;  // 2026-11-23 12:00 UTC

TEST(ParseSpreadTest, ReadsDaysHoursMinutesAndSeconds) {
  EXPECT_EQ(*ParseSpread("7d"), absl::Hours(24 * 7));
  EXPECT_EQ(*ParseSpread("36h"), absl::Hours(36));
  EXPECT_EQ(*ParseSpread("90m"), absl::Minutes(90));
  EXPECT_EQ(*ParseSpread("600s"), absl::Seconds(600));
}

TEST(ParseSpreadTest, RefusesZeroNegativeAndMissingUnitsNamingTheFlag) {
  for (const char* bad : {"", "7", "0d", "-1d", "7w", "d", "1.5d"}) {
    absl::StatusOr<absl::Duration> spread = ParseSpread(bad);
    ASSERT_FALSE(spread.ok()) << bad;
    EXPECT_EQ(spread.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(spread.status().message(), HasSubstr("spread"));
  }
}

TEST(ParseEventTimeTest, ReadsUnixSecondsDatesAndZonedTimes) {
  EXPECT_EQ(*ParseEventTime("1795435200", "unix"), kNow);
  EXPECT_EQ(*ParseEventTime("2026-11-23", "%Y-%m-%d"), kNow - 12 * 3600);  // UTC midnight
  EXPECT_EQ(*ParseEventTime("2026-11-23T14:00:00+02:00", "%Y-%m-%dT%H:%M:%S%Ez"), kNow);
}

TEST(ParseEventTimeTest, RefusesAMismatchNamingTheValueAndTheFormat) {
  absl::StatusOr<int64_t> t = ParseEventTime("23/11/2026", "%Y-%m-%d");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("\"23/11/2026\""));
  EXPECT_THAT(t.status().message(), HasSubstr("--time_format=\"%Y-%m-%d\""));
  EXPECT_FALSE(ParseEventTime("12x", "unix").ok());
  EXPECT_FALSE(ParseEventTime("1969-12-31", "%Y-%m-%d").ok());
}

TEST(SpreadEventTimesTest, SpacesTimesEvenlyOverTheWindowBeforeNow) {
  std::vector<int64_t> times =
      SpreadEventTimes(4, absl::FromUnixSeconds(kNow), absl::Hours(96), kReplaySpreadSeed);
  std::sort(times.begin(), times.end());
  // Slots of 24 h, each at its middle.
  EXPECT_THAT(times,
              ElementsAre(kNow - 84 * 3600, kNow - 60 * 3600, kNow - 36 * 3600, kNow - 12 * 3600));
}

TEST(SpreadEventTimesTest, ShufflesReproduciblyWithTheSeed) {
  const absl::Time now = absl::FromUnixSeconds(kNow);
  const std::vector<int64_t> a = SpreadEventTimes(1000, now, absl::Hours(24 * 7), 1);
  EXPECT_EQ(a, SpreadEventTimes(1000, now, absl::Hours(24 * 7), 1));
  EXPECT_NE(a, SpreadEventTimes(1000, now, absl::Hours(24 * 7), 2));
  EXPECT_FALSE(std::is_sorted(a.begin(), a.end())) << "row order would become a time trend";
  for (int64_t t : a) {
    EXPECT_GE(t, kNow - 7 * 86400);
    EXPECT_LT(t, kNow);
  }
}

// Records the event times of the reports it stores (metric "m", two coins, hourly precision).
class RecordingCollector : public client::ReportTransport {
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
    for (const v1::Report& r : request.reports()) times.push_back(r.event_time_seconds());
    response.set_accepted(static_cast<uint32_t>(request.reports_size()));
    return response;
  }
  std::vector<int64_t> times;
};

TEST(ReplaySurveyTest, EachRowIsAnsweredAtItsOwnTimeRoundedToThePrecisionWithProgress) {
  const std::string path =
      ::testing::TempDir() + "/survey_times_" + std::to_string(::getpid()) + ".csv";
  std::ofstream(path) << "day,vote\n2026-11-20,Y\n2026-11-21T10:30:00Z,N\n1795435200,Y\n";
  SurveySpec spec{path, "vote", "Y", {}};
  spec.time_column = "day";
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec);
  std::remove(path.c_str());
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1].time_value, "2026-11-21T10:30:00Z");
  (*rows)[0].event_time_seconds = *ParseEventTime((*rows)[0].time_value, "%Y-%m-%d");
  (*rows)[1].event_time_seconds = *ParseEventTime((*rows)[1].time_value, "%Y-%m-%dT%H:%M:%SZ");
  (*rows)[2].event_time_seconds = *ParseEventTime((*rows)[2].time_value, "unix") + 1799;

  auto collector = std::make_shared<RecordingCollector>();
  std::vector<std::pair<int64_t, int64_t>> progress;
  absl::StatusOr<ReplayResult> result =
      ReplaySurvey(*rows, "m", collector, {}, nullptr, nullptr,
                   [&](int64_t done, int64_t total) { progress.emplace_back(done, total); });
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->devices, 3);
  EXPECT_THAT(collector->times,
              ElementsAre(kNow - 3 * 86400 - 12 * 3600, kNow - 2 * 86400 - 2 * 3600, kNow));
  EXPECT_THAT(progress, ElementsAre(std::pair<int64_t, int64_t>{0, 3}, std::pair{1, 3},
                                    std::pair{2, 3}, std::pair{3, 3}));
}

TEST(ReadSurveyTest, RefusesATimeColumnThatIsNotInTheHeader) {
  const std::string path =
      ::testing::TempDir() + "/survey_notime_" + std::to_string(::getpid()) + ".csv";
  std::ofstream(path) << "vote\nY\n";
  SurveySpec spec{path, "vote", "Y", {}};
  spec.time_column = "when";
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec);
  std::remove(path.c_str());
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("time_column: \"when\""));
}

}  // namespace replay_times_test
}  // namespace
}  // namespace deniable::tools
