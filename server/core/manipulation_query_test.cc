// Issue 41: every served estimate carries its manipulation bound (common/manipulation.h,
// docs/security.md "Manipulation bound"): at 1 % of n by default, or for the fake reports asked.
// The yes/no case re-runs the issue's example through the ingestor (window flags validated as
// devices send them).
#include <cmath>
#include <string>

#include "deniable/common/calendar_windows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace manipulation_query_test {

using ::testing::HasSubstr;

constexpr int64_t kDay = 86400;
constexpr int64_t kMonday = 1793577600;  // 2026-11-02 00:00 UTC, a Monday
constexpr int kAllFirsts = kFirstInDay | kFirstInWeek | kFirstInMonth;

class ManipulationQueryTest : public ::testing::Test {
 protected:
  ManipulationQueryTest()
      : clock_(absl::FromUnixSeconds(kMonday + 2 * kDay)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 1}) {}

  void Create(v1::CreateMetricRequest create) {
    absl::StatusOr<v1::Metric> created = registry_.Create(create);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  v1::Report* Add(const std::string& metric, int64_t time, int bit, int firsts) {
    v1::Report* r = batch_.add_reports();
    r->set_metric(metric);
    r->set_design_version(1);
    r->set_bit(static_cast<uint32_t>(bit));
    std::string id(16, '\0');
    for (int k = 0; k < 8; ++k) id[k] = static_cast<char>((next_id_ >> (8 * k)) & 0xff);
    ++next_id_;
    r->set_report_id(id);
    r->set_event_time_seconds(time);
    if (firsts >= 0) {
      r->mutable_window_firsts()->set_day((firsts & kFirstInDay) != 0);
      r->mutable_window_firsts()->set_week((firsts & kFirstInWeek) != 0);
      r->mutable_window_firsts()->set_month((firsts & kFirstInMonth) != 0);
    }
    return r;
  }
  void Flush() {
    absl::StatusOr<v1::SubmitReportsResponse> s = ingestor_.Submit(batch_);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_EQ(s->rejections_size(), 0) << s->rejections(0).reason();
    batch_.Clear();
  }

  absl::StatusOr<v1::Prevalence> Get(const std::string& metric, int64_t fakes) {
    v1::GetPrevalenceRequest r;
    r.set_metric(metric);
    r.set_start_time_seconds(kMonday);
    r.set_end_time_seconds(kMonday + kDay);
    r.set_manipulation_reports(fakes);
    return query_.Get(r);
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
  v1::SubmitReportsRequest batch_;
  uint64_t next_id_ = 1;
};

// Issue 41's example: 200 honest first-in-day reports (70 ones under two coins: 0.20), then one
// client adds 200 reports with bit 1, each flagged first in its day, week and month: 0.85. The
// bound for those 200 fakes reaches back to the honest 0.20; the default (1 %, 4 reports) says
// how little 4 fakes could do.
TEST_F(ManipulationQueryTest, IssueExampleServesTheBound) {
  v1::CreateMetricRequest create;
  create.set_name("crash");
  create.mutable_design()->mutable_two_coin();
  Create(create);
  for (int i = 0; i < 200; ++i) Add("crash", kMonday + 3600, i < 70 ? 1 : 0, kAllFirsts);
  Flush();
  absl::StatusOr<v1::Prevalence> honest = Get("crash", 0);
  ASSERT_TRUE(honest.ok()) << honest.status();
  EXPECT_NEAR(honest->estimate_unbiased(), 0.20, 1e-12);
  EXPECT_EQ(honest->manipulation().fake_reports(), 2);
  for (int i = 0; i < 200; ++i) Add("crash", kMonday + 7200, 1, kAllFirsts);
  Flush();

  absl::StatusOr<v1::Prevalence> p = Get("crash", 0);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->estimand(), "active_device_prevalence");
  EXPECT_EQ(p->n(), 400);
  EXPECT_NEAR(p->estimate_unbiased(), 0.85, 1e-12);
  const v1::ManipulationBound& d = p->manipulation();
  EXPECT_EQ(d.fake_reports(), 4);  // 1 % of 400
  EXPECT_NEAR(d.shift_up(), 4 * (1.5 - 0.85) / 396, 1e-12);
  EXPECT_NEAR(d.shift_down(), 4 * (0.85 + 0.5) / 396, 1e-12);
  EXPECT_NEAR(d.bound(), d.shift_down(), 0);
  EXPECT_NEAR(d.uniform_bound(), 4.0 * 2 / 400, 1e-12);  // m / (n (a - b))
  EXPECT_NEAR(d.honest_lower(), 0.85 - d.shift_up(), 1e-12);

  absl::StatusOr<v1::Prevalence> asked = Get("crash", 200);
  ASSERT_TRUE(asked.ok()) << asked.status();
  const v1::ManipulationBound& m = asked->manipulation();
  EXPECT_EQ(m.fake_reports(), 200);
  EXPECT_NEAR(m.shift_up(), 0.65, 1e-12);
  EXPECT_NEAR(m.honest_lower(), 0.20, 1e-12);  // the honest estimate the fakes hid
  EXPECT_NEAR(m.honest_upper(), 1.5, 1e-12);   // capped: the largest value a report gives
  EXPECT_NEAR(m.uniform_bound(), 1.0, 1e-12);
  EXPECT_LE(asked->ci_upper(), m.honest_upper());
}

