#include "deniable/common/categorical_coverage.h"

#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "categorical_test_util.h"
#include "deniable/common/coverage.h"
#include "deniable/common/method_choice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace categorical_coverage_test {

using ::testing::HasSubstr;
using M = CategoricalMechanism;

using testing_util::Make;

// The Chile plebiscite survey's vote (Y, N, U, A): 868, 889, 588 and 187 of 2532.
const std::vector<double> kChile = {868.0 / 2532, 889.0 / 2532, 588.0 / 2532, 187.0 / 2532};

// Levin's Poisson representation against plain enumeration of every multinomial outcome.
TEST(CategoricalCoverageTest, ExactMatchesEnumerationOfTheMultinomial) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 3, 1.0);
  const std::vector<double> f = {0.5, 0.3, 0.2};
  const int n = 25;
  const Channel ch = d.SupportChannel();
  for (auto sm : {std::optional<SimultaneousMethod>(), std::optional(SimultaneousMethod::kSidak)}) {
    const double per = sm ? PerCategoryLevel(0.95, 3, *sm) : 0.95;
    double brute = 0;
    for (int c0 = 0; c0 <= n; ++c0) {
      for (int c1 = 0; c0 + c1 <= n; ++c1) {
        const int c[3] = {c0, c1, n - c0 - c1};
        double log_p = std::lgamma(n + 1.0);
        bool all = true;
        for (int v = 0; v < 3; ++v) {
          const double lambda = ch.b + (ch.a - ch.b) * f[v];
          log_p += c[v] * std::log(lambda) - std::lgamma(c[v] + 1.0);
          const PrevalenceInterval ci =
              MakePrevalenceInterval(ch, c[v], n, per, IntervalMethod::kWilson).value();
          all =
              all && ci.lower - kCoverageTolerance <= f[v] && f[v] <= ci.upper + kCoverageTolerance;
        }
        if (all) brute += std::exp(log_p);
      }
    }
    absl::StatusOr<double> exact =
        ExactSimultaneousCoverage(d, n, f, 0.95, IntervalMethod::kWilson, sm);
    ASSERT_TRUE(exact.ok()) << exact.status();
    EXPECT_NEAR(*exact, brute, 1e-12);
  }
}

// Four intervals at 95 % each cover all four shares far less often than 95 %; the Bonferroni and
// Sidak adjustments bring it back to the level (exact, k-RR at the two-coin epsilon, the Chile
// vote's shares). Figures in docs/coverage.md.
TEST(CategoricalCoverageTest, AdjustedIntervalsCoverAllSharesAtTheLevel) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 4, std::log(3.0));
  for (int64_t n : {100, 500, 2532}) {
    const double plain =
        ExactSimultaneousCoverage(d, n, kChile, 0.95, std::nullopt, std::nullopt).value();
    const double bonferroni =
        ExactSimultaneousCoverage(d, n, kChile, 0.95, std::nullopt, SimultaneousMethod::kBonferroni)
            .value();
    const double sidak =
        ExactSimultaneousCoverage(d, n, kChile, 0.95, std::nullopt, SimultaneousMethod::kSidak)
            .value();
    EXPECT_LT(plain, 0.90) << n;
    EXPECT_GE(bonferroni, 0.945) << n;
    EXPECT_GE(sidak, 0.945) << n;
    EXPECT_LE(sidak, bonferroni + 1e-12) << n;  // Sidak's intervals are nested in Bonferroni's
  }
}

// Sixteen categories, k-RR at eps = 2: the adjustment matters more as k grows.
TEST(CategoricalCoverageTest, ManyCategories) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 16, 2.0);
  std::vector<double> f(16, 1.0 / 16);
  const double plain =
      ExactSimultaneousCoverage(d, 1000, f, 0.95, std::nullopt, std::nullopt).value();
  const double sidak =
      ExactSimultaneousCoverage(d, 1000, f, 0.95, std::nullopt, SimultaneousMethod::kSidak).value();
  EXPECT_LT(plain, 0.60);
  EXPECT_GE(sidak, 0.94);
}

