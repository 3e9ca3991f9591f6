#include "deniable/common/monitoring_simulation.h"

#include <algorithm>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable {

absl::StatusOr<std::vector<MonitoringRow>> SimulateMonitoring(const MonitoringConfig& config) {
  if (!(config.prevalence >= 0.0 && config.prevalence <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("prevalence must be in [0, 1], but is ", config.prevalence));
  }
  if (config.runs <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("runs must be > 0, but is ", config.runs));
  }
  if (config.reports <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("reports must be > 0, but is ", config.reports));
  }
  DENIABLE_RETURN_IF_ERROR(ValidateChannel(config.channel));
  std::vector<MonitoringRow> rows;
  for (size_t i = 0; i < config.look_every.size(); ++i) {
    const int64_t k = config.look_every[i];
    if (k <= 0 || k > config.reports) {
      return absl::InvalidArgumentError(absl::StrCat(
          "look_every[", i, "] must be in [1, reports = ", config.reports, "], but is ", k));
    }
    rows.push_back(MonitoringRow{k, config.reports / k, 0, 0, 0, 0});
  }
  std::mt19937_64 gen(config.seed);
  const auto uniform = [&gen] { return static_cast<double>(gen() >> 11) * 0x1.0p-53; };
  const double pi = config.prevalence;
  std::vector<bool> fixed_missed(rows.size());
  std::vector<bool> anytime_missed(rows.size());
  for (int64_t run = 0; run < config.runs; ++run) {
    std::fill(fixed_missed.begin(), fixed_missed.end(), false);
    std::fill(anytime_missed.begin(), anytime_missed.end(), false);
    int64_t yes = 0;
    for (int64_t n = 1; n <= config.reports; ++n) {
      const bool truth = uniform() < pi;
      if (uniform() < (truth ? config.channel.a : config.channel.b)) ++yes;
      for (size_t r = 0; r < rows.size(); ++r) {
        MonitoringRow& row = rows[r];
        if (n % row.look_every != 0) continue;
        DENIABLE_ASSIGN_OR_RETURN(
            PrevalenceInterval fixed,
            MakePrevalenceInterval(config.channel, yes, n, config.confidence_level,
                                   config.fixed_method));
        DENIABLE_ASSIGN_OR_RETURN(
            AnytimeInterval anytime,
            AnytimePrevalenceInterval(config.channel, yes, n, config.confidence_level,
                                      config.tuned_reports));
        if (pi < fixed.lower || pi > fixed.upper) fixed_missed[r] = true;
        if (pi < anytime.lower || pi > anytime.upper) anytime_missed[r] = true;
        if (n == row.looks * row.look_every) {
          row.fixed_width_last += fixed.upper - fixed.lower;
          row.anytime_width_last += anytime.upper - anytime.lower;
        }
      }
    }
    for (size_t r = 0; r < rows.size(); ++r) {
      rows[r].fixed_runs_missed += fixed_missed[r] ? 1 : 0;
      rows[r].anytime_runs_missed += anytime_missed[r] ? 1 : 0;
    }
  }
  for (MonitoringRow& row : rows) {
    row.fixed_width_last /= static_cast<double>(config.runs);
    row.anytime_width_last /= static_cast<double>(config.runs);
  }
  return rows;
}

}  // namespace deniable
