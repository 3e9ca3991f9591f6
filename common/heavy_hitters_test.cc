#include "deniable/common/heavy_hitters.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "deniable/common/draws.h"
#include "deniable/common/heavy_hitters_estimate.h"
#include "deniable/common/heavy_hitters_mechanism.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "heavy_hitters_population.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

HeavyHittersDesign Small() {
  HeavyHittersDesign d;
  d.max_length = 4;
  d.rows = 4;
  d.width = 64;
  d.salt = 0x5eed;
  return d;
}

TEST(HeavyHittersDesignTest, RefusesEachFieldByName) {
  HeavyHittersDesign d = Small();
  d.width = 1000;
  EXPECT_THAT(ValidateHeavyHittersDesign(d).message(), HasSubstr("width"));
  d = Small();
  d.max_length = 0;
  EXPECT_THAT(ValidateHeavyHittersDesign(d).message(), HasSubstr("max_length"));
  d = Small();
  d.holdout_share = 1;
  EXPECT_THAT(ValidateHeavyHittersDesign(d).message(), HasSubstr("holdout_share"));
  d = Small();
  d.epsilon = 0;
  EXPECT_THAT(ValidateHeavyHittersDesign(d).message(), HasSubstr("epsilon"));
  EXPECT_TRUE(ValidateHeavyHittersDesign(Small()).ok());
}

TEST(HeavyHittersValueTest, RefusesLongValuesAndNulWithoutEchoingThem) {
  const absl::Status long_value = ValidateHeavyHitterValue(Small(), "secret");
  EXPECT_EQ(long_value.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(long_value.message(), HasSubstr("6 bytes"));
  EXPECT_THAT(long_value.message(), ::testing::Not(HasSubstr("secret")));
  EXPECT_THAT(ValidateHeavyHitterValue(Small(), std::string("a\0b", 3)).message(),
              HasSubstr("offset 1"));
  EXPECT_TRUE(ValidateHeavyHitterValue(Small(), "").ok());
}

TEST(HeavyHittersPrefixTest, PrefixesEndInNulOnlyPastTheValue) {
  EXPECT_EQ(HeavyHittersPrefix("abc", 2), "ab");
  EXPECT_EQ(HeavyHittersPrefix("abc", 3), "abc");
  EXPECT_EQ(HeavyHittersPrefix("abc", 4), std::string("abc\0", 4));
  EXPECT_EQ(HeavyHittersPrefix("abc", 5), std::string("abc\0", 4));
  EXPECT_EQ(HeavyHittersPrefix("abc", kHeavyHittersEstimationGroup), std::string("abc\0", 4));
}

// The hash is the SDKs' contract: these values are fixed by the definition in heavy_hitters.h
// (FNV-1a 64 over salt, group, row, prefix; splitmix64's mixer), computed independently.
TEST(HeavyHittersHashTest, MatchesTheDefinition) {
  HeavyHittersDesign d;
  d.salt = 0;
  d.width = 1 << 16;
  auto reference = [](uint64_t salt, uint8_t group, uint8_t row, const std::string& p) {
    uint64_t h = 0xcbf29ce484222325ull;
    std::vector<uint8_t> bytes;
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(salt >> (8 * i)));
    bytes.push_back(group);
    bytes.push_back(row);
    for (char c : p) bytes.push_back(static_cast<uint8_t>(c));
    for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return static_cast<uint32_t>((h ^ (h >> 31)) & 0xffff);
  };
  for (uint64_t salt : {0ull, 1ull, 0x0123456789abcdefull}) {
    d.salt = salt;
    for (const std::string& p :
         std::vector<std::string>{"", "a", "example.com", std::string("x\0", 2)}) {
      EXPECT_EQ(HeavyHittersHash(d, 3, 7, p), reference(salt, 3, 7, p)) << p;
    }
  }
}

