#include "tools/cli/replay_times.h"

#include <algorithm>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace deniable::tools {

absl::StatusOr<absl::Duration> ParseSpread(absl::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "spread: must be a positive whole number and a unit (d, h, m or s), e.g. 7d, but is \"",
        text, "\""));
  };
  if (text.size() < 2) return invalid();
  int64_t amount = 0;
  if (!absl::SimpleAtoi(text.substr(0, text.size() - 1), &amount) || amount <= 0) {
    return invalid();
  }
  switch (text.back()) {
    case 'd':
      return absl::Hours(24) * amount;
    case 'h':
      return absl::Hours(amount);
    case 'm':
      return absl::Minutes(amount);
    case 's':
      return absl::Seconds(amount);
    default:
      return invalid();
  }
}

absl::StatusOr<int64_t> ParseEventTime(absl::string_view value, absl::string_view format) {
  int64_t seconds = 0;
  if (format == "unix") {
    if (!absl::SimpleAtoi(value, &seconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("time: \"", value, "\" is not whole seconds (--time_format=unix)"));
    }
  } else {
    absl::Time t;
    std::string error;
    if (!absl::ParseTime(format, value, absl::UTCTimeZone(), &t, &error)) {
      return absl::InvalidArgumentError(absl::StrCat("time: \"", value, "\" does not match ",
                                                     "--time_format=\"", format, "\": ", error));
    }
    seconds = absl::ToUnixSeconds(t);
  }
  if (seconds <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("time: \"", value, "\" is not after 1970-01-01 (the Unix epoch)"));
  }
  return seconds;
}

std::vector<int64_t> SpreadEventTimes(int64_t count, absl::Time now, absl::Duration spread,
                                      uint64_t seed) {
  std::vector<int64_t> times;
  times.reserve(static_cast<size_t>(std::max<int64_t>(count, 0)));
  const absl::Time start = now - spread;
  for (int64_t i = 0; i < count; ++i) {
    const absl::Time t =
        start + spread * ((static_cast<double>(i) + 0.5) / static_cast<double>(count));
    times.push_back(absl::ToUnixSeconds(t));
  }
  std::mt19937_64 gen(seed);
  std::shuffle(times.begin(), times.end(), gen);
  return times;
}

}  // namespace deniable::tools