TEST_F(ManipulationQueryTest, NegativeFakeReportsIsRefusedByName) {
  v1::CreateMetricRequest create;
  create.set_name("crash");
  create.mutable_design()->mutable_two_coin();
  Create(create);
  Add("crash", kMonday + 3600, 1, -1);
  Flush();
  absl::StatusOr<v1::Prevalence> p = Get("crash", -1);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("manipulation_reports"));
  v1::GetSeriesRequest series;
  series.set_metric("crash");
  series.set_start_time_seconds(kMonday);
  series.set_end_time_seconds(kMonday + kDay);
  series.set_manipulation_reports(-3);
  EXPECT_THAT(query_.Series(series).status().message(), HasSubstr("manipulation_reports"));
  series.set_manipulation_reports(0);
  absl::StatusOr<v1::Series> s = query_.Series(series);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->buckets_size(), 1);
  EXPECT_EQ(s->buckets(0).manipulation().fake_reports(), 1);
}

// A category's share moves through the support channel (p*, q*): per-report values in
// [-q*/(p*-q*), (1-q*)/(p*-q*)].
TEST_F(ManipulationQueryTest, EachShareIsBoundedThroughTheSupportChannel) {
  v1::CreateMetricRequest create;
  create.set_name("browser");
  for (const char* c : {"a", "b", "c"}) create.add_categories(c);
  create.mutable_design()->mutable_categorical()->set_mechanism(v1::K_RR);
  create.mutable_design()->mutable_categorical()->set_epsilon(std::log(4.0));
  Create(create);
  for (int i = 0; i < 300; ++i)
    Add("browser", kMonday + 3600, 0, -1)
        ->mutable_categorical()
        ->set_category(static_cast<uint32_t>(i % 3));
  Flush();
  absl::StatusOr<v1::Prevalence> p = Get("browser", 30);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->has_manipulation());  // the shares carry it
  ASSERT_EQ(p->shares_size(), 3);
  // k-RR, k = 3, e^eps = 4: p* = 4/6, q* = 1/6; values in [-1/3, 5/3].
  const double lo = -1.0 / 3, hi = 5.0 / 3;
  for (const v1::CategoryShare& s : p->shares()) {
    const double e = s.estimate_unbiased();
    EXPECT_NEAR(s.manipulation().shift_up(), 30 * (hi - e) / 270, 1e-9) << s.category();
    EXPECT_NEAR(s.manipulation().shift_down(), 30 * (e - lo) / 270, 1e-9) << s.category();
    EXPECT_NEAR(s.manipulation().uniform_bound(), 30 * (hi - lo) / 300, 1e-9);
  }
}

