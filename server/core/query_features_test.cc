// Series, differences, label groups, small-group suppression, design versions and the design
// advisor, over the in-memory storage.
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/core_test_util.h"
#include "server/core/design_advisor.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace query_features_test {

using ::testing::HasSubstr;

constexpr int64_t kHour = 3600;
constexpr int64_t kDay = 86400;
// Monday 2023-11-13 00:00 UTC.
constexpr int64_t kMonday = 1699833600;

class QueryFeaturesTest : public ::testing::Test {
 protected:
  QueryFeaturesTest()
      : clock_(absl::FromUnixSeconds(kMonday + 30 * kDay)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 1}),
        advisor_(&registry_) {}

  void Create(const std::string& name, uint32_t min_reports = 0) {
    v1::CreateMetricRequest create;
    create.set_name(name);
    create.mutable_design()->mutable_two_coin();
    create.set_min_reports(min_reports);
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  void Store(const std::string& metric, int yes, int no, int64_t time, uint32_t version = 1,
             const std::string& region = "") {
    const v1::SubmitReportsRequest request =
        testing_util::CountedBatch(metric, yes, no, time, version, &next_id_, region);
    absl::StatusOr<v1::SubmitReportsResponse> s = ingestor_.Submit(request);
    ASSERT_TRUE(s.ok()) << s.status();
  }

  v1::GetPrevalenceRequest Request(const std::string& metric) {
    v1::GetPrevalenceRequest r;
    r.set_metric(metric);
    return r;
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
  DesignAdvisor advisor_;
  uint64_t next_id_ = 0;
};

TEST_F(QueryFeaturesTest, GroupByLabelEstimatesEachValueAndSuppressesSmallGroups) {
  Create("m", /*min_reports=*/10);
  Store("m", 30, 10, kMonday, 1, "N");  // lambda 0.75 -> pi 1.0
  Store("m", 10, 30, kMonday, 1, "S");  // lambda 0.25 -> pi 0.0
  Store("m", 2, 3, kMonday, 1, "C");    // 5 reports: below min_reports
  v1::GetPrevalenceRequest r = Request("m");
  r.set_group_by("region");
  absl::StatusOr<v1::Prevalence> p = query_.Get(r);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->n(), 85);
  ASSERT_EQ(p->groups_size(), 3);
  EXPECT_EQ(p->groups(0).group_value(), "C");
  EXPECT_TRUE(p->groups(0).suppressed());
  EXPECT_EQ(p->groups(0).n(), 5);
  EXPECT_EQ(p->groups(0).ci_upper(), 0.0);  // nothing estimated
  EXPECT_EQ(p->groups(1).group_value(), "N");
  EXPECT_NEAR(p->groups(1).estimate_unbiased(), 1.0, 1e-12);
  EXPECT_EQ(p->groups(2).group_value(), "S");
  EXPECT_NEAR(p->groups(2).estimate_unbiased(), 0.0, 1e-12);
}

TEST_F(QueryFeaturesTest, RefusesPrevalenceBelowMinReportsWithTheCountNeeded) {
  Create("m", /*min_reports=*/100);
  Store("m", 5, 5, kMonday);
  absl::StatusOr<v1::Prevalence> p = query_.Get(Request("m"));
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("has 10 reports"));
  EXPECT_THAT(p.status().message(), HasSubstr("at least 100"));
}

TEST_F(QueryFeaturesTest, RejectsMalformedGroupBy) {
  Create("m");
  Store("m", 1, 1, kMonday);
  v1::GetPrevalenceRequest r = Request("m");
  r.set_group_by("region=N");
  EXPECT_THAT(query_.Get(r).status().message(), HasSubstr("group_by"));
}

TEST_F(QueryFeaturesTest, RejectsGroupByThatIsNoLabelKeyEchoingItBounded) {
  Create("m");
  Store("m", 1, 1, kMonday, 1, "N");
  v1::GetPrevalenceRequest r = Request("m");
  for (const std::string& bad : {std::string("reg\0ion", 7), std::string("r\xc3\xa9gion"),
                                 std::string("Region"), std::string(1 << 20, 'a')}) {
    r.set_group_by(bad);
    absl::StatusOr<v1::Prevalence> p = query_.Get(r);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad.size();
    EXPECT_THAT(p.status().message(), HasSubstr("group_by: must be a label key"));
    EXPECT_LT(p.status().message().size(), 400u);
  }
}

