#include "deniable/common/categorical.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/status.h"
#include "categorical_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace categorical_test {

using ::testing::HasSubstr;
using M = CategoricalMechanism;

using testing_util::Make;

// statistics.md section 5: p = e^eps / (e^eps + k - 1), q = 1 / (e^eps + k - 1).
TEST(CategoricalTest, DirectEncodingChannel) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 4, std::log(3.0));
  EXPECT_DOUBLE_EQ(d.p_star(), 3.0 / 6.0);
  EXPECT_DOUBLE_EQ(d.q_star(), 1.0 / 6.0);
  const auto matrix = d.SupportMatrix();
  for (int u = 0; u < 4; ++u) {
    double column = 0;
    for (int v = 0; v < 4; ++v) column += matrix[v][u];
    EXPECT_NEAR(column, 1.0, 1e-15);  // a k x k channel
  }
}

// k = 2 is section 1's symmetric design.
TEST(CategoricalTest, TwoCategoryDirectEncodingIsTheSymmetricDesign) {
  for (double eps : {0.5, 1.0, 3.0}) {
    const Channel c = Make(M::kDirectEncoding, 2, eps).SupportChannel();
    const Channel s = Design::SymmetricEpsilon(eps)->channel();
    EXPECT_NEAR(c.a, s.a, 1e-15);
    EXPECT_NEAR(c.b, s.b, 1e-15);
  }
}

// The local epsilon is exact for each mechanism: the largest ratio of a report's probability under
// two answers. k-RR: p / q. OUE: two bits change, (p (1 - q)) / ((1 - p) q). OLH: k-RR over g.
TEST(CategoricalTest, EachMechanismIsExactlyEpsilonLdp) {
  for (double eps : {0.3, 1.0, 2.5}) {
    const CategoricalDesign de = Make(M::kDirectEncoding, 7, eps);
    EXPECT_NEAR(std::log(de.p_star() / de.q_star()), eps, 1e-12);
    const CategoricalDesign oue = Make(M::kOptimizedUnaryEncoding, 7, eps);
    const double p = oue.p_star(), q = oue.q_star();
    EXPECT_NEAR(std::log(p * (1 - q) / ((1 - p) * q)), eps, 1e-12);
    const CategoricalDesign olh = Make(M::kOptimizedLocalHashing, 7, eps);
    const double g = olh.hash_buckets();
    const double pz = std::exp(eps) / (std::exp(eps) + g - 1), qz = 1 / (std::exp(eps) + g - 1);
    EXPECT_NEAR(olh.p_star(), pz, 1e-15);
    EXPECT_NEAR(std::log(pz / qz), eps, 1e-12);
  }
}

// WBLJ eq. 5 and 8: Var* = (e^eps + k - 2) / (e^eps - 1)^2 (k-RR), 4 e^eps / (e^eps - 1)^2 (OUE).
TEST(CategoricalTest, ApproximateVariancesMatchThePaper) {
  for (int k : {2, 4, 16, 64}) {
    for (double eps : {0.5, 1.0, 2.0, 4.0}) {
      const double e = std::exp(eps);
      EXPECT_NEAR(ApproximateVarianceFactor(M::kDirectEncoding, k, eps),
                  (e + k - 2) / ((e - 1) * (e - 1)), 1e-9);
      EXPECT_NEAR(ApproximateVarianceFactor(M::kOptimizedUnaryEncoding, k, eps),
                  4 * e / ((e - 1) * (e - 1)), 1e-9);
      // OLH: g rounded from e^eps + 1, so at least OUE's variance and close to it.
      const double olh = ApproximateVarianceFactor(M::kOptimizedLocalHashing, k, eps);
      EXPECT_GE(olh, ApproximateVarianceFactor(M::kOptimizedUnaryEncoding, k, eps) * (1 - 1e-6));
      EXPECT_LT(olh, ApproximateVarianceFactor(M::kOptimizedUnaryEncoding, k, eps) * 1.2);
    }
  }
}

