#include "tools/coverage/categorical_table.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "deniable/common/categorical.h"
#include "deniable/common/categorical_coverage.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/coverage.h"
#include "deniable/common/method_choice.h"

namespace deniable::tools {
namespace {

constexpr double kLevel = 0.95;
constexpr int64_t kTrials = 2000;
constexpr uint64_t kSeed = 20261123;

struct Row {
  CategoricalMechanism mechanism;
  int k;
  double epsilon;
  std::string epsilon_label;
  std::string shares_label;
  std::vector<double> shares;
  std::vector<int64_t> sizes;
};

std::vector<double> Uniform(int k) { return std::vector<double>(k, 1.0 / k); }

std::vector<Row> Rows() {
  using M = CategoricalMechanism;
  const std::vector<double> chile = {868.0 / 2532, 889.0 / 2532, 588.0 / 2532, 187.0 / 2532};
  const std::vector<double> skewed = {0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0.0};
  const double ln3 = std::log(3.0);
  return {
      {M::kDirectEncoding,
       4,
       ln3,
       "ln 3",
       "Chile vote (Y, N, U, A)",
       chile,
       {50, 100, 500, 2532, 10000}},
      {M::kDirectEncoding, 4, ln3, "ln 3", "uniform", Uniform(4), {100, 1000}},
      {M::kDirectEncoding, 8, 1.0, "1", "skewed, one share 0", skewed, {100, 1000}},
      {M::kDirectEncoding, 16, 2.0, "2", "uniform", Uniform(16), {1000}},
      {M::kDirectEncoding, 64, 4.0, "4", "uniform", Uniform(64), {2000}},
      {M::kOptimizedUnaryEncoding, 4, ln3, "ln 3", "Chile vote (Y, N, U, A)", chile, {100, 1000}},
      {M::kOptimizedLocalHashing, 4, ln3, "ln 3", "Chile vote (Y, N, U, A)", chile, {100, 1000}},
      {M::kOptimizedUnaryEncoding, 16, 1.0, "1", "uniform", Uniform(16), {1000}},
      {M::kOptimizedLocalHashing, 16, 1.0, "1", "uniform", Uniform(16), {1000}},
  };
}

std::string Percent(double p) { return absl::StrFormat("%.2f", 100.0 * p); }

}  // namespace

bool PrintCategoricalCoverage() {
  absl::PrintF(
      "\n## Categorical designs: all k shares at once\n\n"
      "Each category's share has the binary interval on the design's support channel (p*, q*) "
      "(common/categorical_estimate.h); its coverage alone is the binary exact coverage. What "
      "k intervals at 95 %% each do not give is 95 %% for all k at once: \"unadjusted\" is the "
      "probability that all k plain 95 %% intervals cover their shares, \"bonferroni\" and "
      "\"sidak\" the same with each interval at 1 - 0.05 / k and 0.95^(1/k) (Sidak is the "
      "default). k-RR: exact, the multinomial counts summed through Levin's Poisson "
      "representation (common/categorical_coverage.h). OUE and OLH: %d simulated surveys through "
      "the real randomizer, seed %d (Monte Carlo standard error about 0.5 points at 95 %%). "
      "\"per category\" is the worst exact coverage of one plain 95 %% interval over the k "
      "shares. Interval method: the support channel's default (Wilson for all rows here). "
      "Percent.\n\n",
      kTrials, kSeed);
  absl::PrintF(
      "| design | shares | n | per category | unadjusted | bonferroni | sidak | computed |\n"
      "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (const Row& row : Rows()) {
    absl::StatusOr<CategoricalDesign> d =
        CategoricalDesign::Create(row.mechanism, row.k, row.epsilon);
    if (!d.ok()) {
      std::fprintf(stderr, "%s\n", d.status().ToString().c_str());
      return false;
    }
    const std::string label = absl::StrFormat(
        "%s k = %d, eps = %s", CategoricalMechanismName(row.mechanism), row.k, row.epsilon_label);
    const bool exact = row.mechanism == CategoricalMechanism::kDirectEncoding;
    for (int64_t n : row.sizes) {
      double per_category = 1;
      const Channel ch = d->SupportChannel();
      for (double f : row.shares) {
        const double pi[] = {f};
        absl::StatusOr<CoverageCurve> c =
            ExactCoverage(ch, n, kLevel, DefaultIntervalMethod(ch).method, pi);
        if (!c.ok()) {
          std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
          return false;
        }
        per_category = std::min(per_category, c->worst);
      }
      std::string cells[3];
      const std::optional<SimultaneousMethod> methods[3] = {
          std::nullopt, SimultaneousMethod::kBonferroni, SimultaneousMethod::kSidak};
      for (int m = 0; m < 3; ++m) {
        if (exact) {
          absl::StatusOr<double> c =
              ExactSimultaneousCoverage(*d, n, row.shares, kLevel, std::nullopt, methods[m]);
          if (!c.ok()) {
            std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
            return false;
          }
          cells[m] = Percent(*c);
        } else {
          absl::StatusOr<SimulatedCoverage> c = SimulateCategoricalCoverage(
              *d, n, row.shares, kLevel, std::nullopt, methods[m], kTrials, kSeed);
          if (!c.ok()) {
            std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
            return false;
          }
          cells[m] = Percent(c->simultaneous);
        }
      }
      absl::PrintF("| %s | %s | %d | %s | %s | %s | %s | %s |\n", label, row.shares_label, n,
                   Percent(per_category), cells[0], cells[1], cells[2],
                   exact ? "exact" : "seeded Monte Carlo");
    }
  }
  return true;
}

}  // namespace deniable::tools
