#include "deniable/common/design.h"

#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace design_test {

using ::testing::HasSubstr;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Expects INVALID_ARGUMENT whose message names `parameter`.
template <typename T>
void ExpectInvalidArgumentNaming(const absl::StatusOr<T>& result, const char* parameter) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr(parameter));
}

// Seed 000, section 2 table: P[SI | SI] = 0.75, P[SI | NO] = 0.25; ratio 3, epsilon = ln 3.
TEST(DesignTest, TwoCoinHasSeedChannelAndEpsilonLn3) {
  const Design d = Design::TwoCoin();
  EXPECT_EQ(d.kind(), DesignKind::kTwoCoin);
  EXPECT_DOUBLE_EQ(d.channel().a, 0.75);
  EXPECT_DOUBLE_EQ(d.channel().b, 0.25);
  EXPECT_DOUBLE_EQ(Epsilon(d.channel()), std::log(3.0));
  EXPECT_NEAR(Epsilon(d.channel()), 1.0986, 1e-4);  // seed 003's printed 1.0986122886681098
}

// Seed 000, section 1: heads tells the truth, tails says "yes": a = 1, b = 1/2. A "no" reveals the
// truth, so no finite epsilon bounds the "no" ratio (1 - a) / (1 - b) = 0.
TEST(DesignTest, TailsSaysYesHasInfiniteEpsilon) {
  const Design d = Design::TailsSaysYes();
  EXPECT_EQ(d.channel().a, 1.0);
  EXPECT_EQ(d.channel().b, 0.5);
  EXPECT_EQ(Epsilon(d.channel()), kInf);
  // The "yes" ratio alone would be ln 2: deniability for "yes" only.
  EXPECT_DOUBLE_EQ(std::log(d.channel().a / d.channel().b), std::log(2.0));
}

TEST(DesignTest, ForcedResponseChannelFromPAndQ) {
  absl::StatusOr<Design> d = Design::ForcedResponse(0.6, 0.3);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->kind(), DesignKind::kForcedResponse);
  EXPECT_DOUBLE_EQ(d->channel().a, 0.6 + 0.4 * 0.3);
  EXPECT_DOUBLE_EQ(d->channel().b, 0.4 * 0.3);
  EXPECT_DOUBLE_EQ(d->p(), 0.6);
  EXPECT_DOUBLE_EQ(d->q(), 0.3);
}

TEST(DesignTest, ForcedResponseWithHalfAndHalfIsTheTwoCoinScheme) {
  absl::StatusOr<Design> d = Design::ForcedResponse(0.5, 0.5);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_DOUBLE_EQ(d->channel().a, Design::TwoCoin().channel().a);
  EXPECT_DOUBLE_EQ(d->channel().b, Design::TwoCoin().channel().b);
}

TEST(DesignTest, ForcedResponseWithQOneIsTailsSaysYes) {
  absl::StatusOr<Design> d = Design::ForcedResponse(0.5, 1.0);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_DOUBLE_EQ(d->channel().a, 1.0);
  EXPECT_DOUBLE_EQ(d->channel().b, 0.5);
}

// Seed 001: p(tau = 1 | xi = 1) = P + pi_B (1 - P), p(tau = 1 | xi = 0) = pi_B (1 - P).
TEST(DesignTest, UnrelatedQuestionChannelFromSeed001) {
  absl::StatusOr<Design> d = Design::UnrelatedQuestion(0.7, 1.0 / 12.0);  // "born in June"
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_DOUBLE_EQ(d->channel().a, 0.7 + 0.3 / 12.0);
  EXPECT_DOUBLE_EQ(d->channel().b, 0.3 / 12.0);
  EXPECT_DOUBLE_EQ(d->big_p(), 0.7);
  EXPECT_DOUBLE_EQ(d->pi_b(), 1.0 / 12.0);
}

TEST(DesignTest, MirroredQuestionChannelIsPAndOneMinusP) {
  absl::StatusOr<Design> d = Design::MirroredQuestion(0.7);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_DOUBLE_EQ(d->channel().a, 0.7);
  EXPECT_DOUBLE_EQ(d->channel().b, 0.3);
  EXPECT_DOUBLE_EQ(Epsilon(d->channel()), std::log(0.7 / 0.3));
}

// Seed 003: truth with probability 1/2 + gamma; gamma = 0.25 gives 0.75 / 0.25, epsilon ln 3.
TEST(DesignTest, TruthWithGammaQuarterMatchesSeed003) {
  absl::StatusOr<Design> d = Design::TruthWithGamma(0.25);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_DOUBLE_EQ(d->channel().a, 0.75);
  EXPECT_DOUBLE_EQ(d->channel().b, 0.25);
  // Seed 003's definition ln(P(Y=1 | X=1) / P(Y=0 | X=1)) agrees here.
  EXPECT_DOUBLE_EQ(Epsilon(d->channel()), std::log(0.75 / 0.25));
}

