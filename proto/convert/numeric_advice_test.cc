// PlanSurvey and DescribeDesign for numeric designs given by parameters (numeric_advice.h): the
// API's planner in devices for a mean within +/- h (DKY17's variance bound) and for every bucket
// share together, and the design's privacy figures, with the request's field named on bad input.
#include "deniable/convert/numeric_advice.h"

#include <cmath>

#include "deniable/convert/design_advice.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace numeric_advice_test {

using ::testing::HasSubstr;

v1::PlanSurveyRequest MeanPlan(double half_width) {
  v1::PlanSurveyRequest r;
  r.mutable_design()->mutable_numeric()->set_mechanism(v1::ONE_BIT_MEAN);
  r.mutable_design()->mutable_numeric()->set_epsilon(std::log(3.0));  // C = 2
  r.mutable_range()->set_lo(18);
  r.mutable_range()->set_hi(90);
  r.mutable_range()->set_unit("years");
  r.set_half_width(half_width);
  return r;
}

TEST(NumericPlanSurveyTest, MeanWithinHalfWidthInTheValuesUnit) {
  absl::StatusOr<v1::SurveyPlan> plan = PlanSurvey(MeanPlan(2));
  ASSERT_TRUE(plan.ok()) << plan.status();
  // n = ceil(z^2 m^2 C^2 / (4 h^2)) = ceil(1.959964^2 * 72^2 * 4 / 16) = ceil(4978.5); the bound
  // z m C / (2 sqrt n) <= h holds at n and fails at n - 1.
  EXPECT_EQ(plan->reports_needed(), 4979);
  EXPECT_EQ(plan->reports_needed_worst_case(), 4979);
  const double z = 1.959963984540054;
  EXPECT_LE(z * 72 * 2 / (2 * std::sqrt(4979.0)), 2.0);
  EXPECT_GT(z * 72 * 2 / (2 * std::sqrt(4978.0)), 2.0);
  EXPECT_EQ(plan->design().parameters().numeric().mechanism(), v1::ONE_BIT_MEAN);
  EXPECT_EQ(plan->design().parameters().numeric().unit(), "years");
  EXPECT_THAT(plan->assumption(), HasSubstr("worst case over the values"));
  // A window plans in devices, as for the other kinds.
  v1::PlanSurveyRequest weekly = MeanPlan(2);
  weekly.set_window("week");
  weekly.set_reports_per_device(7);
  absl::StatusOr<v1::SurveyPlan> w = PlanSurvey(weekly);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->devices_needed(), 4979);
  EXPECT_EQ(w->reports_sent(), 7 * 4979);
}

