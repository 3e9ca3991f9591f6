#include "deniable/common/categorical_privacy.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "categorical_test_util.h"
#include "deniable/common/privacy.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace categorical_privacy_test {

using ::testing::HasSubstr;
using M = CategoricalMechanism;

using testing_util::Make;

// k-RR, k = 4, eps = ln 3: p* = 1/2, q* = 1/6. At the uniform prior P(r) = 1/4, so
// P(x = r | r) = (1/4)(1/2) / (1/4) = 1/2 and P(x = j | r) = 1/6 otherwise; H(x) = 2 bits and
// I(x; r) = sum_j (1/4) [(1/2) log2 2 + 3 (1/6) log2 (2/3)] = (1/2) log2 (4/3).
TEST(CategoricalPrivacyTest, DirectEncodingAtTheUniformPriorByHand) {
  absl::StatusOr<CategoricalPrivacyFigures> f =
      ComputeCategoricalPrivacyFigures(Make(M::kDirectEncoding, 4, std::log(3.0)), UniformPrior(4));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->channel, CategoricalChannelKind::kReport);
  EXPECT_DOUBLE_EQ(f->epsilon, std::log(3.0));
  EXPECT_NEAR(f->entropy_bits, 2.0, 1e-15);
  EXPECT_NEAR(f->mutual_information_bits, 0.5 * std::log2(4.0 / 3.0), 1e-14);
  EXPECT_NEAR(f->conditional_entropy_bits, 2.0 - 0.5 * std::log2(4.0 / 3.0), 1e-14);
  ASSERT_EQ(f->reported.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(f->reported[r].probability, 0.25, 1e-15);
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(f->reported[r].posterior[j], j == r ? 0.5 : 1.0 / 6.0, 1e-15) << r << j;
    }
  }
}

