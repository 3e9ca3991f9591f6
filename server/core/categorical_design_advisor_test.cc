// DescribeDesign and PlanSurvey for categorical designs given by parameters (issue 14): the
// figures of common/categorical_privacy.h and categorical_planner.h on the wire, and bad input
// named by field.
#include <cmath>
#include <string>

#include "deniable/common/categorical.h"
#include "deniable/common/shuffle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/design_advisor.h"

namespace deniable::server {
namespace {
namespace categorical_design_advisor_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::DescribeDesignRequest Describe(v1::CategoricalMechanism mechanism, double epsilon) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_categorical()->set_mechanism(mechanism);
  r.mutable_design()->mutable_categorical()->set_epsilon(epsilon);
  r.set_prior(0.25);
  return r;
}

v1::PlanSurveyRequest Plan(v1::CategoricalMechanism mechanism, double epsilon) {
  v1::PlanSurveyRequest r;
  r.mutable_design()->mutable_categorical()->set_mechanism(mechanism);
  r.mutable_design()->mutable_categorical()->set_epsilon(epsilon);
  r.set_half_width(0.05);
  return r;
}

class CategoricalDesignAdvisorTest : public ::testing::Test {
 protected:
  DesignAdvisor advisor_{/*registry=*/nullptr};
};

// k-RR, k = 4, eps = ln 3 (p* = 1/2, q* = 1/6) at the uniform prior: P(x = r | r) = 1/2, others
// 1/6; I(x; r) = (1/2) log2(4/3) (categorical_privacy_test.cc by hand).
TEST_F(CategoricalDesignAdvisorTest, DescribesKRRByCategoryNames) {
  v1::DescribeDesignRequest r = Describe(v1::K_RR, std::log(3.0));
  for (const char* c : {"Y", "N", "U", "A"}) r.add_categories(c);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->design().categories(), 4u);
  EXPECT_EQ(d->design().parameters().categorical().mechanism(), v1::K_RR);
  EXPECT_THAT(d->categories(), ElementsAre("Y", "N", "U", "A"));
  EXPECT_THAT(d->category_prior(), ElementsAre(0.25, 0.25, 0.25, 0.25));
  EXPECT_EQ(d->channel(), "report");
  ASSERT_EQ(d->reported_size(), 4);
  EXPECT_EQ(d->reported(1).category(), "N");
  EXPECT_NEAR(d->reported(1).posterior(1), 0.5, 1e-15);
  EXPECT_NEAR(d->reported(1).posterior(0), 1.0 / 6.0, 1e-15);
  EXPECT_NEAR(d->categorical_entropy_bits(), 2.0, 1e-15);
  EXPECT_NEAR(d->categorical_mutual_information_bits(), 0.5 * std::log2(4.0 / 3.0), 1e-14);
  // One category against the rest at prior 1/4: (1/2)(1/4) / ((1/2)(1/4) + (1/6)(3/4)) = 1/2.
  EXPECT_NEAR(d->posterior_given_yes(), 0.5, 1e-12);
  EXPECT_EQ(d->central_n(), 0);  // no n asked for
}

// Only k: names "0" .. "k-1"; the mechanism left UNSPECIFIED becomes the least-variance one (OUE
// for k = 32 at eps = 1: 32 >= 3 e + 2), whose figures are of the support channel.
TEST_F(CategoricalDesignAdvisorTest, DescribesTheLeastVarianceMechanismByK) {
  v1::DescribeDesignRequest r = Describe(v1::CATEGORICAL_MECHANISM_UNSPECIFIED, 1.0);
  r.set_k(32);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->design().parameters().categorical().mechanism(), v1::OUE);
  EXPECT_EQ(d->categories(0), "0");
  EXPECT_EQ(d->categories(31), "31");
  EXPECT_EQ(d->channel(), "support");
  EXPECT_THAT(d->channel_note(), HasSubstr("support channel"));
  EXPECT_EQ(d->categorical_mutual_information_bits(), 0.0);
  EXPECT_GT(d->reported(0).mutual_information_bits(), 0.0);
}

