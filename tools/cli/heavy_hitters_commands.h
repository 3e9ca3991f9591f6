// Commands of heavy-hitters metrics (heavy_hitters_commands.cc; docs/cli.md, "Heavy hitters").
#ifndef DENIABLE_TOOLS_CLI_HEAVY_HITTERS_COMMANDS_H_
#define DENIABLE_TOOLS_CLI_HEAVY_HITTERS_COMMANDS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/statusor.h"
#include "deniable/client/transport.h"
#include "deniable/v1/query_service.pb.h"

ABSL_DECLARE_FLAG(std::string, string_column);

namespace deniable::tools {

// Registers the kind with the shared commands (cli_kinds.h): `--design=heavy_hitters` of
// create-metric, design and plan (with --max_length), `plan`'s answer, `replay --string_column`
// and the output of its metrics and designs (heavy_hitters_output.h). Call once from main before
// any command runs; a second call does nothing. Not thread-safe.
void RegisterHeavyHittersCommands();

// The TopValues table: the detection threshold, then one row per value with its share, its
// interval and the simultaneous one.
std::string FormatTopValues(const v1::TopValues& top);

// `deniable top` and `deniable frequency`: exit codes as every command's.
int Top();
int Frequency();

// `deniable plan --design=heavy_hitters [--epsilon] [--max_length] --find_share=S
// [--find_probability=0.9] [--level] [--max_prefixes]`: the devices needed to find a value of that
// share (heavy_hitters_advice.h), computed locally; --json prints the plan's fields. Exit 2 with
// the flag named on bad input.
int PlanHeavyHittersDesign(const v1::DesignParameters& design);

struct ReplayStringsResult {
  int64_t devices = 0;                         // reports the collector accepted
  int64_t rejected = 0;                        // reports it rejected
  std::map<std::string, int64_t> true_counts;  // rows per value, as read
};

// Sends each value through a fresh device (its group drawn, one report randomized with the
// metric's design by `gen`) in batches of 1000 over `transport`. Errors: the design fetch's and
// the sends' statuses; FAILED_PRECONDITION when the metric's values are not strings;
// INVALID_ARGUMENT naming the record of a value the design refuses (too long, a NUL byte).
absl::StatusOr<ReplayStringsResult> ReplayStrings(const std::vector<std::string>& values,
                                                  const std::string& metric,
                                                  client::ReportTransport& transport,
                                                  absl::BitGenRef gen);

// `deniable replay --string_column=C`: reads the column, replays it, then prints `top` with each
// value's true share in the file.
int ReplayStringColumn(const std::string& metric, const std::string& csv,
                       const std::string& column);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_HEAVY_HITTERS_COMMANDS_H_
