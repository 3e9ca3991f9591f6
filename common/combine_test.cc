#include "deniable/common/combine.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace combine_test {

using ::testing::HasSubstr;

PrevalenceEstimate Part(double unbiased, double variance, int64_t n) {
  PrevalenceEstimate e;
  e.n = n;
  e.unbiased = unbiased;
  e.variance = variance;
  e.standard_error = std::sqrt(variance);
  return e;
}

// Weights 1/0.01 = 100 and 1/0.04 = 25: (100 * 0.2 + 25 * 0.4) / 125 = 0.24, variance 1/125.
TEST(CombineTest, WeightsByInverseVariance) {
  const std::vector<PrevalenceEstimate> parts = {Part(0.2, 0.01, 100), Part(0.4, 0.04, 50)};
  absl::StatusOr<CombinedEstimate> c = CombineByInverseVariance(parts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NEAR(c->unbiased, 0.24, 1e-15);
  EXPECT_NEAR(c->variance, 1.0 / 125, 1e-15);
  EXPECT_NEAR(c->standard_error, std::sqrt(1.0 / 125), 1e-15);
  EXPECT_EQ(c->n, 150);
}

TEST(CombineTest, CombinedVarianceIsBelowEveryPart) {
  const std::vector<PrevalenceEstimate> parts = {Part(0.3, 0.002, 1000), Part(0.25, 0.01, 300),
                                                 Part(0.35, 0.005, 600)};
  absl::StatusOr<CombinedEstimate> c = CombineByInverseVariance(parts);
  ASSERT_TRUE(c.ok());
  for (const PrevalenceEstimate& p : parts) EXPECT_LT(c->variance, p.variance);
  EXPECT_GT(c->unbiased, 0.25);
  EXPECT_LT(c->unbiased, 0.35);
}

// Two versions with different epsilon estimated separately, then combined.
TEST(CombineTest, CombinesEstimatesFromDifferentDesignVersions) {
  const Channel v1 = Design::TwoCoin().channel();
  const Channel v2 = Design::SymmetricEpsilon(3.0).value().channel();
  const PrevalenceEstimate e1 = EstimatePrevalence(v1, 120, 400).value();
  const PrevalenceEstimate e2 = EstimatePrevalence(v2, 200, 900).value();
  const std::vector<PrevalenceEstimate> parts = {e1, e2};
  absl::StatusOr<CombinedEstimate> c = CombineByInverseVariance(parts);
  ASSERT_TRUE(c.ok());
  const double w1 = 1 / e1.variance, w2 = 1 / e2.variance;
  EXPECT_NEAR(c->unbiased, (w1 * e1.unbiased + w2 * e2.unbiased) / (w1 + w2), 1e-14);
  EXPECT_EQ(c->n, 1300);
}

TEST(CombineTest, SinglePartIsReturnedAsIs) {
  const std::vector<PrevalenceEstimate> parts = {Part(-0.05, 0.003, 70)};
  absl::StatusOr<CombinedEstimate> c = CombineByInverseVariance(parts);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->unbiased, -0.05, 1e-15);
  EXPECT_EQ(c->clipped, 0.0);
  EXPECT_NEAR(c->variance, 0.003, 1e-15);
}

TEST(CombineTest, CombineFailsWhenEmpty) {
  absl::StatusOr<CombinedEstimate> c = CombineByInverseVariance({});
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("parts"));
}

// All reports "yes" gives an estimated variance of 0 and an infinite weight.
TEST(CombineTest, CombineFailsWhenAVarianceIsZero) {
  const std::vector<PrevalenceEstimate> parts = {
      Part(0.2, 0.01, 100), EstimatePrevalence(Design::TwoCoin().channel(), 30, 30).value()};
  absl::StatusOr<CombinedEstimate> c = CombineByInverseVariance(parts);
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("parts[1].variance"));
}

}  // namespace combine_test
}  // namespace
}  // namespace deniable

namespace deniable {
namespace {
namespace combine_test {

using ::testing::HasSubstr;

// Issue 16: sum n_i pi_i / N and sum n_i^2 V_i / N^2, whatever the variances.
TEST(CombineByReportsTest, WeightsByReportCounts) {
  const std::vector<PrevalenceEstimate> parts = {Part(0.85, 0.004, 300), Part(0.95, 0.0001, 100)};
  absl::StatusOr<CombinedEstimate> c = CombineByReports(parts);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->n, 400);
  EXPECT_NEAR(c->unbiased, (300 * 0.85 + 100 * 0.95) / 400, 1e-15);
  EXPECT_NEAR(c->variance, (300.0 * 300 * 0.004 + 100.0 * 100 * 0.0001) / (400.0 * 400), 1e-15);
  ASSERT_EQ(c->weights.size(), 2u);
  EXPECT_DOUBLE_EQ(c->weights[0], 0.75);
  // Inverse variance would follow the precise part instead.
  absl::StatusOr<CombinedEstimate> iv = CombineByInverseVariance(parts);
  ASSERT_TRUE(iv.ok());
  EXPECT_GT(iv->unbiased, 0.94);
}

TEST(CombineByReportsTest, AcceptsZeroVarianceAndRejectsBadPartsNamingThem) {
  const std::vector<PrevalenceEstimate> zero = {Part(1.0, 0.0, 10), Part(0.5, 0.01, 10)};
  EXPECT_TRUE(CombineByReports(zero).ok());
  const std::vector<PrevalenceEstimate> bad_n = {Part(0.5, 0.01, 10), Part(0.5, 0.01, 0)};
  EXPECT_THAT(std::string(CombineByReports(bad_n).status().message()), HasSubstr("parts[1].n"));
  const std::vector<PrevalenceEstimate> bad_v = {Part(0.5, std::nan(""), 10)};
  EXPECT_THAT(std::string(CombineByReports(bad_v).status().message()),
              HasSubstr("parts[0].variance"));
  EXPECT_EQ(CombineByReports({}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_STREQ(VersionCombinationName(VersionCombination::kByReports), "by_reports");
}

}  // namespace combine_test
}  // namespace
}  // namespace deniable
