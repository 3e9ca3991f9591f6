#include "deniable/common/shuffle.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace shuffle_test {

using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// FMT21 section 5 / Apple's ml-shuffling-amplification README: n = 10^5 reports of a 4-LDP
// randomizer, delta = 10^-6: closed form "at most 0.5378" in their code's variant; Theorem 3.1 as
// printed gives 0.5347. Both are "about 0.54".
TEST(ShuffleTest, ClosedFormMatchesThePaper) {
  absl::StatusOr<double> eps = ClosedFormShuffleEpsilon(4.0, 100000, 1e-6);
  ASSERT_TRUE(eps.ok()) << eps.status();
  EXPECT_NEAR(*eps, 0.5347, 5e-4);
  // Direct evaluation of the formula, term by term.
  const double e = std::exp(4.0);
  const double inner = 8 * std::sqrt(e * std::log(4e6)) / std::sqrt(1e5) + 8 * e / 1e5;
  EXPECT_DOUBLE_EQ(*eps, std::log(1 + (e - 1) / (e + 1) * inner));
}

// The same setting, numerical bound for a generic 4-LDP randomizer: the paper's empirical
// analysis puts the epsilon between 0.1675 (lower bound) and 0.1728 (upper bound).
TEST(ShuffleTest, NumericalMatchesThePaper) {
  absl::StatusOr<double> eps =
      NumericalShuffleEpsilon(4.0, GenericCloneProbability(4.0), 100000, 1e-6);
  ASSERT_TRUE(eps.ok()) << eps.status();
  EXPECT_GE(*eps, 0.1675);
  EXPECT_LE(*eps, 0.1728);
}

TEST(ShuffleTest, NumericalIsBelowClosedFormAndLocal) {
  for (double eps0 : {0.5, 1.0, std::log(3.0), 2.0, 3.0}) {
    for (int64_t n : {10000, 100000, 1000000}) {
      absl::StatusOr<double> closed = ClosedFormShuffleEpsilon(eps0, n, 1e-6);
      absl::StatusOr<double> numeric =
          NumericalShuffleEpsilon(eps0, GenericCloneProbability(eps0), n, 1e-6);
      ASSERT_TRUE(closed.ok()) << closed.status();
      ASSERT_TRUE(numeric.ok()) << numeric.status();
      EXPECT_LT(*numeric, *closed) << eps0 << " " << n;
      EXPECT_LT(*numeric, eps0) << eps0 << " " << n;
    }
  }
}

// The numerical delta is a decreasing function of eps, 0 at eps0, and the epsilon found meets the
// target delta while a slightly smaller one does not.
TEST(ShuffleTest, NumericalEpsilonInvertsTheDelta) {
  const double eps0 = std::log(3.0), gamma = 0.5, delta = 1e-6;
  const int64_t n = 2532;
  absl::StatusOr<double> eps = NumericalShuffleEpsilon(eps0, gamma, n, delta);
  ASSERT_TRUE(eps.ok());
  EXPECT_LE(NumericalShuffleDelta(eps0, gamma, n, *eps).value(), delta);
  EXPECT_GT(NumericalShuffleDelta(eps0, gamma, n, *eps - 1e-3).value(), delta);
  EXPECT_EQ(NumericalShuffleDelta(eps0, gamma, n, eps0).value(), 0.0);
  double previous = 1.0;
  for (double e = 0.0; e < eps0; e += 0.05) {
    const double d = NumericalShuffleDelta(eps0, gamma, n, e).value();
    EXPECT_LE(d, previous + 1e-15) << e;
    previous = d;
  }
}

// One report (n = 1) is not amplified at all: P and Q are Bernoulli(alpha) and Bernoulli(1 -
// alpha), whose hockey-stick divergence at e^eps is alpha - e^eps (1 - alpha) exactly.
TEST(ShuffleTest, SingleReportDeltaIsExact) {
  const double eps0 = 2.0, alpha = std::exp(2.0) / (1 + std::exp(2.0));
  for (double e : {0.0, 0.5, 1.0, 1.9}) {
    EXPECT_NEAR(NumericalShuffleDelta(eps0, 0.3, 1, e).value(), alpha - std::exp(e) * (1 - alpha),
                1e-15);
  }
  absl::StatusOr<CentralPrivacy> c = AmplifiedEpsilon(eps0, 0.3, 1, 1e-6);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->amplified);
  EXPECT_EQ(c->epsilon, eps0);
  EXPECT_EQ(c->delta, 0.0);
  EXPECT_EQ(c->method, "local_only");
  EXPECT_THAT(c->note, HasSubstr("too few reports"));
}

