#include "deniable/common/randomizer.h"

#include <cmath>
#include <cstdint>
#include <random>

#include "absl/random/mock_distributions.h"
#include "absl/random/mocking_bit_gen.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace randomizer_test {

using ::testing::_;
using ::testing::DoubleEq;
using ::testing::Return;

// The mechanism must draw "yes" with probability a for a true "yes" and b for a true "no".
TEST(RandomizerTest, TrueYesIsReportedYesWithProbabilityA) {
  absl::MockingBitGen gen;
  EXPECT_CALL(absl::MockBernoulli(), Call(gen, DoubleEq(0.75)))
      .WillOnce(Return(true))
      .WillOnce(Return(false));
  EXPECT_TRUE(RandomizeAnswer(Design::TwoCoin().channel(), true, gen));
  EXPECT_FALSE(RandomizeAnswer(Design::TwoCoin().channel(), true, gen));
}

TEST(RandomizerTest, TrueNoIsReportedYesWithProbabilityB) {
  absl::MockingBitGen gen;
  EXPECT_CALL(absl::MockBernoulli(), Call(gen, DoubleEq(0.25)))
      .WillOnce(Return(false))
      .WillOnce(Return(true));
  EXPECT_FALSE(RandomizeAnswer(Design::TwoCoin().channel(), false, gen));
  EXPECT_TRUE(RandomizeAnswer(Design::TwoCoin().channel(), false, gen));
}

TEST(RandomizerTest, UsesExactlyOneBernoulliDrawPerReport) {
  absl::MockingBitGen gen;
  EXPECT_CALL(absl::MockBernoulli(), Call(gen, _)).Times(3).WillRepeatedly(Return(true));
  const Channel c{0.9, 0.2};
  RandomizeAnswer(c, true, gen);
  RandomizeAnswer(c, false, gen);
  RandomizeAnswer(c, true, gen);
}

// "Tails says yes" (a = 1): a true "yes" is always reported "yes". Exact, whatever the seed.
TEST(RandomizerTest, TailsSaysYesNeverReportsNoForTrueYes) {
  std::mt19937_64 gen(20240601);
  for (int i = 0; i < 10000; ++i) {
    ASSERT_TRUE(RandomizeAnswer(Design::TailsSaysYes().channel(), true, gen));
  }
}

// With b = 0 (forced response, q = 0) a true "no" is never reported "yes".
TEST(RandomizerTest, ZeroBNeverReportsYesForTrueNo) {
  absl::StatusOr<Design> d = Design::ForcedResponse(0.5, 0.0);
  ASSERT_TRUE(d.ok());
  std::mt19937_64 gen(7);
  for (int i = 0; i < 10000; ++i) ASSERT_FALSE(RandomizeAnswer(d->channel(), false, gen));
}

// Seeded frequency check: with a fixed seed the count is deterministic; the tolerance (5 binomial
// standard deviations) is what a correct mechanism meets for all but a 6e-7 share of seeds.
TEST(RandomizerTest, SeededFrequenciesMatchTheChannel) {
  std::mt19937_64 gen(12345);
  const Channel c = Design::TwoCoin().channel();
  const int n = 200000;
  int yes_given_yes = 0, yes_given_no = 0;
  for (int i = 0; i < n; ++i) {
    yes_given_yes += RandomizeAnswer(c, true, gen);
    yes_given_no += RandomizeAnswer(c, false, gen);
  }
  const double sd = std::sqrt(n * 0.75 * 0.25);
  EXPECT_NEAR(yes_given_yes, n * 0.75, 5 * sd);
  EXPECT_NEAR(yes_given_no, n * 0.25, 5 * sd);
}

// Seed 002: a population at 15 %, two coins; 75 % of reports equal the truth on average
// (50 % truthful by the first coin, 25 % by chance).
TEST(RandomizerTest, SeededShareOfTruthfulReportsIsThreeQuarters) {
  std::mt19937_64 gen(123);
  std::bernoulli_distribution population(0.15);
  const int n = 200000;
  int agree = 0;
  for (int i = 0; i < n; ++i) {
    const bool x = population(gen);
    agree += RandomizeAnswer(Design::TwoCoin().channel(), x, gen) == x;
  }
  EXPECT_NEAR(agree, 0.75 * n, 5 * std::sqrt(n * 0.75 * 0.25));
}

}  // namespace randomizer_test
}  // namespace
}  // namespace deniable
