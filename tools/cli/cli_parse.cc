#include "tools/cli/cli_parse.h"

#include <cstdlib>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

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

absl::StatusOr<v1::RetentionPolicy> ParseRetentionPolicy(absl::string_view text,
                                                         absl::string_view flag) {
  if (text.empty()) return v1::RETENTION_POLICY_UNSPECIFIED;
  if (text == "keep_counts") return v1::DROP_REPORTS_KEEP_COUNTS;
  if (text == "drop_counts") return v1::DROP_REPORTS_AND_COUNTS;
  return absl::InvalidArgumentError(
      absl::StrCat(flag, ": must be keep_counts or drop_counts, but is \"", text, "\""));
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
