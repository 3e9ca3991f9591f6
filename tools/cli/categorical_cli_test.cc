// The CLI for metrics with categories: design flags, --categories, --simultaneous, reading and
// replaying a categorical column, and the tables of shares.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "client/src/testing/fake_transport.h"
#include "tools/cli/categorical_flags.h"
#include "tools/cli/categorical_output.h"
#include "tools/cli/output.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {
namespace {
namespace categorical_cli_test {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CategoricalDesignFlagsTest, NamesTheMechanismOrLetsTheServerChoose) {
  auto krr = CategoricalDesignFromFlagValues("k_rr", 1.1, true);
  ASSERT_TRUE(krr.ok() && krr->has_value());
  EXPECT_EQ((*krr)->categorical().mechanism(), v1::K_RR);
  EXPECT_EQ((*krr)->categorical().epsilon(), 1.1);
  EXPECT_EQ((**CategoricalDesignFromFlagValues("oue", 2, true)).categorical().mechanism(), v1::OUE);
  EXPECT_EQ((**CategoricalDesignFromFlagValues("olh", 2, false)).categorical().mechanism(),
            v1::OLH);  // add-version: the metric has the categories
  EXPECT_EQ((**CategoricalDesignFromFlagValues("categorical", 2, true)).categorical().mechanism(),
            v1::CATEGORICAL_MECHANISM_UNSPECIFIED);
  EXPECT_EQ((**CategoricalDesignFromFlagValues("", 2, true)).categorical().mechanism(),
            v1::CATEGORICAL_MECHANISM_UNSPECIFIED);
  EXPECT_EQ(*CategoricalDesignFromFlagValues("two_coin", 0, false), std::nullopt);
  EXPECT_EQ(*CategoricalDesignFromFlagValues("", 1.0, false), std::nullopt);  // symmetric_epsilon
}

TEST(CategoricalDesignFlagsTest, RefusesNamingTheFlag) {
  auto yes_no = CategoricalDesignFromFlagValues("two_coin", 0, true);
  EXPECT_EQ(yes_no.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(yes_no.status().message()), HasSubstr("--categories"));
  auto no_epsilon = CategoricalDesignFromFlagValues("k_rr", 0, true);
  EXPECT_EQ(no_epsilon.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(no_epsilon.status().message()), HasSubstr("--epsilon"));
  EXPECT_FALSE(CategoricalDesignFromFlagValues("oue", std::nan(""), true).ok());
  EXPECT_FALSE(CategoriesFromFlag({"Y"}).ok());
  EXPECT_FALSE(CategoriesFromFlag({"Y", ""}).ok());
  EXPECT_TRUE(CategoriesFromFlag({"Y", "N", "U", "A"}).ok());
}

TEST(SimultaneousFlagTest, ParsesBothMethodsAndDefaultsToTheServers) {
  EXPECT_EQ(*ParseSimultaneous(""), v1::SIMULTANEOUS_METHOD_UNSPECIFIED);
  EXPECT_EQ(*ParseSimultaneous("sidak"), v1::SIDAK);
  EXPECT_EQ(*ParseSimultaneous("bonferroni"), v1::BONFERRONI);
  absl::StatusOr<v1::SimultaneousMethod> bad = ParseSimultaneous("scheffe");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--simultaneous"));
}

class SurveyFile {
 public:
  explicit SurveyFile(const std::string& contents)
      : path_(::testing::TempDir() + "/cat_survey_" + std::to_string(::getpid()) + ".csv") {
    std::ofstream(path_) << contents;
  }
  ~SurveyFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

SurveySpec VoteSpec(const std::string& path) {
  SurveySpec spec{path, "vote", "", {"region"}};
  spec.categories = {"Y", "N", "U", "A"};
  return spec;
}

TEST(ReadCategoricalSurveyTest, ReadsEachAnswerAsItsCategory) {
  SurveyFile file("region,vote\nN,Y\nS, U\nN,A\nC,N\n");
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(VoteSpec(file.path()));
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 4u);
  EXPECT_EQ((*rows)[0].category, "Y");
  EXPECT_EQ((*rows)[1].category, "U");  // surrounding whitespace removed
  EXPECT_EQ((*rows)[2].category, "A");
  EXPECT_EQ((*rows)[3].labels.at("region"), "C");
}

TEST(ReadCategoricalSurveyTest, RefusesAnAnswerOutsideTheCategoriesWithoutRepeatingIt) {
  SurveyFile file("region,vote\nN,Y\nS,Maybe\n");
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(VoteSpec(file.path()));
  EXPECT_EQ(rows.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr("record 3"));
  EXPECT_THAT(std::string(rows.status().message()), HasSubstr("Y, N, U, A"));
  EXPECT_THAT(std::string(rows.status().message()), Not(HasSubstr("Maybe")));
}

TEST(ReadCategoricalSurveyTest, BlankAnswersAreRefusedOrSkippedButNeverNo) {
  SurveyFile file("region,vote\nN,Y\nS,\nN,N\n");
  SurveySpec spec = VoteSpec(file.path());
  EXPECT_EQ(ReadSurvey(spec).status().code(), absl::StatusCode::kInvalidArgument);
  spec.blank = BlankAnswers::kNo;
  EXPECT_THAT(std::string(ReadSurvey(spec).status().message()), HasSubstr("--blank=skip"));
  spec.blank = BlankAnswers::kSkip;
  int64_t skipped = 0;
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec, &skipped);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->size(), 2u);
  EXPECT_EQ(skipped, 1);
}

