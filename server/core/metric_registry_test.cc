// Metric creation: reporting period, randomization, and designs with no privacy.
#include "server/core/metric_registry.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace metric_registry_test {

using ::testing::HasSubstr;

class MetricRegistryTest : public ::testing::Test {
 protected:
  MetricRegistryTest() : clock_(absl::FromUnixSeconds(1699833600)), registry_(&storage_, &clock_) {}

  static v1::CreateMetricRequest TwoCoin(const std::string& name) {
    v1::CreateMetricRequest request;
    request.set_name(name);
    request.mutable_design()->mutable_two_coin();
    return request;
  }

  void ExpectInvalid(const v1::CreateMetricRequest& request, const std::string& field) {
    absl::StatusOr<v1::Metric> metric = registry_.Create(request);
    ASSERT_FALSE(metric.ok()) << request.ShortDebugString();
    EXPECT_EQ(metric.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(metric.status().message()), HasSubstr(field));
    EXPECT_FALSE(registry_.Find(request.name()).ok()) << "nothing may be stored";
  }

  MemoryStorage storage_;
  FakeClock clock_;
  MetricRegistry registry_;
};

// A cached metric goes with its delete: Find answers NOT_FOUND at once (a report naming it is
// refused), and the name can be created again, with a new id and an empty history.
TEST_F(MetricRegistryTest, DeleteDropsTheCachedMetricAndFreesTheName) {
  ASSERT_TRUE(registry_.Create(TwoCoin("m")).ok());
  absl::StatusOr<std::shared_ptr<const MetricInfo>> cached = registry_.Find("m");
  ASSERT_TRUE(cached.ok());
  ASSERT_TRUE(registry_.Delete("m").ok());
  EXPECT_EQ(registry_.Find("m").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_.Delete("m").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(registry_.Delete("Bad Name").code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(registry_.Create(TwoCoin("m")).ok());
  absl::StatusOr<std::shared_ptr<const MetricInfo>> again = registry_.Find("m");
  ASSERT_TRUE(again.ok());
  EXPECT_NE((*again)->id, (*cached)->id);
}

TEST_F(MetricRegistryTest, DefaultsToADailyMemoizedPeriod) {
  absl::StatusOr<v1::Metric> metric = registry_.Create(TwoCoin("m"));
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->reporting_period_seconds(), 86400u);
  EXPECT_EQ(metric->randomization(), v1::MEMOIZED);
}

TEST_F(MetricRegistryTest, KeepsTheChosenPeriodAndRandomizationInCreateFindAndList) {
  v1::CreateMetricRequest request = TwoCoin("m");
  request.set_time_precision_seconds(900);
  request.set_reporting_period_seconds(7200);
  request.set_randomization(v1::FRESH_PER_PERIOD);
  ASSERT_TRUE(registry_.Create(request).ok());
  MetricRegistry fresh_registry(&storage_, &clock_);  // reads storage, not the cache
  absl::StatusOr<std::shared_ptr<const MetricInfo>> found = fresh_registry.Find("m");
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ((*found)->proto.reporting_period_seconds(), 7200u);
  EXPECT_EQ((*found)->proto.randomization(), v1::FRESH_PER_PERIOD);
  absl::StatusOr<std::vector<v1::Metric>> list = fresh_registry.List();
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].reporting_period_seconds(), 7200u);
  EXPECT_EQ((*list)[0].randomization(), v1::FRESH_PER_PERIOD);
}

TEST_F(MetricRegistryTest, CreateFailsWhenThePeriodIsNotAMultipleOfThePrecision) {
  v1::CreateMetricRequest request = TwoCoin("m");
  request.set_reporting_period_seconds(5400);  // 1.5 h with the default precision of 1 h
  ExpectInvalid(request, "reporting_period_seconds");
  request.set_reporting_period_seconds(60);
  ExpectInvalid(request, "reporting_period_seconds");
}

TEST_F(MetricRegistryTest, CreateFailsWhenThePeriodExceeds366Days) {
  v1::CreateMetricRequest request = TwoCoin("m");
  request.set_reporting_period_seconds(367 * 86400);
  ExpectInvalid(request, "reporting_period_seconds");
  request.set_reporting_period_seconds(366 * 86400);
  EXPECT_TRUE(registry_.Create(request).ok());
}

TEST_F(MetricRegistryTest, CreateFailsForAnUnknownRandomization) {
  v1::CreateMetricRequest request = TwoCoin("m");
  request.set_randomization(static_cast<v1::Randomization>(7));
  ExpectInvalid(request, "randomization");
}

// Issue 16: forced response p = 1 (every report is the answer) was accepted silently.
TEST_F(MetricRegistryTest, CreateRefusesADesignWithNoPrivacyUnlessAllowed) {
  v1::CreateMetricRequest request = TwoCoin("m");
  request.mutable_design()->mutable_forced_response()->set_p(1.0);
  request.mutable_design()->mutable_forced_response()->set_q(0.5);
  ExpectInvalid(request, "allow_no_privacy");
  request.mutable_design()->mutable_mirrored_question()->set_p(0.0);
  ExpectInvalid(request, "allow_no_privacy");
  request.mutable_design()->mutable_truth_with_gamma()->set_gamma(0.5);
  ExpectInvalid(request, "allow_no_privacy");
  request.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(40);
  ExpectInvalid(request, "allow_no_privacy");

  request.set_allow_no_privacy(true);
  absl::StatusOr<v1::Metric> metric = registry_.Create(request);
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_THAT(metric->design().warning(), HasSubstr("every report reveals its true answer"));
}

TEST_F(MetricRegistryTest, AddVersionRefusesADesignWithNoPrivacyUnlessAllowed) {
  ASSERT_TRUE(registry_.Create(TwoCoin("m")).ok());
  v1::AddDesignVersionRequest request;
  request.set_metric("m");
  request.mutable_design()->mutable_unrelated_question()->set_p(1.0);
  absl::StatusOr<v1::Metric> refused = registry_.AddVersion(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("allow_no_privacy"));
  EXPECT_EQ((*registry_.Find("m"))->versions.size(), 1u);
  request.set_allow_no_privacy(true);
  EXPECT_TRUE(registry_.AddVersion(request).ok());
}

TEST_F(MetricRegistryTest, CreateRefusesDegenerateDesignsNamingTheParameter) {
  v1::CreateMetricRequest request = TwoCoin("m");
  request.mutable_design()->mutable_forced_response()->set_p(1e-300);
  ExpectInvalid(request, "design.forced_response: p");
  request.mutable_design()->mutable_mirrored_question()->set_p(0.5 + 1e-16);
  ExpectInvalid(request, "design.mirrored_question: P");
  request.mutable_design()->mutable_truth_with_gamma()->set_gamma(1e-300);
  ExpectInvalid(request, "design.truth_with_gamma: gamma");
  request.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(1e308);
  ExpectInvalid(request, "design.symmetric_epsilon: epsilon");
  request.mutable_design()->mutable_symmetric_epsilon()->set_epsilon(1000);
  ExpectInvalid(request, "design.symmetric_epsilon: epsilon");
}

}  // namespace metric_registry_test
}  // namespace
}  // namespace deniable::server
