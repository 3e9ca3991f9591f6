#include "tools/cli/replay_progress.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace deniable::tools {
namespace {
namespace replay_progress_test {

using ::testing::HasSubstr;

TEST(FormatProgressTest, ShowsDoneTotalShareRateAndEta) {
  EXPECT_EQ(FormatProgress(1200, 2700, absl::Seconds(4)),
            "replay: 1200/2700 respondents (44.4 %), 300.0/s, ETA 5s");
  EXPECT_EQ(FormatProgress(100, 10000, absl::Seconds(10)),
            "replay: 100/10000 respondents (1.0 %), 10.0/s, ETA 16m30s");
  EXPECT_EQ(FormatProgress(1, 10000, absl::Seconds(1)),
            "replay: 1/10000 respondents (0.0 %), 1.0/s, ETA 2h46m");
}

TEST(FormatProgressTest, HasNoRateBeforeTheFirstRespondent) {
  EXPECT_EQ(FormatProgress(0, 50, absl::ZeroDuration()),
            "replay: 0/50 respondents (0.0 %), -, ETA -");
}

// The text written to a temporary FILE*.
std::string Written(std::FILE* f) {
  std::rewind(f);
  std::string out;
  for (int c; (c = std::fgetc(f)) != EOF;) out.push_back(static_cast<char>(c));
  return out;
}

TEST(ProgressLineTest, PrintsNothingWhenDisabled) {
  std::FILE* f = std::tmpfile();
  FakeClock clock(absl::FromUnixSeconds(1000));
  ProgressLine line(f, /*enabled=*/false, &clock);
  line.Update(0, 2);
  line.Update(2, 2);
  line.Finish();
  EXPECT_EQ(Written(f), "");
  std::fclose(f);
}

TEST(ProgressLineTest, RedrawsAtMostOncePerIntervalAndAlwaysAtTheEnd) {
  std::FILE* f = std::tmpfile();
  FakeClock clock(absl::FromUnixSeconds(1000));
  ProgressLine line(f, /*enabled=*/true, &clock, absl::Seconds(1));
  line.Update(0, 4);  // drawn: the first
  clock.Advance(absl::Milliseconds(500));
  line.Update(1, 4);  // not drawn: within the interval
  clock.Advance(absl::Milliseconds(600));
  line.Update(2, 4);  // drawn
  line.Update(4, 4);  // drawn: the end
  line.Finish();
  const std::string out = Written(f);
  EXPECT_EQ(std::count(out.begin(), out.end(), '\r'), 3) << out;
  EXPECT_THAT(out, HasSubstr("\rreplay: 2/4 respondents (50.0 %), 1.8/s, ETA 2s\033[K"));
  EXPECT_THAT(out, HasSubstr("4/4 respondents (100.0 %)"));
  EXPECT_EQ(out.back(), '\n');
  std::fclose(f);
}

}  // namespace replay_progress_test
}  // namespace
}  // namespace deniable::tools
