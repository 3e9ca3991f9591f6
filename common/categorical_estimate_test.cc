#include "deniable/common/categorical_estimate.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "categorical_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace categorical_estimate_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using M = CategoricalMechanism;

using testing_util::Make;

// statistics.md section 5 with k = 4, eps = ln 3: p = 1/2, q = 1/6, so f_hat = 3 (c / n) - 1/2 and
// Var = (c / n)(1 - c / n) / (n / 9).
TEST(CategoricalEstimateTest, DirectEncodingEstimateAndVariance) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 4, std::log(3.0));
  const std::vector<int64_t> counts = {900, 700, 500, 400};
  absl::StatusOr<CategoricalEstimate> e =
      EstimateCategories(d, counts, 2500, 0.95, std::nullopt, SimultaneousMethod::kSidak);
  ASSERT_TRUE(e.ok()) << e.status();
  double sum = 0;
  for (int v = 0; v < 4; ++v) {
    const double share = counts[v] / 2500.0;
    const CategoryEstimate& c = e->categories[v];
    EXPECT_NEAR(c.unbiased, 3 * share - 0.5, 1e-12);
    EXPECT_NEAR(c.variance, share * (1 - share) * 9 / 2500, 1e-15);
    EXPECT_NEAR(c.standard_error, std::sqrt(c.variance), 1e-15);
    sum += c.unbiased;
    // The simultaneous interval contains the per-category one.
    EXPECT_LE(c.simultaneous.lower, c.interval.lower);
    EXPECT_GE(c.simultaneous.upper, c.interval.upper);
    EXPECT_LT(c.interval.lower, c.interval.upper);
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);  // k-RR estimates always sum to 1
  EXPECT_EQ(e->method, IntervalMethod::kWilson);
  EXPECT_NEAR(e->per_category_level, std::pow(0.95, 0.25), 1e-15);
}

// Unbiasedness, exactly: E[f_hat_v] = sum over c of Binomial(c; n, lambda_v) f_hat(c) = f_v, for
// each mechanism (c_v is Binomial(n, lambda_v) for all three).
TEST(CategoricalEstimateTest, EstimateIsExactlyUnbiased) {
  for (M m : {M::kDirectEncoding, M::kOptimizedUnaryEncoding, M::kOptimizedLocalHashing}) {
    const CategoricalDesign d = Make(m, 6, 1.3);
    const Channel ch = d.SupportChannel();
    const int n = 80;
    for (double f : {0.0, 0.05, 0.3, 1.0}) {
      const double lambda = ch.b + (ch.a - ch.b) * f;
      double mean = 0;
      for (int c = 0; c <= n; ++c) {
        const double pmf =
            std::exp(std::lgamma(n + 1.0) - std::lgamma(c + 1.0) - std::lgamma(n - c + 1.0) +
                     c * std::log(lambda) + (n - c) * std::log1p(-lambda));
        mean += pmf * ((static_cast<double>(c) / n - ch.b) / (ch.a - ch.b));
      }
      EXPECT_NEAR(mean, f, 1e-9) << CategoricalMechanismName(m) << " " << f;
    }
  }
}

TEST(CategoricalEstimateTest, NormSubProjectsOntoTheSimplex) {
  EXPECT_THAT(NormSub(std::vector<double>{0.5, 0.6, -0.1}),
              ElementsAre(DoubleNear(0.45, 1e-15), DoubleNear(0.55, 1e-15), 0.0));
  EXPECT_THAT(NormSub(std::vector<double>{0.2, 0.2}),
              ElementsAre(DoubleNear(0.5, 1e-15), DoubleNear(0.5, 1e-15)));
  EXPECT_THAT(NormSub(std::vector<double>{0.1, 0.3, 0.6}),
              ElementsAre(DoubleNear(0.1, 1e-15), DoubleNear(0.3, 1e-15), DoubleNear(0.6, 1e-15)));
  EXPECT_THAT(NormSub(std::vector<double>{1.4, -0.2, -0.3}), ElementsAre(1.0, 0.0, 0.0));
  EXPECT_TRUE(NormSub(std::vector<double>{}).empty());
  // Always on the simplex, and the closest point on it: no other simplex point tried is nearer.
  const std::vector<double> raw = {0.42, 0.31, -0.05, 0.18, 0.2};
  const std::vector<double> p = NormSub(raw);
  EXPECT_NEAR(std::accumulate(p.begin(), p.end(), 0.0), 1.0, 1e-12);
  auto dist = [&](const std::vector<double>& x) {
    double s = 0;
    for (size_t i = 0; i < x.size(); ++i) s += (x[i] - raw[i]) * (x[i] - raw[i]);
    return s;
  };
  for (size_t i = 0; i < p.size(); ++i) {
    EXPECT_GE(p[i], 0.0);
    for (size_t j = 0; j < p.size(); ++j) {
      if (i == j || p[i] < 0.01) continue;
      std::vector<double> q = p;
      q[i] -= 0.01;
      q[j] += 0.01;
      EXPECT_GE(dist(q), dist(p) - 1e-15);
    }
  }
}