// The variance at share f is lambda (1 - lambda) / (p - q)^2, lambda = q + (p - q) f.
TEST(CategoricalTest, CategoryVarianceFactorAtShare) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 4, std::log(3.0));
  const double lambda = 1.0 / 6 + (2.0 / 6) * 0.4;
  EXPECT_NEAR(CategoryVarianceFactor(d, 0.4), lambda * (1 - lambda) / (1.0 / 9), 1e-12);
  EXPECT_NEAR(CategoryVarianceFactor(d, 0.0),
              ApproximateVarianceFactor(M::kDirectEncoding, 4, std::log(3.0)), 1e-12);
}

// WBLJ section 5: k-RR has the least variance exactly when k < 3 e^eps + 2.
TEST(CategoricalTest, ChooserPicksDirectEncodingBelowThreeEToTheEpsPlusTwo) {
  for (double eps : {0.5, std::log(3.0), 1.5, 2.0}) {
    const double boundary = 3 * std::exp(eps) + 2;
    for (int k = 2; k <= 64; ++k) {
      absl::StatusOr<CategoricalDesign> d = CategoricalDesign::LeastVariance(k, eps);
      ASSERT_TRUE(d.ok()) << d.status();
      if (k < boundary - 1e-9) {
        EXPECT_EQ(d->mechanism(), M::kDirectEncoding) << k << " " << eps;
      } else if (k > boundary + 1e-9) {
        EXPECT_EQ(d->mechanism(), M::kOptimizedUnaryEncoding) << k << " " << eps;
      }
    }
  }
  // ln 3: the boundary is 11 exactly, a tie, kept by k-RR.
  EXPECT_EQ(CategoricalDesign::LeastVariance(11, std::log(3.0))->mechanism(), M::kDirectEncoding);
}

// The OLH hash family's collision probability is 1/g up to about g / P; q* is then 1/g.
TEST(CategoricalTest, LocalHashingQStarIsOneOverG) {
  for (double eps : {0.5, 1.0, 3.0, 6.0}) {
    const CategoricalDesign d = Make(M::kOptimizedLocalHashing, 64, eps);
    EXPECT_NEAR(d.q_star(), 1.0 / d.hash_buckets(), 1e-7) << eps;
  }
}

// Seeded frequencies of "supports v" for each mechanism: p* for the true category, q* for the
// others. Tolerance 5 binomial standard deviations (a correct mechanism fails it for a 6e-7 share
// of seeds; the seed is fixed, so the test is deterministic).
TEST(CategoricalTest, SeededSupportFrequenciesMatchPStarAndQStar) {
  for (M m : {M::kDirectEncoding, M::kOptimizedUnaryEncoding, M::kOptimizedLocalHashing}) {
    const CategoricalDesign d = Make(m, 5, 1.2);
    std::mt19937_64 gen(20261123);
    const int n = 60000, truth = 3;
    std::vector<int64_t> counts(5, 0);
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<CategoricalReport> r = RandomizeCategory(d, truth, gen);
      ASSERT_TRUE(r.ok());
      ASSERT_TRUE(ValidateCategoricalReport(d, *r).ok());
      AddSupport(d, *r, &counts);
    }
    for (int v = 0; v < 5; ++v) {
      const double expected = v == truth ? d.p_star() : d.q_star();
      const double sd = std::sqrt(n * expected * (1 - expected));
      EXPECT_NEAR(static_cast<double>(counts[v]), n * expected, 5 * sd)
          << CategoricalMechanismName(m) << " v=" << v;
    }
  }
}

// k-RR: a report other than the truth is uniform over the k - 1 other categories.
TEST(CategoricalTest, DirectEncodingLieIsUniformOverOtherCategories) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 3, 0.4);
  std::mt19937_64 gen(7);
  std::vector<int64_t> counts(3, 0);
  for (int i = 0; i < 30000; ++i) ++counts[RandomizeCategory(d, 0, gen)->category];
  const double q = d.q_star(), sd = std::sqrt(30000 * q * (1 - q));
  EXPECT_NEAR(static_cast<double>(counts[1]), 30000 * q, 5 * sd);
  EXPECT_NEAR(static_cast<double>(counts[2]), 30000 * q, 5 * sd);
}