TEST(DesignTest, SymmetricEpsilonRoundTripsEpsilon) {
  for (double eps : {0.1, 0.5, 1.0, std::log(3.0), 3.0, 8.0}) {
    absl::StatusOr<Design> d = Design::SymmetricEpsilon(eps);
    ASSERT_TRUE(d.ok()) << d.status();
    const Channel& c = d->channel();
    EXPECT_NEAR(c.a, std::exp(eps) / (1.0 + std::exp(eps)), 1e-15);
    EXPECT_NEAR(c.a + c.b, 1.0, 1e-15);
    EXPECT_NEAR(Epsilon(c), eps, 1e-12 * std::max(1.0, eps)) << eps;
    EXPECT_DOUBLE_EQ(d->epsilon_parameter(), eps);
  }
}

TEST(DesignTest, SymmetricLn3IsTheTwoCoinChannel) {
  absl::StatusOr<Design> d = Design::SymmetricEpsilon(std::log(3.0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->channel().a, 0.75, 1e-15);
  EXPECT_NEAR(d->channel().b, 0.25, 1e-15);
}

TEST(DesignTest, EpsilonIsSymmetricInSwappingAAndB) {
  EXPECT_DOUBLE_EQ(Epsilon(Channel{0.2, 0.9}), Epsilon(Channel{0.9, 0.2}));
  // max(|ln(0.2/0.9)|, |ln(0.8/0.1)|) = ln 8.
  EXPECT_DOUBLE_EQ(Epsilon(Channel{0.2, 0.9}), std::log(8.0));
}

TEST(DesignTest, CreateFailsWhenEpsilonIsNan) {
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(kNan), "epsilon");
}
TEST(DesignTest, CreateFailsWhenEpsilonIsInfinite) {
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(kInf), "epsilon");
}
TEST(DesignTest, CreateFailsWhenEpsilonIsZeroOrNegative) {
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(0.0), "epsilon");
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(-1.0), "epsilon");
}
TEST(DesignTest, CreateFailsWhenEpsilonIsTooSmallToSeparateAFromB) {
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(1e-300), "epsilon");
}

TEST(DesignTest, ForcedResponseFailsWhenPIsZeroBecauseAEqualsB) {
  ExpectInvalidArgumentNaming(Design::ForcedResponse(0.0, 0.5), "p must be > 0");
}
TEST(DesignTest, ForcedResponseFailsWhenPIsNanOrOutsideUnitInterval) {
  ExpectInvalidArgumentNaming(Design::ForcedResponse(kNan, 0.5), "p must");
  ExpectInvalidArgumentNaming(Design::ForcedResponse(-0.1, 0.5), "p must");
  ExpectInvalidArgumentNaming(Design::ForcedResponse(1.1, 0.5), "p must");
}
TEST(DesignTest, ForcedResponseFailsWhenQIsNanOrOutsideUnitInterval) {
  ExpectInvalidArgumentNaming(Design::ForcedResponse(0.5, kNan), "q must");
  ExpectInvalidArgumentNaming(Design::ForcedResponse(0.5, -0.1), "q must");
  ExpectInvalidArgumentNaming(Design::ForcedResponse(0.5, 1.5), "q must");
}
TEST(DesignTest, UnrelatedQuestionFailsOnBadPOrPiB) {
  ExpectInvalidArgumentNaming(Design::UnrelatedQuestion(0.0, 0.5), "P must");
  ExpectInvalidArgumentNaming(Design::UnrelatedQuestion(kNan, 0.5), "P must");
  ExpectInvalidArgumentNaming(Design::UnrelatedQuestion(1.5, 0.5), "P must");
  ExpectInvalidArgumentNaming(Design::UnrelatedQuestion(0.5, kNan), "pi_B must");
  ExpectInvalidArgumentNaming(Design::UnrelatedQuestion(0.5, -0.5), "pi_B must");
}
TEST(DesignTest, MirroredQuestionFailsWhenPIsOneHalf) {
  ExpectInvalidArgumentNaming(Design::MirroredQuestion(0.5), "P must differ from 1/2");
  ExpectInvalidArgumentNaming(Design::MirroredQuestion(kNan), "P must");
  ExpectInvalidArgumentNaming(Design::MirroredQuestion(2.0), "P must");
}
TEST(DesignTest, TruthWithGammaFailsWhenGammaIsZeroOrOutOfRange) {
  ExpectInvalidArgumentNaming(Design::TruthWithGamma(0.0), "gamma must be != 0");
  ExpectInvalidArgumentNaming(Design::TruthWithGamma(0.6), "gamma must");
  ExpectInvalidArgumentNaming(Design::TruthWithGamma(-0.6), "gamma must");
  ExpectInvalidArgumentNaming(Design::TruthWithGamma(kNan), "gamma must");
}

