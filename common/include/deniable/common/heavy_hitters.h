// Heavy hitters over an open dictionary: the device side of the `heavy_hitters` kind.
//
// A value is a byte string of at most `max_length` bytes with no NUL byte (a crash signature, a
// URL, an app name). Each device is assigned ONE group at random, once (DrawHeavyHittersGroup):
//   - group 0, the estimation group (a share `holdout_share` of devices): its reports carry the
//     whole value; only they estimate the shares of values that discovery returned, so those
//     intervals stay valid after selection (sample splitting; docs/statistics.md, section
//     "Heavy hitters");
//   - group g in [1, L], L = max_length + 1, a discovery level: its reports carry the prefix of
//     the first g bytes of the padded value (the value, then NUL bytes: a prefix that ends with
//     NUL is a whole value).
// A report is one bit of a Hadamard count-mean sketch (Apple's Differential Privacy Team,
// "Learning with Privacy at Scale", 2017, Hadamard Count Mean Sketch; Acharya, Sun and Zhang,
// "Hadamard Response", AISTATS 2019): the device draws a row j in [0, R) and a coefficient l in
// [0, W), hashes its prefix to the cell c = h_{g,j}(prefix) in [0, W), and sends the Hadamard
// entry H[c][l] = (-1)^popcount(c & l) as a bit (1 for +1), kept with probability
// e^eps / (1 + e^eps) and flipped otherwise. Group, row and coefficient do not depend on the value,
// so one report is eps-locally differentially private (eps in nats), whatever the value.
//
// The collector keeps only sums: per (group, row, coefficient) cell, the reports at it and those
// with bit 1 (HeavyHittersCounter). One report adds to exactly two counters of a layout of
// 2 (L + 1) R W (at the defaults, 34 * 16 * 1024 * 2 = 1 114 112), so storage keeps them sparsely.
//
// All functions are pure and thread-safe (a Draws passed in must not be shared between threads).
#ifndef DENIABLE_COMMON_HEAVY_HITTERS_H_
#define DENIABLE_COMMON_HEAVY_HITTERS_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/draws.h"

namespace deniable {

struct HeavyHittersDesign {
  double epsilon = 1.0986122886681098;  // nats per report (ln 3), in (0, 20]
  int max_length = 32;                  // bytes, in [1, 64]
  int rows = 16;                        // R: hash functions, in [1, 64]
  int width = 1024;                     // W: sketch width, a power of two in [2, 65536]
  double holdout_share = 0.25;          // devices in the estimation group, in (0, 1)
  // Salts the hash functions. Drawn at random when the metric is created (before any data), so
  // the random-hash model of the collision bound (heavy_hitters_estimate.h) holds.
  uint64_t salt = 0;
};

// The limits above. Errors: INVALID_ARGUMENT naming "epsilon", "max_length", "rows", "width" or
// "holdout_share".
absl::Status ValidateHeavyHittersDesign(const HeavyHittersDesign& design);

// L = max_length + 1: the discovery levels are the groups 1 .. L.
inline int HeavyHittersLevels(const HeavyHittersDesign& design) { return design.max_length + 1; }
// L + 1 groups: 0 (estimation) and the L levels.
inline int HeavyHittersGroups(const HeavyHittersDesign& design) { return design.max_length + 2; }
// The group whose reports carry the whole padded value for estimation.
inline constexpr uint32_t kHeavyHittersEstimationGroup = 0;

// P(a report's bit is the true Hadamard entry) = e^eps / (1 + e^eps).
double HeavyHittersKeepProbability(const HeavyHittersDesign& design);

// Checks a value: at most max_length bytes, no NUL byte. Errors: INVALID_ARGUMENT naming "value"
// (its length and the limit, or the NUL byte's offset; never the value itself).
absl::Status ValidateHeavyHitterValue(const HeavyHittersDesign& design, absl::string_view value);

// The bytes a report of `group` encodes: group 0 and groups > value.size() give the value and a
// NUL (the whole value); group g <= value.size() gives the first g bytes. REQUIRES: a valid value.
std::string HeavyHittersPrefix(absl::string_view value, uint32_t group);

// The hash h_{group,row}(prefix) in [0, width): FNV-1a (64 bit) over the salt's 8 bytes (little
// endian), the group and row as one byte each, then the prefix; finished by splitmix64's mixer
// (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", 2014) and masked to the
// width. Every SDK computes the same (tests/golden/heavy_hitters_vectors.json).
uint32_t HeavyHittersHash(const HeavyHittersDesign& design, uint32_t group, uint32_t row,
                          absl::string_view prefix);

// H[cell][coefficient] of the W x W Sylvester-Hadamard matrix: +1 -> true, -1 -> false.
inline bool HadamardPlus(uint32_t cell, uint32_t coefficient) {
  return (__builtin_popcount(cell & coefficient) & 1) == 0;
}

// The device's group, drawn once and kept with its state: Bernoulli(holdout_share) for group 0,
// otherwise Below(L) + 1 (the draws in that order).
uint32_t DrawHeavyHittersGroup(const HeavyHittersDesign& design, Draws& draws);

// One report as sent.
struct HeavyHittersReport {
  uint32_t group = 0;        // [0, L]
  uint32_t row = 0;          // [0, R)
  uint32_t coefficient = 0;  // [0, W)
  bool bit = false;
};

// Randomizes `value` for a device of `group`. Draws, in order: row = Below(R), coefficient =
// Below(W), keep = Bernoulli(HeavyHittersKeepProbability); bit = H[c][l] when kept, flipped
// otherwise. The value and the true entry never leave this function.
// Errors: INVALID_ARGUMENT naming "value" (ValidateHeavyHitterValue) or "group" (> L).
absl::StatusOr<HeavyHittersReport> RandomizeHeavyHitter(const HeavyHittersDesign& design,
                                                        absl::string_view value, uint32_t group,
                                                        Draws& draws);

// Layout: counter 2 * cell is the reports at the cell, 2 * cell + 1 those of them with bit 1,
// where cell = (group * R + row) * W + coefficient.
int64_t HeavyHittersCounterCount(const HeavyHittersDesign& design);
inline int64_t HeavyHittersCell(const HeavyHittersDesign& design, uint32_t group, uint32_t row,
                                uint32_t coefficient) {
  return (static_cast<int64_t>(group) * design.rows + row) * design.width + coefficient;
}

// The counters one report adds to: {2 cell} for bit 0, {2 cell, 2 cell + 1} for bit 1 (the
// second entry is -1 when unused). `field` prefixes the messages ("reports[3].heavy_hitters").
// Errors: INVALID_ARGUMENT naming "<field>.group", "<field>.row" or "<field>.coefficient".
absl::StatusOr<std::array<int64_t, 2>> HeavyHittersIncrements(const HeavyHittersDesign& design,
                                                              const HeavyHittersReport& report,
                                                              absl::string_view field);

}  // namespace deniable

#endif  // DENIABLE_COMMON_HEAVY_HITTERS_H_
