// Numeric designs (numeric.h): the design's checks, clipping, alpha-point rounding and the
// numeric mechanisms' draws, validation and counter increments (numeric_mechanism.h).
#include "deniable/common/numeric.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/random/random.h"
#include "deniable/common/draws.h"
#include "deniable/common/mechanism.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace numeric_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NumericDesign Mean(double eps, std::vector<double> edges) {
  return NumericDesign::Create(NumericMechanism::kOneBitMean, eps, std::move(edges), 0).value();
}

NumericDesign Flip(double eps, std::vector<double> edges, int d) {
  return NumericDesign::Create(NumericMechanism::kDBitFlip, eps, std::move(edges), d).value();
}

TEST(NumericDesignTest, NamesRoundTrip) {
  for (NumericMechanism m : {NumericMechanism::kOneBitMean, NumericMechanism::kDBitFlip}) {
    EXPECT_EQ(ParseNumericMechanism(NumericMechanismName(m)).value(), m);
  }
  EXPECT_THAT(ParseNumericMechanism("median").status().message(), HasSubstr("mechanism"));
}

TEST(NumericDesignTest, CreateChecksEveryParameter) {
  const auto create = [](NumericMechanism m, double eps, std::vector<double> e, int d) {
    return NumericDesign::Create(m, eps, std::move(e), d).status();
  };
  const NumericMechanism mean = NumericMechanism::kOneBitMean;
  const NumericMechanism flip = NumericMechanism::kDBitFlip;
  EXPECT_THAT(create(mean, 0.0, {0, 1}, 0).message(), HasSubstr("epsilon"));
  EXPECT_THAT(create(mean, NAN, {0, 1}, 0).message(), HasSubstr("epsilon"));
  EXPECT_THAT(create(flip, 0.003, {0, 1, 2}, 0).message(), HasSubstr("epsilon"));
  EXPECT_THAT(create(mean, 1.0, {0}, 0).message(), HasSubstr("bucket_edges"));
  EXPECT_THAT(create(mean, 1.0, {0, 2, 1}, 0).message(), HasSubstr("bucket_edges[2]"));
  EXPECT_THAT(create(mean, 1.0, {0, INFINITY}, 0).message(), HasSubstr("bucket_edges[1]"));
  EXPECT_THAT(create(mean, 1.0, {0, 1}, 1).message(), HasSubstr("sampled_buckets"));
  EXPECT_THAT(create(flip, 1.0, {0, 1, 2}, 3).message(), HasSubstr("sampled_buckets"));
  std::vector<double> many(258);
  for (size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i);
  EXPECT_THAT(create(flip, 1.0, many, 0).message(), HasSubstr("bucket_edges"));
  EXPECT_EQ(Flip(1.0, {0, 1, 2, 3}, 0).sampled_buckets(), 3);  // 0 means k
  EXPECT_EQ(Mean(1.0, {0, 1}).sampled_buckets(), 0);
}

TEST(NumericDesignTest, EqualWidthBuildsTheEdges) {
  const NumericDesign d =
      NumericDesign::EqualWidth(NumericMechanism::kDBitFlip, 1.0, 0, 100, 0, 0).value();
  EXPECT_EQ(d.buckets(), 10);
  EXPECT_EQ(d.sampled_buckets(), 10);
  EXPECT_EQ(d.edges()[3], 30.0);
  EXPECT_EQ(d.hi(), 100.0);
  EXPECT_EQ(
      NumericDesign::EqualWidth(NumericMechanism::kOneBitMean, 1.0, 0, 1, 0, 0).value().edges(),
      std::vector<double>({0.0, 1.0}));
  EXPECT_THAT(
      NumericDesign::EqualWidth(NumericMechanism::kOneBitMean, 1.0, 1, 1, 0, 0).status().message(),
      HasSubstr("range"));
  EXPECT_THAT(
      NumericDesign::EqualWidth(NumericMechanism::kDBitFlip, 1.0, 0, 1, 300, 0).status().message(),
      HasSubstr("buckets"));
}

TEST(NumericDesignTest, ToStringNamesTheDesign) {
  EXPECT_EQ(Mean(std::log(3.0), {0, 100}).ToString(), "one_bit_mean(eps=1.0986, [0, 100], 1 cell)");
  EXPECT_EQ(NumericDesign::EqualWidth(NumericMechanism::kDBitFlip, std::log(3.0), 0, 100, 10, 0)
                .value()
                .ToString(),
            "d_bit_flip(k=10, d=10, eps=1.0986, [0, 100])");
}