TEST_F(CategoricalDesignAdvisorTest, UsesTheGivenCategoryPrior) {
  v1::DescribeDesignRequest r = Describe(v1::K_RR, std::log(2.0));
  r.set_k(3);
  for (double p : {0.5, 0.25, 0.25}) r.add_category_prior(p);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  // p* = 1/2, q* = 1/4: P(x = 0 | r = 0) = (1/2)(1/2) / (3/8) = 2/3.
  EXPECT_NEAR(d->reported(0).probability(), 3.0 / 8.0, 1e-15);
  EXPECT_NEAR(d->reported(0).posterior(0), 2.0 / 3.0, 1e-15);
}

// FMT21 numerical bound with the categorical clone probability (2 / (e^eps + 1) for k-RR),
// as the server serves it beside a prevalence.
TEST_F(CategoricalDesignAdvisorTest, GivesTheAmplifiedEpsilonForNReports) {
  v1::DescribeDesignRequest r = Describe(v1::K_RR, std::log(3.0));
  r.set_k(4);
  r.set_n(2532);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  const CategoricalDesign design =
      CategoricalDesign::Create(CategoricalMechanism::kDirectEncoding, 4, std::log(3.0)).value();
  const CentralPrivacy expected =
      AmplifiedEpsilon(std::log(3.0), design.CloneProbability(), 2532, kDefaultCentralDelta)
          .value();
  EXPECT_TRUE(expected.amplified);
  EXPECT_DOUBLE_EQ(d->central_epsilon(), expected.epsilon);
  EXPECT_LT(d->central_epsilon(), std::log(3.0));
  EXPECT_EQ(d->central_delta(), kDefaultCentralDelta);
  EXPECT_EQ(d->central_n(), 2532);
}