TEST(CategoricalTest, CreateRejectsBadParametersNamingThem) {
  EXPECT_THAT(CategoricalDesign::Create(M::kDirectEncoding, 1, 1.0).status().message(),
              HasSubstr("k must"));
  EXPECT_THAT(CategoricalDesign::Create(M::kDirectEncoding, 257, 1.0).status().message(),
              HasSubstr("k must"));
  EXPECT_THAT(CategoricalDesign::Create(M::kDirectEncoding, 4, std::nan("")).status().message(),
              HasSubstr("epsilon must"));
  EXPECT_THAT(CategoricalDesign::Create(M::kDirectEncoding, 4, -1).status().message(),
              HasSubstr("epsilon must"));
  EXPECT_THAT(CategoricalDesign::Create(M::kDirectEncoding, 64, 0.01).status().message(),
              HasSubstr("too small"));
  EXPECT_THAT(CategoricalDesign::Create(M::kOptimizedLocalHashing, 4, 20).status().message(),
              HasSubstr("too large for olh"));
  EXPECT_TRUE(CategoricalDesign::Create(M::kDirectEncoding, 64, 0.07).ok());
  EXPECT_TRUE(CategoricalDesign::Create(M::kOptimizedUnaryEncoding, 256, 1.0).ok());
}

TEST(CategoricalTest, RandomizeAndValidateRejectBadValues) {
  std::mt19937_64 gen(1);
  const CategoricalDesign de = Make(M::kDirectEncoding, 4, 1.0);
  EXPECT_THAT(RandomizeCategory(de, 4, gen).status().message(), HasSubstr("category"));
  EXPECT_THAT(RandomizeCategory(de, -1, gen).status().message(), HasSubstr("category"));
  CategoricalReport r;
  r.category = 9;
  EXPECT_THAT(ValidateCategoricalReport(de, r).message(), HasSubstr("category"));
  const CategoricalDesign oue = Make(M::kOptimizedUnaryEncoding, 4, 1.0);
  r.bits = {0, 1, 2, 0};
  EXPECT_THAT(ValidateCategoricalReport(oue, r).message(), HasSubstr("bits[2]"));
  r.bits = {0, 1};
  EXPECT_THAT(ValidateCategoricalReport(oue, r).message(), HasSubstr("bits must hold"));
  const CategoricalDesign olh = Make(M::kOptimizedLocalHashing, 4, 1.0);
  r.hash_a = 0;
  EXPECT_THAT(ValidateCategoricalReport(olh, r).message(), HasSubstr("hash_a"));
  r.hash_a = 5;
  r.hash_b = kLocalHashPrime;
  EXPECT_THAT(ValidateCategoricalReport(olh, r).message(), HasSubstr("hash_b"));
  r.hash_b = 3;
  r.bucket = olh.hash_buckets();
  EXPECT_THAT(ValidateCategoricalReport(olh, r).message(), HasSubstr("bucket"));
}

TEST(CategoricalTest, CloneProbabilities) {
  const CategoricalDesign de = Make(M::kDirectEncoding, 4, std::log(3.0));
  EXPECT_DOUBLE_EQ(de.CloneProbability(), 0.5);
  const CategoricalDesign oue = Make(M::kOptimizedUnaryEncoding, 4, std::log(3.0));
  EXPECT_DOUBLE_EQ(oue.CloneProbability(), 1.0 / 3);
  // k-RR's gamma: the largest with R(x) >= gamma/2 (R(x0) + R(x1)) for all x, x0, x1 (checked on
  // every output for k = 4).
  const auto m = de.SupportMatrix();
  double gamma = 1;
  for (int x = 0; x < 4; ++x)
    for (int x0 = 0; x0 < 4; ++x0)
      for (int x1 = 0; x1 < 4; ++x1)
        if (x0 != x1)
          for (int y = 0; y < 4; ++y) gamma = std::min(gamma, 2 * m[y][x] / (m[y][x0] + m[y][x1]));
  EXPECT_NEAR(gamma, de.CloneProbability(), 1e-15);
}

}  // namespace categorical_test
}  // namespace
}  // namespace deniable
