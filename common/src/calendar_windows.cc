#include "deniable/common/calendar_windows.h"

#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace deniable {

const char* CalendarWindowName(CalendarWindow w) {
  switch (w) {
    case CalendarWindow::kDay:
      return "day";
    case CalendarWindow::kWeek:
      return "week";
    case CalendarWindow::kMonth:
      return "month";
  }
  return "day";
}

int64_t WindowStart(CalendarWindow w, int64_t unix_seconds) {
  const absl::CivilDay day =
      absl::ToCivilDay(absl::FromUnixSeconds(unix_seconds), absl::UTCTimeZone());
  absl::CivilDay start = day;
  if (w == CalendarWindow::kWeek) {
    start = absl::PrevWeekday(day + 1, absl::Weekday::monday);
  } else if (w == CalendarWindow::kMonth) {
    start = absl::CivilDay(absl::CivilMonth(day));
  }
  return absl::ToUnixSeconds(absl::FromCivil(start, absl::UTCTimeZone()));
}

int64_t NextWindowStart(CalendarWindow w, int64_t unix_seconds) {
  const int64_t start = WindowStart(w, unix_seconds);
  const absl::CivilDay day = absl::ToCivilDay(absl::FromUnixSeconds(start), absl::UTCTimeZone());
  absl::CivilDay next = day + 1;
  if (w == CalendarWindow::kWeek) next = day + 7;
  if (w == CalendarWindow::kMonth) next = absl::CivilDay(absl::CivilMonth(day) + 1);
  return absl::ToUnixSeconds(absl::FromCivil(next, absl::UTCTimeZone()));
}

uint8_t WindowFirsts(int64_t previous_seconds, int64_t now_seconds) {
  uint8_t firsts = 0;
  for (CalendarWindow w : kCalendarWindows) {
    if (previous_seconds <= 0 || WindowStart(w, previous_seconds) != WindowStart(w, now_seconds)) {
      firsts |= FirstBit(w);
    }
  }
  return firsts;
}

bool IsExactWindow(CalendarWindow w, int64_t start, int64_t end) {
  return WindowStart(w, start) == start && NextWindowStart(w, start) == end;
}

bool IsWholeWindows(CalendarWindow w, int64_t start, int64_t end, int64_t* count) {
  if (end <= start || WindowStart(w, start) != start) return false;
  int64_t n = 0;
  for (int64_t t = start; t < end; t = NextWindowStart(w, t)) {
    if (++n > 100000) return false;
  }
  int64_t t = start;
  for (int64_t i = 0; i < n; ++i) t = NextWindowStart(w, t);
  if (t != end) return false;
  *count = n;
  return true;
}

std::string UtcDate(int64_t unix_seconds) {
  return absl::FormatTime("%Y-%m-%d", absl::FromUnixSeconds(unix_seconds), absl::UTCTimeZone());
}

}  // namespace deniable
