// `deniable --help` and `deniable COMMAND --help`: printed on stdout, exit 0.
#include <cstdio>
#include <string>

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "deniable/client/version.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/command_flags.h"

namespace deniable::tools {
namespace {

void PrintFlag(const char* name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr) return;         // a flag another branch adds (e.g. --plot)
  if (flag->DefaultValue().empty()) {  // none, or the help says what is meant (time flags)
    std::printf("  --%s (%s)\n", name, flag->Help().c_str());
  } else {
    std::printf("  --%s (%s; default \"%s\")\n", name, flag->Help().c_str(),
                flag->DefaultValue().c_str());
  }
}

}  // namespace

int PrintHelp(const std::string& command) {
  const CommandSpec* spec = FindCommand(command);
  if (spec == nullptr) {
    std::printf(
        "deniable %s: the command-line tool of the Deniable collector (docs/cli.md)\n\n"
        "usage: deniable COMMAND [--flags]\n\ncommands:\n",
        client::Version());
    for (const CommandSpec& c : Commands()) std::printf("  %-14s %s\n", c.name, c.usage);
    std::printf("\nconnection and output flags (every command):\n");
    for (const char* name : CommonFlags()) {
      if (std::string(name) == "json" || std::string(name).rfind("tls_", 0) == 0 ||
          std::string(name) == "target" || std::string(name) == "token" ||
          std::string(name) == "timeout_seconds") {
        PrintFlag(name);
      }
    }
    std::printf(
        "\n`deniable COMMAND --help` lists a command's flags. Exit codes: 0 ok, 1 error, 2 usage, "
        "3 NOT_FOUND, 4 UNAVAILABLE or DEADLINE_EXCEEDED, 5 UNAUTHENTICATED or "
        "PERMISSION_DENIED, 6 FAILED_PRECONDITION.\n");
    return 0;
  }
  std::printf("usage: deniable %s %s\n\nflags:\n", spec->name, spec->usage);
  for (const char* name : spec->flags) PrintFlag(name);
  std::printf("\nand the connection and output flags of `deniable --help`.\n");
  return 0;
}

std::string VersionString() {
  return absl::StrCat("deniable ", client::Version(), " (", client::BuildInfo(), ")\n");
}

}  // namespace deniable::tools
