// A seeded monitoring simulation: why anytime intervals exist (docs/statistics.md section 10.3).
//
// `runs` independent fleets each send `reports` reports through `channel` at prevalence
// `prevalence` (every device's true answer drawn first, then its bit through the channel); an
// analyst looks after every k reports (k in look_every) and computes the fixed-n interval
// (`fixed_method`, interval.h) and the anytime one (confidence_sequence.h) on all reports so far.
// A run "misses" when ANY of its looks gives an interval that excludes the truth. Draws use
// std::mt19937_64 (fully specified by the C++ standard) and u = (g() >> 11) 2^-53, so a seed gives
// the same counts on every platform.
//
// Pure; thread-safe.
#ifndef DENIABLE_COMMON_MONITORING_SIMULATION_H_
#define DENIABLE_COMMON_MONITORING_SIMULATION_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/confidence_sequence.h"
#include "deniable/common/design.h"
#include "deniable/common/interval.h"

namespace deniable {

struct MonitoringConfig {
  Channel channel = Channel{0.75, 0.25};          // the two-coin design
  double prevalence = 0.3;                        // in [0, 1]
  int64_t runs = 2000;                            // > 0
  int64_t reports = 10000;                        // per run, > 0
  std::vector<int64_t> look_every = {100, 1000};  // each > 0
  double confidence_level = 0.95;
  IntervalMethod fixed_method = IntervalMethod::kWilson;
  int64_t tuned_reports = kDefaultAnytimeTunedReports;
  uint64_t seed = 41;
};

struct MonitoringRow {
  int64_t look_every = 0;
  int64_t looks = 0;                // per run: reports / look_every
  int64_t fixed_runs_missed = 0;    // runs in which some look's fixed-n interval missed
  int64_t anytime_runs_missed = 0;  // runs in which some look's anytime interval missed
  double fixed_width_last = 0;      // mean width at the last look (reports = looks * k)
  double anytime_width_last = 0;
};

// One row per look_every, in its order.
// Errors: INVALID_ARGUMENT naming "prevalence", "runs", "reports", "look_every[i]" or those of
// MakePrevalenceInterval and AnytimePrevalenceInterval.
absl::StatusOr<std::vector<MonitoringRow>> SimulateMonitoring(const MonitoringConfig& config);

}  // namespace deniable

#endif  // DENIABLE_COMMON_MONITORING_SIMULATION_H_
