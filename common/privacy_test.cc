#include "deniable/common/privacy.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace privacy_test {

using ::testing::HasSubstr;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

double Yes(const Channel& c, double pi) { return PosteriorGivenYes(c, pi).value(); }
double No(const Channel& c, double pi) { return PosteriorGivenNo(c, pi).value(); }

// Seed 004: P(C = 1 | R = 1) = 3p / (2p + 1) and P(C = 1 | R = 0) = p / (3 - 2p).
TEST(PrivacyTest, TwoCoinPosteriorsMatchSeed004) {
  const Channel c = Design::TwoCoin().channel();
  for (int i = 0; i <= 100; ++i) {
    const double pi = i / 100.0;
    EXPECT_NEAR(Yes(c, pi), 3 * pi / (2 * pi + 1), 1e-15) << pi;
    EXPECT_NEAR(No(c, pi), pi / (3 - 2 * pi), 1e-15) << pi;
    if (pi > 0 && pi < 1) {
      EXPECT_GT(Yes(c, pi), pi);  // a "yes" raises the probability, a "no" lowers it
      EXPECT_LT(No(c, pi), pi);
    }
  }
}

// Seed 004: the gap P(C=1 | R=1) - p is largest at p = (sqrt 3 - 1) / 2 = 0.366, posterior 0.634.
TEST(PrivacyTest, TwoCoinLargestPosteriorGapIsAtSeed004Point) {
  const Channel c = Design::TwoCoin().channel();
  double best_pi = 0, best_gap = -1;
  for (int i = 0; i <= 100000; ++i) {
    const double pi = i / 100000.0;
    const double gap = Yes(c, pi) - pi;
    if (gap > best_gap) {
      best_gap = gap;
      best_pi = pi;
    }
  }
  EXPECT_NEAR(best_pi, (std::sqrt(3.0) - 1) / 2, 1e-3);
  EXPECT_NEAR(best_pi, 0.366, 1e-3);
  EXPECT_NEAR(Yes(c, best_pi), 0.634, 1e-3);
}

// Seed 000: "tails says yes" gives a "no" no deniability: P(x = 1 | r = 0) = 0 for every prior.
TEST(PrivacyTest, TailsSaysYesNoRevealsTheTruth) {
  const Channel c = Design::TailsSaysYes().channel();
  for (double pi : {0.0, 0.1, 0.5, 0.9, 1.0}) {
    EXPECT_EQ(No(c, pi), pi == 1.0 ? 1.0 : 0.0) << pi;        // at pi = 1 a "no" cannot occur
    EXPECT_NEAR(Yes(c, pi), 2 * pi / (1 + pi), 1e-15) << pi;  // pi / (pi + (1 - pi) / 2)
  }
}

TEST(PrivacyTest, BinaryEntropyKnownValues) {
  EXPECT_EQ(BinaryEntropyBits(0.0), 0.0);
  EXPECT_EQ(BinaryEntropyBits(1.0), 0.0);
  EXPECT_DOUBLE_EQ(BinaryEntropyBits(0.5), 1.0);
  EXPECT_NEAR(BinaryEntropyBits(0.25), 2 - 0.75 * std::log2(3.0), 1e-15);  // 0.8113
  EXPECT_NEAR(BinaryEntropyBits(0.11), 0.4999, 1e-4);
  EXPECT_DOUBLE_EQ(PriorEntropyBits(0.25).value(), BinaryEntropyBits(0.25));
}

// Two coins at pi = 1/2: P(r = 1) = 1/2 and the posteriors are 3/4 and 1/4, so
// H(x | r) = h(1/4) = 0.811 bits and I(x; r) = 1 - h(1/4) = 0.189 bits.
TEST(PrivacyTest, TwoCoinEntropiesAtOneHalf) {
  absl::StatusOr<PrivacyFigures> f = ComputePrivacyFigures(Design::TwoCoin().channel(), 0.5);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_DOUBLE_EQ(f->epsilon, std::log(3.0));
  EXPECT_DOUBLE_EQ(f->posterior_given_yes, 0.75);
  EXPECT_DOUBLE_EQ(f->posterior_given_no, 0.25);
  EXPECT_DOUBLE_EQ(f->prior_entropy_bits, 1.0);
  EXPECT_NEAR(f->conditional_entropy_bits, 2 - 0.75 * std::log2(3.0), 1e-15);
  EXPECT_NEAR(f->mutual_information_bits, 0.75 * std::log2(3.0) - 1, 1e-15);
}

// Conditioning never increases entropy: 0 <= H(x | r) <= H(x), and I = H(x) - H(x | r) >= 0.
TEST(PrivacyTest, ConditionalEntropyNeverExceedsPriorEntropy) {
  for (Channel c : {Design::TwoCoin().channel(), Design::TailsSaysYes().channel(),
                    Channel{0.9, 0.05}, Channel{0.3, 0.6}, Channel{1.0, 0.0}}) {
    for (int i = 0; i <= 200; ++i) {
      const double pi = i / 200.0;
      const double h = PriorEntropyBits(pi).value();
      const double hc = ConditionalEntropyBits(c, pi).value();
      const double mi = MutualInformationBits(c, pi).value();
      EXPECT_GE(hc, 0.0);
      EXPECT_LE(hc, h + 1e-15) << pi;
      EXPECT_GE(mi, 0.0) << pi;
      EXPECT_NEAR(mi, h - hc, 1e-12) << pi;
    }
  }
}