TEST(NumericDesignTest, ClipValueTakesTheNearestEnd) {
  const NumericDesign d = Mean(1.0, {10, 20});
  EXPECT_FALSE(ClipValue(d, 15).clipped);
  EXPECT_EQ(ClipValue(d, 15).value, 15.0);
  EXPECT_TRUE(ClipValue(d, 5).clipped);
  EXPECT_EQ(ClipValue(d, 5).value, 10.0);
  EXPECT_EQ(ClipValue(d, 25).value, 20.0);
  EXPECT_TRUE(ClipValue(d, NAN).clipped);
  EXPECT_EQ(ClipValue(d, NAN).value, 10.0);
  EXPECT_FALSE(ClipValue(d, 20).clipped);
}

TEST(NumericDesignTest, AlphaPointRoundingIsUnbiased) {
  const NumericDesign d = Mean(1.0, {0, 10, 40});
  // x = 16: cell 1, r = 0.2: level 2 for alpha < 0.2, else 1.
  EXPECT_EQ(LevelOf(d, 16, 0.1), 2);
  EXPECT_EQ(LevelOf(d, 16, 0.2), 1);
  EXPECT_EQ(LevelOf(d, 16, 0.9), 1);
  EXPECT_EQ(LevelOf(d, 0, 0.0), 0);
  EXPECT_EQ(LevelOf(d, 10, 0.0), 1);  // on an edge: that edge for every alpha
  EXPECT_EQ(LevelOf(d, 40, 0.999), 2);
  // Over a fine grid of alpha the rounded value's mean is x.
  for (double x : {0.0, 3.0, 16.0, 27.5, 40.0}) {
    double sum = 0;
    const int steps = 10000;
    for (int i = 0; i < steps; ++i) {
      sum += d.edges()[static_cast<size_t>(LevelOf(d, x, (i + 0.5) / steps))];
    }
    EXPECT_NEAR(sum / steps, x, 30.0 / steps) << x;  // within one alpha step of a cell
  }
}

TEST(NumericDesignTest, DBitFlipLevelIsTheBucket) {
  const NumericDesign d = Flip(1.0, {0, 10, 20, 30}, 0);
  EXPECT_EQ(LevelOf(d, 0, 0.5), 0);
  EXPECT_EQ(LevelOf(d, 9.99, 0.0), 0);
  EXPECT_EQ(LevelOf(d, 10, 0.9), 1);
  EXPECT_EQ(LevelOf(d, 30, 0.1), 2);  // hi: the last bucket
}

