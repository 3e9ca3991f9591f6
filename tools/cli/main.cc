// deniable: the command-line tool for operators and analysts. See --help and docs/cli.md.
#include <grpc/support/log.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "deniable/client/grpc_transport.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/command_flags.h"
#include "tools/cli/heavy_hitters_commands.h"

int main(int argc, char** argv) {
  namespace t = deniable::tools;
  // --help is answered here, on stdout with exit 0 (Abseil's own exits 1), for the whole tool or
  // for the command named before or after it.
  std::string command;
  bool help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpfull" ||
        arg == "--helpshort") {
      help = true;
    } else if (!arg.empty() && arg[0] != '-' && command.empty()) {
      command = arg;
    }
  }
  t::RegisterHeavyHittersCommands();  // the kinds whose commands live in their own files
  if (help) return t::PrintHelp(command);

  absl::SetProgramUsageMessage("deniable COMMAND [--flags]   (deniable --help lists them)");
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view path) {
    return absl::StrContains(path, "tools/cli/");
  };
  usage.version_string = [] { return t::VersionString(); };
  absl::SetFlagsUsageConfig(usage);
  // delete-metric's --yes is a bare switch, while replay's --yes=V takes a value (one string
  // flag): a bare --yes of delete-metric reads as --yes=true.
  std::vector<char*> argv_flags(argv, argv + argc);
  static char kYesTrue[] = "--yes=true";
  if (command == "delete-metric") {
    for (char*& arg : argv_flags) {
      if (std::string(arg) == "--yes" || std::string(arg) == "-yes") arg = kYesTrue;
    }
  }
  std::vector<char*> args =
      absl::ParseCommandLine(static_cast<int>(argv_flags.size()), argv_flags.data());
  // delete-metric NAME and set-retention NAME take one positional argument; every other command
  // none.
  const size_t positional = command == "delete-metric" || command == "set-retention" ? 3 : 2;
  if (args.size() != positional) {
    return t::FailUsage(positional == 3
                            ? "expected: deniable " + command + " NAME" +
                                  (command == "delete-metric" ? " [--yes]" : " --days=N")
                            : "expected one command (deniable --help lists them)");
  }
  command = args[1];
  // gRPC's own log lines ("E1201 ... Handshake failed") say in gRPC's words what the command's
  // error message says: off unless GRPC_VERBOSITY or GRPC_TRACE asks for them.
  if (std::getenv("GRPC_VERBOSITY") == nullptr && std::getenv("GRPC_TRACE") == nullptr) {
    deniable::client::KeepGrpcLogFunction();  // replay's reporter keeps this one
    gpr_set_log_function([](gpr_log_func_args*) {});
  }
  const t::CommandSpec* spec = t::FindCommand(command);
  if (spec == nullptr) {
    return t::FailUsage("unknown command \"" + command + "\" (deniable --help lists them)");
  }
  std::vector<std::string> given(argv + 1, argv + argc);
  if (absl::Status flags = t::CheckCommandFlags(*spec, t::FlagNames(given)); !flags.ok()) {
    return t::FailUsage(std::string(flags.message()));
  }
  t::SetGivenFlags(t::FlagNames(given));
  if (command == "create-metric") return t::CreateMetric();
  if (command == "add-version") return t::AddVersion();
  if (command == "list-metrics") return t::ListMetrics();
  if (command == "alerts") return t::Alerts();
  if (command == "delete-metric") return t::DeleteMetric(args[2]);
  if (command == "set-retention") return t::SetRetention(args[2]);
  if (command == "prevalence") return t::Prevalence();
  if (command == "series") return t::Series();
  if (command == "difference") return t::Difference();
  if (command == "design") return t::DescribeDesign();
  if (command == "top") return t::Top();
  if (command == "frequency") return t::Frequency();
  if (command == "plan") return t::Plan();
  if (command == "replay") return t::Replay();
  if (command == "stats") return t::Stats();
  if (command == "tail") return t::Tail();
  return t::Health();
}