TEST_F(QueryFeaturesTest, RejectsGroupByALabelNoReportCarriesNamingTheKeysPresent) {
  Create("m");
  Store("m", 3, 3, kMonday, 1, "N");
  v1::GetPrevalenceRequest r = Request("m");
  r.set_group_by("country");
  absl::StatusOr<v1::Prevalence> p = query_.Get(r);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("carries label \"country\""));
  EXPECT_THAT(p.status().message(), HasSubstr("the labels region"));
}

TEST_F(QueryFeaturesTest, CombinesDesignVersionsByInverseVariance) {
  Create("m");
  Store("m", 120, 80, kMonday);  // two coins: pi = 0.7, var = .6*.4/(200*.25)
  v1::AddDesignVersionRequest add;
  add.set_metric("m");
  add.mutable_design()->mutable_forced_response()->set_p(0.8);
  add.mutable_design()->mutable_forced_response()->set_q(0.5);  // a = 0.9, b = 0.1
  absl::StatusOr<v1::Metric> updated = registry_.AddVersion(add);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->design().version(), 2u);
  EXPECT_EQ(updated->versions_size(), 2);
  Store("m", 50, 50, kMonday + kHour, 2);  // pi = (0.5 - 0.1) / 0.8 = 0.5, var = .25/(100*.64)

  v1::GetPrevalenceRequest by_precision = Request("m");
  by_precision.set_combination(v1::INVERSE_VARIANCE);  // only on request since issue 16
  absl::StatusOr<v1::Prevalence> p = query_.Get(by_precision);
  ASSERT_TRUE(p.ok()) << p.status();
  const double v1 = 0.6 * 0.4 / (200 * 0.25), v2 = 0.25 / (100 * 0.64);
  const double expected = (0.7 / v1 + 0.5 / v2) / (1 / v1 + 1 / v2);
  EXPECT_EQ(p->combination(), "inverse_variance");
  EXPECT_EQ(p->estimand(), "precision_weighted_prevalence");
  EXPECT_EQ(p->method(), v1::WALD);
  EXPECT_NEAR(p->estimate_unbiased(), expected, 1e-12);
  EXPECT_NEAR(p->standard_error(), std::sqrt(1 / (1 / v1 + 1 / v2)), 1e-12);
  ASSERT_EQ(p->versions_size(), 2);
  EXPECT_NEAR(p->versions(0).weight() + p->versions(1).weight(), 1.0, 1e-12);
  EXPECT_EQ(p->n(), 300);
  EXPECT_EQ(p->design().version(), 2u);

  // One version alone is estimated with the requested method.
  v1::GetPrevalenceRequest only_first = Request("m");
  only_first.set_end_time_seconds(kMonday + kHour);
  absl::StatusOr<v1::Prevalence> first = query_.Get(only_first);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->combination(), "single_version");
  EXPECT_NEAR(first->estimate_unbiased(), 0.7, 1e-12);
}

TEST_F(QueryFeaturesTest, OldVersionReportsAreAcceptedAndMarkedStale) {
  Create("m");
  v1::AddDesignVersionRequest add;
  add.set_metric("m");
  add.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(2);
  ASSERT_TRUE(registry_.AddVersion(add).ok());
  v1::SubmitReportsRequest request;
  v1::Report* r = request.add_reports();
  r->set_metric("m");
  r->set_design_version(1);
  r->set_report_id(std::string(16, 'q'));
  r->set_event_time_seconds(kMonday);
  absl::StatusOr<v1::SubmitReportsResponse> s = ingestor_.Submit(request);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->stale_metrics_size(), 1);
  EXPECT_EQ(s->stale_metrics(0), "m");
}

TEST_F(QueryFeaturesTest, AddVersionRejectsInvalidDesignAndChangesNothing) {
  Create("m");
  v1::AddDesignVersionRequest add;
  add.set_metric("m");
  add.mutable_design()->mutable_mirrored_question()->set_p(0.5);
  absl::StatusOr<v1::Metric> updated = registry_.AddVersion(add);
  EXPECT_EQ(updated.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(updated.status().message(), HasSubstr("design.mirrored_question: P"));
  absl::StatusOr<std::shared_ptr<const MetricInfo>> m = registry_.Find("m");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)->versions.size(), 1u);
}