TEST(ReplayCategoricalSurveyTest, EachRespondentSendsOneCategoricalReportAndTheTruthIsCounted) {
  SurveyFile file("region,vote\nN,Y\nS,U\nN,A\nC,N\nC,Y\n");
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(VoteSpec(file.path()));
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto collector = std::make_shared<client::testing::FakeTransport>();
  collector->SetCategorical({"Y", "N", "U", "A"}, CategoricalMechanism::kOptimizedUnaryEncoding,
                            1.0);
  std::mt19937_64 engine(5);
  absl::BitGenRef gen(engine);
  client::ReporterOptions options;
  absl::StatusOr<ReplayResult> result = ReplaySurvey(*rows, "m", collector, options, &gen);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->devices, 5);
  EXPECT_EQ(result->true_categories,
            (std::map<std::string, int64_t>{{"A", 1}, {"N", 1}, {"U", 1}, {"Y", 2}}));
  std::vector<v1::Report> sent = collector->SentReports();
  ASSERT_EQ(sent.size(), 5u);
  for (const v1::Report& r : sent) {
    EXPECT_EQ(r.categorical().bits().size(), 1u);  // OUE, k = 4: one byte
    EXPECT_EQ(r.bit(), 0u);
  }
  EXPECT_EQ(sent[2].labels().at("region"), "N");
}

// A k-RR result over 4 categories as the server serves it.
v1::Prevalence VotePrevalence() {
  v1::Prevalence p;
  p.set_metric("chile_vote");
  p.set_n(2532);
  p.set_confidence_level(0.95);
  p.set_simultaneous_method("sidak");
  p.set_per_category_level(std::pow(0.95, 0.25));
  p.set_consistent_method("norm_sub");
  v1::Design* d = p.mutable_design();
  d->mutable_parameters()->mutable_categorical()->set_mechanism(v1::K_RR);
  d->mutable_parameters()->mutable_categorical()->set_epsilon(std::log(3.0));
  d->set_version(1);
  d->set_categories(4);
  d->set_a(0.5);
  d->set_b(1.0 / 6);
  d->set_epsilon(std::log(3.0));
  const char* names[] = {"Y", "N", "U", "A"};
  const double estimates[] = {0.3412, 0.3600, 0.2200, 0.0788};
  for (int v = 0; v < 4; ++v) {
    v1::CategoryShare* s = p.add_shares();
    s->set_category(names[v]);
    s->set_support_count(600 + v);
    s->set_estimate_unbiased(estimates[v]);
    s->set_estimate_consistent(estimates[v]);
    s->set_standard_error(0.025);
    s->set_ci_lower(estimates[v] - 0.049);
    s->set_ci_upper(estimates[v] + 0.049);
    s->set_simultaneous_lower(estimates[v] - 0.062);
    s->set_simultaneous_upper(estimates[v] + 0.062);
  }
  return p;
}

