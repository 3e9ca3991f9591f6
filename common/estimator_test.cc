#include "deniable/common/estimator.h"

#include <cmath>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace estimator_test {

using ::testing::HasSubstr;

// Seed 002: 200 people, two coins, estimate 2 * mean - 0.5 = 0.14, so 64 "yes" bits.
TEST(EstimatorTest, TwoCoinEstimateIsTwiceYesShareMinusHalf) {
  absl::StatusOr<PrevalenceEstimate> e =
      EstimatePrevalence(Design::TwoCoin().channel(), /*yes_count=*/64, /*n=*/200);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->n, 200);
  EXPECT_EQ(e->yes_count, 64);
  EXPECT_DOUBLE_EQ(e->yes_share, 0.32);
  EXPECT_NEAR(e->unbiased, 0.14, 1e-15);
  EXPECT_NEAR(e->clipped, 0.14, 1e-15);
  // Seed 003: N+ = 2 R+ - 0.5 n = 128 - 100 = 28 true "yes".
  EXPECT_NEAR(e->estimated_yes_count, 28.0, 1e-12);
}

TEST(EstimatorTest, TwoCoinIdentityHoldsForEveryCount) {
  const Channel c = Design::TwoCoin().channel();
  for (int64_t y = 0; y <= 40; ++y) {
    absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(c, y, 40);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_NEAR(e->unbiased, 2.0 * (y / 40.0) - 0.5, 1e-14) << y;
  }
}

// Seed 000, section 1: 100 answers, 30 "no" among the truthful half, so 30 "no" overall;
// real "no" = 2 * 30 = 60, hence 40 % "yes". pi = 1 - 2 * (share of "no").
TEST(EstimatorTest, TailsSaysYesEstimateIsOneMinusTwiceNoShare) {
  absl::StatusOr<PrevalenceEstimate> e =
      EstimatePrevalence(Design::TailsSaysYes().channel(), /*yes_count=*/70, /*n=*/100);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->unbiased, 1.0 - 2.0 * 0.30, 1e-15);
  EXPECT_NEAR(e->estimated_yes_count, 40.0, 1e-12);
}

// Var(pi_hat) = lambda (1 - lambda) / (n (a - b)^2), estimated at lambda_hat.
TEST(EstimatorTest, VarianceIsBinomialVarianceOverGapSquared) {
  absl::StatusOr<PrevalenceEstimate> e =
      EstimatePrevalence(Design::TwoCoin().channel(), /*yes_count=*/120, /*n=*/200);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_NEAR(e->unbiased, 0.7, 1e-15);
  EXPECT_NEAR(e->variance, 0.6 * 0.4 / (200 * 0.25), 1e-15);  // 0.0048
  EXPECT_NEAR(e->standard_error, std::sqrt(0.0048), 1e-15);
}

// Seed 001: V(pi_A hat) = pi_C (1 - pi_C) / (n P^2); here a - b = P whatever pi_B is.
TEST(EstimatorTest, UnrelatedQuestionVarianceIsSeed001Formula) {
  const double big_p = 0.7, pi_b = 1.0 / 12.0;
  absl::StatusOr<Design> d = Design::UnrelatedQuestion(big_p, pi_b);
  ASSERT_TRUE(d.ok());
  const int64_t n = 500, y = 180;
  absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(d->channel(), y, n);
  ASSERT_TRUE(e.ok()) << e.status();
  const double pi_c = static_cast<double>(y) / n;
  EXPECT_NEAR(e->unbiased, (pi_c - (1 - big_p) * pi_b) / big_p, 1e-14);  // seed 001's pi_A hat
  EXPECT_NEAR(e->variance, pi_c * (1 - pi_c) / (n * big_p * big_p), 1e-15);
}