TEST_F(QueryFeaturesTest, SeriesHasOneEstimatePerBucket) {
  Create("m");
  Store("m", 3, 1, kMonday + 1 * kHour);
  Store("m", 1, 3, kMonday + 2 * kHour);
  Store("m", 2, 2, kMonday + kDay + 5 * kHour);
  Store("m", 4, 0, kMonday + 7 * kDay);  // the next Monday
  v1::GetSeriesRequest r;
  r.set_metric("m");
  r.set_start_time_seconds(kMonday);
  r.set_end_time_seconds(kMonday + 14 * kDay);

  r.set_bucket(v1::HOUR);
  absl::StatusOr<v1::Series> hourly = query_.Series(r);
  ASSERT_TRUE(hourly.ok()) << hourly.status();
  ASSERT_EQ(hourly->buckets_size(), 4);
  EXPECT_EQ(hourly->buckets(0).start_time_seconds(), kMonday + kHour);
  EXPECT_EQ(hourly->buckets(0).end_time_seconds(), kMonday + 2 * kHour);
  EXPECT_NEAR(hourly->buckets(0).estimate_unbiased(), 2 * 0.75 - 0.5, 1e-12);

  r.set_bucket(v1::DAY);
  absl::StatusOr<v1::Series> daily = query_.Series(r);
  ASSERT_TRUE(daily.ok());
  ASSERT_EQ(daily->buckets_size(), 3);
  EXPECT_EQ(daily->buckets(0).n(), 8);
  EXPECT_NEAR(daily->buckets(0).estimate_unbiased(), 2 * 0.5 - 0.5, 1e-12);

  r.set_bucket(v1::WEEK);
  absl::StatusOr<v1::Series> weekly = query_.Series(r);
  ASSERT_TRUE(weekly.ok());
  ASSERT_EQ(weekly->buckets_size(), 2);
  EXPECT_EQ(weekly->buckets(0).n(), 12);
  EXPECT_EQ(weekly->buckets(0).start_time_seconds(), kMonday);
  EXPECT_EQ(weekly->buckets(1).start_time_seconds(), kMonday + 7 * kDay);
}

TEST_F(QueryFeaturesTest, SeriesByCalendarMonthFollowsTheMonthsLengths) {
  Create("m");
  constexpr int64_t kOct15 = 1697328000;  // 2023-10-15 00:00 UTC: the first month is cut
  constexpr int64_t kNov1 = 1698796800;
  constexpr int64_t kDec1 = 1701388800;   // November has 30 days (a 31-day step would miss it)
  constexpr int64_t kDec10 = 1702166400;  // before the test clock (2023-12-13)
  Store("m", 1, 3, kNov1 + 14 * kDay);    // 2023-11-15 (within the collector's report age)
  Store("m", 2, 2, kDec1 - kHour);        // 2023-11-30 23:00: November
  Store("m", 4, 0, kDec1);                // December
  v1::GetSeriesRequest r;
  r.set_metric("m");
  r.set_start_time_seconds(kOct15);
  r.set_end_time_seconds(kDec10);
  r.set_bucket(v1::MONTH);
  absl::StatusOr<v1::Series> monthly = query_.Series(r);
  ASSERT_TRUE(monthly.ok()) << monthly.status();
  ASSERT_EQ(monthly->buckets_size(), 2);  // October holds no reports
  EXPECT_EQ(monthly->bucket(), v1::MONTH);
  EXPECT_EQ(monthly->buckets(0).start_time_seconds(), kNov1);
  EXPECT_EQ(monthly->buckets(0).end_time_seconds(), kDec1);
  EXPECT_EQ(monthly->buckets(0).n(), 8);
  EXPECT_NEAR(monthly->buckets(0).estimate_unbiased(), 2 * (3.0 / 8) - 0.5, 1e-12);
  // The last month is cut at the range's end.
  EXPECT_EQ(monthly->buckets(1).start_time_seconds(), kDec1);
  EXPECT_EQ(monthly->buckets(1).end_time_seconds(), kDec10);
  EXPECT_EQ(monthly->buckets(1).n(), 4);
}