TEST(NumericPlanSurveyTest, EveryBucketShareTogether) {
  v1::PlanSurveyRequest r;
  r.mutable_design()->mutable_numeric()->set_mechanism(v1::D_BIT_FLIP);
  r.mutable_design()->mutable_numeric()->set_epsilon(std::log(3.0));
  r.mutable_design()->mutable_numeric()->set_buckets(4);
  r.mutable_design()->mutable_numeric()->set_sampled_buckets(2);
  r.mutable_range()->set_hi(100);
  r.set_half_width(0.05);
  r.set_simultaneous(v1::BONFERRONI);
  absl::StatusOr<v1::SurveyPlan> plan = PlanSurvey(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(plan->per_category_level(), 1 - 0.05 / 4);
  EXPECT_EQ(plan->simultaneous_method(), v1::BONFERRONI);
  // n > (k / d) z^2 / (4 h^2 (p - q)^2), p - q = (a - 1)/(a + 1), a = sqrt(3), z at 98.75 %:
  // every bucket's s_j ~ Binomial(n, d / k) reaches z^2 / (4 h^2 (p - q)^2) with probability
  // 95 %, not on average (issue 38): 17677 reports, 1.7 % more than 17380.
  const double a = std::sqrt(3.0), gap = (a - 1) / (a + 1);
  const double z = 2.4977054744123237;
  const double n = 4.0 / 2 * z * z / (4 * 0.05 * 0.05 * gap * gap);
  EXPECT_GT(static_cast<double>(plan->reports_needed()), std::ceil(n) + 1);
  EXPECT_LE(static_cast<double>(plan->reports_needed()), 1.03 * n);
  EXPECT_THAT(plan->assumption(), HasSubstr("s_j ~ Binomial(n, 2 / 4)"));
  EXPECT_THAT(plan->assumption(), HasSubstr("probability >= 95 %"));
  EXPECT_EQ(plan->reports_needed_simultaneous(), plan->reports_needed());
}

TEST(NumericPlanSurveyTest, BadInputNamesTheField) {
  v1::PlanSurveyRequest no_range = MeanPlan(2);
  no_range.clear_range();
  EXPECT_EQ(PlanSurvey(no_range).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(PlanSurvey(no_range).status().message(), HasSubstr("range"));
  EXPECT_THAT(PlanSurvey(MeanPlan(0)).status().message(), HasSubstr("half_width"));
  v1::PlanSurveyRequest prevalence = MeanPlan(2);
  prevalence.set_assumed_prevalence(0.3);
  EXPECT_THAT(PlanSurvey(prevalence).status().message(), HasSubstr("assumed_prevalence"));
  v1::PlanSurveyRequest level = MeanPlan(2);
  level.set_confidence_level(1.5);
  EXPECT_THAT(PlanSurvey(level).status().message(), HasSubstr("confidence_level"));
  // A range with a yes/no design is a mistake, not ignored.
  v1::PlanSurveyRequest yes_no;
  yes_no.mutable_design()->mutable_two_coin();
  yes_no.set_half_width(0.05);
  yes_no.mutable_range()->set_hi(1);
  EXPECT_THAT(PlanSurvey(yes_no).status().message(), HasSubstr("range: only for a numeric"));
}

TEST(NumericDescribeDesignTest, ParametersWithTheirRange) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_numeric()->set_mechanism(v1::ONE_BIT_MEAN);
  r.mutable_design()->mutable_numeric()->set_epsilon(std::log(3.0));
  r.mutable_range()->set_lo(0);
  r.mutable_range()->set_hi(200000);
  r.set_prior(0.5);
  r.set_n(2449);
  absl::StatusOr<v1::DesignDescription> d = DescribeDesign(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->design().epsilon(), std::log(3.0), 1e-12);
  // The bit at hi against lo is symmetric randomized response at eps = ln 3: posterior 3/4.
  EXPECT_NEAR(d->posterior_given_yes(), 0.75, 1e-12);
  EXPECT_GT(d->central_epsilon(), 0);
  EXPECT_LT(d->central_epsilon(), std::log(3.0));
  EXPECT_THAT(d->channel_note(), HasSubstr("value at hi"));
  // dBitFlip with d = 1: epsilon of the report is eps / 2 (one sampled bit).
  v1::DescribeDesignRequest h = r;
  h.mutable_design()->mutable_numeric()->set_mechanism(v1::D_BIT_FLIP);
  h.mutable_design()->mutable_numeric()->set_buckets(5);
  h.mutable_design()->mutable_numeric()->set_sampled_buckets(1);
  absl::StatusOr<v1::DesignDescription> hd = DescribeDesign(h);
  ASSERT_TRUE(hd.ok()) << hd.status();
  EXPECT_NEAR(hd->design().epsilon(), std::log(3.0) / 2, 1e-12);
  EXPECT_THAT(hd->channel_note(), HasSubstr("sampled bucket"));
  // Issue 38: dBitFlip's figures are the whole report's. k = d = 4, eps = 2, prior 1/2: the
  // most telling report gives e^2 / (1 + e^2) = 88.08 % and I = 0.2135 bits (one bucket's bit:
  // 73.11 %, 0.1601 bits, named in the note).
  v1::DescribeDesignRequest whole = h;
  whole.mutable_design()->mutable_numeric()->set_epsilon(2.0);
  whole.mutable_design()->mutable_numeric()->set_buckets(4);
  whole.mutable_design()->mutable_numeric()->set_sampled_buckets(4);
  whole.set_n(0);
  absl::StatusOr<v1::DesignDescription> wd = DescribeDesign(whole);
  ASSERT_TRUE(wd.ok()) << wd.status();
  EXPECT_NEAR(wd->posterior_given_yes(), std::exp(2.0) / (1 + std::exp(2.0)), 1e-12);
  EXPECT_NEAR(wd->posterior_given_no(), 1 / (1 + std::exp(2.0)), 1e-12);
  EXPECT_NEAR(wd->mutual_information_bits(), 0.2135, 5e-5);
  EXPECT_NEAR(wd->entropy_bits() - wd->conditional_entropy_bits(), wd->mutual_information_bits(),
              1e-15);
  EXPECT_THAT(wd->channel_note(), HasSubstr("whole report"));
  EXPECT_THAT(wd->channel_note(), HasSubstr("P(x = 1 | bit 1) = 0.7311 and I(x; bit) = 0.1601"));
  // Without the range the edges cannot follow: named.
  v1::DescribeDesignRequest bare = h;
  bare.clear_range();
  EXPECT_EQ(DescribeDesign(bare).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace numeric_advice_test
}  // namespace
}  // namespace deniable
