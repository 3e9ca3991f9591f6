#include "deniable/common/calendar_windows.h"

#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace calendar_windows_test {

constexpr int64_t kMonday = 1793577600;  // 2026-11-02 00:00 UTC, a Monday

TEST(CalendarWindowsTest, WeeksStartOnMondayMonthsOnTheFirst) {
  EXPECT_EQ(UtcDate(kMonday), "2026-11-02");
  EXPECT_EQ(WindowStart(CalendarWindow::kWeek, kMonday + 6 * 86400 + 3600), kMonday);
  EXPECT_EQ(NextWindowStart(CalendarWindow::kWeek, kMonday), kMonday + 7 * 86400);
  EXPECT_EQ(UtcDate(WindowStart(CalendarWindow::kMonth, kMonday + 86400)), "2026-11-01");
  EXPECT_EQ(UtcDate(NextWindowStart(CalendarWindow::kMonth, kMonday)), "2026-12-01");
  EXPECT_EQ(WindowStart(CalendarWindow::kDay, kMonday + 86399), kMonday);
}

TEST(CalendarWindowsTest, FirstsFollowThePreviousReport) {
  EXPECT_EQ(WindowFirsts(0, kMonday), kFirstInDay | kFirstInWeek | kFirstInMonth);
  EXPECT_EQ(WindowFirsts(kMonday, kMonday + 3600), 0);
  EXPECT_EQ(WindowFirsts(kMonday, kMonday + 86400), kFirstInDay);
  EXPECT_EQ(WindowFirsts(kMonday, kMonday + 7 * 86400), kFirstInDay | kFirstInWeek);
  // 2026-11-30 (Monday) -> 2026-12-01 (Tuesday): new day and month, same week.
  EXPECT_EQ(WindowFirsts(kMonday + 28 * 86400, kMonday + 29 * 86400), kFirstInDay | kFirstInMonth);
}

TEST(CalendarWindowsTest, ExactAndWholeWindows) {
  int64_t count = 0;
  EXPECT_TRUE(IsExactWindow(CalendarWindow::kWeek, kMonday, kMonday + 7 * 86400));
  EXPECT_FALSE(IsExactWindow(CalendarWindow::kWeek, kMonday + 86400, kMonday + 8 * 86400));
  EXPECT_TRUE(IsWholeWindows(CalendarWindow::kWeek, kMonday, kMonday + 28 * 86400, &count));
  EXPECT_EQ(count, 4);
  EXPECT_FALSE(IsWholeWindows(CalendarWindow::kWeek, kMonday, kMonday + 10 * 86400, &count));
  EXPECT_TRUE(IsWholeWindows(CalendarWindow::kDay, kMonday, kMonday + 3 * 86400, &count));
  EXPECT_EQ(count, 3);
}

}  // namespace calendar_windows_test
}  // namespace
}  // namespace deniable