TEST_F(QueryFeaturesTest, SeriesRejectsMissingBoundsAndTooManyBuckets) {
  Create("m");
  v1::GetSeriesRequest r;
  r.set_metric("m");
  EXPECT_EQ(query_.Series(r).status().code(), absl::StatusCode::kInvalidArgument);
  r.set_start_time_seconds(kHour);
  r.set_end_time_seconds(kHour + 20000 * kHour);
  r.set_bucket(v1::HOUR);
  absl::StatusOr<v1::Series> s = query_.Series(r);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("buckets"));
}

TEST_F(QueryFeaturesTest, DifferenceOfTwoWindowsHasCombinedStandardError) {
  Create("m");
  Store("m", 120, 80, kMonday);            // pi 0.7
  Store("m", 50, 50, kMonday + 7 * kDay);  // pi 0.5
  v1::GetDifferenceRequest r;
  r.mutable_first()->set_metric("m");
  r.mutable_first()->set_start_time_seconds(kMonday);
  r.mutable_first()->set_end_time_seconds(kMonday + kDay);
  r.mutable_second()->set_metric("m");
  r.mutable_second()->set_start_time_seconds(kMonday + 7 * kDay);
  absl::StatusOr<v1::Difference> d = query_.Difference(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->difference(), 0.2, 1e-12);
  const double se1 = std::sqrt(0.24 / 50), se2 = std::sqrt(0.25 / 25);
  EXPECT_NEAR(d->standard_error(), std::hypot(se1, se2), 1e-12);
  EXPECT_NEAR(d->ci_upper() - d->difference(), 1.959964 * d->standard_error(), 1e-5);
}

TEST_F(QueryFeaturesTest, DifferenceRefusesOverlappingWindowsOfOneMetric) {
  Create("m");
  Store("m", 1, 1, kMonday);
  v1::GetDifferenceRequest r;
  r.mutable_first()->set_metric("m");
  r.mutable_second()->set_metric("m");
  r.mutable_second()->set_start_time_seconds(kMonday);
  absl::StatusOr<v1::Difference> d = query_.Difference(r);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(d.status().message(), HasSubstr("second: overlaps first"));
}

TEST_F(QueryFeaturesTest, DifferenceOfTwoMetricsNamesTheFailingSide) {
  Create("m");
  Store("m", 1, 1, kMonday);
  v1::GetDifferenceRequest r;
  r.mutable_first()->set_metric("m");
  r.mutable_second()->set_metric("missing");
  absl::StatusOr<v1::Difference> d = query_.Difference(r);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(d.status().message(), HasSubstr("second."));
}

// A window without reports is named (issue 38: "0 reports" named no window): the side, and the
// range in RFC 3339 UTC and in Unix seconds.
TEST_F(QueryFeaturesTest, DifferenceOfAnEmptyWindowNamesIt) {
  Create("m");
  Store("m", 1, 1, kMonday);
  v1::GetDifferenceRequest r;
  r.mutable_first()->set_metric("m");
  r.mutable_first()->set_start_time_seconds(kMonday);
  r.mutable_first()->set_end_time_seconds(kMonday + kDay);
  r.mutable_second()->set_metric("m");
  r.mutable_second()->set_start_time_seconds(kMonday + 7 * kDay);
  r.mutable_second()->set_end_time_seconds(kMonday + 14 * kDay);
  absl::StatusOr<v1::Difference> d = query_.Difference(r);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kFailedPrecondition);
  const std::string start = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(kMonday + 7 * kDay), absl::UTCTimeZone());
  const std::string end = absl::FormatTime(
      "%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(kMonday + 14 * kDay), absl::UTCTimeZone());
  EXPECT_THAT(d.status().message(),
              HasSubstr(absl::StrCat("second.metric \"m\" has 0 reports in the requested time "
                                     "range [",
                                     start, ", ", end, ") (start_time_seconds ", kMonday + 7 * kDay,
                                     ", end_time_seconds ", kMonday + 14 * kDay, ")")))
      << d.status();
}

