#include "server/core/prevalence_query.h"

#include <cmath>
#include <string>

#include "deniable/common/confidence_sequence.h"
#include "deniable/common/shuffle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace prevalence_query_test {

using ::testing::HasSubstr;

constexpr int64_t kHour = 3600;
constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % kHour;

class PrevalenceQueryTest : public ::testing::Test {
 protected:
  PrevalenceQueryTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 1}) {}

  void SetUp() override {
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  // Stores `yes` one-bits and `no` zero-bits at the given event time.
  void Store(int yes, int no, int64_t time) {
    v1::SubmitReportsRequest request;
    for (int i = 0; i < yes + no; ++i) {
      v1::Report* r = request.add_reports();
      r->set_metric("m");
      r->set_design_version(1);
      r->set_bit(i < yes ? 1 : 0);
      std::string id(16, '\0');
      id[0] = static_cast<char>(next_id_ & 0xff);
      id[1] = static_cast<char>(next_id_ >> 8);
      ++next_id_;
      r->set_report_id(id);
      r->set_event_time_seconds(time);
    }
    ASSERT_TRUE(ingestor_.Submit(request).ok());
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
  int next_id_ = 0;
};

TEST_F(PrevalenceQueryTest, TwoCoinEstimateIsTwiceTheYesShareMinusHalf) {
  Store(120, 80, kNow);  // lambda_hat = 0.6
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->n(), 200);
  EXPECT_EQ(p->yes_count(), 120);
  EXPECT_NEAR(p->estimate_unbiased(), 2 * 0.6 - 0.5, 1e-12);
  EXPECT_NEAR(p->standard_error(), std::sqrt(0.6 * 0.4 / (200 * 0.25)), 1e-12);
  EXPECT_EQ(p->method(), v1::WILSON);
  EXPECT_DOUBLE_EQ(p->confidence_level(), 0.95);
  EXPECT_NEAR(p->epsilon(), std::log(3.0), 1e-12);
  EXPECT_LT(p->ci_lower(), p->estimate_unbiased());
  EXPECT_GT(p->ci_upper(), p->estimate_unbiased());
}

// docs/privacy.md: against an analyst who sees only this result, the 2532 two-coin reports of one
// period give the shuffle-amplified epsilon (clone probability 1/2), far below ln 3.
TEST_F(PrevalenceQueryTest, OnePeriodCarriesTheShuffleAmplifiedEpsilon) {
  Store(1056, 2532 - 1056, kNow);
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_NEAR(p->epsilon(), std::log(3.0), 1e-12);  // the local epsilon is unchanged
  EXPECT_EQ(p->central_n(), 2532);
  EXPECT_EQ(p->central_method(), "shuffle_numerical");
  EXPECT_DOUBLE_EQ(p->central_delta(), 1e-6);
  EXPECT_DOUBLE_EQ(p->central_epsilon(),
                   NumericalShuffleEpsilon(std::log(3.0), 0.5, 2532, 1e-6).value());
  EXPECT_LT(p->central_epsilon(), 0.5 * std::log(3.0));
  EXPECT_TRUE(p->central_note().empty());
}

// Over several reporting periods a device may have sent several reports: no amplification is
// claimed, the central epsilon is the local one, and the note says why.
TEST_F(PrevalenceQueryTest, SeveralPeriodsClaimOnlyTheLocalEpsilon) {
  Store(60, 40, kNow);
  Store(60, 40, kNow - 2 * 86400);
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->periods(), 2);
  EXPECT_EQ(p->central_method(), "local_only");
  EXPECT_DOUBLE_EQ(p->central_epsilon(), p->epsilon());
  EXPECT_EQ(p->central_delta(), 0.0);
  EXPECT_EQ(p->central_n(), 200);
  EXPECT_THAT(p->central_note(), HasSubstr("reporting periods"));
}

TEST_F(PrevalenceQueryTest, ClipsEstimateBelowZeroAndSaysSo) {
  Store(10, 90, kNow);  // lambda_hat = 0.1 < b = 0.25
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->estimate_unbiased(), -0.3, 1e-12);
  EXPECT_EQ(p->estimate_clipped(), 0.0);
  EXPECT_EQ(p->ci_lower(), 0.0);
  EXPECT_TRUE(p->interval_clipped());
}

