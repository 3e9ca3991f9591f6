// Calendar windows of event times: the UTC day, the ISO week (Monday 00:00 UTC) and the calendar
// month (UTC) that hold a Unix time. The device marks its first report of a metric in each window
// (Report.window_firsts) and the collector estimates "the devices active in the window" from
// those first reports (docs/statistics.md section 4.4). Pure functions, thread-safe.
#ifndef DENIABLE_COMMON_CALENDAR_WINDOWS_H_
#define DENIABLE_COMMON_CALENDAR_WINDOWS_H_

#include <array>
#include <cstdint>
#include <string>

namespace deniable {

enum class CalendarWindow { kDay = 0, kWeek = 1, kMonth = 2 };
inline constexpr std::array<CalendarWindow, 3> kCalendarWindows = {
    CalendarWindow::kDay, CalendarWindow::kWeek, CalendarWindow::kMonth};

// Bits of a report's window flags (ReportRow::window_firsts): first in its day, week, month.
inline constexpr uint8_t kFirstInDay = 1;
inline constexpr uint8_t kFirstInWeek = 2;
inline constexpr uint8_t kFirstInMonth = 4;
inline constexpr uint8_t FirstBit(CalendarWindow w) {
  return static_cast<uint8_t>(1u << static_cast<int>(w));
}

// "day", "week" or "month".
const char* CalendarWindowName(CalendarWindow w);

// The start of the window holding `unix_seconds` (seconds since the Unix epoch, UTC; any sign).
int64_t WindowStart(CalendarWindow w, int64_t unix_seconds);
// The start of the next window after the one holding `unix_seconds`.
int64_t NextWindowStart(CalendarWindow w, int64_t unix_seconds);

// The window flags of a report at `now_seconds` when the device's previous report of the metric
// was at `previous_seconds` (0 or negative: none). A window whose start differs counts as new (a
// clock that went back into an earlier window also counts as new: the device cannot know better).
uint8_t WindowFirsts(int64_t previous_seconds, int64_t now_seconds);

// Whether [start, end) is exactly one window of kind `w`.
bool IsExactWindow(CalendarWindow w, int64_t start, int64_t end);
// Whether [start, end) is a union of whole windows of kind `w` (at least one); sets *count.
bool IsWholeWindows(CalendarWindow w, int64_t start, int64_t end, int64_t* count);

// "2026-11-02": the UTC date of `unix_seconds`.
std::string UtcDate(int64_t unix_seconds);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CALENDAR_WINDOWS_H_
