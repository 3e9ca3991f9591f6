// The command table of the `deniable` CLI: which flags each command accepts, and the exit codes.
//
// Every command accepts the connection flags (kCommonFlags) and its own; any other flag, even one
// another command knows, is a usage error naming it (`series --group_by=region` would otherwise
// be silently ignored). Exit codes (docs/cli.md):
//   0 success            2 usage error (bad flags; INVALID_ARGUMENT or OUT_OF_RANGE from the
//   server) 1 any other error    3 NOT_FOUND      4 UNAVAILABLE or DEADLINE_EXCEEDED (retry later)
//                        5 UNAUTHENTICATED or PERMISSION_DENIED     6 FAILED_PRECONDITION
//
// Thread-safe (constant data and pure functions); needs no flags or network, so tests check it.
#ifndef DENIABLE_TOOLS_CLI_COMMAND_FLAGS_H_
#define DENIABLE_TOOLS_CLI_COMMAND_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deniable::tools {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNotFound = 3;
inline constexpr int kExitUnavailable = 4;
inline constexpr int kExitAccess = 5;
inline constexpr int kExitFailedPrecondition = 6;

struct CommandSpec {
  const char* name;
  const char* usage;               // one line: arguments after the name
  std::vector<const char*> flags;  // its own flags, beyond kCommonFlags
};

// Flags every command accepts: connection, output and Abseil's own (--help, --version, ...).
const std::vector<const char*>& CommonFlags();

// Every command, in the order --help lists them.
const std::vector<CommandSpec>& Commands();

// The command named `name`, or nullptr.
const CommandSpec* FindCommand(absl::string_view name);

// The names of the flags in `args` (the command line without the program name): "--x=1",
// "-x=1", "--x" give "x"; "--" ends the flags; a token that is not a flag (the command, a value
// after "--flag value") is skipped.
std::vector<std::string> FlagNames(const std::vector<std::string>& args);

// OK when every flag in `flag_names` is a common flag or one of `command`'s ("--noflag" counts as
// "flag"). Errors: INVALID_ARGUMENT "<command>: --<flag> is not a flag of this command (its
// flags: ...)".
absl::Status CheckCommandFlags(const CommandSpec& command,
                               const std::vector<std::string>& flag_names);

// The exit code for a failed call's status code (see the table above); 0 for OK.
int ExitCodeFor(absl::StatusCode code);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_COMMAND_FLAGS_H_
