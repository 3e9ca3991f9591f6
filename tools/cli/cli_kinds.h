// The seam between the shared commands of the `deniable` CLI and a kind of metric whose CLI lives
// in its own files (docs/architecture.md, "The heavy-hitters kind"): the kind registers a CliKind
// once, before any command runs, and the shared code asks every registered kind instead of
// naming it. A hook left empty, or answering std::nullopt, means "not this kind's": the shared
// code then goes on as if the kind did not exist.
//
// Thread-safety: RegisterCliKind is not thread-safe and must run before the commands (main does
// it first; a test before its first call); CliKinds is safe to call from any thread afterwards.
#ifndef DENIABLE_TOOLS_CLI_CLI_KINDS_H_
#define DENIABLE_TOOLS_CLI_CLI_KINDS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::tools {

// What a kind adds to FormatMetric's lines for one of its metrics.
struct CliMetricLines {
  std::string memoized;  // the report period's randomization, memoized ("memoized report per ...")
  std::string fresh;     // the same with --randomization=fresh ("fresh report each period")
  std::string privacy;   // lines printed after "design" (each ending in "\n"), or empty
};

struct CliKind {
  // Appended, after "; ", to DesignFromFlags' list of the --design names when none matches.
  std::string design_names;
  // DesignFromFlags: the design for --design=`design` read from the flags, std::nullopt when
  // `design` is not this kind's. Errors: INVALID_ARGUMENT naming the flag.
  std::function<absl::StatusOr<std::optional<v1::DesignParameters>>(absl::string_view design)>
      design_from_flags;
  // `deniable plan`: the command's exit code for a design of this kind, std::nullopt otherwise.
  std::function<std::optional<int>(const v1::DesignParameters& design)> plan;
  // `deniable replay`: the command's exit code when the flags ask for this kind's replay,
  // std::nullopt otherwise.
  std::function<std::optional<int>()> replay;
  // FormatMetric: the lines of a metric of this kind, std::nullopt for the other kinds' metrics.
  std::function<std::optional<CliMetricLines>(const v1::Metric& metric)> metric_lines;
  // FormatDesignDescription: the whole text for a design of this kind, std::nullopt otherwise.
  std::function<std::optional<std::string>(const v1::DesignDescription& description)> describe;
};

// Adds `kind` after the kinds registered before it (they are asked in that order).
void RegisterCliKind(CliKind kind);

// The registered kinds, in registration order.
const std::vector<CliKind>& CliKinds();

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CLI_KINDS_H_
