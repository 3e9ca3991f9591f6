// Event times for a replayed survey: from a column of the CSV (--time_column, --time_format) or
// spread evenly over the last N days (--spread=7d), so that a survey fills a realistic series
// instead of one bucket at "now".
//
// Example:
//   ASSIGN_OR_RETURN(absl::Duration spread, ParseSpread("7d"));
//   std::vector<int64_t> times = SpreadEventTimes(rows.size(), absl::Now(), spread, kSeed);
//
// The times are not sensitive (they are the report's public event time, which the SDK rounds down
// to the metric's time precision); the shuffle is seeded so a replay is reproducible.
// Thread-compatible free functions.
#ifndef DENIABLE_TOOLS_CLI_REPLAY_TIMES_H_
#define DENIABLE_TOOLS_CLI_REPLAY_TIMES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace deniable::tools {

// The seed of SpreadEventTimes used by `deniable replay` (a replay is reproducible).
inline constexpr uint64_t kReplaySpreadSeed = 20261123;

// "7d", "36h", "90m" or "600s" (a positive whole number and one unit) as a duration.
// Errors: INVALID_ARGUMENT naming "spread" for anything else, zero or negative.
absl::StatusOr<absl::Duration> ParseSpread(absl::string_view text);

// One event time from a CSV field, in seconds since the Unix epoch. `format` is "unix" (whole
// seconds) or an absl::ParseTime / strptime format such as "%Y-%m-%d" or
// "%Y-%m-%dT%H:%M:%S%Ez"; a format without a zone reads the time as UTC.
// Errors: INVALID_ARGUMENT naming the value and the format, or a time before 1970.
absl::StatusOr<int64_t> ParseEventTime(absl::string_view value, absl::string_view format);

// `count` event times (seconds) evenly spaced over [now - spread, now): slot i at
// now - spread + (i + 1/2) spread / count, rounded down to a second, then shuffled with a
// generator seeded by `seed` so that the order of the CSV's rows (often sorted by region or
// date) does not become a trend in time. REQUIRES: count >= 0, spread > 0.
std::vector<int64_t> SpreadEventTimes(int64_t count, absl::Time now, absl::Duration spread,
                                      uint64_t seed);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_REPLAY_TIMES_H_
