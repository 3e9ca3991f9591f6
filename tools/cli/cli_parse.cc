#include "tools/cli/cli_parse.h"

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "deniable/common/calendar_windows.h"
#include "deniable/common/status_macros.h"

namespace deniable::tools {

absl::StatusOr<uint32_t> ParseReportingPeriod(absl::string_view text) {
  if (text.empty()) return 0;
  absl::string_view number = text;
  uint64_t unit = 1;
  switch (absl::ascii_tolower(text.back())) {
    case 's':
      break;
    case 'm':
      unit = 60;
      break;
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    case 'w':
      unit = 7 * 86400;
      break;
    default:
      unit = 0;  // a bare number: seconds
  }
  if (unit != 0) {
    number.remove_suffix(1);
  } else {
    unit = 1;
  }
  uint64_t count = 0;
  bool digits = !number.empty();
  for (char c : number) digits = digits && absl::ascii_isdigit(c);
  if (!digits || !absl::SimpleAtoi(number, &count) || count == 0 ||
      count > std::numeric_limits<uint32_t>::max() / unit) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--reporting_period: must be a positive whole number of s, m, h, d or w (e.g. 1d, "
        "3600s) up to 2^32 - 1 seconds, but is \"",
        text, "\""));
  }
  return static_cast<uint32_t>(count * unit);
}

absl::StatusOr<v1::Randomization> ParseRandomization(absl::string_view text) {
  if (text.empty()) return v1::RANDOMIZATION_UNSPECIFIED;
  if (text == "memoized") return v1::MEMOIZED;
  if (text == "fresh") return v1::FRESH_PER_PERIOD;
  return absl::InvalidArgumentError(
      absl::StrCat("--randomization: must be memoized or fresh, but is \"", text, "\""));
}

absl::StatusOr<v1::IntervalKind> ParseIntervalKind(absl::string_view text) {
  if (text.empty()) return v1::INTERVAL_KIND_UNSPECIFIED;
  if (text == "fixed") return v1::FIXED_N;
  if (text == "anytime") return v1::ANYTIME;
  return absl::InvalidArgumentError(
      absl::StrCat("--interval_kind: must be fixed or anytime, but is \"", text, "\""));
}

absl::StatusOr<v1::RetentionPolicy> ParseRetentionPolicy(absl::string_view text,
                                                         absl::string_view flag) {
  if (text.empty()) return v1::RETENTION_POLICY_UNSPECIFIED;
  if (text == "keep_counts") return v1::DROP_REPORTS_KEEP_COUNTS;
  if (text == "drop_counts") return v1::DROP_REPORTS_AND_COUNTS;
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": must be keep_counts or drop_counts, but is \"", text, "\""));
}

namespace {

bool AllDigits(absl::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), absl::ascii_isdigit);
}

// "7d", "2w" (whole days, weeks) or an absl::ParseDuration text ("24h", "90m", "1h30m"), > 0.
bool ParseAgo(absl::string_view text, absl::Duration* ago) {
  constexpr int64_t kMaxDays = 1000000;  // ~2700 years: anything more is a typo
  if (!text.empty() && (text.back() == 'd' || text.back() == 'w')) {
    const int64_t days_per_unit = text.back() == 'w' ? 7 : 1;
    int64_t count = 0;
    text.remove_suffix(1);
    if (!AllDigits(text) || !absl::SimpleAtoi(text, &count) || count > kMaxDays) return false;
    *ago = absl::Hours(24 * days_per_unit * count);
  } else if (!absl::ParseDuration(text, ago) || *ago == absl::InfiniteDuration() ||
             *ago > absl::Hours(24 * kMaxDays)) {
    return false;
  }
  return *ago > absl::ZeroDuration();
}

absl::StatusOr<int64_t> ParseGiven(absl::string_view flag, const std::string& text, absl::Time now,
                                   int64_t fallback) {
  return text.empty() ? fallback : ParseTimeFlag(flag, text, now);
}

int64_t Before(int64_t end, absl::Duration length) {
  return std::max<int64_t>(0, end - absl::ToInt64Seconds(length));
}

}  // namespace

absl::StatusOr<int64_t> ParseTimeFlag(absl::string_view flag, absl::string_view text,
                                      absl::Time now) {
  const auto not_a_time = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", text, "\" is not a time; use ", kTimeForms));
  };
  absl::Time time;
  if (text == "now") {
    time = now;
  } else if (AllDigits(text)) {
    int64_t seconds = 0;
    if (!absl::SimpleAtoi(text, &seconds)) return not_a_time();
    return seconds;
  } else if (absl::string_view ago_text = text; absl::ConsumePrefix(&ago_text, "-")) {
    absl::Duration ago;
    if (!ParseAgo(ago_text, &ago)) return not_a_time();
    time = now - ago;
  } else {
    std::string error;
    const bool date_only = text.size() == 10;  // YYYY-MM-DD
    if (!absl::ParseTime(date_only ? "%Y-%m-%d" : absl::RFC3339_full, text, absl::UTCTimeZone(),
                         &time, &error)) {
      return not_a_time();
    }
  }
  const int64_t seconds = absl::ToUnixSeconds(time);
  if (seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": \"", text, "\" is before 1970-01-01 (the Unix epoch)"));
  }
  return seconds;
}