// k-RR, k = 3, eps = ln 2: p* = 1/2, q* = 1/4; prior (1/2, 1/4, 1/4). P(r = 0) = 1/4 + (1/4)(1/2)
// = 3/8; P(x = 0 | r = 0) = (1/2)(1/2) / (3/8) = 2/3, P(x = 1 | r = 0) = (1/4)(1/4) / (3/8) = 1/6.
// P(r = 1) = 1/4 + (1/4)(1/4) = 5/16; P(x = 1 | r = 1) = (1/4)(1/2) / (5/16) = 2/5,
// P(x = 0 | r = 1) = (1/2)(1/4) / (5/16) = 2/5, P(x = 2 | r = 1) = 1/5.
TEST(CategoricalPrivacyTest, DirectEncodingAtAnUnevenPriorByHand) {
  const std::vector<double> prior = {0.5, 0.25, 0.25};
  absl::StatusOr<CategoricalPrivacyFigures> f =
      ComputeCategoricalPrivacyFigures(Make(M::kDirectEncoding, 3, std::log(2.0)), prior);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_NEAR(f->entropy_bits, 1.5, 1e-15);
  EXPECT_NEAR(f->reported[0].probability, 3.0 / 8.0, 1e-15);
  EXPECT_NEAR(f->reported[0].posterior[0], 2.0 / 3.0, 1e-15);
  EXPECT_NEAR(f->reported[0].posterior[1], 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(f->reported[0].posterior[2], 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(f->reported[1].probability, 5.0 / 16.0, 1e-15);
  EXPECT_NEAR(f->reported[1].posterior[0], 2.0 / 5.0, 1e-15);
  EXPECT_NEAR(f->reported[1].posterior[1], 2.0 / 5.0, 1e-15);
  EXPECT_NEAR(f->reported[1].posterior[2], 1.0 / 5.0, 1e-15);
  // I(x; r) = H(r) - H(r | x); H(r | x) = h(1/2, 1/4, 1/4) = 1.5 bits for every x.
  const std::vector<double> reports = {3.0 / 8.0, 5.0 / 16.0, 5.0 / 16.0};
  EXPECT_NEAR(f->mutual_information_bits, EntropyBits(reports) - 1.5, 1e-14);
}

// k = 2 k-RR is the symmetric binary design: category 1 as "yes", its figures are privacy.h's.
TEST(CategoricalPrivacyTest, TwoCategoryDirectEncodingGivesTheBinaryFigures) {
  for (double eps : {0.3, std::log(3.0), 2.5}) {
    for (double pi : {0.0, 0.1, 0.366, 0.5, 0.9}) {
      const Channel binary = Design::SymmetricEpsilon(eps)->channel();
      const std::vector<double> prior = {1.0 - pi, pi};
      absl::StatusOr<CategoricalPrivacyFigures> f =
          ComputeCategoricalPrivacyFigures(Make(M::kDirectEncoding, 2, eps), prior);
      ASSERT_TRUE(f.ok()) << f.status();
      PrivacyFigures b = ComputePrivacyFigures(binary, pi).value();
      EXPECT_NEAR(f->reported[1].posterior[1], b.posterior_given_yes, 1e-14) << eps << " " << pi;
      EXPECT_NEAR(f->reported[0].posterior[1], b.posterior_given_no, 1e-14);
      EXPECT_NEAR(f->entropy_bits, b.prior_entropy_bits, 1e-14);
      EXPECT_NEAR(f->mutual_information_bits, b.mutual_information_bits, 1e-14);
      EXPECT_NEAR(f->conditional_entropy_bits, b.conditional_entropy_bits, 1e-14);
      EXPECT_NEAR(f->reported[1].mutual_information_bits, b.mutual_information_bits, 1e-14);
    }
  }
}

// OUE, k = 4, eps = ln 3: p* = 1/2, q* = 1 / (e^eps + 1) = 1/4. Uniform prior: P(s_r) = 1/4 +
// (1/4)(1/4) = 5/16, P(x = r | s_r) = (1/4)(1/2) / (5/16) = 2/5, P(x = j | s_r) = 1/5.
TEST(CategoricalPrivacyTest, UnaryEncodingDescribesTheSupportChannel) {
  absl::StatusOr<CategoricalPrivacyFigures> f = ComputeCategoricalPrivacyFigures(
      Make(M::kOptimizedUnaryEncoding, 4, std::log(3.0)), UniformPrior(4));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->channel, CategoricalChannelKind::kSupport);
  EXPECT_STREQ(CategoricalChannelKindName(f->channel), "support");
  EXPECT_EQ(f->mutual_information_bits, 0.0);  // no single reported category
  for (int r = 0; r < 4; ++r) {
    EXPECT_NEAR(f->reported[r].probability, 5.0 / 16.0, 1e-15);
    for (int j = 0; j < 4; ++j) {
      EXPECT_NEAR(f->reported[r].posterior[j], j == r ? 0.4 : 0.2, 1e-15);
    }
    EXPECT_NEAR(f->reported[r].mutual_information_bits,
                MutualInformationBits(Channel{0.5, 0.25}, 0.25).value(), 1e-15);
  }
}

// The support posteriors of OUE and OLH (whose q* includes hash collisions) against seeded
// simulation: true categories drawn from the prior, randomized, and among the reports that
// support r the share whose truth is j. 400000 draws: each share's standard error is below 0.0016,
// the tolerance 0.008 is more than 5 of them; the seed fixes the outcome.
TEST(CategoricalPrivacyTest, SupportPosteriorsMatchASeededSimulation) {
  const std::vector<double> prior = {0.5, 0.3, 0.15, 0.05};
  for (M m : {M::kOptimizedUnaryEncoding, M::kOptimizedLocalHashing}) {
    const CategoricalDesign d = Make(m, 4, 1.5);
    const CategoricalPrivacyFigures f = ComputeCategoricalPrivacyFigures(d, prior).value();
    std::mt19937_64 gen(20261124);
    std::discrete_distribution<int> truth(prior.begin(), prior.end());
    std::vector<std::vector<int64_t>> joint(4, std::vector<int64_t>(4, 0));  // [r][j]
    std::vector<int64_t> supports(4, 0);
    constexpr int kDraws = 400000;
    for (int i = 0; i < kDraws; ++i) {
      const int x = truth(gen);
      const CategoricalReport report = RandomizeCategory(d, x, gen).value();
      for (int r = 0; r < 4; ++r) {
        if (!Supports(d, report, r)) continue;
        ++supports[r];
        ++joint[r][x];
      }
    }
    for (int r = 0; r < 4; ++r) {
      EXPECT_NEAR(static_cast<double>(supports[r]) / kDraws, f.reported[r].probability, 0.004)
          << CategoricalMechanismName(m) << " r=" << r;
      for (int j = 0; j < 4; ++j) {
        EXPECT_NEAR(static_cast<double>(joint[r][j]) / supports[r], f.reported[r].posterior[j],
                    0.008)
            << CategoricalMechanismName(m) << " r=" << r << " j=" << j;
      }
    }
  }
}

TEST(CategoricalPrivacyTest, PosteriorsSumToOne) {
  const std::vector<double> prior = {0.7, 0.2, 0.05, 0.05, 0.0};
  for (M m : {M::kDirectEncoding, M::kOptimizedUnaryEncoding, M::kOptimizedLocalHashing}) {
    const CategoricalPrivacyFigures f =
        ComputeCategoricalPrivacyFigures(Make(m, 5, 2.0), prior).value();
    for (const ReportedCategoryFigures& r : f.reported) {
      double sum = 0;
      for (double p : r.posterior) sum += p;
      EXPECT_NEAR(sum, 1.0, 1e-14);
      EXPECT_EQ(r.posterior[4], 0.0);  // a category of prior 0 stays impossible
    }
  }
}

TEST(CategoricalPrivacyTest, RejectsAPriorOfTheWrongSizeOrSum) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 3, 1.0);
  const std::vector<double> short_prior = {0.5, 0.5};
  absl::StatusOr<CategoricalPrivacyFigures> f = ComputeCategoricalPrivacyFigures(d, short_prior);
  EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(f.status().message(), HasSubstr("category_prior: must hold one share for each"));
  const std::vector<double> negative = {0.5, 0.6, -0.1};
  EXPECT_THAT(ComputeCategoricalPrivacyFigures(d, negative).status().message(),
              HasSubstr("category_prior[2]: must be in [0, 1]"));
  const std::vector<double> not_one = {0.5, 0.3, 0.1};
  EXPECT_THAT(ComputeCategoricalPrivacyFigures(d, not_one).status().message(),
              HasSubstr("category_prior: the shares must sum to 1"));
  const std::vector<double> nan = {0.5, std::nan(""), 0.5};
  EXPECT_THAT(ComputeCategoricalPrivacyFigures(d, nan).status().message(),
              HasSubstr("category_prior[1]"));
}

}  // namespace categorical_privacy_test
}  // namespace
}  // namespace deniable
