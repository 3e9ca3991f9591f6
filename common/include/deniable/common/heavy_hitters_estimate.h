// Heavy hitters over an open dictionary: the collector side (heavy_hitters.h is the device side).
//
// From one design version's summed counters the collector answers two questions
// (docs/statistics.md, section "Heavy hitters", derives every formula here):
//   - frequency: the share of any candidate value given at query time (EstimateFrequencies);
//   - discovery: the most frequent values with no candidates (DiscoverHeavyHitters): prefix
//     extending over the value's bytes (Wang, Li, Jha, "Locally differentially private heavy
//     hitter identification", 2017 (PEM); Bassily, Nissim, Stemmer, Thakurta, "Practical locally
//     private heavy hitters", 2017 (TreeHist)), one discovery level per device, then each found
//     value's share estimated from the estimation group only (group 0), whose devices took no
//     part in finding it: sample splitting keeps the intervals valid after selection.
//
// The estimator. For a prefix p of group g, a report (row j, coefficient l, bit) "agrees" with p
// when its bit equals H[h_{g,j}(p)][l]. A report of a device whose prefix hashes to the same cell
// agrees with probability a = e^eps / (1 + e^eps); any other with probability 1/2 (the rows of H
// are orthogonal). So the agreeing count s of N reports is binomial with lambda = 1/2 + (a - 1/2)
// q, q = P(h_{g,j}(prefix of the device) = h_{g,j}(p)), a binary randomized-response channel (a,
// 1/2) on the event "same cell". Under the random-hash model (the salt is drawn before any data) E
// q = f + (1 - f) / W, which gives the debiased share (Apple's count-mean-sketch debiasing)
//   f_hat = (W / (W - 1)) (q_hat - 1 / W),   q_hat = (s / N - 1/2) / (a - 1/2),
//   Var_sampling(f_hat) = (W / (W - 1))^2 lambda (1 - lambda) / (N (a - 1/2)^2),
// plus the hash-collision term: for fixed hashes f_hat is off by the other values' mass in p's
// cells, mean 0 over the salt with variance at most sum_{u != p} f_u^2 / (R W); the answers bound
// it by (the found values' squared shares + the detection threshold) / (R W), assuming every value
// not found has a share below the threshold, and add it to the variance (collision_sd).
// Intervals are normal (Wald) on f_hat with that variance, clipped to [0, 1].
//
// Pure functions; thread-safe. A HeavyHittersSketch is immutable after FromCounters.
#ifndef DENIABLE_COMMON_HEAVY_HITTERS_ESTIMATE_H_
#define DENIABLE_COMMON_HEAVY_HITTERS_ESTIMATE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/common/interval.h"

namespace deniable {

// The summed counters of one design version, transformed for fast scoring: per (group, row) the
// Walsh-Hadamard transform of (2 ones - reports) over the coefficients (W log W each).
class HeavyHittersSketch {
 public:
  // `counters`: HeavyHittersCounterCount(design) sums in the layout of heavy_hitters.h.
  // Errors: INVALID_ARGUMENT naming the design's field (ValidateHeavyHittersDesign) or "counters"
  // (wrong length, a negative count, ones above reports at a cell).
  static absl::StatusOr<HeavyHittersSketch> FromCounters(const HeavyHittersDesign& design,
                                                         std::span<const int64_t> counters);

  const HeavyHittersDesign& design() const { return design_; }
  // Reports of `group` (all its rows and coefficients). REQUIRES: group <= L.
  int64_t GroupReports(uint32_t group) const;
  // Reports of `group` at `row`. REQUIRES: group <= L, row < R.
  int64_t RowReports(uint32_t group, int row) const {
    return row_reports_[static_cast<size_t>(group) * design_.rows + row];
  }
  // Reports of every group: one per device and window.
  int64_t Devices() const { return devices_; }

  // The reports of `group` that agree with `prefix` (see above), and the group's reports.
  struct Support {
    int64_t agreeing = 0;
    int64_t reports = 0;
  };
  // REQUIRES: group <= L.
  Support SupportOf(uint32_t group, absl::string_view prefix) const;