TEST(NumericMechanismTest, LayoutsAndKind) {
  const auto mean = MechanismFor(Mean(1.0, {0, 1}));
  const auto flip = MechanismFor(Flip(1.0, {0, 1, 2, 3}, 2));
  EXPECT_EQ(mean->kind(), ReportKind::kNumeric);
  EXPECT_STREQ(ReportKindName(ReportKind::kNumeric), "numeric");
  EXPECT_EQ(mean->Layout().length(), 2);
  EXPECT_EQ(flip->Layout().length(), 7);
  EXPECT_DOUBLE_EQ(mean->ChannelOf(0).a, std::exp(1.0) / (std::exp(1.0) + 1.0));
  EXPECT_DOUBLE_EQ(flip->ChannelOf(4).a, std::exp(0.5) / (std::exp(0.5) + 1.0));
  EXPECT_DOUBLE_EQ(flip->ChannelOf(0).a, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(flip->ChannelOf(0).b, 2.0 / 3.0);
}

TEST(NumericMechanismTest, OneBitMeanDrawsOneBernoulliAtTheLevel) {
  const auto m = MechanismFor(Mean(std::log(3.0), {0, 50, 100}));
  // Level 1: t = 0.5, p = 1/4 + 0.5 * 1/2 = 1/2.
  const std::vector<double> low = {0.49}, high = {0.51};
  UniformDraws a(low), b(high);
  EXPECT_EQ(m->Randomize(1, a).value().bit, 1u);
  EXPECT_EQ(m->Randomize(1, b).value().bit, 0u);
  EXPECT_EQ(a.used(), 1u);
  EXPECT_THAT(m->Randomize(3, a).status().message(), HasSubstr("level"));
}

TEST(NumericMechanismTest, DBitFlipDrawsBucketsThenBits) {
  const auto m = MechanismFor(Flip(std::log(9.0), {0, 1, 2, 3, 4}, 2));  // a = 3: 3/4, 1/4
  // Below(4) on 0.6 -> 2; Below(3) on 0.9 -> index 2 of {0, 1, 3} = 3. Bits: bucket 2 (the
  // level) on 0.7 < 3/4 -> 1; bucket 3 on 0.3 >= 1/4 -> 0.
  const std::vector<double> u = {0.6, 0.9, 0.7, 0.3};
  UniformDraws draws(u);
  const WireAnswer w = m->Randomize(2, draws).value();
  EXPECT_TRUE(w.has_numeric);
  EXPECT_THAT(w.numeric.buckets, ElementsAre(2u, 3u));
  EXPECT_THAT(w.numeric.bits, ElementsAre(true, false));
  EXPECT_EQ(draws.used(), 4u);
  EXPECT_THAT(m->Randomize(4, draws).status().message(), HasSubstr("level"));
}

TEST(NumericMechanismTest, ValidateMapsReportsToIncrements) {
  const auto mean = MechanismFor(Mean(1.0, {0, 1}));
  WireAnswer one;
  one.bit = 1;
  EXPECT_THAT(mean->Validate(one, "reports[0]", "m").value().ones, ElementsAre(0));
  WireAnswer two;
  two.bit = 2;
  EXPECT_THAT(mean->Validate(two, "reports[0]", "m").status().message(),
              HasSubstr("reports[0].bit"));
  WireAnswer with_numeric;
  with_numeric.has_numeric = true;
  EXPECT_THAT(mean->Validate(with_numeric, "reports[0]", "m").status().message(),
              HasSubstr("reports[0].numeric"));

  const auto flip = MechanismFor(Flip(1.0, {0, 1, 2, 3}, 2));
  WireAnswer w;
  w.has_numeric = true;
  w.numeric.buckets = {0, 2};
  w.numeric.bits = {false, true};
  const CounterIncrements inc = flip->Validate(w, "reports[1]", "m").value();
  EXPECT_THAT(inc.ones, ElementsAre(0, 2, 5));  // s_0, s_2, y_2 (k + 2)
  std::vector<int64_t> counters(7, 0);
  inc.AddTo(counters);
  EXPECT_THAT(counters, ElementsAre(1, 1, 0, 1, 0, 0, 1));

  const auto refused = [&](WireAnswer a) {
    return std::string(flip->Validate(a, "reports[1]", "m").status().message());
  };
  WireAnswer bad = w;
  bad.numeric.buckets = {2, 0};
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].numeric.buckets[1]"));
  bad.numeric.buckets = {1, 1};
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].numeric.buckets[1]"));
  bad.numeric.buckets = {0, 3};
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].numeric.buckets[1]"));
  bad.numeric.buckets = {0};
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].numeric.buckets"));
  bad = w;
  bad.numeric.bits = {true};
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].numeric.bits"));
  bad = w;
  bad.bit = 1;
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].bit"));
  bad = w;
  bad.has_numeric = false;
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].numeric"));
  bad = w;
  bad.has_categorical = true;
  EXPECT_THAT(refused(bad), HasSubstr("reports[1].categorical"));
}

TEST(NumericMechanismTest, RandomizedReportsValidate) {
  const auto flip = MechanismFor(Flip(1.5, {0, 1, 2, 3, 4, 5}, 3));
  absl::BitGen gen;
  for (int i = 0; i < 200; ++i) {
    const WireAnswer w = flip->Randomize(i % 5, gen).value();
    EXPECT_TRUE(flip->Validate(w, "r", "m").ok());
  }
}

TEST(NumericMechanismTest, EpsilonAndCloneProbability) {
  EXPECT_DOUBLE_EQ(MechanismFor(Mean(1.2, {0, 1}))->Epsilon(), 1.2);
  EXPECT_DOUBLE_EQ(MechanismFor(Mean(1.2, {0, 1}))->CloneProbability(),
                   2.0 / (std::exp(1.2) + 1.0));
  EXPECT_DOUBLE_EQ(MechanismFor(Flip(1.2, {0, 1, 2}, 2))->Epsilon(), 1.2);
  EXPECT_DOUBLE_EQ(MechanismFor(Flip(1.2, {0, 1, 2}, 1))->Epsilon(), 0.6);
  EXPECT_DOUBLE_EQ(MechanismFor(Flip(1.2, {0, 1, 2}, 2))->CloneProbability(), std::exp(-1.2));
}

}  // namespace numeric_test
}  // namespace
}  // namespace deniable
