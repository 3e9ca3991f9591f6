// Category shares served for a categorical metric (issue 14): checked against the exact
// computation from the counts (common/categorical_estimate.h) on a seeded population of 4
// categories at eps = ln 3, plus groups, series, simultaneous methods, design versions and
// differences.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "deniable/common/categorical.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/confidence_sequence.h"
#include "deniable/common/shuffle.h"
#include "deniable/convert/categorical_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace categorical_query_test {

using ::testing::HasSubstr;

constexpr int64_t kHour = 3600;
constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 86400 + 12 * kHour;
const std::vector<std::string> kVote = {"Y", "N", "U", "A"};
// The Chile survey's shares (868, 889, 588, 187 of 2532), rounded.
const std::vector<double> kShares = {0.343, 0.351, 0.232, 0.074};

class CategoricalQueryTest : public ::testing::Test {
 protected:
  CategoricalQueryTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 50}) {}

  void Create(const std::string& name, v1::CategoricalMechanism mechanism, double epsilon) {
    v1::CreateMetricRequest create;
    create.set_name(name);
    for (const std::string& c : kVote) create.add_categories(c);
    create.mutable_design()->mutable_categorical()->set_mechanism(mechanism);
    create.mutable_design()->mutable_categorical()->set_epsilon(epsilon);
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  // Randomizes `n` answers drawn from kShares with the metric's current design (seeded), stores
  // them at `time` with region label `region`, and adds their support to `support`.
  void Store(const std::string& name, int n, int64_t time, const std::string& region,
             std::vector<int64_t>* support) {
    std::shared_ptr<const MetricInfo> metric = *registry_.Find(name);
    const CategoricalDesign& design = *metric->current().categorical;
    std::discrete_distribution<int> answer(kShares.begin(), kShares.end());
    v1::SubmitReportsRequest request;
    for (int i = 0; i < n; ++i) {
      absl::StatusOr<CategoricalReport> r = RandomizeCategory(design, answer(gen_), gen_);
      ASSERT_TRUE(r.ok());
      AddSupport(design, *r, support);
      v1::Report* report = request.add_reports();
      report->set_metric(name);
      report->set_design_version(metric->current().version);
      std::string id(16, '\0');
      for (int b = 0; b < 4; ++b) id[b] = static_cast<char>((next_id_ >> (8 * b)) & 0xff);
      ++next_id_;
      report->set_report_id(id);
      report->set_event_time_seconds(time);
      (*report->mutable_labels())["region"] = region;
      *report->mutable_categorical() = CategoricalReportToProto(design, *r);
      if (request.reports_size() == 5000) {
        ASSERT_TRUE(ingestor_.Submit(request).ok());
        request.clear_reports();
      }
    }
    if (request.reports_size() > 0) {
      ASSERT_TRUE(ingestor_.Submit(request).ok());
    }
  }

  v1::GetPrevalenceRequest Request(const std::string& name) {
    v1::GetPrevalenceRequest r;
    r.set_metric(name);
    r.set_start_time_seconds(kNow - 10 * 86400);
    r.set_end_time_seconds(kNow + kHour);
    return r;
  }

  std::mt19937_64 gen_{20261123};
  uint64_t next_id_ = 1;
  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
};

