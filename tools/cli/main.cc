// deniable: the command-line tool for operators and analysts. See --help and README.md.
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "tools/cli/cli_common.h"

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "deniable COMMAND [--flags]   (every command takes --target=host:port and --json)\n"
      "  create-metric --name=N --design=D [design flags] [--min_reports=K]\n"
      "                [--reporting_period=1d] [--randomization=memoized|fresh] "
      "[--allow_no_privacy]\n"
      "  add-version   --metric=N --design=D [design flags] [--allow_no_privacy]\n"
      "  list-metrics\n"
      "  prevalence    --metric=N [--start --end --level --method --group_by=LABEL]\n"
      "  series        --metric=N --start=T --end=T [--bucket=hour|day|week]\n"
      "  difference    --metric=N --start --end [--metric2=M] --start2 --end2\n"
      "  design        (--design=D [design flags] | --metric=N) --prior=PI [--n=REPORTS]\n"
      "  plan          --design=D [design flags] --half_width=H [--prior=PI|-1] [--level]\n"
      "  replay        --metric=N --csv=F --column=C --yes=V [--label_columns=a,b "
      "--group_by=a] [--blank=no|skip]\n"
      "  health");
  // --help lists the flags of every file of the CLI (they live in cli_flags.cc, not here).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view path) {
    return absl::StrContains(path, "tools/cli/");
  };
  absl::SetFlagsUsageConfig(usage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    return deniable::tools::FailUsage("expected one command (--help lists them)");
  }
  const std::string command = args[1];
  namespace t = deniable::tools;
  if (command == "create-metric") return t::CreateMetric();
  if (command == "add-version") return t::AddVersion();
  if (command == "list-metrics") return t::ListMetrics();
  if (command == "prevalence") return t::Prevalence();
  if (command == "series") return t::Series();
  if (command == "difference") return t::Difference();
  if (command == "design") return t::DescribeDesign();
  if (command == "plan") return t::Plan();
  if (command == "replay") return t::Replay();
  if (command == "health") return t::Health();
  return t::FailUsage("unknown command \"" + command + "\" (--help lists them)");
}
