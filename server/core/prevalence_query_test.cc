#include "server/core/prevalence_query.h"

#include <cmath>
#include <string>

#include "deniable/common/shuffle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory_storage.h"

namespace deniable::server {
namespace {

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

}  // namespace
}  // namespace deniable::server
