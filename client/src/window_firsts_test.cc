// Window flags (reporter.h, "Window flags"): each report says whether it is the device's first of
// its metric in its UTC day, ISO week and calendar month, from the store's last report time, also
// across a restart; a metric can turn them off; a reporting_once metric is reported once ever.
#include <string>
#include <vector>

#include "client/src/testing/fake_transport.h"
#include "client/src/testing/reporter_file_fixture.h"
#include "deniable/client/reporter.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace window_firsts_test {

constexpr int64_t kMonday = 1793577600;  // 2026-11-02 00:00 UTC, a Monday

class WindowFirstsTest : public testing::ReporterFileFixture {
 protected:
  WindowFirstsTest() : ReporterFileFixture(absl::FromUnixSeconds(kMonday + 3600), 5, "windows") {}
  // "dwm" flags of every report sent, in order ("-" for a report without flags).
  std::vector<std::string> SentFlags() const {
    std::vector<std::string> flags;
    for (const auto& s : transport_->submits) {
      for (const auto& r : s.reports()) {
        if (!r.has_window_firsts()) {
          flags.push_back("-");
          continue;
        }
        flags.push_back(std::string(r.window_firsts().day() ? "d" : ".") +
                        (r.window_firsts().week() ? "w" : ".") +
                        (r.window_firsts().month() ? "m" : "."));
      }
    }
    return flags;
  }
};

TEST_F(WindowFirstsTest, FlagsFollowTheCalendarAcrossARestart) {
  {
    auto reporter = Make(OpenFile());
    ASSERT_TRUE(reporter->Report("m", true).ok());  // Mon 2 Nov
    clock_.Advance(absl::Hours(24));
    ASSERT_TRUE(reporter->Report("m", true).ok());  // Tue 3 Nov
    ASSERT_TRUE(reporter->Flush().ok());
  }
  clock_.Advance(absl::Hours(24 * 6));  // Mon 9 Nov: a new week, same month
  {
    auto reporter = Make(OpenFile());
    ASSERT_TRUE(reporter->Report("m", true).ok());
    clock_.Advance(absl::Hours(24 * 21));  // Mon 30 Nov: a new week
    ASSERT_TRUE(reporter->Report("m", true).ok());
    clock_.Advance(absl::Hours(24));  // Tue 1 Dec: new day and month, same week
    ASSERT_TRUE(reporter->Report("m", true).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  EXPECT_EQ(SentFlags(), (std::vector<std::string>{"dwm", "d..", "dw.", "dw.", "d.m"}));
}

TEST_F(WindowFirstsTest, AMetricCanTurnTheFlagsOff) {
  transport_->window_firsts_off = true;
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(SentFlags(), (std::vector<std::string>{"-"}));
}

TEST_F(WindowFirstsTest, AReportingOnceMetricSendsOneReportEver) {
  transport_->reporting_once = true;
  {
    auto reporter = Make(OpenFile());
    ASSERT_TRUE(reporter->Report("m", true).ok());
    clock_.Advance(absl::Hours(24 * 3));
    ASSERT_TRUE(reporter->Report("m", false).ok());
    ASSERT_TRUE(reporter->Flush().ok());
  }
  clock_.Advance(absl::Hours(24 * 40));
  auto reporter = Make(OpenFile());  // restarted: the store remembers the report
  ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(SentFlags(), (std::vector<std::string>{"dwm"}));
  EXPECT_EQ(reporter->Ledger()->at("m").reports_repeated_in_period, 2);
}

}  // namespace window_firsts_test
}  // namespace
}  // namespace deniable::client