TEST(CategoricalOutputTest, PrevalenceShowsEveryShareWithBothIntervals) {
  const std::string out = FormatPrevalence(VotePrevalence());
  EXPECT_THAT(out, HasSubstr("k_rr v1 (k = 4, p* = 0.5, q* = 0.166667), epsilon = 1.0986 nats"));
  EXPECT_THAT(out, HasSubstr("categories           4: Y, N, U, A"));
  EXPECT_THAT(out, HasSubstr("norm_sub"));
  EXPECT_THAT(out, HasSubstr("simultaneous 95 % over all 4 categories together by sidak (each at "
                             "98.7259 %)"));
  EXPECT_THAT(out, HasSubstr("Y                 600    34.12 %    34.12 %    2.50 %  "
                             "[29.22 %, 39.02 %]     [27.92 %, 40.32 %]"));
  EXPECT_THAT(out, HasSubstr("A                 603     7.88 %"));
  EXPECT_THAT(out, Not(HasSubstr("\"yes\" bits")));
}

TEST(CategoricalOutputTest, GroupsAndSuppressedGroupsAreShown) {
  v1::Prevalence p = VotePrevalence();
  v1::Prevalence* g = p.add_groups();
  *g = VotePrevalence();
  g->set_group_value("N");
  g->set_n(500);
  v1::Prevalence* small = p.add_groups();
  small->set_group_value("X");
  small->set_n(3);
  small->set_suppressed(true);
  const std::string out = FormatPrevalence(p);
  EXPECT_THAT(out, HasSubstr("group N (n = 500)"));
  EXPECT_THAT(out, HasSubstr("group X (n = 3)\n  suppressed (too few reports)"));
}

TEST(CategoricalOutputTest, SeriesAndDifferenceShowOneRowPerCategory) {
  v1::Series series;
  series.set_metric("chile_vote");
  series.set_bucket(v1::DAY);
  v1::Prevalence* b = series.add_buckets();
  *b = VotePrevalence();
  b->set_start_time_seconds(86400);
  const std::string s = FormatSeries(series);
  EXPECT_THAT(s, HasSubstr("simultaneous 95 % intervals (sidak)"));
  EXPECT_THAT(
      s, HasSubstr("1970-01-02 00:00       2532  Y               34.12 %  [27.92 %, 40.32 %]"));
  EXPECT_THAT(s, HasSubstr("  N               36.00 %  [29.80 %, 42.20 %]"));

  v1::Difference d;
  *d.mutable_first() = VotePrevalence();
  *d.mutable_second() = VotePrevalence();
  d.set_confidence_level(0.95);
  v1::CategoryDifference* c = d.add_shares();
  c->set_category("Y");
  c->set_difference(0.0123);
  c->set_standard_error(0.035);
  c->set_ci_lower(-0.0563);
  c->set_ci_upper(0.0809);
  // The wire's difference is first - second (+1.23 points): printed as second minus first.
  const std::string diff = FormatDifference(d);
  EXPECT_THAT(diff, HasSubstr("change               second minus first, in percentage points"));
  EXPECT_THAT(diff, HasSubstr("Y               34.12 %    34.12 %     -1.23      3.50  "
                              "[-8.09, +5.63]    fell by 1.23 points"));
}