// OUE: the unbiased estimates need not sum to 1; the consistent ones do.
TEST(CategoricalEstimateTest, UnaryEncodingConsistentEstimateSumsToOne) {
  const CategoricalDesign d = Make(M::kOptimizedUnaryEncoding, 3, 1.0);
  const std::vector<int64_t> counts = {600, 350, 250};
  absl::StatusOr<CategoricalEstimate> e = EstimateCategories(
      d, counts, 1000, 0.95, IntervalMethod::kClopperPearson, SimultaneousMethod::kBonferroni);
  ASSERT_TRUE(e.ok()) << e.status();
  double unbiased = 0, consistent = 0;
  for (const CategoryEstimate& c : e->categories) {
    unbiased += c.unbiased;
    consistent += c.consistent;
    EXPECT_GE(c.consistent, 0.0);
  }
  EXPECT_GT(std::abs(unbiased - 1.0), 0.01);
  EXPECT_NEAR(consistent, 1.0, 1e-12);
  EXPECT_EQ(e->method, IntervalMethod::kClopperPearson);
  EXPECT_NEAR(e->per_category_level, 1 - 0.05 / 3, 1e-15);
}

TEST(CategoricalEstimateTest, PerCategoryLevels) {
  EXPECT_NEAR(PerCategoryLevel(0.95, 4, SimultaneousMethod::kBonferroni), 0.9875, 1e-15);
  EXPECT_NEAR(PerCategoryLevel(0.95, 4, SimultaneousMethod::kSidak), 0.987259, 1e-6);
  EXPECT_NEAR(PerCategoryLevel(0.95, 1, SimultaneousMethod::kSidak), 0.95, 1e-15);
  for (int k = 2; k <= 64; ++k) {  // Sidak is always the less demanding one
    EXPECT_LT(PerCategoryLevel(0.9, k, SimultaneousMethod::kSidak),
              PerCategoryLevel(0.9, k, SimultaneousMethod::kBonferroni));
  }
  EXPECT_EQ(ParseSimultaneousMethod("sidak").value(), SimultaneousMethod::kSidak);
  EXPECT_EQ(ParseSimultaneousMethod("bonferroni").value(), SimultaneousMethod::kBonferroni);
  EXPECT_THAT(ParseSimultaneousMethod("holm").status().message(), HasSubstr("bonferroni or sidak"));
}

TEST(CategoricalEstimateTest, BadCountsNameTheFieldAndChangeNothing) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 3, 1.0);
  auto estimate = [&](std::vector<int64_t> c, int64_t n, double level = 0.95) {
    return EstimateCategories(d, c, n, level, std::nullopt, SimultaneousMethod::kSidak).status();
  };
  EXPECT_THAT(estimate({1, 2, 3}, 0).message(), HasSubstr("n must"));
  EXPECT_THAT(estimate({1, 2}, 3).message(), HasSubstr("support_counts must hold k = 3"));
  EXPECT_THAT(estimate({1, -2, 3}, 2).message(), HasSubstr("support_counts[1]"));
  EXPECT_THAT(estimate({1, 2, 3}, 7).message(), HasSubstr("sum to n = 7"));
  EXPECT_THAT(estimate({1, 2, 3}, 6, 1.0).message(), HasSubstr("confidence_level"));
  EXPECT_TRUE(estimate({1, 2, 3}, 6).ok());
}

}  // namespace categorical_estimate_test
}  // namespace
}  // namespace deniable
