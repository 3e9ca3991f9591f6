// The privacy figures and the planner of heavy-hitters designs (heavy_hitters_advice.h), checked
// against the closed forms of docs/statistics.md section 11.6 and the shuffle bound (shuffle.h).
#include "deniable/convert/heavy_hitters_advice.h"

#include <cmath>

#include "deniable/common/heavy_hitters.h"
#include "deniable/common/heavy_hitters_estimate.h"
#include "deniable/common/shuffle.h"
#include "deniable/convert/design_advice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

v1::DescribeDesignRequest HeavyHittersRequest(double epsilon, double prior, int64_t n) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_heavy_hitters()->set_epsilon(epsilon);
  r.mutable_design()->mutable_heavy_hitters()->set_max_length(16);
  r.set_prior(prior);
  r.set_n(n);
  return r;
}

TEST(HeavyHittersDescribeTest, PosteriorIsTheHadamardBitsBayesRule) {
  // eps = ln 3: a = 3/4. At a prior of 10 %: 0.1 * 0.75 / (0.1 * 0.75 + 0.9 * 0.25) = 0.25
  // after a bit that agrees with the candidate's entry, 0.1 * 0.25 / (0.1 * 0.25 + 0.9 * 0.75)
  // = 1/28 after one that disagrees.
  absl::StatusOr<v1::DesignDescription> d =
      DescribeDesign(HeavyHittersRequest(std::log(3.0), 0.1, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->posterior_given_yes(), 0.25, 1e-12);
  EXPECT_NEAR(d->posterior_given_no(), 1.0 / 28, 1e-12);
  EXPECT_NEAR(d->design().epsilon(), std::log(3.0), 1e-15);
  EXPECT_NEAR(d->design().a(), 0.75, 1e-12);
  EXPECT_EQ(d->design().parameters().heavy_hitters().max_length(), 16u);
  EXPECT_THAT(d->channel_note(), HasSubstr("holds the candidate value"));
  EXPECT_EQ(d->central_n(), 0);  // no n: no central epsilon
  // eps = 4 at a prior of 1 %: p / (p + (1 - p) e^-4), the e^eps odds ratio.
  d = DescribeDesign(HeavyHittersRequest(4.0, 0.01, 0));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->posterior_given_yes(), 0.01 / (0.01 + 0.99 * std::exp(-4.0)), 1e-12);
  EXPECT_NEAR(d->posterior_given_no(), 0.01 / (0.01 + 0.99 * std::exp(4.0)), 1e-12);
}

TEST(HeavyHittersDescribeTest, CentralEpsilonUsesTheGeneralCloneProbability) {
  const double eps = std::log(3.0);
  absl::StatusOr<v1::DesignDescription> d = DescribeDesign(HeavyHittersRequest(eps, 0.5, 100000));
  ASSERT_TRUE(d.ok()) << d.status();
  const CentralPrivacy expected =
      AmplifiedEpsilon(eps, std::exp(-eps), 100000, kDefaultCentralDelta).value();
  ASSERT_TRUE(expected.amplified);
  EXPECT_DOUBLE_EQ(d->central_epsilon(), expected.epsilon);
  EXPECT_DOUBLE_EQ(d->central_delta(), 1e-6);
  EXPECT_EQ(d->central_n(), 100000);
  EXPECT_EQ(d->central_method(), "shuffle_numerical");
  EXPECT_THAT(d->central_note(), HasSubstr("e^-eps"));
  // The yes/no bit's 2 / (e^eps + 1) would claim more amplification than holds.
  const CentralPrivacy binary =
      AmplifiedEpsilon(eps, 2 / (std::exp(eps) + 1), 100000, kDefaultCentralDelta).value();
  EXPECT_LT(binary.epsilon, d->central_epsilon());
  // Too few reports: the local epsilon, with the reason.
  d = DescribeDesign(HeavyHittersRequest(eps, 0.5, 10));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->central_delta(), 0);
  EXPECT_DOUBLE_EQ(d->central_epsilon(), eps);
  EXPECT_EQ(d->central_method(), "local_only");
}

TEST(HeavyHittersDescribeTest, AStoredDesignIsDescribedAsTheParametersAre) {
  v1::Design wire;
  wire.mutable_parameters()->mutable_heavy_hitters()->set_epsilon(std::log(3.0));
  wire.mutable_parameters()->mutable_heavy_hitters()->set_salt(42);
  wire.set_epsilon(std::log(3.0));
  wire.set_version(2);
  v1::DescribeDesignRequest r;
  r.set_metric("crash_sig");
  r.set_prior(0.1);
  absl::StatusOr<v1::DesignDescription> d = DescribeStoredDesign(r, wire, {});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->posterior_given_yes(), 0.25, 1e-12);
  EXPECT_EQ(d->design().version(), 2u);
}

TEST(HeavyHittersDescribeTest, BadInputNamesTheField) {
  v1::DescribeDesignRequest r = HeavyHittersRequest(std::log(3.0), 0.5, 0);
  r.add_category_prior(0.5);
  EXPECT_THAT(DescribeDesign(r).status().message(), HasSubstr("category_prior"));
  r = HeavyHittersRequest(30, 0.5, 0);
  EXPECT_THAT(DescribeDesign(r).status().message(), HasSubstr("design.heavy_hitters.epsilon"));
  r = HeavyHittersRequest(std::log(3.0), 1.5, 0);
  EXPECT_THAT(DescribeDesign(r).status().message(), HasSubstr("prior"));
}

TEST(HeavyHittersPlanTest, DevicesNeededIsTheCommonPlanner) {
  v1::DesignParameters p;
  p.mutable_heavy_hitters()->set_epsilon(4);
  absl::StatusOr<HeavyHittersPlan> plan = PlanHeavyHitters(p, 0.05, 0.9, 0, 0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  HeavyHittersDesign d;
  d.epsilon = 4;
  EXPECT_EQ(plan->devices_needed, HeavyHittersDevicesNeeded(d, 0.05, 0.9, {}).value());
  EXPECT_EQ(plan->max_length, 32);
  EXPECT_EQ(plan->max_prefixes, 64);
  EXPECT_DOUBLE_EQ(plan->confidence_level, 0.95);
  // At the planned devices the detection threshold (found with probability 0.9) is the share.
  const HeavyHittersQueryOptions o;
  EXPECT_NEAR(HeavyHittersDetectionThreshold(
                  d, HeavyHittersGroupSizes::Expected(d, plan->devices_needed), o, 32, 64),
              0.05, 1e-3);
  EXPECT_THAT(PlanHeavyHitters(p, 0, 0.9, 0, 0).status().message(), HasSubstr("share"));
  EXPECT_THAT(PlanHeavyHitters(p, 0.05, 1, 0, 0).status().message(), HasSubstr("probability"));
  v1::PlanSurveyRequest survey;
  *survey.mutable_design() = p;
  survey.set_half_width(0.05);
  EXPECT_THAT(PlanSurvey(survey).status().message(), HasSubstr("find_share"));
}

}  // namespace
}  // namespace deniable
