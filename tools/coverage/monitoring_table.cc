// deniable-monitoring-table: prints, as Markdown, the seeded monitoring simulation of
// docs/statistics.md section 10.3 (deniable::SimulateMonitoring): runs of two-coin reports at
// pi = 0.3, a look every k reports, and the runs in which ANY look's interval missed the truth,
// for the fixed-n Wilson interval and the anytime-valid one, with the width ratio at the last look.
// The defaults are those of common/confidence_sequence_test.cc, which asserts the same counts.
//
// Usage: deniable-monitoring-table [runs [reports [seed]]]   (defaults 2000 10000 41; about 5 s)
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "deniable/common/monitoring_simulation.h"

int main(int argc, char** argv) {
  deniable::MonitoringConfig config;
  config.look_every = {10, 100, 1000};
  const char* names[] = {"runs", "reports", "seed"};
  for (int i = 1; i < argc && i <= 3; ++i) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(argv[i], &value) || value <= 0) {
      std::fprintf(stderr,
                   "deniable-monitoring-table: %s must be a positive integer, but is \"%s\"\n",
                   names[i - 1], argv[i]);
      return 2;
    }
    if (i == 1) config.runs = value;
    if (i == 2) config.reports = value;
    if (i == 3) config.seed = static_cast<uint64_t>(value);
  }
  absl::StatusOr<std::vector<deniable::MonitoringRow>> rows = deniable::SimulateMonitoring(config);
  if (!rows.ok()) {
    std::fprintf(stderr, "deniable-monitoring-table: %s\n",
                 std::string(rows.status().message()).c_str());
    return 2;
  }
  std::printf(
      "%lld runs of %lld two-coin reports at pi = %.2f, level %.2f, seed %llu; anytime tuned at "
      "%lld reports.\n\n",
      static_cast<long long>(config.runs), static_cast<long long>(config.reports),
      config.prevalence, config.confidence_level, static_cast<unsigned long long>(config.seed),
      static_cast<long long>(config.tuned_reports));
  std::printf(
      "| look every | looks | runs with a miss, fixed-n Wilson | runs with a miss, anytime | "
      "width anytime / fixed at the last look |\n|---:|---:|---:|---:|---:|\n");
  for (const deniable::MonitoringRow& row : *rows) {
    std::printf("| %lld | %lld | %lld (%.1f %%) | %lld (%.1f %%) | %.3f |\n",
                static_cast<long long>(row.look_every), static_cast<long long>(row.looks),
                static_cast<long long>(row.fixed_runs_missed),
                100.0 * static_cast<double>(row.fixed_runs_missed) / config.runs,
                static_cast<long long>(row.anytime_runs_missed),
                100.0 * static_cast<double>(row.anytime_runs_missed) / config.runs,
                row.anytime_width_last / row.fixed_width_last);
  }
  return 0;
}