// OUE and OLH by seeded Monte Carlo through the real randomizer: 2000 surveys of 1000 devices.
// Deterministic (fixed seed); the bound is the level minus 3 Monte Carlo standard errors (0.015).
TEST(CategoricalCoverageTest, SeededCoverageOfUnaryEncodingAndLocalHashing) {
  for (M m : {M::kOptimizedUnaryEncoding, M::kOptimizedLocalHashing}) {
    const CategoricalDesign d = Make(m, 4, std::log(3.0));
    absl::StatusOr<SimulatedCoverage> s = SimulateCategoricalCoverage(
        d, 1000, kChile, 0.95, std::nullopt, SimultaneousMethod::kSidak, 2000, 20261123);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_GE(s->simultaneous, 0.95 - 3 * 0.0049) << CategoricalMechanismName(m);
    for (double marginal : s->marginal) EXPECT_GE(marginal, 0.95);
  }
}

// The simulation agrees with the exact figure for k-RR (within 4 Monte Carlo standard errors).
TEST(CategoricalCoverageTest, SimulationAgreesWithExactForDirectEncoding) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 4, std::log(3.0));
  const double exact =
      ExactSimultaneousCoverage(d, 200, kChile, 0.95, std::nullopt, std::nullopt).value();
  absl::StatusOr<SimulatedCoverage> s =
      SimulateCategoricalCoverage(d, 200, kChile, 0.95, std::nullopt, std::nullopt, 4000, 99);
  ASSERT_TRUE(s.ok());
  EXPECT_NEAR(s->simultaneous, exact, 4 * s->standard_error);
}

TEST(CategoricalCoverageTest, BadArgumentsNameTheField) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 4, 1.0);
  EXPECT_THAT(
      ExactSimultaneousCoverage(d, 0, kChile, 0.95, std::nullopt, std::nullopt).status().message(),
      HasSubstr("n must"));
  const std::vector<double> three = {0.5, 0.3, 0.2};
  EXPECT_THAT(
      ExactSimultaneousCoverage(d, 10, three, 0.95, std::nullopt, std::nullopt).status().message(),
      HasSubstr("shares must hold"));
  const std::vector<double> bad_sum = {0.5, 0.3, 0.2, 0.1};
  EXPECT_THAT(ExactSimultaneousCoverage(d, 10, bad_sum, 0.95, std::nullopt, std::nullopt)
                  .status()
                  .message(),
              HasSubstr("sum to 1"));
  EXPECT_EQ(ExactSimultaneousCoverage(Make(M::kOptimizedUnaryEncoding, 4, 1.0), 10, kChile, 0.95,
                                      std::nullopt, std::nullopt)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(SimulateCategoricalCoverage(d, 10, kChile, 0.95, std::nullopt, std::nullopt, 0, 1)
                  .status()
                  .message(),
              HasSubstr("trials"));
}

// k-RR with k = 2: the second share's interval is the first's reflected, so both cover or both
// miss, and simultaneous intervals need no adjustment: the exact joint coverage of the two
// unadjusted intervals equals the coverage of the first share's interval alone, computed as a
// yes/no question on the support channel (coverage.h), for every share.
TEST(CategoricalCoverageTest, TwoCategoryKrrSharesCoverTogetherWithoutAdjustment) {
  const CategoricalDesign d = Make(M::kDirectEncoding, 2, std::log(3.0));
  EXPECT_TRUE(SharesCoverTogether(d));
  EXPECT_EQ(PerCategoryLevel(d, 0.95, SimultaneousMethod::kSidak), 0.95);
  EXPECT_FALSE(SharesCoverTogether(Make(M::kOptimizedUnaryEncoding, 2, std::log(3.0))));
  EXPECT_FALSE(SharesCoverTogether(Make(M::kDirectEncoding, 3, std::log(3.0))));
  const Channel channel = d.SupportChannel();
  const IntervalMethod method = DefaultIntervalMethod(channel).method;
  for (const double f0 : {0.05, 0.3428, 0.5, 0.9}) {
    const std::vector<double> f = {f0, 1.0 - f0};
    for (const int64_t n : {50, 400, 1537}) {
      absl::StatusOr<double> joint =
          ExactSimultaneousCoverage(d, n, f, 0.95, method, SimultaneousMethod::kSidak);
      const double pis[] = {f0};
      absl::StatusOr<CoverageCurve> alone = ExactCoverage(channel, n, 0.95, method, pis);
      ASSERT_TRUE(joint.ok()) << joint.status();
      ASSERT_TRUE(alone.ok()) << alone.status();
      EXPECT_NEAR(*joint, alone->coverage[0], 1e-9) << "f0 = " << f0 << ", n = " << n;
    }
  }
}

}  // namespace categorical_coverage_test
}  // namespace
}  // namespace deniable
