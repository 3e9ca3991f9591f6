// Human-readable output of the deniable tool for heavy-hitters metrics (values are strings;
// docs/cli.md, "Heavy hitters"): the metric's privacy line, its design's description, `plan`'s
// answer and the lines `top` and `frequency` print under their table. Registered with the shared
// output (output.h) through AddHeavyHittersOutput (cli_kinds.h). Thread-safe (pure functions).
#ifndef DENIABLE_TOOLS_CLI_HEAVY_HITTERS_OUTPUT_H_
#define DENIABLE_TOOLS_CLI_HEAVY_HITTERS_OUTPUT_H_

#include <cstdint>
#include <string>

#include "deniable/convert/heavy_hitters_advice.h"
#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "tools/cli/cli_kinds.h"

namespace deniable::tools {

// Fills `kind`'s output hooks: FormatMetric of a heavy-hitters metric gets a "privacy" line
// (epsilon per report, e^eps, the posterior range at a prior of 50 %; heavy_hitters_advice.h)
// and "memoized report per distinct value"; FormatDesignDescription of a heavy-hitters design
// is FormatHeavyHittersDescription.
void AddHeavyHittersOutput(CliKind* kind);

// The figures of DescribeDesign for a heavy-hitters design: epsilon per report with e^eps and
// the largest and smallest P(holds v | report) (heavy_hitters_advice.h), with CentralPrivacyLine.
std::string FormatHeavyHittersDescription(const v1::DesignDescription& description);
// The line `top --window=W` and `frequency --window=W` print under the table: the window of the
// range [start, ...) (W = day, week or month) and that each device active in it was counted once,
// at its first report in it (heavy_hitters_query.h).
std::string HeavyHittersWindowLine(const std::string& window, int64_t start);
// The shuffle-amplified epsilon of a top or frequency answer (docs/statistics.md section 11.6):
// AmplifiedEpsilon(epsilon, e^-epsilon, devices, 1e-6) over the answer's reports, against an
// analyst who sees only the sketch counts; "= local epsilon" with the reason when the bound gives
// no gain; empty without reports or above kMaxDescribedReports (the bound's cost).
std::string HeavyHittersCentralLine(const v1::TopValues& top);
// `deniable plan --design=heavy_hitters`: the devices needed to find a value of a share with a
// probability (heavy_hitters_advice.h), with the design and the model's assumption.
std::string FormatHeavyHittersPlan(const HeavyHittersPlan& plan);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_HEAVY_HITTERS_OUTPUT_H_
