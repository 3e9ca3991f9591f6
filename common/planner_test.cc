#include "deniable/common/planner.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace planner_test {

using ::testing::HasSubstr;

constexpr double kZ95 = 1.959963984540054;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// The normal-approximation half-width of the prevalence interval with n reports.
double HalfWidth(const Channel& c, double pi, int64_t n) {
  const double lambda = pi * c.a + (1 - pi) * c.b;
  return kZ95 * std::sqrt(lambda * (1 - lambda) / n) / std::fabs(c.a - c.b);
}

// Two coins, +/- 5 points at 95 %, worst case: 1.96^2 / (4 * 0.05^2 * 0.5^2) = 1536.6 -> 1537.
TEST(PlannerTest, TwoCoinWorstCaseFivePointsNeeds1537) {
  absl::StatusOr<int64_t> n = WorstCaseSampleSize(Design::TwoCoin().channel(), 0.05, 0.95);
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, 1537);
}

// The returned n is the smallest that meets the half-width: n reaches it, n - 1 does not.
TEST(PlannerTest, SampleSizeIsTheSmallestThatMeetsTheHalfWidth) {
  for (Channel c : {Design::TwoCoin().channel(), Design::TailsSaysYes().channel(),
                    Channel{0.3, 0.9}, Channel{0.62, 0.38}}) {
    for (double pi : {0.02, 0.15, 0.5, 0.8}) {
      for (double h : {0.01, 0.03, 0.1}) {
        absl::StatusOr<int64_t> n = RequiredSampleSize(c, h, 0.95, pi);
        ASSERT_TRUE(n.ok()) << n.status();
        EXPECT_LE(HalfWidth(c, pi, *n), h * (1 + 1e-12));
        if (*n > 1) {
          EXPECT_GT(HalfWidth(c, pi, *n - 1), h);
        }
      }
    }
  }
}

// The worst case over pi is lambda = 1/2 when 1/2 lies between a and b, and then it dominates
// every assumed pi.
TEST(PlannerTest, WorstCaseDominatesEveryAssumedPrevalence) {
  const Channel c = Design::TwoCoin().channel();
  const int64_t worst = WorstCaseSampleSize(c, 0.02, 0.95).value();
  // pi = 1/2 gives lambda = 1/2 for the symmetric two-coin channel.
  EXPECT_EQ(worst, RequiredSampleSize(c, 0.02, 0.95, 0.5).value());
  for (int i = 0; i <= 20; ++i) {
    EXPECT_LE(RequiredSampleSize(c, 0.02, 0.95, i / 20.0).value(), worst);
  }
}

// If 1/2 is outside [b, a] (a = 0.9, b = 0.7) lambda = 1/2 cannot happen; the worst case is the
// end nearest 1/2, lambda = b = 0.7 (at pi = 0).
TEST(PlannerTest, WorstCaseUsesReachableLambdaWhenHalfIsOutsideChannel) {
  const Channel c{0.9, 0.7};
  EXPECT_EQ(WorstCaseSampleSize(c, 0.05, 0.95).value(),
            RequiredSampleSize(c, 0.05, 0.95, 0.0).value());
  const double expected = std::ceil(kZ95 * kZ95 * 0.21 / (0.0025 * 0.04));
  EXPECT_NEAR(static_cast<double>(WorstCaseSampleSize(c, 0.05, 0.95).value()), expected, 1.0);
}

// Halving the half-width quadruples n (up to rounding).
TEST(PlannerTest, HalvingHalfWidthQuadruplesSampleSize) {
  const Channel c = Design::TwoCoin().channel();
  const double n1 = static_cast<double>(WorstCaseSampleSize(c, 0.04, 0.95).value());
  const double n2 = static_cast<double>(WorstCaseSampleSize(c, 0.02, 0.95).value());
  EXPECT_NEAR(n2 / n1, 4.0, 4.0 / n1);
}

// Seed 001: Var = pi_C (1 - pi_C) / (n P^2) against pi_A (1 - pi_A) / n for a direct question.
TEST(PlannerTest, VarianceInflationMatchesSeed001Ratio) {
  const double big_p = 0.7, pi_b = 0.25, pi_a = 0.1;
  const Channel c = Design::UnrelatedQuestion(big_p, pi_b).value().channel();
  const double pi_c = big_p * pi_a + (1 - big_p) * pi_b;
  EXPECT_NEAR(VarianceInflation(c, pi_a).value(),
              pi_c * (1 - pi_c) / (big_p * big_p) / (pi_a * (1 - pi_a)), 1e-12);
}

// Two coins at pi = 1/2: lambda = 1/2, (1/4) / (1/4 * 1/4) = 4.
TEST(PlannerTest, TwoCoinVarianceInflationAtOneHalfIsFour) {
  EXPECT_NEAR(VarianceInflation(Design::TwoCoin().channel(), 0.5).value(), 4.0, 1e-15);
}

TEST(PlannerTest, VarianceInflationIsAtLeastOne) {
  for (Channel c : {Design::TwoCoin().channel(), Design::TailsSaysYes().channel(),
                    Channel{0.99, 0.01}, Channel{1.0, 0.0}, Channel{0.2, 0.7}}) {
    for (int i = 1; i < 100; ++i) {
      EXPECT_GE(VarianceInflation(c, i / 100.0).value(), 1.0 - 1e-12);
    }
  }
  EXPECT_NEAR(VarianceInflation(Channel{1.0, 0.0}, 0.3).value(), 1.0, 1e-15);  // no noise
}

TEST(PlannerTest, PlannerFailsOnBadArgumentsNamingThem) {
  const Channel c = Design::TwoCoin().channel();
  auto expect = [](absl::Status s, const char* name) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(std::string(s.message()), HasSubstr(name));
  };
  expect(RequiredSampleSize(c, 0.0, 0.95, 0.5).status(), "half_width");
  expect(RequiredSampleSize(c, kNan, 0.95, 0.5).status(), "half_width");
  expect(RequiredSampleSize(c, -0.1, 0.95, 0.5).status(), "half_width");
  expect(RequiredSampleSize(c, 0.05, 1.0, 0.5).status(), "confidence_level");
  expect(RequiredSampleSize(c, 0.05, kNan, 0.5).status(), "confidence_level");
  expect(RequiredSampleSize(c, 0.05, 0.95, 1.5).status(), "pi must");
  expect(RequiredSampleSize(c, 0.05, 0.95, kNan).status(), "pi must");
  expect(WorstCaseSampleSize(Channel{0.5, 0.5}, 0.05, 0.95).status(), "a must differ from b");
  expect(VarianceInflation(c, 0.0).status(), "pi must be in (0, 1)");
  expect(VarianceInflation(c, 1.0).status(), "pi must be in (0, 1)");
  expect(VarianceInflation(c, kNan).status(), "pi must be in (0, 1)");
}

TEST(PlannerTest, PlannerReportsOutOfRangeForAbsurdPrecision) {
  absl::StatusOr<int64_t> n = WorstCaseSampleSize(Channel{0.5 + 1e-9, 0.5}, 1e-9, 0.95);
  EXPECT_EQ(n.status().code(), absl::StatusCode::kOutOfRange);
}

}  // namespace planner_test
}  // namespace
}  // namespace deniable