// A ONE_BIT_MEAN mean moves by the bit's bound times hi - lo, in the values' unit.
TEST_F(ManipulationQueryTest, MeanIsBoundedInTheValuesUnit) {
  v1::CreateMetricRequest create;
  create.set_name("session");
  create.mutable_range()->set_lo(10);
  create.mutable_range()->set_hi(130);
  create.mutable_range()->set_unit("s");
  create.mutable_design()->mutable_numeric()->set_mechanism(v1::ONE_BIT_MEAN);
  create.mutable_design()->mutable_numeric()->set_epsilon(std::log(3.0));
  Create(create);
  for (int i = 0; i < 200; ++i) Add("session", kMonday + 3600, i < 130 ? 1 : 0, -1);
  Flush();
  absl::StatusOr<v1::Prevalence> p = Get("session", 10);
  ASSERT_TRUE(p.ok()) << p.status();
  const v1::ManipulationBound& bit = p->manipulation();
  const v1::ManipulationBound& mean = p->numeric().mean_manipulation();
  EXPECT_EQ(mean.fake_reports(), 10);
  EXPECT_NEAR(mean.shift_up(), 120 * bit.shift_up(), 1e-9);
  EXPECT_NEAR(mean.shift_down(), 120 * bit.shift_down(), 1e-9);
  EXPECT_NEAR(mean.uniform_bound(), 120 * bit.uniform_bound(), 1e-9);
  EXPECT_NEAR(mean.honest_lower(), p->numeric().mean() - mean.shift_up(), 1e-9);
  // a - b = 1/2 (e^eps = 3): the uniform bound m (hi - lo) / (n (a - b)).
  EXPECT_NEAR(mean.uniform_bound(), 10 * 120 / (200 * 0.5), 1e-9);
}

// A D_BIT_FLIP bucket: every fake may sample it, so n is the reports that sampled it.
TEST_F(ManipulationQueryTest, EachBucketIsBoundedOverItsSampledReports) {
  v1::CreateMetricRequest create;
  create.set_name("latency");
  create.mutable_range()->set_lo(0);
  create.mutable_range()->set_hi(100);
  v1::Numeric* n = create.mutable_design()->mutable_numeric();
  n->set_mechanism(v1::D_BIT_FLIP);
  n->set_epsilon(std::log(16.0));
  n->set_buckets(2);
  n->set_sampled_buckets(1);
  Create(create);
  for (int i = 0; i < 100; ++i) {
    v1::Report* r = Add("latency", kMonday + 3600, 0, -1);
    r->mutable_numeric()->add_buckets(static_cast<uint32_t>(i % 2));
    r->mutable_numeric()->add_bits(i % 4 == 0);
  }
  Flush();
  absl::StatusOr<v1::Prevalence> p = Get("latency", 0);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->numeric().buckets_size(), 2);
  // eps = ln 16: a = 4, channel (4/5, 1/5); values in [-1/3, 4/3].
  EXPECT_DOUBLE_EQ(p->versions(0).a(), 0.8);
  EXPECT_DOUBLE_EQ(p->versions(0).b(), 0.2);
  const double lo = -1.0 / 3, hi = 4.0 / 3;
  for (const v1::NumericBucket& b : p->numeric().buckets()) {
    ASSERT_EQ(b.sampled(), 50);
    EXPECT_EQ(b.manipulation().fake_reports(), 1);  // 1 % of the 100 reports
  }
  // Bucket 0: half its bits 1, estimate 0.5; one fake among its 50 moves it by at most
  // (hi - 0.5) / 49 up and (0.5 - lo) / 49 down.
  const v1::NumericBucket& b0 = p->numeric().buckets(0);
  EXPECT_NEAR(b0.estimate_unbiased(), 0.5, 1e-12);
  EXPECT_NEAR(b0.manipulation().shift_up(), (hi - 0.5) / 49, 1e-12);
  EXPECT_NEAR(b0.manipulation().shift_down(), (0.5 - lo) / 49, 1e-12);
  // Bucket 1: no bit 1, so every report's value is lo and so was every fake's: the honest
  // reports' estimate is lo too (both shifts 0), whatever m.
  const v1::NumericBucket& b1 = p->numeric().buckets(1);
  EXPECT_NEAR(b1.estimate_unbiased(), lo, 1e-12);
  EXPECT_NEAR(b1.manipulation().shift_up(), 0, 1e-12);
  EXPECT_NEAR(b1.manipulation().shift_down(), 0, 1e-12);
  EXPECT_NEAR(b1.manipulation().uniform_bound(), (hi - lo) / 50, 1e-12);
}

}  // namespace manipulation_query_test
}  // namespace
}  // namespace deniable::server