TEST(CategoricalOutputTest, ReplayPrintsEachShareBesideTheTruthAndCountsCoverage) {
  ReplayResult result;
  result.devices = 2532;
  result.true_categories = {{"Y", 868}, {"N", 889}, {"U", 588}, {"A", 187}};
  SurveySpec spec{"chile.csv", "vote", "", {}};
  spec.categories = {"Y", "N", "U", "A"};
  const std::string out = FormatCategoricalReplay(result, spec, VotePrevalence());
  EXPECT_THAT(out, HasSubstr("replayed 2532 respondents of chile.csv (column vote, 4 categories)"));
  EXPECT_THAT(out, HasSubstr("Y               34.12 %  [27.92 %, 40.32 %]       34.28 % (868 / "
                             "2532)"));
  // U: 588 / 2532 = 23.22 % in [15.80 %, 28.20 %]; A: 7.39 % in [1.68 %, 14.08 %].
  EXPECT_THAT(out, HasSubstr("the simultaneous intervals cover 4 of the 4 true shares"));
}

TEST(CategoricalOutputTest, MetricAndListShowTheCategories) {
  v1::Metric m;
  m.set_name("chile_vote");
  *m.mutable_design() = VotePrevalence().design();
  for (const char* c : {"Y", "N", "U", "A"}) m.add_categories(c);
  EXPECT_THAT(FormatMetric(m), HasSubstr("categories      4: Y, N, U, A"));
  EXPECT_THAT(FormatMetric(m), HasSubstr("memoized report per category"));
  v1::ListMetricsResponse list;
  *list.add_metrics() = m;
  EXPECT_THAT(FormatMetricList(list), HasSubstr("categories: Y, N, U, A"));
  EXPECT_THAT(FormatMetricList(list), HasSubstr("k_rr v1 (k = 4"));
}

TEST(SharesFlagTest, ParsesNumbersAndNamesTheFlagOtherwise) {
  absl::StatusOr<std::vector<double>> shares = SharesFromFlag({"0.35", "0.35", "0.23", "0.07"});
  ASSERT_TRUE(shares.ok()) << shares.status();
  EXPECT_EQ(*shares, (std::vector<double>{0.35, 0.35, 0.23, 0.07}));
  EXPECT_TRUE(SharesFromFlag({})->empty());
  absl::StatusOr<std::vector<double>> bad = SharesFromFlag({"0.5", "half"});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("--shares: value 2 of 2 is not a number"));
}

// A k-RR description as DescribeDesign gives it (k = 3, eps = ln 2: p* = 1/2, q* = 1/4).
v1::DesignDescription ThreeCategoryDescription(const std::string& channel) {
  v1::DesignDescription d;
  d.mutable_design()->mutable_parameters()->mutable_categorical()->set_mechanism(
      channel == "report" ? v1::K_RR : v1::OUE);
  d.mutable_design()->set_categories(3);
  d.mutable_design()->set_a(0.5);
  d.mutable_design()->set_b(0.25);
  d.mutable_design()->set_epsilon(std::log(2.0));
  for (const char* c : {"Y", "N", "U"}) d.add_categories(c);
  for (double p : {0.5, 0.25, 0.25}) d.add_category_prior(p);
  d.set_channel(channel);
  d.set_channel_note("what the figures are of");
  d.set_categorical_entropy_bits(1.5);
  d.set_categorical_mutual_information_bits(channel == "report" ? 0.0488 : 0.0);
  const double posterior[3][3] = {{2.0 / 3, 1.0 / 6, 1.0 / 6}, {0.4, 0.4, 0.2}, {0.4, 0.2, 0.4}};
  for (int r = 0; r < 3; ++r) {
    v1::ReportedCategory* c = d.add_reported();
    c->set_category(d.categories(r));
    c->set_probability(r == 0 ? 0.375 : 0.3125);
    for (double p : posterior[r]) c->add_posterior(p);
    c->set_mutual_information_bits(0.01 * (r + 1));
  }
  return d;
}