// Against brute force: for small n the divergence can be summed over every (c, x) exactly.
TEST(ShuffleTest, NumericalDeltaMatchesBruteForceAtSmallN) {
  const double eps0 = 1.5, gamma = GenericCloneProbability(1.5);
  const double alpha = 1 / (1 + std::exp(-eps0));
  for (int64_t n : {2, 5, 30}) {
    for (double e : {0.2, 0.7, 1.2}) {
      double brute = 0;
      const int64_t m = n - 1;
      for (int64_t c = 0; c <= m; ++c) {
        const double pc =
            std::exp(std::lgamma(m + 1.0) - std::lgamma(c + 1.0) - std::lgamma(m - c + 1.0) +
                     c * std::log(gamma) + (m - c) * std::log1p(-gamma));
        auto b = [&](int64_t x) {
          if (x < 0 || x > c) return 0.0;
          return std::exp(std::lgamma(c + 1.0) - std::lgamma(x + 1.0) - std::lgamma(c - x + 1.0) -
                          c * std::log(2.0));
        };
        for (int64_t x = 0; x <= c + 1; ++x) {
          const double p = alpha * b(x - 1) + (1 - alpha) * b(x);
          const double q = (1 - alpha) * b(x - 1) + alpha * b(x);
          brute += pc * std::max(0.0, p - std::exp(e) * q);
        }
      }
      EXPECT_NEAR(NumericalShuffleDelta(eps0, gamma, n, e).value(), brute, 1e-12) << n << " " << e;
    }
  }
}

TEST(ShuffleTest, ClosedFormRefusesEpsilonAboveItsRange) {
  // log(1000 / (16 log(2e6))) = 1.46
  absl::StatusOr<double> eps = ClosedFormShuffleEpsilon(2.0, 1000, 1e-6);
  EXPECT_EQ(eps.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(eps.status().message(), HasSubstr("eps0 <= log(n / (16 log(2 / delta)))"));
  EXPECT_TRUE(ClosedFormShuffleEpsilon(1.4, 1000, 1e-6).ok());
}

// Outside the closed form's range the numerical bound still applies, and may still amplify.
TEST(ShuffleTest, NumericalWorksWhereClosedFormDoesNot) {
  absl::StatusOr<CentralPrivacy> c =
      AmplifiedEpsilon(2.0, GenericCloneProbability(2.0), 1000, 1e-6);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->amplified);
  EXPECT_LT(c->epsilon, 2.0);
  EXPECT_EQ(c->delta, 1e-6);
  EXPECT_EQ(c->method, "shuffle_numerical");
}

TEST(ShuffleTest, LargeLocalEpsilonWithFewReportsIsNotAmplified) {
  absl::StatusOr<CentralPrivacy> c =
      AmplifiedEpsilon(10.0, GenericCloneProbability(10.0), 50, 1e-6);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->amplified);
  EXPECT_EQ(c->epsilon, 10.0);
}

TEST(ShuffleTest, InfiniteLocalEpsilonIsReportedNotAmplified) {
  absl::StatusOr<CentralPrivacy> c = AmplifiedEpsilon(kInf, 0.0, 1000, 1e-6);
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->amplified);
  EXPECT_TRUE(std::isinf(c->epsilon));
  EXPECT_THAT(c->note, HasSubstr("infinite"));
}

// The channel-specific clone probability: 2 / (e^eps + 1) for symmetric designs (two coins: 1/2),
// at least the generic e^-eps, and a larger one gives a smaller epsilon.
TEST(ShuffleTest, BinaryCloneProbability) {
  EXPECT_DOUBLE_EQ(BinaryCloneProbability(Design::TwoCoin().channel()), 0.5);
  for (double eps : {0.1, 1.0, 3.0}) {
    const Channel c = Design::SymmetricEpsilon(eps)->channel();
    EXPECT_NEAR(BinaryCloneProbability(c), 2 / (std::exp(eps) + 1), 1e-15);
    EXPECT_GE(BinaryCloneProbability(c), GenericCloneProbability(eps));
  }
  const Channel fr = Design::ForcedResponse(0.6, 0.3)->channel();  // a = 0.72, b = 0.12
  EXPECT_GE(BinaryCloneProbability(fr), GenericCloneProbability(Epsilon(fr)));
  EXPECT_EQ(BinaryCloneProbability(Design::TailsSaysYes().channel()), 0.0);
  const double specific = NumericalShuffleEpsilon(std::log(3.0), 0.5, 10000, 1e-6).value();
  const double generic = NumericalShuffleEpsilon(std::log(3.0), 1.0 / 3, 10000, 1e-6).value();
  EXPECT_LT(specific, generic);
}

TEST(ShuffleTest, BadArgumentsNameTheField) {
  EXPECT_THAT(ClosedFormShuffleEpsilon(kNan, 10, 1e-6).status().message(), HasSubstr("eps0"));
  EXPECT_THAT(ClosedFormShuffleEpsilon(-1, 10, 1e-6).status().message(), HasSubstr("eps0"));
  EXPECT_THAT(ClosedFormShuffleEpsilon(1, 0, 1e-6).status().message(), HasSubstr("n must"));
  EXPECT_THAT(ClosedFormShuffleEpsilon(1, 10, 0).status().message(), HasSubstr("delta"));
  EXPECT_THAT(NumericalShuffleEpsilon(1, 0, 10, 1e-6).status().message(),
              HasSubstr("clone_probability"));
  EXPECT_THAT(NumericalShuffleEpsilon(1, 0.5, 10, 1.5).status().message(), HasSubstr("delta"));
  EXPECT_THAT(NumericalShuffleDelta(1, 0.5, 10, kNan).status().message(), HasSubstr("eps"));
  EXPECT_EQ(AmplifiedEpsilon(kNan, 0.5, 10, 1e-6).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AmplifiedEpsilon(1, 0.5, -3, 1e-6).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace shuffle_test
}  // namespace
}  // namespace deniable
