// Parsing and formatting helpers of the deniable command-line tool that need no flags or
// network, kept apart so that tests can check them.
#ifndef DENIABLE_TOOLS_CLI_CLI_PARSE_H_
#define DENIABLE_TOOLS_CLI_CLI_PARSE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"

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

// "keep_counts" or "drop_counts" (empty: RETENTION_POLICY_UNSPECIFIED, which the server reads as
// keep_counts). Errors: INVALID_ARGUMENT naming `flag` ("--policy", "--retention_policy").
absl::StatusOr<v1::RetentionPolicy> ParseRetentionPolicy(absl::string_view text,
                                                         absl::string_view flag);

// A confidence level as a percentage label without the "%": "95", "99.9", and never "100" for
// a level below 1 (0.9999999 gives "99.99999", not the "100" of %g): the precision grows until
// the label is below 100.
std::string LevelLabel(double level);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CLI_PARSE_H_
