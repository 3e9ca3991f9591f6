// The estimate series (estimate_metrics.h): one per metric and quantity from the query's answer,
// exact values, escaped label values, the window, the cap on metrics, and a metric without an
// estimate left out.
#include "server/metrics/estimate_metrics.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::server {
namespace {
namespace estimate_metrics_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1'800'000'000;

v1::Prevalence YesNo() {
  v1::Prevalence p;
  p.set_n(400);
  p.set_estimate_unbiased(0.85);
  p.set_ci_lower(0.755);
  p.set_ci_upper(0.1 + 0.2);  // 0.30000000000000004: printed exactly
  p.mutable_manipulation()->set_fake_reports(4);
  p.mutable_manipulation()->set_bound(0.0136);
  return p;
}

TEST(EstimateMetricsTest, OneSeriesPerMetricAndQuantityWithExactValues) {
  FakeClock clock(absl::FromUnixSeconds(kNow));
  std::vector<v1::GetPrevalenceRequest> asked;
  EstimateMetrics m(
      [] {
        v1::ListMetricsResponse r;
        for (const char* name : {"crash", "browser", "empty"}) r.add_metrics()->set_name(name);
        return absl::StatusOr<v1::ListMetricsResponse>(r);
      },
      [&](const v1::GetPrevalenceRequest& r) -> absl::StatusOr<v1::Prevalence> {
        asked.push_back(r);
        if (r.metric() == "empty") return absl::FailedPreconditionError("too few reports");
        if (r.metric() == "crash") return YesNo();
        v1::Prevalence p;
        p.set_n(300);
        v1::CategoryShare* s = p.add_shares();
        s->set_category("a\"b");
        s->set_estimate_unbiased(0.5);
        s->set_ci_lower(0.4);
        s->set_ci_upper(0.6);
        return p;
      },
      &clock, EstimateMetricsOptions{.refresh = absl::ZeroDuration(), .window = absl::Hours(24)});
  EXPECT_EQ(m.Text(), "");
  ASSERT_TRUE(m.Refresh().ok());
  const std::string text = m.Text();
  ASSERT_EQ(asked.size(), 3u);
  EXPECT_EQ(asked[0].metric(), "browser");  // name order
  EXPECT_EQ(asked[0].start_time_seconds(), kNow - 86400);
  EXPECT_EQ(asked[0].end_time_seconds(), kNow);
  EXPECT_THAT(text, HasSubstr("# TYPE deniable_estimate gauge\n"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate{metric=\"crash\",quantity=\"prevalence\"} "
                              "0.84999999999999998\n"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_upper{metric=\"crash\",quantity=\"prevalence\"} "
                              "0.30000000000000004\n"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_manipulation_bound{metric=\"crash\",quantity="
                              "\"prevalence\"} 0.0135999"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate{metric=\"browser\",quantity=\"a\\\"b\"} 0.5\n"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_reports{metric=\"crash\"} 400\n"));
  EXPECT_THAT(text, Not(HasSubstr("metric=\"empty\"")));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_window_start_timestamp_seconds 1799913600\n"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_window_end_timestamp_seconds 1800000000\n"));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_metrics_omitted 0\n"));
}

TEST(EstimateMetricsTest, MetricsBeyondTheCapAreCountedNotShown) {
  FakeClock clock(absl::FromUnixSeconds(kNow));
  EstimateMetrics m(
      [] {
        v1::ListMetricsResponse r;
        for (const char* name : {"c", "a", "b"}) r.add_metrics()->set_name(name);
        return absl::StatusOr<v1::ListMetricsResponse>(r);
      },
      [](const v1::GetPrevalenceRequest&) -> absl::StatusOr<v1::Prevalence> { return YesNo(); },
      &clock, EstimateMetricsOptions{.refresh = absl::ZeroDuration(), .max_metrics = 2});
  m.Start();  // refresh zero: one refresh now, no thread
  const std::string text = m.Text();
  EXPECT_THAT(text, HasSubstr("metric=\"a\""));
  EXPECT_THAT(text, HasSubstr("metric=\"b\""));
  EXPECT_THAT(text, Not(HasSubstr("metric=\"c\"")));
  EXPECT_THAT(text, HasSubstr("deniable_estimate_metrics_omitted 1\n"));
}

TEST(EstimateMetricsTest, AFailedListKeepsThePreviousText) {
  FakeClock clock(absl::FromUnixSeconds(kNow));
  bool fail = false;
  EstimateMetrics m(
      [&]() -> absl::StatusOr<v1::ListMetricsResponse> {
        if (fail) return absl::UnavailableError("db down");
        v1::ListMetricsResponse r;
        r.add_metrics()->set_name("crash");
        return r;
      },
      [](const v1::GetPrevalenceRequest&) -> absl::StatusOr<v1::Prevalence> { return YesNo(); },
      &clock, EstimateMetricsOptions{.refresh = absl::ZeroDuration()});
  ASSERT_TRUE(m.Refresh().ok());
  const std::string before = m.Text();
  fail = true;
  EXPECT_EQ(m.Refresh().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(m.Text(), before);
}

}  // namespace estimate_metrics_test
}  // namespace
}  // namespace deniable::server