absl::StatusOr<TimeWindow> PrevalenceWindow(const TimeFlagValues& flags, absl::Time now) {
  TimeWindow w;
  DENIABLE_ASSIGN_OR_RETURN(w.start_seconds, ParseGiven("--start", flags.start, now, 0));
  DENIABLE_ASSIGN_OR_RETURN(w.end_seconds, ParseGiven("--end", flags.end, now, 0));
  return w;
}

absl::StatusOr<TimeWindow> CalendarWindowRange(absl::string_view window,
                                               const TimeFlagValues& flags, absl::Time now) {
  CalendarWindow kind = CalendarWindow::kDay;
  if (window == "day") {
    kind = CalendarWindow::kDay;
  } else if (window == "week") {
    kind = CalendarWindow::kWeek;
  } else if (window == "month") {
    kind = CalendarWindow::kMonth;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--window: must be day, week or month (the UTC day, ISO week or month holding --start), "
        "but is \"",
        absl::CHexEscape(window), "\""));
  }
  if (!flags.end.empty()) {
    return absl::InvalidArgumentError(
        "--end: not with --window (the window's end is its own; give --start=T for the window "
        "holding T)");
  }
  DENIABLE_ASSIGN_OR_RETURN(const int64_t at,
                            ParseGiven("--start", flags.start, now, absl::ToUnixSeconds(now)));
  if (at == 0) {
    return absl::InvalidArgumentError(
        "--start: with --window, a time inside the window (default: now), but is 0");
  }
  return TimeWindow{WindowStart(kind, at), NextWindowStart(kind, at)};
}

absl::StatusOr<TimeWindow> SeriesWindow(const TimeFlagValues& flags, absl::Time now) {
  TimeWindow w;
  DENIABLE_ASSIGN_OR_RETURN(w.end_seconds,
                            ParseGiven("--end", flags.end, now, absl::ToUnixSeconds(now)));
  if (w.end_seconds == 0) {
    return absl::InvalidArgumentError(
        "--end: a series needs an end (default: now), but is 0 (no end)");
  }
  DENIABLE_ASSIGN_OR_RETURN(w.start_seconds, ParseGiven("--start", flags.start, now,
                                                        Before(w.end_seconds, kDefaultRange)));
  if (w.start_seconds == 0) {
    return absl::InvalidArgumentError(
        "--start: a series needs a start after 1970-01-01 (default: 30 days before --end), but is "
        "0");
  }
  return w;
}

absl::StatusOr<std::pair<TimeWindow, TimeWindow>> DifferenceWindows(const TimeFlagValues& flags,
                                                                    bool same_metric,
                                                                    absl::Time now) {
  const int64_t now_seconds = absl::ToUnixSeconds(now);
  const auto or_now = [now_seconds](int64_t end) { return end == 0 ? now_seconds : end; };
  TimeWindow first, second;
  const bool second_given = !flags.start2.empty() || !flags.end2.empty();
  if (same_metric || second_given) {
    DENIABLE_ASSIGN_OR_RETURN(second.end_seconds,
                              ParseGiven("--end2", flags.end2, now, now_seconds));
    DENIABLE_ASSIGN_OR_RETURN(second.start_seconds,
                              ParseGiven("--start2", flags.start2, now,
                                         Before(or_now(second.end_seconds), kDefaultRange)));
  }
  if (same_metric) {
    DENIABLE_ASSIGN_OR_RETURN(first.end_seconds,
                              ParseGiven("--end", flags.end, now, second.start_seconds));
    const absl::Duration length =
        absl::Seconds(std::max<int64_t>(0, or_now(second.end_seconds) - second.start_seconds));
    DENIABLE_ASSIGN_OR_RETURN(
        first.start_seconds,
        ParseGiven("--start", flags.start, now, Before(or_now(first.end_seconds), length)));
  } else {
    DENIABLE_ASSIGN_OR_RETURN(first.end_seconds, ParseGiven("--end", flags.end, now, now_seconds));
    DENIABLE_ASSIGN_OR_RETURN(
        first.start_seconds,
        ParseGiven("--start", flags.start, now, Before(or_now(first.end_seconds), kDefaultRange)));
    if (!second_given) second = first;
  }
  return std::make_pair(first, second);
}

std::string LevelLabel(double level) {
  const double percent = 100.0 * level;
  std::string label = absl::StrFormat("%g", percent);
  for (int digits = 7; level < 1.0 && digits <= 17; ++digits) {
    if (std::strtod(label.c_str(), nullptr) < 100.0) break;
    label = absl::StrFormat("%.*g", digits, percent);
  }
  return label;
}

}  // namespace deniable::tools