TEST_F(CategoricalDesignAdvisorTest, DescribeRejectsBadInputNamingTheField) {
  struct Case {
    v1::DescribeDesignRequest request;
    std::string field;
  };
  v1::DescribeDesignRequest no_k = Describe(v1::K_RR, 1.0);
  v1::DescribeDesignRequest big_k = Describe(v1::K_RR, 1.0);
  big_k.set_k(1000);
  v1::DescribeDesignRequest one_k = Describe(v1::K_RR, 1.0);
  one_k.set_k(1);
  v1::DescribeDesignRequest mismatch = Describe(v1::K_RR, 1.0);
  mismatch.set_k(3);
  mismatch.add_categories("a");
  mismatch.add_categories("b");
  v1::DescribeDesignRequest bad_eps = Describe(v1::K_RR, -1.0);
  bad_eps.set_k(3);
  v1::DescribeDesignRequest zero_eps = Describe(v1::OUE, 0.0);
  zero_eps.set_k(3);
  v1::DescribeDesignRequest mechanism = Describe(static_cast<v1::CategoricalMechanism>(9), 1.0);
  mechanism.set_k(3);
  v1::DescribeDesignRequest duplicate = Describe(v1::K_RR, 1.0);
  duplicate.add_categories("a");
  duplicate.add_categories("a");
  v1::DescribeDesignRequest prior = Describe(v1::K_RR, 1.0);
  prior.set_k(2);
  prior.add_category_prior(0.5);
  v1::DescribeDesignRequest yes_no = Describe(v1::K_RR, 1.0);
  yes_no.mutable_design()->mutable_two_coin();
  yes_no.set_k(3);
  v1::DescribeDesignRequest negative_n = Describe(v1::K_RR, 1.0);
  negative_n.set_k(3);
  negative_n.set_n(-5);
  v1::DescribeDesignRequest huge_n = Describe(v1::K_RR, 1.0);
  huge_n.set_k(3);
  huge_n.set_n(kMaxDescribedReports + 1);
  const Case cases[] = {
      {no_k, "k: "},
      {big_k, "k: must be between 2 and 256, but is 1000"},
      {one_k, "k: must be between"},
      {mismatch, "k: is 3 but categories names 2"},
      {bad_eps, "design.categorical.epsilon"},
      {zero_eps, "design.categorical.epsilon"},
      {mechanism, "design.categorical.mechanism"},
      {duplicate, "categories[1]"},
      {prior, "category_prior: must hold one share for each of the 2"},
      {yes_no, "k, categories: only for a categorical design"},
      {negative_n, "n: must be in [0, 1000000000]"},
      {huge_n, "n: must be in [0, 1000000000]"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(c.request);
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << c.field;
    EXPECT_THAT(d.status().message(), HasSubstr(c.field));
  }
}

// k-RR, k = 4, eps = ln 3, +/- 5 points: 3458 for one share at 95 %, 5585 for all four together
// (Sidak), 5615 (Bonferroni); at shares (0.5, 0.3, 0.1, 0.1) 3074 and 4964
// (categorical_planner_test.cc by hand).
TEST_F(CategoricalDesignAdvisorTest, PlansEveryShareWorstCaseAndAtShares) {
  v1::PlanSurveyRequest r = Plan(v1::K_RR, std::log(3.0));
  for (const char* c : {"Y", "N", "U", "A"}) r.add_categories(c);
  absl::StatusOr<v1::SurveyPlan> p = advisor_.Plan(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->reports_needed_worst_case(), 3458);
  EXPECT_EQ(p->reports_needed_simultaneous(), 5585);
  EXPECT_EQ(p->reports_needed_simultaneous_worst_case(), 5585);
  EXPECT_EQ(p->simultaneous_method(), v1::SIDAK);
  EXPECT_NEAR(p->per_category_level(), std::pow(0.95, 0.25), 1e-15);
  EXPECT_EQ(p->confidence_level(), 0.95);
  EXPECT_EQ(p->category_plans_size(), 0);
  EXPECT_THAT(p->assumption(), HasSubstr("worst case"));
  EXPECT_THAT(p->categories(), ElementsAre("Y", "N", "U", "A"));

  r.set_simultaneous(v1::BONFERRONI);
  for (double f : {0.5, 0.3, 0.1, 0.1}) r.add_assumed_shares(f);
  p = advisor_.Plan(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->simultaneous_method(), v1::BONFERRONI);
  EXPECT_EQ(p->reports_needed(), 3074);
  EXPECT_EQ(p->reports_needed_simultaneous_worst_case(), 5615);
  ASSERT_EQ(p->category_plans_size(), 4);
  EXPECT_EQ(p->category_plans(0).category(), "Y");
  EXPECT_EQ(p->category_plans(0).reports_needed(), 3074);
  EXPECT_EQ(p->category_plans(3).assumed_share(), 0.1);
  EXPECT_THAT(p->assumption(), HasSubstr("assumed shares"));
}

TEST_F(CategoricalDesignAdvisorTest, PlanRejectsBadInputNamingTheField) {
  v1::PlanSurveyRequest no_k = Plan(v1::K_RR, 1.0);
  EXPECT_THAT(advisor_.Plan(no_k).status().message(), HasSubstr("k: "));
  v1::PlanSurveyRequest big_k = Plan(v1::K_RR, 1.0);
  big_k.set_k(257);
  EXPECT_THAT(advisor_.Plan(big_k).status().message(), HasSubstr("k: must be between"));
  v1::PlanSurveyRequest eps = Plan(v1::OLH, 0.0);
  eps.set_k(4);
  EXPECT_THAT(advisor_.Plan(eps).status().message(), HasSubstr("design.categorical.epsilon"));
  v1::PlanSurveyRequest shares = Plan(v1::K_RR, 1.0);
  shares.set_k(3);
  for (double f : {0.5, 0.6, -0.1}) shares.add_assumed_shares(f);
  EXPECT_THAT(advisor_.Plan(shares).status().message(), HasSubstr("assumed_shares[2]"));
  v1::PlanSurveyRequest width = Plan(v1::K_RR, 1.0);
  width.set_k(3);
  width.set_half_width(0);
  EXPECT_THAT(advisor_.Plan(width).status().message(), HasSubstr("half_width"));
  v1::PlanSurveyRequest binary_shares;
  binary_shares.mutable_design()->mutable_two_coin();
  binary_shares.set_half_width(0.05);
  binary_shares.add_assumed_shares(1.0);
  EXPECT_THAT(advisor_.Plan(binary_shares).status().message(), HasSubstr("assumed_shares: only"));
  for (const v1::PlanSurveyRequest& r : {no_k, big_k, eps, shares, width, binary_shares}) {
    EXPECT_EQ(advisor_.Plan(r).status().code(), absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace categorical_design_advisor_test
}  // namespace
}  // namespace deniable::server
