// deniable-heavy-hitters-table: prints, as Markdown, issue 40's accuracy table of
// docs/statistics.md section 11.5 over more runs than its CTest: Zipf(1.1) over 10^6 distinct
// strings of up to 32 bytes, n devices, the default design at eps = ln 3 and 4; recall of the
// values above the stated threshold, values returned that no device holds, coverage, the
// threshold against the theory's order sqrt(log d / n) / eps, and the longest discovery.
//
// Usage: deniable-heavy-hitters-table [runs [devices]]   (defaults 20 1000000; ~3 s a run)
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "absl/strings/numbers.h"
#include "common/heavy_hitters_population.h"
#include "deniable/common/heavy_hitters.h"

int main(int argc, char** argv) {
  int64_t runs = 20;
  int64_t devices = 1'000'000;
  if ((argc > 1 && (!absl::SimpleAtoi(argv[1], &runs) || runs <= 0)) ||
      (argc > 2 && (!absl::SimpleAtoi(argv[2], &devices) || devices <= 0))) {
    std::fprintf(stderr, "usage: deniable-heavy-hitters-table [runs [devices]] (positive)\n");
    return 2;
  }
  const deniable::testing::ZipfPopulation population(1'000'000, 1.1, 32, 20261202);
  std::printf(
      "| eps | threshold | theory order | values above | recall | returned | not held | "
      "coverage (each / simultaneous) | discovery s |\n|---|---|---|---|---|---|---|---|---|\n");
  for (double eps : {std::log(3.0), 4.0}) {
    deniable::HeavyHittersDesign design;
    design.epsilon = eps;
    design.salt = 0x9e3779b97f4a7c15ull;
    const deniable::testing::HeavyHittersTally t = deniable::testing::MeasureHeavyHitters(
        design, population, devices, static_cast<int>(runs), 1000);
    const double theory = std::sqrt(32 * std::log(256.0) / static_cast<double>(devices)) / eps;
    std::printf("| %.4f | %.2f %% | %.2f %% | %lld | %.3f | %lld | %lld | %.3f / %.3f | %.2f |\n",
                eps, 100 * t.threshold_sum / t.runs, 100 * theory, static_cast<long long>(t.heavy),
                t.recall(), static_cast<long long>(t.returned), static_cast<long long>(t.not_held),
                t.coverage(), static_cast<double>(t.covered_simultaneous) / t.returned,
                t.discovery_seconds);
  }
  return 0;
}