TEST_F(QueryFeaturesTest, DescribeTwoCoinsGivesTheSeedPosteriors) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_two_coin();
  r.set_prior(0.3);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->posterior_given_yes(), 3 * 0.3 / (2 * 0.3 + 1), 1e-12);  // seed 004
  EXPECT_NEAR(d->posterior_given_no(), 0.3 / (3 - 2 * 0.3), 1e-12);
  EXPECT_NEAR(d->design().epsilon(), std::log(3.0), 1e-12);
  EXPECT_LE(d->conditional_entropy_bits(), d->entropy_bits());
  EXPECT_NEAR(d->mutual_information_bits(), d->entropy_bits() - d->conditional_entropy_bits(),
              1e-12);
}

TEST_F(QueryFeaturesTest, DescribeUnrelatedQuestionGivesUninformativePiB) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_unrelated_question()->set_p(0.5);
  r.mutable_design()->mutable_unrelated_question()->set_pi_b(0.3);
  r.set_prior(0.25);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->uninformative_pi_b(), 0.5 * 0.25 / (0.5 * 0.5), 1e-12);
  r.set_prior(0.6);  // no such pi_B above 1/2
  d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->uninformative_pi_b(), 0.0);
  EXPECT_FALSE(d->uninformative_pi_b_note().empty());
}

// Issue 26: `deniable design --n=N --json` lacked centralMethod, which Prevalence carries.
TEST_F(QueryFeaturesTest, DescribeWithNNamesTheCentralMethod) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_two_coin();
  r.set_n(2532);
  absl::StatusOr<v1::DesignDescription> d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->central_method(), "shuffle_numerical");
  EXPECT_LT(d->central_epsilon(), std::log(3.0));
  r.set_n(1);  // too few reports to hide among: no amplification claimed
  d = advisor_.Describe(r);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->central_method(), "local_only");
}

TEST_F(QueryFeaturesTest, DescribeRejectsPriorOutsideUnitInterval) {
  v1::DescribeDesignRequest r;
  r.mutable_design()->mutable_two_coin();
  r.set_prior(1.5);
  EXPECT_THAT(advisor_.Describe(r).status().message(), HasSubstr("prior"));
}

TEST_F(QueryFeaturesTest, PlanMatchesTheWorstCaseFormula) {
  v1::PlanSurveyRequest r;
  r.mutable_design()->mutable_two_coin();
  r.set_half_width(0.05);
  r.set_assumed_prevalence(-1);
  absl::StatusOr<v1::SurveyPlan> p = advisor_.Plan(r);
  ASSERT_TRUE(p.ok()) << p.status();
  const double z = 1.959963984540054;
  EXPECT_EQ(p->reports_needed_worst_case(),
            static_cast<int64_t>(std::ceil(z * z / (4 * 0.05 * 0.05 * 0.25))));
  EXPECT_EQ(p->reports_needed(), p->reports_needed_worst_case());
  r.set_assumed_prevalence(0.2);
  p = advisor_.Plan(r);
  ASSERT_TRUE(p.ok());
  const double lambda = 0.2 * 0.75 + 0.8 * 0.25;
  EXPECT_NEAR(p->variance_inflation(), lambda * (1 - lambda) / (0.25 * 0.2 * 0.8), 1e-12);
  r.set_half_width(0);
  EXPECT_THAT(advisor_.Plan(r).status().message(), HasSubstr("half_width"));
}

// -1 is the one spelling of "unknown"; -0.5 or -inf is a mistake, not the worst case.
TEST_F(QueryFeaturesTest, PlanRejectsNegativePrevalenceOtherThanMinusOne) {
  v1::PlanSurveyRequest r;
  r.mutable_design()->mutable_two_coin();
  r.set_half_width(0.05);
  for (double pi : {-0.5, -2.0, -std::numeric_limits<double>::infinity(),
                    std::numeric_limits<double>::quiet_NaN(), 1.5}) {
    r.set_assumed_prevalence(pi);
    absl::StatusOr<v1::SurveyPlan> p = advisor_.Plan(r);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << pi;
    EXPECT_THAT(p.status().message(), HasSubstr("assumed_prevalence")) << pi;
  }
  r.set_assumed_prevalence(-1);
  EXPECT_TRUE(advisor_.Plan(r).ok());
}

}  // namespace query_features_test
}  // namespace
}  // namespace deniable::server