// Every share equals common's exact computation from the stored support counts, for each
// mechanism: unbiased, standard error, the per-category and simultaneous intervals, Norm-Sub.
TEST_F(CategoricalQueryTest, SharesEqualTheExactComputationFromTheCounts) {
  for (v1::CategoricalMechanism mechanism : {v1::K_RR, v1::OUE, v1::OLH}) {
    const std::string name = "vote" + std::to_string(static_cast<int>(mechanism));
    Create(name, mechanism, std::log(3.0));
    std::vector<int64_t> support(4, 0);
    Store(name, 2532, kNow, "C", &support);
    for (v1::SimultaneousMethod sm : {v1::SIMULTANEOUS_METHOD_UNSPECIFIED, v1::BONFERRONI}) {
      v1::GetPrevalenceRequest request = Request(name);
      request.set_simultaneous(sm);
      absl::StatusOr<v1::Prevalence> p = query_.Get(request);
      ASSERT_TRUE(p.ok()) << p.status();
      const CategoricalDesign& design = *(*registry_.Find(name))->current().categorical;
      const SimultaneousMethod method =
          sm == v1::BONFERRONI ? SimultaneousMethod::kBonferroni : SimultaneousMethod::kSidak;
      absl::StatusOr<CategoricalEstimate> want =
          EstimateCategories(design, support, 2532, 0.95, std::nullopt, method);
      ASSERT_TRUE(want.ok()) << want.status();
      EXPECT_EQ(p->n(), 2532);
      EXPECT_EQ(p->yes_count(), 0);
      EXPECT_EQ(p->estimate_unbiased(), 0);
      EXPECT_EQ(p->simultaneous_method(), SimultaneousMethodName(method));
      EXPECT_DOUBLE_EQ(p->per_category_level(), want->per_category_level);
      EXPECT_EQ(p->consistent_method(), "norm_sub");
      EXPECT_EQ(p->design().categories(), 4u);
      EXPECT_NEAR(p->epsilon(), std::log(3.0), 1e-12);
      ASSERT_EQ(p->shares_size(), 4);
      double consistent_sum = 0;
      for (int v = 0; v < 4; ++v) {
        const v1::CategoryShare& got = p->shares(v);
        const CategoryEstimate& e = want->categories[v];
        SCOPED_TRACE(name + " " + kVote[v]);
        EXPECT_EQ(got.category(), kVote[v]);
        EXPECT_EQ(got.support_count(), e.support_count);
        EXPECT_DOUBLE_EQ(got.support_share(), e.support_share);
        EXPECT_NEAR(got.estimate_unbiased(), e.unbiased, 1e-12);
        EXPECT_NEAR(got.standard_error(), e.standard_error, 1e-12);
        EXPECT_NEAR(got.estimate_consistent(), e.consistent, 1e-12);
        EXPECT_NEAR(got.ci_lower(), e.interval.lower, 1e-9);
        EXPECT_NEAR(got.ci_upper(), e.interval.upper, 1e-9);
        EXPECT_NEAR(got.simultaneous_lower(), e.simultaneous.lower, 1e-9);
        EXPECT_NEAR(got.simultaneous_upper(), e.simultaneous.upper, 1e-9);
        EXPECT_LE(got.simultaneous_lower(), got.ci_lower());
        EXPECT_GE(got.simultaneous_upper(), got.ci_upper());
        consistent_sum += got.estimate_consistent();
      }
      EXPECT_NEAR(consistent_sum, 1.0, 1e-12);
    }
  }
}

// The shuffle bound uses the categorical clone probability (k-RR: 2 / (e^eps + 1)).
TEST_F(CategoricalQueryTest, CentralEpsilonUsesTheCategoricalCloneProbability) {
  Create("vote", v1::K_RR, std::log(3.0));
  std::vector<int64_t> support(4, 0);
  Store("vote", 2532, kNow, "C", &support);
  absl::StatusOr<v1::Prevalence> p = query_.Get(Request("vote"));
  ASSERT_TRUE(p.ok()) << p.status();
  const CategoricalDesign& design = *(*registry_.Find("vote"))->current().categorical;
  absl::StatusOr<CentralPrivacy> want =
      AmplifiedEpsilon(std::log(3.0), design.CloneProbability(), 2532, kDefaultCentralDelta);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(p->central_n(), 2532);
  EXPECT_DOUBLE_EQ(p->central_epsilon(), want->epsilon);
  EXPECT_LT(p->central_epsilon(), std::log(3.0));
}

// Groups below min_reports are suppressed with n only; the others carry shares.
TEST_F(CategoricalQueryTest, GroupsAreEstimatedOrSuppressedLikeYesNoGroups) {
  Create("vote", v1::K_RR, std::log(3.0));
  std::vector<int64_t> north(4, 0), south(4, 0);
  Store("vote", 400, kNow, "N", &north);
  Store("vote", 20, kNow, "S", &south);
  v1::GetPrevalenceRequest request = Request("vote");
  request.set_group_by("region");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->groups_size(), 2);
  EXPECT_EQ(p->groups(0).group_value(), "N");
  EXPECT_EQ(p->groups(0).shares_size(), 4);
  EXPECT_EQ(p->groups(0).shares(1).support_count(), north[1]);
  EXPECT_TRUE(p->groups(1).suppressed());
  EXPECT_EQ(p->groups(1).n(), 20);
  EXPECT_EQ(p->groups(1).shares_size(), 0);
}