TEST(HeavyHittersRandomizeTest, KeepsTheTrueEntryAtTheKeepProbability) {
  const HeavyHittersDesign d = Small();
  std::mt19937_64 gen(20261202);
  BitGenDraws draws(gen);
  int kept = 0;
  constexpr int kReports = 20000;
  for (int i = 0; i < kReports; ++i) {
    const HeavyHittersReport r = *RandomizeHeavyHitter(d, "ab", 1, draws);
    const uint32_t cell = HeavyHittersHash(d, 1, r.row, "a");
    kept += r.bit == HadamardPlus(cell, r.coefficient);
  }
  // a = 3/4 at eps = ln 3; 20000 reports: sd 0.0031, so 0.75 +- 0.0125 is 4 sd (seeded).
  EXPECT_NEAR(static_cast<double>(kept) / kReports, 0.75, 0.0125);
  EXPECT_THAT(RandomizeHeavyHitter(d, "ab", 6, draws).status().message(), HasSubstr("group"));
}

TEST(HeavyHittersIncrementsTest, TwoCountersAtMostAndFieldsNamed) {
  const HeavyHittersDesign d = Small();
  const auto one = *HeavyHittersIncrements(d, {2, 1, 5, true}, "reports[0]");
  EXPECT_EQ(one[0], 2 * HeavyHittersCell(d, 2, 1, 5));
  EXPECT_EQ(one[1], one[0] + 1);
  EXPECT_EQ((*HeavyHittersIncrements(d, {2, 1, 5, false}, "r"))[1], -1);
  EXPECT_THAT(HeavyHittersIncrements(d, {2, 4, 5, true}, "reports[3]").status().message(),
              HasSubstr("reports[3].row"));
  EXPECT_THAT(HeavyHittersIncrements(d, {2, 1, 64, true}, "r").status().message(),
              HasSubstr("r.coefficient"));
  EXPECT_LT(one[1], HeavyHittersCounterCount(d));
}

// The support count through the transform equals counting agreeing reports one by one.
TEST(HeavyHittersSketchTest, SupportEqualsDirectCount) {
  const HeavyHittersDesign d = Small();
  std::mt19937_64 gen(11);
  BitGenDraws draws(gen);
  std::vector<int64_t> counters(HeavyHittersCounterCount(d), 0);
  std::vector<HeavyHittersReport> reports;
  const std::vector<std::string> values = {"ab", "abc", "zz", ""};
  for (int i = 0; i < 3000; ++i) {
    const HeavyHittersReport r = *RandomizeHeavyHitter(d, values[i % 4], i % 6, draws);
    reports.push_back(r);
    const auto inc = *HeavyHittersIncrements(d, r, "r");
    ++counters[inc[0]];
    if (inc[1] >= 0) ++counters[inc[1]];
  }
  const HeavyHittersSketch sketch = *HeavyHittersSketch::FromCounters(d, counters);
  EXPECT_EQ(sketch.Devices(), 3000);
  for (uint32_t g = 0; g <= 5; ++g) {
    for (const std::string& p : std::vector<std::string>{"a", "ab", std::string("ab\0", 3), "q"}) {
      int64_t agreeing = 0;
      int64_t n = 0;
      for (const HeavyHittersReport& r : reports) {
        if (r.group != g) continue;
        ++n;
        agreeing += r.bit == HadamardPlus(HeavyHittersHash(d, g, r.row, p), r.coefficient);
      }
      const HeavyHittersSketch::Support s = sketch.SupportOf(g, p);
      EXPECT_EQ(s.agreeing, agreeing) << g << " " << p;
      EXPECT_EQ(s.reports, n);
      EXPECT_EQ(sketch.GroupReports(g), n);
    }
  }
}

TEST(HeavyHittersSketchTest, RefusesBadCounters) {
  const HeavyHittersDesign d = Small();
  std::vector<int64_t> counters(HeavyHittersCounterCount(d), 0);
  EXPECT_THAT(
      HeavyHittersSketch::FromCounters(d, std::span(counters).subspan(1)).status().message(),
      HasSubstr("counters"));
  counters[1] = 1;  // a bit 1 at a cell with no reports
  EXPECT_THAT(HeavyHittersSketch::FromCounters(d, counters).status().message(),
              HasSubstr("counters[0]"));
}