// With a < b (mirrored question, P < 1/2) the map is decreasing: more "yes" means less prevalence.
TEST(EstimatorTest, MirroredQuestionWithSmallPIsDecreasingInYesShare) {
  absl::StatusOr<Design> d = Design::MirroredQuestion(0.2);
  ASSERT_TRUE(d.ok());
  absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(d->channel(), 30, 100);
  ASSERT_TRUE(e.ok());
  // Warner 1965 eq. 5: pi_hat = (P - 1) / (2P - 1) + lambda_hat / (2P - 1).
  EXPECT_NEAR(e->unbiased, (0.2 - 1) / (0.4 - 1) + 0.3 / (0.4 - 1), 1e-14);  // 5/6
  EXPECT_NEAR(e->variance, 0.3 * 0.7 / (100 * 0.6 * 0.6), 1e-15);
}

TEST(EstimatorTest, ClippedEstimateStaysInUnitIntervalWhileUnbiasedDoesNot) {
  const Channel c = Design::TwoCoin().channel();
  absl::StatusOr<PrevalenceEstimate> low = EstimatePrevalence(c, 10, 100);  // 0.2 - 0.5
  ASSERT_TRUE(low.ok());
  EXPECT_NEAR(low->unbiased, -0.3, 1e-15);
  EXPECT_EQ(low->clipped, 0.0);
  absl::StatusOr<PrevalenceEstimate> high = EstimatePrevalence(c, 90, 100);  // 1.8 - 0.5
  ASSERT_TRUE(high.ok());
  EXPECT_NEAR(high->unbiased, 1.3, 1e-15);
  EXPECT_EQ(high->clipped, 1.0);
}

TEST(EstimatorTest, PrevalenceAndYesShareMapsAreInverse) {
  const Channel c{0.62, 0.31};
  for (double pi : {0.0, 0.1, 0.5, 0.93, 1.0}) {
    EXPECT_NEAR(PrevalenceFromYesShare(c, YesShareFromPrevalence(c, pi)), pi, 1e-14);
  }
  EXPECT_DOUBLE_EQ(YesShareFromPrevalence(c, 0.0), c.b);
  EXPECT_DOUBLE_EQ(YesShareFromPrevalence(c, 1.0), c.a);
}

// The estimator is unbiased: E[pi_hat] = sum over y of Binomial(y; n, lambda) pi_hat(y) = pi,
// and its exact variance is lambda (1 - lambda) / (n (a - b)^2).
TEST(EstimatorTest, EstimateIsExactlyUnbiasedUnderTheBinomialLaw) {
  const Channel c{0.8, 0.35};
  const int64_t n = 60;
  const double pi = 0.27;
  const double lambda = YesShareFromPrevalence(c, pi);
  double mean = 0, second = 0;
  for (int64_t y = 0; y <= n; ++y) {
    const double pmf =
        std::exp(std::lgamma(n + 1.0) - std::lgamma(y + 1.0) - std::lgamma(n - y + 1.0) +
                 y * std::log(lambda) + (n - y) * std::log(1 - lambda));
    absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(c, y, n);
    ASSERT_TRUE(e.ok());
    mean += pmf * e->unbiased;
    second += pmf * e->unbiased * e->unbiased;
  }
  EXPECT_NEAR(mean, pi, 1e-12);
  EXPECT_NEAR(second - mean * mean, lambda * (1 - lambda) / (n * 0.45 * 0.45), 1e-12);
}

TEST(EstimatorTest, EstimateFailsWhenNIsNotPositive) {
  absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(Design::TwoCoin().channel(), 0, 0);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("n must be > 0"));
}

TEST(EstimatorTest, EstimateFailsWhenYesCountIsOutsideZeroToN) {
  for (int64_t y : {-1, 11}) {
    absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(Design::TwoCoin().channel(), y, 10);
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(e.status().message()), HasSubstr("yes_count"));
  }
}

TEST(EstimatorTest, EstimateFailsWhenChannelHasAEqualToB) {
  absl::StatusOr<PrevalenceEstimate> e = EstimatePrevalence(Channel{0.5, 0.5}, 3, 10);
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("a must differ from b"));
}

}  // namespace estimator_test
}  // namespace
}  // namespace deniable