TEST(CategoricalOutputTest, DescriptionShowsThePosteriorOfEachReportedCategory) {
  const std::string out = FormatDesignDescription(ThreeCategoryDescription("report"));
  EXPECT_THAT(out, HasSubstr("categories                  3: Y, N, U"));
  EXPECT_THAT(out, HasSubstr("prior                       Y 50.00 %, N 25.00 %, U 25.00 %"));
  EXPECT_THAT(out, HasSubstr("I(x; r)                     0.0488 bits"));
  EXPECT_THAT(out, HasSubstr("r REPORTED"));
  EXPECT_THAT(out, HasSubstr("Y              37.50 %    66.67 %    16.67 %    16.67 %"));
  EXPECT_THAT(out, Not(HasSubstr("P(yes | report yes)")));  // no yes/no lines
  EXPECT_THAT(out, Not(HasSubstr("central epsilon")));      // no --n
  // OUE: the support channel, said so, and no I(x; r) of a whole report.
  const std::string support = FormatDesignDescription(ThreeCategoryDescription("support"));
  EXPECT_THAT(support, HasSubstr("r SUPPORTED"));
  EXPECT_THAT(support, HasSubstr("the report supports r"));
  EXPECT_THAT(support, Not(HasSubstr("I(x; r)      ")));
}

TEST(CategoricalOutputTest, DescriptionWithNShowsTheCentralEpsilon) {
  v1::DesignDescription d = ThreeCategoryDescription("report");
  d.set_central_n(2532);
  d.set_central_epsilon(0.1023);
  d.set_central_delta(1e-6);
  EXPECT_THAT(FormatDesignDescription(d),
              HasSubstr("central epsilon             0.1023 nats at delta = 1e-06 for n = 2532"));
}

TEST(CategoricalOutputTest, ManyCategoriesShowTheLargestOtherPosteriorInsteadOfAColumnEach) {
  v1::DesignDescription d = ThreeCategoryDescription("report");
  for (int j = 3; j < 10; ++j) d.add_categories("c" + std::to_string(j));
  const std::string out = FormatCategoricalDescription(d);
  EXPECT_THAT(out, HasSubstr("P(TRUE=r|r)"));
  EXPECT_THAT(out, HasSubstr("MAX P(TRUE=j|r)"));
  EXPECT_THAT(out, Not(HasSubstr("P(Y|r)")));
}

TEST(CategoricalOutputTest, PlanShowsOneShareAloneAndAllTogether) {
  v1::SurveyPlan p;
  p.mutable_design()->mutable_parameters()->mutable_categorical()->set_mechanism(v1::K_RR);
  p.mutable_design()->set_categories(4);
  for (const char* c : {"Y", "N", "U", "A"}) p.add_categories(c);
  p.set_half_width(0.05);
  p.set_confidence_level(0.95);
  p.set_reports_needed(3074);
  p.set_reports_needed_worst_case(3458);
  p.set_simultaneous_method(v1::SIDAK);
  p.set_per_category_level(std::pow(0.95, 0.25));
  p.set_reports_needed_simultaneous(4964);
  p.set_reports_needed_simultaneous_worst_case(5585);
  p.set_assumption("at the assumed shares");
  v1::CategoryPlan* y = p.add_category_plans();
  y->set_category("Y");
  y->set_assumed_share(0.5);
  y->set_reports_needed(3074);
  y->set_reports_needed_simultaneous(4964);
  const std::string out = FormatPlan(p);
  EXPECT_THAT(out, HasSubstr("+/- 5.00 percentage points on every share at 95 %"));
  EXPECT_THAT(out, HasSubstr("one share alone             3074 reports (worst case 3458)"));
  EXPECT_THAT(out, HasSubstr("all 4 shares together      4964 reports (worst case 5585; sidak, "
                             "each share at 98.7259 %)"));
  EXPECT_THAT(out, HasSubstr("Y               50.00 %         3074           4964"));
}

}  // namespace categorical_cli_test
}  // namespace
}  // namespace deniable::tools