TEST_F(PrevalenceQueryTest, TimeRangeIsHalfOpen) {
  Store(10, 0, kNow - 2 * kHour);
  Store(0, 10, kNow - kHour);
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  request.set_start_time_seconds(kNow - kHour);
  request.set_end_time_seconds(kNow);
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->n(), 10);
  EXPECT_EQ(p->yes_count(), 0);
}

TEST_F(PrevalenceQueryTest, EmptyRangeIsFailedPrecondition) {
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  EXPECT_EQ(query_.Get(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PrevalenceQueryTest, RejectsInvalidArgumentsNamingTheField) {
  Store(1, 1, kNow);
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  request.set_confidence_level(1.5);
  EXPECT_THAT(query_.Get(request).status().message(), HasSubstr("confidence_level"));
  request.set_confidence_level(0.9);
  request.set_start_time_seconds(100);
  request.set_end_time_seconds(50);
  EXPECT_THAT(query_.Get(request).status().message(), HasSubstr("end_time_seconds"));
  request.set_end_time_seconds(0);
  request.set_method(static_cast<v1::IntervalMethod>(42));
  EXPECT_THAT(query_.Get(request).status().message(), HasSubstr("method"));
  request.set_method(v1::CLOPPER_PEARSON);
  request.set_metric("nope");
  EXPECT_EQ(query_.Get(request).status().code(), absl::StatusCode::kNotFound);
}

// Issue 41: interval = ANYTIME replaces the interval by the normal-mixture confidence sequence of
// common/confidence_sequence.h on the same reports, and says so.
TEST_F(PrevalenceQueryTest, AnytimeIntervalIsTheConfidenceSequence) {
  Store(600, 400, kNow);
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  absl::StatusOr<v1::Prevalence> fixed = query_.Get(request);
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_EQ(fixed->interval_kind(), v1::FIXED_N);
  EXPECT_EQ(fixed->anytime_tuned_reports(), 0);

  request.set_interval(v1::ANYTIME);
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<AnytimeInterval> want =
      AnytimePrevalenceInterval(Channel{0.75, 0.25}, 600, 1000, 0.95, 10000);
  ASSERT_TRUE(want.ok());
  EXPECT_EQ(p->interval_kind(), v1::ANYTIME);
  EXPECT_EQ(p->anytime_tuned_reports(), 10000);
  EXPECT_NEAR(p->ci_lower(), want->lower, 1e-12);
  EXPECT_NEAR(p->ci_upper(), want->upper, 1e-12);
  EXPECT_NEAR(p->estimate_unbiased(), fixed->estimate_unbiased(), 1e-12);
  EXPECT_LT(p->ci_lower(), fixed->ci_lower());
  EXPECT_GT(p->ci_upper(), fixed->ci_upper());
  EXPECT_THAT(p->interval_construction(), HasSubstr("anytime"));
  EXPECT_THAT(p->method_reason(), HasSubstr("ANYTIME requested"));

  request.set_anytime_tuned_reports(1000);
  absl::StatusOr<v1::Prevalence> tuned = query_.Get(request);
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  want = AnytimePrevalenceInterval(Channel{0.75, 0.25}, 600, 1000, 0.95, 1000);
  EXPECT_NEAR(tuned->ci_lower(), want->lower, 1e-12);
  EXPECT_EQ(tuned->anytime_tuned_reports(), 1000);
  EXPECT_LT(tuned->ci_upper() - tuned->ci_lower(), p->ci_upper() - p->ci_lower());
}

// Two design versions in one period: each report debiased through its own channel (BY_REPORTS).
TEST_F(PrevalenceQueryTest, AnytimeCombinesDesignVersionsByReports) {
  v1::AddDesignVersionRequest add;
  add.set_metric("m");
  add.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(std::log(9.0));  // 0.9, 0.1
  ASSERT_TRUE(registry_.AddVersion(add).ok());
  Store(300, 200, kNow);
  v1::SubmitReportsRequest v2;
  for (int i = 0; i < 400; ++i) {
    v1::Report* r = v2.add_reports();
    r->set_metric("m");
    r->set_design_version(2);
    r->set_bit(i < 100 ? 1 : 0);
    std::string id(16, '\0');
    id[0] = static_cast<char>(next_id_ & 0xff);
    id[1] = static_cast<char>(next_id_ >> 8);
    ++next_id_;
    r->set_report_id(id);
    r->set_event_time_seconds(kNow);
  }
  ASSERT_TRUE(ingestor_.Submit(v2).ok());
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  request.set_interval(v1::ANYTIME);
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  const std::vector<AnytimeBlock> blocks = {{Channel{0.75, 0.25}, 300, 500},
                                            {Channel{0.9, 0.1}, 100, 400}};
  AnytimeOptions options;
  options.reference_channel = Channel{0.9, 0.1};  // the newest version's
  absl::StatusOr<AnytimeInterval> want = AnytimePrevalenceInterval(blocks, options);
  ASSERT_TRUE(want.ok());
  EXPECT_NEAR(p->ci_lower(), want->lower, 1e-12);
  EXPECT_NEAR(p->ci_upper(), want->upper, 1e-12);
  EXPECT_NEAR(p->estimate_unbiased(), want->center, 1e-12);

  request.set_combination(v1::INVERSE_VARIANCE);
  absl::StatusOr<v1::Prevalence> refused = query_.Get(request);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("combination:"));
}

TEST_F(PrevalenceQueryTest, AnytimeRefusesSeveralPeriodsAndBadOptions) {
  Store(60, 40, kNow);
  Store(60, 40, kNow - 86400);
  v1::GetPrevalenceRequest request;
  request.set_metric("m");
  request.set_interval(v1::ANYTIME);
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(p.status().message(), HasSubstr("interval: anytime intervals need a selection"));
  request.set_start_time_seconds(kNow - kNow % 86400);  // today only: one period
  EXPECT_TRUE(query_.Get(request).ok());
  request.set_anytime_tuned_reports(-1);
  EXPECT_THAT(query_.Get(request).status().message(), HasSubstr("anytime_tuned_reports"));
  request.set_anytime_tuned_reports(0);
  request.set_interval(static_cast<v1::IntervalKind>(7));
  EXPECT_THAT(query_.Get(request).status().message(), HasSubstr("interval: unknown"));
  request.set_interval(v1::ANYTIME);
  request.add_quantiles(0.5);
  EXPECT_THAT(query_.Get(request).status().message(), HasSubstr("quantiles:"));
}

// GetSeries with interval = ANYTIME: each bucket (here days of a daily metric) its own sequence.
TEST_F(PrevalenceQueryTest, AnytimeSeriesBuckets) {
  const int64_t today = kNow - kNow % 86400;
  Store(300, 200, today - 86400);
  Store(100, 300, today);
  v1::GetSeriesRequest request;
  request.set_metric("m");
  request.set_start_time_seconds(today - 86400);
  request.set_end_time_seconds(today + 86400);
  request.set_bucket(v1::DAY);
  request.set_interval(v1::ANYTIME);
  absl::StatusOr<v1::Series> series = query_.Series(request);
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->buckets_size(), 2);
  const int yes[] = {300, 100}, n[] = {500, 400};
  for (int i = 0; i < 2; ++i) {
    absl::StatusOr<AnytimeInterval> want =
        AnytimePrevalenceInterval(Channel{0.75, 0.25}, yes[i], n[i], 0.95, 10000);
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(series->buckets(i).interval_kind(), v1::ANYTIME) << i;
    EXPECT_NEAR(series->buckets(i).ci_lower(), want->lower, 1e-12) << i;
    EXPECT_NEAR(series->buckets(i).ci_upper(), want->upper, 1e-12) << i;
  }
  request.set_bucket(v1::WEEK);  // a week of a daily metric spans seven periods
  EXPECT_THAT(query_.Series(request).status().message(), HasSubstr("interval:"));
}

}  // namespace prevalence_query_test
}  // namespace
}  // namespace deniable::server
