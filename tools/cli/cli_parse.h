// Parsing and formatting helpers of the deniable command-line tool that need no flags or
// network, kept apart so that tests can check them.
#ifndef DENIABLE_TOOLS_CLI_CLI_PARSE_H_
#define DENIABLE_TOOLS_CLI_CLI_PARSE_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::tools {

// A reporting period written as a positive integer with a unit: "3600s", "90m", "12h", "1d",
// "1w" (a bare number means seconds). Empty means 0 (the server's default, one day). Returns
// seconds. Errors: INVALID_ARGUMENT naming "--reporting_period" (no number, unknown unit, or
// more than 2^32 - 1 seconds). The server checks the remaining rules (multiple of the time
// precision, at most 366 days).
absl::StatusOr<uint32_t> ParseReportingPeriod(absl::string_view text);

// "memoized" or "fresh" (empty: RANDOMIZATION_UNSPECIFIED, which the server reads as
// memoized). Errors: INVALID_ARGUMENT naming "--randomization".
absl::StatusOr<v1::Randomization> ParseRandomization(absl::string_view text);

// --interval_kind: "fixed" (or empty: INTERVAL_KIND_UNSPECIFIED, which the server reads as FIXED_N)
// or "anytime" (valid at every look, docs/statistics.md section 10). Errors: INVALID_ARGUMENT
// naming
// "--interval_kind".
absl::StatusOr<v1::IntervalKind> ParseIntervalKind(absl::string_view text);

// "keep_counts" or "drop_counts" (empty: RETENTION_POLICY_UNSPECIFIED, which the server reads as
// keep_counts). Errors: INVALID_ARGUMENT naming `flag` ("--policy", "--retention_policy").
absl::StatusOr<v1::RetentionPolicy> ParseRetentionPolicy(absl::string_view text,
                                                         absl::string_view flag);

// The forms a time flag (--start, --end, --start2, --end2) accepts, as usage messages and --help
// name them.
inline constexpr absl::string_view kTimeForms =
    "a date (2026-11-01, meaning 00:00 UTC), an RFC 3339 date-time (2026-11-01T12:00:00Z, "
    "2026-11-01T12:00:00+02:00), a time before now (now, -90m, -24h, -7d, -2w) or Unix seconds "
    "(1793491200)";

// One time flag's value as Unix seconds (UTC): "2026-11-01" (00:00 UTC that day);
// "2026-11-01T12:00:00Z" or "2026-11-01T12:00:00.5+02:00" (RFC 3339, fractions rounded down to
// the second); "now"; "-7d" / "-2w" (whole days and weeks before `now`) or "-24h", "-90m",
// "-1h30m", "-300s" (absl::ParseDuration's units before `now`); or whole Unix seconds
// ("1793491200", and "0", which the requests read as "the beginning" or "no end"). `now` is
// passed in (no clock is read). Errors: INVALID_ARGUMENT `FLAG: "TEXT" is not a time; use ...`
// listing kTimeForms, or naming a time before 1970.
absl::StatusOr<int64_t> ParseTimeFlag(absl::string_view flag, absl::string_view text,
                                      absl::Time now);

// The text of the time flags as given; empty = not given.
struct TimeFlagValues {
  std::string start = "";
  std::string end = "";
  std::string start2 = "";
  std::string end2 = "";
};

// A time range [start, end) in Unix seconds as a request carries it: start 0 = from the first
// report, end 0 = no end.
struct TimeWindow {
  int64_t start_seconds = 0;
  int64_t end_seconds = 0;
};

// The default length of a range: 30 days.
inline constexpr absl::Duration kDefaultRange = absl::Hours(30 * 24);

// `prevalence`: --start (default: from the first report) and --end (default: no end), so that a
// prevalence without flags is over every report, as the API's and the dashboard's are. Errors:
// those of ParseTimeFlag.
absl::StatusOr<TimeWindow> PrevalenceWindow(const TimeFlagValues& flags, absl::Time now);

// `top --window=W` and `frequency --window=W` (W = day, week or month): the one whole UTC day,
// ISO week (from Monday 00:00 UTC) or calendar month (UTC) that holds --start (default: now), so
// that a query of the collector over it can count each device active in it once. The end may lie
// after now (the current window so far). Errors: INVALID_ARGUMENT naming --window (not day, week
// or month), --end (given with --window: the window fixes it) or --start (0); those of
// ParseTimeFlag.
absl::StatusOr<TimeWindow> CalendarWindowRange(absl::string_view window,
                                               const TimeFlagValues& flags, absl::Time now);

// `series`: --end (default: now) and --start (default: kDefaultRange before --end). Errors: those
// of ParseTimeFlag; INVALID_ARGUMENT naming --start for 0 (a series needs a start) and --end for
// 0 (a series needs an end).
absl::StatusOr<TimeWindow> SeriesWindow(const TimeFlagValues& flags, absl::Time now);

// `difference`: the first window (--start, --end) and the second (--start2, --end2). Of one
// metric (`same_metric`): --end2 defaults to now, --start2 to kDefaultRange before --end2, --end
// to --start2 and --start to the second window's length before --end, so that no flags compare
// the last 30 days with the 30 days before. Of two metrics: --end defaults to now, --start to
// kDefaultRange before --end, and a second window without --start2 and --end2 is the first
// (both metrics over the same days); a given --end2 or --start2 defaults the other as for one
// metric. An end of 0 (no end) counts as `now` where a default is computed from it; a computed
// start before 1970 is 0. Errors: those of ParseTimeFlag.
absl::StatusOr<std::pair<TimeWindow, TimeWindow>> DifferenceWindows(const TimeFlagValues& flags,
                                                                    bool same_metric,
                                                                    absl::Time now);

// A confidence level as a percentage label without the "%": "95", "99.9", and never "100" for
// a level below 1 (0.9999999 gives "99.99999", not the "100" of %g): the precision grows until
// the label is below 100.
std::string LevelLabel(double level);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CLI_PARSE_H_