TEST(HeavyHittersQueryTest, RefusesOptionsAndEmptyGroupsByName) {
  const HeavyHittersDesign d = Small();
  std::vector<int64_t> counters(HeavyHittersCounterCount(d), 0);
  const HeavyHittersSketch sketch = *HeavyHittersSketch::FromCounters(d, counters);
  HeavyHittersQueryOptions o;
  o.max_prefixes = 0;
  EXPECT_THAT(DiscoverHeavyHitters(sketch, o).status().message(), HasSubstr("max_prefixes"));
  EXPECT_EQ(DiscoverHeavyHitters(sketch, {}).status().code(),
            absl::StatusCode::kFailedPrecondition);
  const std::vector<std::string> bad = {"ok", "toolong"};
  EXPECT_THAT(EstimateFrequencies(sketch, bad, {}).status().message(), HasSubstr("candidates[1]"));
}

// The clone probability of the shuffle bound (shuffle.h) is the largest gamma with
// R(x)(r) >= gamma/2 (R(x0)(r) + R(x1)(r)) for every report r and values x, x0, x1. Found here by
// search over the prefixes of a small design: two values sharing the entry at a place where a
// third's differs bind it at (1 - a) / a = e^-eps, below the yes/no bit's 2 / (e^eps + 1).
TEST(HeavyHittersMechanismTest, CloneProbabilityIsTheGeneralBound) {
  HeavyHittersDesign d;
  d.epsilon = 1.5;
  d.max_length = 4;
  d.rows = 2;
  d.width = 8;
  d.salt = 5;
  const HeavyHittersMechanism mechanism(d);
  const double a = HeavyHittersKeepProbability(d);
  const std::vector<std::string> values = {"a", "b", "c", "d", "e", "f"};
  double gamma = 1;
  for (uint32_t row = 0; row < 2; ++row) {
    for (uint32_t l = 0; l < 8; ++l) {
      for (bool bit : {false, true}) {
        // P(bit | value) at the place (group 0, row, l); the place's own probability cancels.
        auto p = [&](const std::string& v) {
          const bool entry = HadamardPlus(HeavyHittersHash(d, 0, row, HeavyHittersPrefix(v, 0)), l);
          return entry == bit ? a : 1 - a;
        };
        for (const std::string& x : values) {
          for (const std::string& x0 : values) {
            for (const std::string& x1 : values) {
              if (x0 != x1) gamma = std::min(gamma, 2 * p(x) / (p(x0) + p(x1)));
            }
          }
        }
      }
    }
  }
  EXPECT_NEAR(gamma, std::exp(-1.5), 1e-12);
  EXPECT_DOUBLE_EQ(mechanism.CloneProbability(), std::exp(-1.5));
  EXPECT_LT(mechanism.CloneProbability(), 2 / (std::exp(1.5) + 1));
}

TEST(HeavyHittersPlannerTest, MoreDevicesForSmallerSharesAndThresholdAgrees) {
  const HeavyHittersDesign d;
  const HeavyHittersQueryOptions o;
  const int64_t for5 = *HeavyHittersDevicesNeeded(d, 0.05, 0.9, o);
  const int64_t for2 = *HeavyHittersDevicesNeeded(d, 0.02, 0.9, o);
  EXPECT_GT(for2, for5);
  // At the planned devices the threshold is the planned share (within the bisection's steps).
  const double t = HeavyHittersDetectionThreshold(d, HeavyHittersGroupSizes::Expected(d, for5), o,
                                                  d.max_length, o.max_prefixes);
  EXPECT_NEAR(t, 0.05, 1e-3);
  EXPECT_THAT(HeavyHittersDevicesNeeded(d, 0, 0.9, o).status().message(), HasSubstr("share"));
}

}  // namespace
}  // namespace deniable