 private:
  HeavyHittersDesign design_;
  int64_t devices_ = 0;
  std::vector<int64_t> row_reports_;  // [group * R + row]
  std::vector<int64_t> transform_;    // [(group * R + row) * W + cell]
};

struct HeavyHittersQueryOptions {
  double confidence_level = 0.95;  // of each interval, and of the simultaneous ones over a list
  int max_prefixes = 64;           // T: prefixes kept per discovery level, in [1, 4096]
  // A prefix is kept at its level when its share estimate exceeds keep_z standard errors (those
  // of a share of 0), in [0, 10]. Low: a kept false prefix costs only time; a lost true one is
  // a value not found.
  double keep_z = 1.0;
  // The detection threshold is the smallest share found with this probability, in (0, 1).
  double detection_probability = 0.9;
  // EstimateFrequencies only: pool every group whose reports carry the whole value (group 0 and
  // the levels past the value's length). Valid for candidates chosen without looking at this
  // data (a list known in advance); for values taken from a discovery on the same data, set false
  // (group 0 alone), which DiscoverHeavyHitters does.
  bool pooled = true;
};

// Errors: INVALID_ARGUMENT naming "confidence_level", "max_prefixes", "keep_z" or
// "detection_probability".
absl::Status ValidateHeavyHittersQueryOptions(const HeavyHittersQueryOptions& options);

struct HeavyHitterEstimate {
  std::string value;
  int64_t reports = 0;              // N: the reports the share is estimated from
  int64_t agreeing = 0;             // s
  double share = 0;                 // f_hat, debiased; may fall outside [0, 1]
  double count = 0;                 // share * devices: the devices holding the value, estimated
  double sampling_sd = 0;           // sqrt(Var_sampling)
  double collision_sd = 0;          // the hash-collision allowance
  double standard_error = 0;        // sqrt(sampling_sd^2 + collision_sd^2)
  PrevalenceInterval interval;      // this value alone, at the confidence level
  PrevalenceInterval simultaneous;  // every value of the answer at once (Sidak)
  // DiscoverHeavyHitters only: the share exceeds the detection threshold, decided by
  // Benjamini-Hochberg over the values tested (false discovery rate <= 1 - confidence_level).
  bool above_threshold = false;
};

struct HeavyHittersAnswer {
  int64_t devices = 0;             // reports of every group
  int64_t estimation_reports = 0;  // group 0's
  double confidence_level = 0;
  double per_value_level = 0;  // each simultaneous interval's level: level^(1 / tested)
  int64_t tested = 0;          // values whose intervals the simultaneous level covers
  // The smallest share of a value of max_length bytes found (discovery) with probability
  // detection_probability at these group sizes (HeavyHittersDetectionProbability).
  double detection_threshold = 0;
  std::vector<HeavyHitterEstimate> values;
  // DiscoverHeavyHitters: prefixes kept at each level 1 .. (as far as discovery went).
  std::vector<int64_t> prefixes_per_level;
};

// The shares of `candidates` (each a valid value), in their order; simultaneous over the list.
// Errors: INVALID_ARGUMENT naming "candidates[i]" or an option; FAILED_PRECONDITION when the
// sketch has no reports in the groups needed.
absl::StatusOr<HeavyHittersAnswer> EstimateFrequencies(const HeavyHittersSketch& sketch,
                                                       std::span<const std::string> candidates,
                                                       const HeavyHittersQueryOptions& options);

// The values found by prefix extending over the levels, each with its share from group 0; the
// answer lists those whose simultaneous interval (over every value tested) lies above 0, by
// share descending. Errors: INVALID_ARGUMENT naming an option; FAILED_PRECONDITION when group 0
// or a level has no reports.
absl::StatusOr<HeavyHittersAnswer> DiscoverHeavyHitters(const HeavyHittersSketch& sketch,
                                                        const HeavyHittersQueryOptions& options);

// The group sizes a detection probability is computed at.
struct HeavyHittersGroupSizes {
  int64_t estimation = 0;       // group 0's reports
  std::vector<int64_t> levels;  // levels 1 .. L
  // The expected sizes for `devices` devices: devices * holdout_share and
  // devices * (1 - holdout_share) / L (rounded down).
  static HeavyHittersGroupSizes Expected(const HeavyHittersDesign& design, int64_t devices);
};

// P(DiscoverHeavyHitters returns a value of `length` bytes and share `share`), normal
// approximation: every level 1 .. length + 1 keeps its prefix (estimate above keep_z standard
// errors; the cap max_prefixes ignored) and its group-0 simultaneous interval, at `tested` values,
// lies above 0. REQUIRES: valid design and options, 0 <= length <= max_length, share in [0, 1].
double HeavyHittersDetectionProbability(const HeavyHittersDesign& design,
                                        const HeavyHittersGroupSizes& sizes,
                                        const HeavyHittersQueryOptions& options, int length,
                                        double share, int64_t tested);

// The smallest share with HeavyHittersDetectionProbability >= options.detection_probability for
// a value of `length` bytes (bisection to 1e-6); 1 when none reaches it.
double HeavyHittersDetectionThreshold(const HeavyHittersDesign& design,
                                      const HeavyHittersGroupSizes& sizes,
                                      const HeavyHittersQueryOptions& options, int length,
                                      int64_t tested);

// The planner: the devices needed so that a value of max_length bytes and share `share` is found
// with probability `probability` (options.detection_probability is ignored).
// Errors: INVALID_ARGUMENT naming "share" or "probability" (each in (0, 1)) or an option;
// OUT_OF_RANGE when more than 10^15 devices would be needed.
absl::StatusOr<int64_t> HeavyHittersDevicesNeeded(const HeavyHittersDesign& design, double share,
                                                  double probability,
                                                  const HeavyHittersQueryOptions& options);

}  // namespace deniable

#endif  // DENIABLE_COMMON_HEAVY_HITTERS_ESTIMATE_H_