// Two reporting periods are combined as for bits (weights n_t / N), per category; a series has
// one entry per day.
TEST_F(CategoricalQueryTest, PeriodsCombinePerCategoryAndSeriesHasSharesPerBucket) {
  Create("vote", v1::K_RR, std::log(3.0));
  std::vector<int64_t> day1(4, 0), day2(4, 0);
  Store("vote", 300, kNow - 86400, "C", &day1);
  Store("vote", 500, kNow, "C", &day2);
  absl::StatusOr<v1::Prevalence> p = query_.Get(Request("vote"));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->periods(), 2);
  EXPECT_EQ(p->estimand(), "mean_period_prevalence");
  const CategoricalDesign& design = *(*registry_.Find("vote"))->current().categorical;
  auto e1 = EstimateCategories(design, day1, 300, 0.95, std::nullopt, SimultaneousMethod::kSidak);
  auto e2 = EstimateCategories(design, day2, 500, 0.95, std::nullopt, SimultaneousMethod::kSidak);
  ASSERT_TRUE(e1.ok() && e2.ok());
  for (int v = 0; v < 4; ++v) {
    EXPECT_NEAR(p->shares(v).estimate_unbiased(),
                (300 * e1->categories[v].unbiased + 500 * e2->categories[v].unbiased) / 800, 1e-12);
    EXPECT_NEAR(
        p->shares(v).standard_error(),
        (300 * e1->categories[v].standard_error + 500 * e2->categories[v].standard_error) / 800,
        1e-12);
  }
  v1::GetSeriesRequest series;
  series.set_metric("vote");
  series.set_start_time_seconds(kNow - 2 * 86400);
  series.set_end_time_seconds(kNow + kHour);
  series.set_bucket(v1::DAY);
  absl::StatusOr<v1::Series> s = query_.Series(series);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->buckets_size(), 2);
  EXPECT_EQ(s->buckets(0).n(), 300);
  EXPECT_NEAR(s->buckets(0).shares(2).estimate_unbiased(), e1->categories[2].unbiased, 1e-12);
  EXPECT_NEAR(s->buckets(1).shares(2).estimate_unbiased(), e2->categories[2].unbiased, 1e-12);
}

// Two design versions in one period are combined by reports, per category.
TEST_F(CategoricalQueryTest, DesignVersionsAreCombinedByReports) {
  Create("vote", v1::K_RR, std::log(3.0));
  std::vector<int64_t> first(4, 0), second(4, 0);
  Store("vote", 600, kNow, "C", &first);
  v1::AddDesignVersionRequest add;
  add.set_metric("vote");
  add.mutable_design()->mutable_categorical()->set_mechanism(v1::OUE);
  add.mutable_design()->mutable_categorical()->set_epsilon(2.0);
  ASSERT_TRUE(registry_.AddVersion(add).ok());
  Store("vote", 400, kNow, "C", &second);
  absl::StatusOr<v1::Prevalence> p = query_.Get(Request("vote"));
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->versions_size(), 2);
  EXPECT_EQ(p->combination(), "by_reports");
  std::shared_ptr<const MetricInfo> metric = *registry_.Find("vote");
  auto e1 = EstimateCategories(*metric->Find(1)->categorical, first, 600, 0.95, std::nullopt,
                               SimultaneousMethod::kSidak);
  auto e2 = EstimateCategories(*metric->Find(2)->categorical, second, 400, 0.95, std::nullopt,
                               SimultaneousMethod::kSidak);
  ASSERT_TRUE(e1.ok() && e2.ok());
  for (int v = 0; v < 4; ++v) {
    EXPECT_NEAR(p->shares(v).estimate_unbiased(),
                0.6 * e1->categories[v].unbiased + 0.4 * e2->categories[v].unbiased, 1e-12);
  }
  EXPECT_NEAR(p->epsilon(), 2.0, 1e-12);  // the largest of the versions present
}