// A channel that reveals x (a = 1, b = 0) leaves no uncertainty: I(x; r) = H(x).
TEST(PrivacyTest, RevealingChannelLeavesNoUncertainty) {
  const Channel c{1.0, 0.0};
  EXPECT_NEAR(ConditionalEntropyBits(c, 0.3).value(), 0.0, 1e-15);
  EXPECT_NEAR(MutualInformationBits(c, 0.3).value(), BinaryEntropyBits(0.3), 1e-15);
}

// The mutual information computed directly, sum P(x, r) log2(P(x, r) / (P(x) P(r))), agrees.
TEST(PrivacyTest, MutualInformationMatchesDefinitionFromJointLaw) {
  const Channel c{0.8, 0.3};
  for (double pi : {0.05, 0.3, 0.5, 0.77}) {
    const double p_yes = pi * c.a + (1 - pi) * c.b;
    const double joint[2][2] = {{(1 - pi) * (1 - c.b), (1 - pi) * c.b},
                                {pi * (1 - c.a), pi * c.a}};  // [x][r]
    const double px[2] = {1 - pi, pi}, pr[2] = {1 - p_yes, p_yes};
    double mi = 0;
    for (int x = 0; x < 2; ++x) {
      for (int r = 0; r < 2; ++r) mi += joint[x][r] * std::log2(joint[x][r] / (px[x] * pr[r]));
    }
    EXPECT_NEAR(MutualInformationBits(c, pi).value(), mi, 1e-14) << pi;
  }
}

// Seed 001, section 3: pi_B = P pi_A / ((1 - P)(1 - 2 pi_A)) makes p(xi = 0 | tau = 1) = 1/2, i.e.
// H(xi | tau = 1) = 1 bit. Seed 001 gives no numbers; these are worked by hand:
// P = 1/2, pi_A = 1/4: pi_B = (1/8) / (1/2 * 1/2) = 1/2.
// P = 0.3, pi_A = 0.2: pi_B = 0.06 / (0.7 * 0.6) = 1/7.
TEST(PrivacyTest, UninformativeInnocuousShareMakesAYesUninformative) {
  EXPECT_NEAR(UninformativeInnocuousShare(0.5, 0.25).value(), 0.5, 1e-15);
  EXPECT_NEAR(UninformativeInnocuousShare(0.3, 0.2).value(), 1.0 / 7.0, 1e-15);
  for (auto [big_p, pi_a] : {std::pair{0.5, 0.25}, {0.3, 0.2}, {0.8, 0.05}, {0.1, 0.45}}) {
    absl::StatusOr<double> pi_b = UninformativeInnocuousShare(big_p, pi_a);
    ASSERT_TRUE(pi_b.ok()) << pi_b.status();
    absl::StatusOr<Design> d = Design::UnrelatedQuestion(big_p, *pi_b);
    ASSERT_TRUE(d.ok()) << d.status();
    // Seed 001 eq. 4: p(xi = 0 | tau = 1) = (1 - P)(1 - pi_A) pi_B / pi_C.
    const double pi_c = big_p * pi_a + (1 - big_p) * *pi_b;
    EXPECT_NEAR((1 - big_p) * (1 - pi_a) * *pi_b / pi_c, 0.5, 1e-14);
    EXPECT_NEAR(Yes(d->channel(), pi_a), 0.5, 1e-14);
  }
}

TEST(PrivacyTest, UninformativeInnocuousShareFailsWhenPiAIsNotBelowOneHalf) {
  for (double pi_a : {0.0, 0.5, 0.7, 1.0}) {
    absl::StatusOr<double> r = UninformativeInnocuousShare(0.5, pi_a);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << pi_a;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("0 < pi_A < 1/2"));
  }
}

// P = 0.9, pi_A = 0.4: 0.36 / (0.1 * 0.2) = 18 > 1.
TEST(PrivacyTest, UninformativeInnocuousShareFailsWhenResultExceedsOne) {
  absl::StatusOr<double> r = UninformativeInnocuousShare(0.9, 0.4);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("> 1"));
}

TEST(PrivacyTest, UninformativeInnocuousShareFailsOnInvalidArguments) {
  for (double big_p : {0.0, 1.0, kNan, -0.2}) {
    absl::StatusOr<double> r = UninformativeInnocuousShare(big_p, 0.2);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("P must"));
  }
  absl::StatusOr<double> r = UninformativeInnocuousShare(0.5, kNan);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("pi_A must"));
}

TEST(PrivacyTest, FiguresFailWhenPiIsNanOrOutsideUnitInterval) {
  const Channel c = Design::TwoCoin().channel();
  for (double pi : {kNan, -0.1, 1.5}) {
    for (absl::Status s :
         {PosteriorGivenYes(c, pi).status(), PosteriorGivenNo(c, pi).status(),
          PriorEntropyBits(pi).status(), ConditionalEntropyBits(c, pi).status(),
          MutualInformationBits(c, pi).status(), ComputePrivacyFigures(c, pi).status()}) {
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
      EXPECT_THAT(std::string(s.message()), HasSubstr("pi must be in [0, 1]"));
    }
  }
}

TEST(PrivacyTest, FiguresFailOnInvalidChannel) {
  absl::StatusOr<double> r = PosteriorGivenYes(Channel{0.4, 0.4}, 0.5);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("a must differ from b"));
}

}  // namespace privacy_test
}  // namespace
}  // namespace deniable
