// Every flag of a program also from an environment variable, with one naming rule:
// DENIABLE_ + the flag's name in upper case (--max_batch_reports: DENIABLE_MAX_BATCH_REPORTS).
// Precedence: the command line, then the environment, then the default.
//
// Not thread-safe: call once in main() before absl::ParseCommandLine.
#ifndef DENIABLE_SERVER_ENV_FLAGS_H_
#define DENIABLE_SERVER_ENV_FLAGS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// The variable for flag `name`: "DENIABLE_" + upper-case `name`.
std::string EnvironmentVariableFor(absl::string_view name);

// Sets each flag defined in a file whose path contains `path_part` from its variable, when that
// is set and not empty. Errors: INVALID_ARGUMENT naming the variable and the flag for a value
// the flag cannot parse (flags set before it keep their values).
absl::Status ApplyEnvironmentToFlags(absl::string_view path_part);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_ENV_FLAGS_H_