TEST(DesignTest, ValidateChannelNamesTheBadProbability) {
  EXPECT_TRUE(ValidateChannel(Channel{0.75, 0.25}).ok());
  absl::Status s = ValidateChannel(Channel{kNan, 0.25});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("a must"));
  s = ValidateChannel(Channel{0.75, 1.5});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("b must"));
  s = ValidateChannel(Channel{0.4, 0.4});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("a must differ from b"));
}

TEST(DesignTest, ToStringNamesKindAndParameters) {
  EXPECT_EQ(Design::TwoCoin().ToString(), "two_coin");
  EXPECT_EQ(Design::TailsSaysYes().ToString(), "tails_says_yes");
  EXPECT_EQ(Design::ForcedResponse(0.5, 0.25)->ToString(), "forced_response(p=0.5, q=0.25)");
  EXPECT_EQ(Design::UnrelatedQuestion(0.7, 0.5)->ToString(), "unrelated_question(P=0.7, pi_B=0.5)");
  EXPECT_EQ(Design::MirroredQuestion(0.7)->ToString(), "mirrored_question(P=0.7)");
  EXPECT_EQ(Design::TruthWithGamma(0.25)->ToString(), "truth_with_gamma(gamma=0.25)");
  EXPECT_EQ(Design::SymmetricEpsilon(1.0)->ToString(), "symmetric_epsilon(epsilon=1)");
}

// Issue 18: designs whose a == b in double precision (or nearly) used to be accepted.
TEST(DesignTest, CreateFailsWhenTheChannelGapIsBelowTheMinimum) {
  ExpectInvalidArgumentNaming(Design::ForcedResponse(1e-300, 0.5), "p gives |a - b|");
  ExpectInvalidArgumentNaming(Design::UnrelatedQuestion(1e-300, 0.3), "P gives |a - b|");
  ExpectInvalidArgumentNaming(Design::MirroredQuestion(0.5 + 1e-16), "P gives |a - b|");
  ExpectInvalidArgumentNaming(Design::MirroredQuestion(0.5 - 1e-16), "P gives |a - b|");
  ExpectInvalidArgumentNaming(Design::TruthWithGamma(1e-300), "gamma gives |a - b|");
  ExpectInvalidArgumentNaming(Design::TruthWithGamma(-1e-300), "gamma gives |a - b|");
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(1e-300), "epsilon gives |a - b|");
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(0.0019), "epsilon gives |a - b|");
}

TEST(DesignTest, CreateSucceedsAtTheMinimumGap) {
  EXPECT_TRUE(Design::ForcedResponse(1.001 * kMinChannelGap, 0.5).ok());
  EXPECT_TRUE(Design::MirroredQuestion(0.5 + kMinChannelGap).ok());
  EXPECT_TRUE(Design::TruthWithGamma(kMinChannelGap).ok());
  EXPECT_TRUE(Design::SymmetricEpsilon(0.0021).ok());
}

TEST(DesignTest, CreateFailsWhenEpsilonIsAboveTheMaximum) {
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(1e308), "epsilon must be at most");
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(1000.0), "epsilon must be at most");
  ExpectInvalidArgumentNaming(Design::SymmetricEpsilon(kMaxSymmetricEpsilon * 1.0001),
                              "epsilon must be at most");
  EXPECT_TRUE(Design::SymmetricEpsilon(kMaxSymmetricEpsilon).ok());
}

TEST(DesignTest, RevealsEveryAnswerOnlyForTheIdentityChannelAndItsMirror) {
  EXPECT_TRUE(RevealsEveryAnswer(Design::ForcedResponse(1.0, 0.5)->channel()));
  EXPECT_TRUE(RevealsEveryAnswer(Design::UnrelatedQuestion(1.0, 0.2)->channel()));
  EXPECT_TRUE(RevealsEveryAnswer(Design::MirroredQuestion(1.0)->channel()));
  EXPECT_TRUE(RevealsEveryAnswer(Design::MirroredQuestion(0.0)->channel()));
  EXPECT_TRUE(RevealsEveryAnswer(Design::TruthWithGamma(0.5)->channel()));
  EXPECT_TRUE(RevealsEveryAnswer(Design::TruthWithGamma(-0.5)->channel()));
  EXPECT_TRUE(RevealsEveryAnswer(Design::SymmetricEpsilon(40.0)->channel()));
  EXPECT_FALSE(RevealsEveryAnswer(Design::TailsSaysYes().channel()));
  EXPECT_FALSE(RevealsEveryAnswer(Design::TwoCoin().channel()));
  EXPECT_FALSE(RevealsEveryAnswer(Design::SymmetricEpsilon(20.0)->channel()));
}

}  // namespace design_test
}  // namespace
}  // namespace deniable