TEST_F(CategoricalQueryTest, DifferencePerCategoryAndRefusalOfAYesNoSecond) {
  Create("vote", v1::K_RR, std::log(3.0));
  std::vector<int64_t> day1(4, 0), day2(4, 0);
  Store("vote", 300, kNow - 86400, "C", &day1);
  Store("vote", 500, kNow, "C", &day2);
  v1::GetDifferenceRequest request;
  request.mutable_first()->set_metric("vote");
  request.mutable_first()->set_start_time_seconds(kNow - 2 * 86400);
  request.mutable_first()->set_end_time_seconds(kNow - 12 * kHour);
  request.mutable_second()->set_metric("vote");
  request.mutable_second()->set_start_time_seconds(kNow - 12 * kHour);
  request.mutable_second()->set_end_time_seconds(kNow + kHour);
  absl::StatusOr<v1::Difference> d = query_.Difference(request);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->shares_size(), 4);
  for (int v = 0; v < 4; ++v) {
    EXPECT_EQ(d->shares(v).category(), kVote[v]);
    EXPECT_NEAR(
        d->shares(v).difference(),
        d->first().shares(v).estimate_unbiased() - d->second().shares(v).estimate_unbiased(),
        1e-15);
    EXPECT_NEAR(
        d->shares(v).standard_error(),
        std::hypot(d->first().shares(v).standard_error(), d->second().shares(v).standard_error()),
        1e-15);
    EXPECT_LT(d->shares(v).ci_lower(), d->shares(v).ci_upper());
  }
  EXPECT_EQ(d->difference(), 0);

  v1::CreateMetricRequest yes_no;
  yes_no.set_name("yn");
  yes_no.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(registry_.Create(yes_no).ok());
  v1::SubmitReportsRequest batch;
  for (int i = 0; i < 60; ++i) {
    v1::Report* r = batch.add_reports();
    r->set_metric("yn");
    r->set_design_version(1);
    r->set_bit(i % 2);
    r->set_report_id(std::string(15, 'y') + static_cast<char>(i));
    r->set_event_time_seconds(kNow);
  }
  ASSERT_TRUE(ingestor_.Submit(batch).ok());
  request.mutable_second()->set_metric("yn");
  absl::StatusOr<v1::Difference> mixed = query_.Difference(request);
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mixed.status().message(), HasSubstr("second.metric"));
}

TEST_F(CategoricalQueryTest, UnknownSimultaneousMethodIsRefusedNamingTheField) {
  Create("vote", v1::K_RR, std::log(3.0));
  v1::GetPrevalenceRequest request = Request("vote");
  request.set_simultaneous(static_cast<v1::SimultaneousMethod>(7));
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("simultaneous"));
}

// Issue 41: with interval = ANYTIME each share gets the confidence sequence of its support
// channel on its support count, and the simultaneous ones Bonferroni over the k categories.
TEST_F(CategoricalQueryTest, AnytimeSharesAreConfidenceSequences) {
  for (v1::CategoricalMechanism mechanism : {v1::K_RR, v1::OUE}) {
    const std::string name = "any" + std::to_string(static_cast<int>(mechanism));
    Create(name, mechanism, std::log(3.0));
    std::vector<int64_t> support(4, 0);
    Store(name, 2532, kNow, "C", &support);
    v1::GetPrevalenceRequest request = Request(name);
    request.set_interval(v1::ANYTIME);
    absl::StatusOr<v1::Prevalence> p = query_.Get(request);
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_EQ(p->interval_kind(), v1::ANYTIME);
    EXPECT_EQ(p->simultaneous_method(), "bonferroni");
    EXPECT_DOUBLE_EQ(p->per_category_level(), 1.0 - 0.05 / 4);
    const Mechanism& m = *(*registry_.Find(name))->current().mechanism;
    ASSERT_EQ(p->shares_size(), 4);
    for (int v = 0; v < 4; ++v) {
      SCOPED_TRACE(name + " " + kVote[v]);
      const Channel c = m.ChannelOf(v);
      absl::StatusOr<AnytimeInterval> alone =
          AnytimePrevalenceInterval(c, support[v], 2532, 0.95, 10000);
      absl::StatusOr<AnytimeInterval> together =
          AnytimePrevalenceInterval(c, support[v], 2532, 1.0 - 0.05 / 4, 10000);
      ASSERT_TRUE(alone.ok() && together.ok());
      EXPECT_NEAR(p->shares(v).ci_lower(), alone->lower, 1e-12);
      EXPECT_NEAR(p->shares(v).ci_upper(), alone->upper, 1e-12);
      EXPECT_NEAR(p->shares(v).simultaneous_lower(), together->lower, 1e-12);
      EXPECT_NEAR(p->shares(v).simultaneous_upper(), together->upper, 1e-12);
      EXPECT_LE(p->shares(v).simultaneous_lower(), p->shares(v).ci_lower());
    }
  }
}

}  // namespace categorical_query_test
}  // namespace
}  // namespace deniable::server
