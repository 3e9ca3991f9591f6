// A seeded Zipf population of distinct strings and its simulated reports, for the heavy-hitters
// tests and bench (issue 40's measurement: Zipf(1.1) over 10^6 strings of up to 32 bytes).
#ifndef DENIABLE_COMMON_HEAVY_HITTERS_POPULATION_H_
#define DENIABLE_COMMON_HEAVY_HITTERS_POPULATION_H_

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "deniable/common/draws.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/common/heavy_hitters_estimate.h"

namespace deniable::testing {

// `distinct` strings of 1 .. max_length lowercase letters (and '.', '/'), ranked; P(rank i) is
// proportional to i^-exponent.
struct ZipfPopulation {
  std::vector<std::string> values;
  std::vector<double> cdf;

  ZipfPopulation(int64_t distinct, double exponent, int max_length, uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::unordered_set<std::string> seen;
    const std::string alphabet = "abcdefghijklmnopqrstuvwxyz./";
    std::uniform_int_distribution<int> length(1, max_length);
    std::uniform_int_distribution<size_t> letter(0, alphabet.size() - 1);
    while (static_cast<int64_t>(values.size()) < distinct) {
      std::string v(length(gen), 'a');
      for (char& c : v) c = alphabet[letter(gen)];
      if (seen.insert(v).second) values.push_back(std::move(v));
    }
    double sum = 0;
    for (int64_t i = 1; i <= distinct; ++i) {
      sum += std::pow(static_cast<double>(i), -exponent);
      cdf.push_back(sum);
    }
    for (double& c : cdf) c /= sum;
  }

  size_t Sample(std::mt19937_64& gen) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(gen);
    return std::min<size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin(),
                            values.size() - 1);
  }
};

// One run: `devices` devices each draw a value and a group and send one report; returns the
// summed counters and fills `truth` with each drawn value's share among the devices.
inline std::vector<int64_t> SimulateHeavyHitters(const HeavyHittersDesign& design,
                                                 const ZipfPopulation& population, int64_t devices,
                                                 uint64_t seed,
                                                 std::unordered_map<std::string, double>* truth) {
  std::mt19937_64 gen(seed);
  BitGenDraws draws(gen);
  std::vector<int64_t> counters(HeavyHittersCounterCount(design), 0);
  std::vector<int64_t> drawn(population.values.size(), 0);
  for (int64_t d = 0; d < devices; ++d) {
    const size_t rank = population.Sample(gen);
    ++drawn[rank];
    const uint32_t group = DrawHeavyHittersGroup(design, draws);
    const HeavyHittersReport r =
        *RandomizeHeavyHitter(design, population.values[rank], group, draws);
    const auto inc = *HeavyHittersIncrements(design, r, "report");
    ++counters[inc[0]];
    if (inc[1] >= 0) ++counters[inc[1]];
  }
  truth->clear();
  for (size_t i = 0; i < drawn.size(); ++i) {
    if (drawn[i] > 0) {
      (*truth)[population.values[i]] = static_cast<double>(drawn[i]) / devices;
    }
  }
  return counters;
}

// Issue 40's figures over several seeded runs of n devices (DiscoverHeavyHitters at its defaults).
struct HeavyHittersTally {
  int64_t heavy = 0;          // values with a true share >= the stated threshold
  int64_t recalled = 0;       // of them, returned
  int64_t returned = 0;       // values returned
  int64_t not_held = 0;       // returned values no device holds
  int64_t flagged = 0;        // returned with above_threshold
  int64_t flagged_below = 0;  // of them, true share below the threshold
  int64_t covered = 0;        // returned values whose interval holds the true share
  int64_t covered_simultaneous = 0;
  double threshold_sum = 0;
  double discovery_seconds = 0;  // the longest DiscoverHeavyHitters call (sketch included)
  int runs = 0;
  double recall() const { return heavy > 0 ? static_cast<double>(recalled) / heavy : 0; }
  double coverage() const { return returned > 0 ? static_cast<double>(covered) / returned : 0; }
};

// `runs` runs of `devices` devices, seeds first_seed, first_seed + 1, ...
inline HeavyHittersTally MeasureHeavyHitters(const HeavyHittersDesign& design,
                                             const ZipfPopulation& population, int64_t devices,
                                             int runs, uint64_t first_seed) {
  HeavyHittersTally t;
  for (int r = 0; r < runs; ++r) {
    std::unordered_map<std::string, double> truth;
    const std::vector<int64_t> counters =
        SimulateHeavyHitters(design, population, devices, first_seed + r, &truth);
    const auto start = std::chrono::steady_clock::now();
    const HeavyHittersSketch sketch = *HeavyHittersSketch::FromCounters(design, counters);
    const HeavyHittersAnswer answer = *DiscoverHeavyHitters(sketch, {});
    t.discovery_seconds =
        std::max(t.discovery_seconds,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    const double tau = answer.detection_threshold;
    t.threshold_sum += tau;
    ++t.runs;
    std::unordered_set<std::string> returned;
    for (const HeavyHitterEstimate& e : answer.values) returned.insert(e.value);
    for (const auto& [value, share] : truth) {
      if (share >= tau) {
        ++t.heavy;
        t.recalled += returned.count(value);
      }
    }
    for (const HeavyHitterEstimate& e : answer.values) {
      const auto it = truth.find(e.value);
      const double share = it == truth.end() ? 0 : it->second;
      ++t.returned;
      t.not_held += it == truth.end();
      if (e.above_threshold) {
        ++t.flagged;
        t.flagged_below += share < tau;
      }
      t.covered += e.interval.lower <= share && share <= e.interval.upper;
      t.covered_simultaneous += e.simultaneous.lower <= share && share <= e.simultaneous.upper;
    }
  }
  return t;
}

}  // namespace deniable::testing

#endif  // DENIABLE_COMMON_HEAVY_HITTERS_POPULATION_H_
