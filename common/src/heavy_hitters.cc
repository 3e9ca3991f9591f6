#include "deniable/common/heavy_hitters.h"

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {

absl::Status ValidateHeavyHittersDesign(const HeavyHittersDesign& design) {
  if (!(design.epsilon > 0 && design.epsilon <= 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("epsilon must be in (0, 20] nats, got ", design.epsilon));
  }
  if (design.max_length < 1 || design.max_length > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_length must be in [1, 64] bytes, got ", design.max_length));
  }
  if (design.rows < 1 || design.rows > 64) {
    return absl::InvalidArgumentError(absl::StrCat("rows must be in [1, 64], got ", design.rows));
  }
  if (design.width < 2 || design.width > 65536 || (design.width & (design.width - 1)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("width must be a power of two in [2, 65536], got ", design.width));
  }
  if (!(design.holdout_share > 0 && design.holdout_share < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("holdout_share must be in (0, 1), got ", design.holdout_share));
  }
  return absl::OkStatus();
}

double HeavyHittersKeepProbability(const HeavyHittersDesign& design) {
  return 1.0 / (1.0 + std::exp(-design.epsilon));
}

absl::Status ValidateHeavyHitterValue(const HeavyHittersDesign& design, absl::string_view value) {
  if (value.size() > static_cast<size_t>(design.max_length)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "value has ", value.size(), " bytes; the metric allows at most ", design.max_length));
  }
  const size_t nul = value.find('\0');
  if (nul != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("value has a NUL byte at offset ", nul, "; values are NUL-free bytes"));
  }
  return absl::OkStatus();
}

std::string HeavyHittersPrefix(absl::string_view value, uint32_t group) {
  if (group == kHeavyHittersEstimationGroup || group > value.size()) {
    std::string whole(value);
    whole.push_back('\0');
    return whole;
  }
  return std::string(value.substr(0, group));
}

uint32_t HeavyHittersHash(const HeavyHittersDesign& design, uint32_t group, uint32_t row,
                          absl::string_view prefix) {
  constexpr uint64_t kOffset = 14695981039346656037ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  uint64_t h = kOffset;
  auto add = [&h](uint8_t byte) {
    h ^= byte;
    h *= kPrime;
  };
  for (int i = 0; i < 8; ++i) add(static_cast<uint8_t>(design.salt >> (8 * i)));
  add(static_cast<uint8_t>(group));
  add(static_cast<uint8_t>(row));
  for (char c : prefix) add(static_cast<uint8_t>(c));
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<uint32_t>(h & static_cast<uint64_t>(design.width - 1));
}

uint32_t DrawHeavyHittersGroup(const HeavyHittersDesign& design, Draws& draws) {
  if (draws.Bernoulli(design.holdout_share)) return kHeavyHittersEstimationGroup;
  return draws.Below(static_cast<uint32_t>(HeavyHittersLevels(design))) + 1;
}

absl::StatusOr<HeavyHittersReport> RandomizeHeavyHitter(const HeavyHittersDesign& design,
                                                        absl::string_view value, uint32_t group,
                                                        Draws& draws) {
  if (absl::Status s = ValidateHeavyHitterValue(design, value); !s.ok()) return s;
  if (group > static_cast<uint32_t>(HeavyHittersLevels(design))) {
    return absl::InvalidArgumentError(
        absl::StrCat("group must be in [0, ", HeavyHittersLevels(design), "], got ", group));
  }
  HeavyHittersReport report;
  report.group = group;
  report.row = draws.Below(static_cast<uint32_t>(design.rows));
  report.coefficient = draws.Below(static_cast<uint32_t>(design.width));
  const uint32_t cell =
      HeavyHittersHash(design, group, report.row, HeavyHittersPrefix(value, group));
  const bool truth = HadamardPlus(cell, report.coefficient);
  const bool keep = draws.Bernoulli(HeavyHittersKeepProbability(design));
  report.bit = keep ? truth : !truth;
  return report;
}

int64_t HeavyHittersCounterCount(const HeavyHittersDesign& design) {
  return 2 * static_cast<int64_t>(HeavyHittersGroups(design)) * design.rows * design.width;
}

absl::StatusOr<std::array<int64_t, 2>> HeavyHittersIncrements(const HeavyHittersDesign& design,
                                                              const HeavyHittersReport& report,
                                                              absl::string_view field) {
  if (report.group > static_cast<uint32_t>(HeavyHittersLevels(design))) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".group must be in [0, ", HeavyHittersLevels(design), "], got ", report.group));
  }
  if (report.row >= static_cast<uint32_t>(design.rows)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".row must be in [0, ", design.rows, "), got ", report.row));
  }
  if (report.coefficient >= static_cast<uint32_t>(design.width)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".coefficient must be in [0, ",
                                                   design.width, "), got ", report.coefficient));
  }
  const int64_t cell = HeavyHittersCell(design, report.group, report.row, report.coefficient);
  return std::array<int64_t, 2>{2 * cell, report.bit ? 2 * cell + 1 : -1};
}

}  // namespace deniable
