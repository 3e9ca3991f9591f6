// Issue 26: selections that are whole calendar windows are estimated from the windows' first
// reports (devices counted once, docs/statistics.md section 4.4); reporting_once metrics as
// independent devices; cutting selections keep the reporting-period form. Seeded simulations
// through the ingestor, so the window flags are validated as devices send them.
#include <cmath>
#include <random>
#include <string>

#include "deniable/common/calendar_windows.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/design_advisor.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace window_query_test {

using ::testing::HasSubstr;

constexpr int64_t kDay = 86400;
constexpr int64_t kMonday = 1793577600;  // 2026-11-02 00:00 UTC, a Monday

class WindowQueryTest : public ::testing::Test {
 protected:
  WindowQueryTest()
      : clock_(absl::FromUnixSeconds(kMonday + 29 * kDay)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 1}) {}

  void Create(const std::string& name, bool once = false, bool flags_off = false) {
    v1::CreateMetricRequest create;
    create.set_name(name);
    create.mutable_design()->mutable_two_coin();
    create.set_reporting_once(once);
    create.set_window_firsts_off(flags_off);
    ASSERT_TRUE(registry_.Create(create).ok());
  }

  // One report of `metric` at `time` with bit `bit` and window flags `firsts` (-1: none), and
  // for a categorical metric the k-RR category `category` (-1: none).
  void Add(const std::string& metric, int64_t time, bool bit, int firsts, int category = -1) {
    v1::Report* r = batch_.add_reports();
    r->set_metric(metric);
    r->set_design_version(1);
    r->set_bit(bit ? 1 : 0);
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
    if (category >= 0) r->mutable_categorical()->set_category(static_cast<uint32_t>(category));
    if (batch_.reports_size() == 5000) Flush();
  }
  void Flush() {
    if (batch_.reports_size() == 0) return;
    absl::StatusOr<v1::SubmitReportsResponse> s = ingestor_.Submit(batch_);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_EQ(s->rejections_size(), 0) << s->rejections(0).reason();
    batch_.Clear();
  }

  v1::Prevalence Get(const std::string& metric, int64_t start, int64_t end) {
    v1::GetPrevalenceRequest r;
    r.set_metric(metric);
    r.set_start_time_seconds(start);
    r.set_end_time_seconds(end);
    absl::StatusOr<v1::Prevalence> p = query_.Get(r);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? *p : v1::Prevalence();
  }

  MemoryStorage storage_;
  FakeClock clock_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
  v1::SubmitReportsRequest batch_;
  uint64_t next_id_ = 1;
};

// A fleet of 2000 devices reporting every day of one week, memoized two-coin bits, 30 % "yes":
// the week is 2000 devices, each counted once, and its interval is as narrow as one day's.
TEST_F(WindowQueryTest, AWeekOfADailyFleetCountsEachDeviceOnce) {
  Create("daily");
  std::mt19937_64 rng(26);
  std::uniform_real_distribution<double> u(0, 1);
  constexpr int kDevices = 2000;
  int truly_yes = 0;
  for (int i = 0; i < kDevices; ++i) {
    const bool x = u(rng) < 0.3;
    truly_yes += x;
    const bool bit = u(rng) < (x ? 0.75 : 0.25);
    for (int d = 0; d < 7; ++d) {
      Add("daily", kMonday + d * kDay + 3600, bit,
          WindowFirsts(d == 0 ? 0 : kMonday, kMonday + d * kDay));
    }
  }
  Flush();
  const v1::Prevalence week = Get("daily", kMonday, kMonday + 7 * kDay);
  const v1::Prevalence day = Get("daily", kMonday + 2 * kDay, kMonday + 3 * kDay);
  EXPECT_EQ(week.estimand(), "active_device_prevalence");
  EXPECT_EQ(week.window(), "week");
  EXPECT_EQ(week.windows(), 1);
  EXPECT_EQ(week.variance_bound(), "independent_devices");
  EXPECT_EQ(week.n(), kDevices);
  EXPECT_EQ(week.explanation(), "2000 devices active in the week of 2026-11-02, each counted once");
  EXPECT_EQ(day.window(), "day");
  EXPECT_THAT(week.interval_construction(), HasSubstr("on the week's first reports"));
  EXPECT_NEAR(week.standard_error() / day.standard_error(), 1.0, 0.10);
  const double truth = static_cast<double>(truly_yes) / kDevices;
  EXPECT_LT(std::abs(week.estimate_unbiased() - truth), 3 * week.standard_error());
  EXPECT_LE(week.ci_lower(), truth);
  EXPECT_GE(week.ci_upper(), truth);
  std::printf("weekly active devices: estimate %.4f, se %.4f, interval [%.4f, %.4f], truth %.4f\n",
              week.estimate_unbiased(), week.standard_error(), week.ci_lower(), week.ci_upper(),
              truth);
  // Whole days that are not a week (Tuesday to Monday): the days' devices, combined across days.
  const v1::Prevalence days = Get("daily", kMonday + kDay, kMonday + 8 * kDay);
  EXPECT_EQ(days.window(), "day");
  EXPECT_EQ(days.windows(), 6);  // days holding reports
  EXPECT_EQ(days.estimand(), "mean_window_prevalence");
  EXPECT_EQ(days.variance_bound(), "minkowski_across_windows");
  // A selection that cuts a day keeps the period form.
  const v1::Prevalence cut = Get("daily", kMonday + kDay + 7200, kMonday + 7 * kDay);
  EXPECT_EQ(cut.estimand(), "mean_period_prevalence");
  EXPECT_EQ(cut.window(), "");
  EXPECT_THAT(cut.explanation(), HasSubstr("5 reporting periods"));
  // Daily series buckets are days, each counted by its devices.
  v1::GetSeriesRequest series;
  series.set_metric("daily");
  series.set_start_time_seconds(kMonday);
  series.set_end_time_seconds(kMonday + 7 * kDay);
  absl::StatusOr<v1::Series> s = query_.Series(series);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->buckets_size(), 7);
  EXPECT_EQ(s->buckets(3).window(), "day");
  EXPECT_EQ(s->buckets(3).n(), kDevices);
}

// A survey of 2800 respondents spread over 28 days (100 a day), one report each: without flags
// the four weeks are combined by the period bound (as wide as one day's 100 devices); with flags
// each week is its 700 devices; asked once per device it is 2800 independent devices.
TEST_F(WindowQueryTest, ASurveySpreadOverFourWeeksGetsTheIntervalOfItsRespondents) {
  Create("old", false, /*flags_off=*/true);
  Create("flags");
  Create("once", /*once=*/true);
  std::mt19937_64 rng(2532);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 2800; ++i) {
    const bool x = u(rng) < 0.33;
    const bool bit = u(rng) < (x ? 0.75 : 0.25);
    const int64_t t = kMonday + (i / 100) * kDay + 3600;
    const int firsts = WindowFirsts(0, t);
    Add("old", t, bit, firsts);  // ignored: the metric turned the flags off
    Add("flags", t, bit, firsts);
    Add("once", t, bit, firsts);
  }
  Flush();
  const int64_t end = kMonday + 28 * kDay;
  const v1::Prevalence old = Get("old", kMonday, end);
  const v1::Prevalence flags = Get("flags", kMonday, end);
  const v1::Prevalence once = Get("once", kMonday, end);
  EXPECT_EQ(old.estimand(), "mean_period_prevalence");
  EXPECT_EQ(flags.window(), "week");
  EXPECT_EQ(flags.windows(), 4);
  // Four weeks: the device-weighted mean of the weekly prevalences, n device-weeks.
  EXPECT_EQ(flags.estimand(), "mean_window_prevalence");
  EXPECT_EQ(flags.n(), 2800);
  EXPECT_EQ(flags.variance_bound(), "minkowski_across_windows");
  EXPECT_EQ(once.window(), "once");
  EXPECT_EQ(once.variance_bound(), "independent_devices");
  EXPECT_EQ(once.n(), 2800);
  EXPECT_DOUBLE_EQ(once.estimate_unbiased(), old.estimate_unbiased());
  // se ~ 1/sqrt(n): 100 devices a day, 700 a week, 2800 once.
  EXPECT_NEAR(old.standard_error() / once.standard_error(), std::sqrt(28.0), 0.6);
  EXPECT_NEAR(flags.standard_error() / once.standard_error(), 2.0, 0.2);
  std::printf(
      "survey over 28 days: period form se %.4f [%.4f, %.4f]; weeks se %.4f; once se %.4f "
      "[%.4f, %.4f]\n",
      old.standard_error(), old.ci_lower(), old.ci_upper(), flags.standard_error(),
      once.standard_error(), once.ci_lower(), once.ci_upper());
}

// Categorical metrics: the week counts each device's first report's category once.
TEST_F(WindowQueryTest, CategorySharesOfAWeekCountEachDeviceOnce) {
  v1::CreateMetricRequest create;
  create.set_name("vote");
  for (const char* c : {"a", "b", "c"}) create.add_categories(c);
  create.mutable_design()->mutable_categorical()->set_mechanism(v1::K_RR);
  create.mutable_design()->mutable_categorical()->set_epsilon(1.0);
  ASSERT_TRUE(registry_.Create(create).ok());
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> category(0, 2);
  constexpr int kDevices = 600;
  int64_t first_b = 0;
  for (int i = 0; i < kDevices; ++i) {
    const int memo = category(rng);  // the device's memoized report
    first_b += memo == 1;
    for (int d = 0; d < 7; ++d) {
      Add("vote", kMonday + d * kDay, false, WindowFirsts(d == 0 ? 0 : kMonday, kMonday + d * kDay),
          memo);
    }
  }
  Flush();
  const v1::Prevalence week = Get("vote", kMonday, kMonday + 7 * kDay);
  EXPECT_EQ(week.estimand(), "active_device_prevalence");
  EXPECT_EQ(week.window(), "week");
  EXPECT_EQ(week.n(), kDevices);
  ASSERT_EQ(week.shares_size(), 3);
  EXPECT_EQ(week.shares(1).support_count(), first_b);
  const v1::Prevalence day = Get("vote", kMonday, kMonday + kDay);
  ASSERT_EQ(day.shares_size(), 3);
  EXPECT_NEAR(week.shares(1).standard_error(), day.shares(1).standard_error(), 1e-12);
}

TEST_F(WindowQueryTest, AFirstInItsWeekThatIsNotFirstInItsDayIsRefused) {
  Create("m");
  Add("m", kMonday, true, kFirstInWeek);
  absl::StatusOr<v1::SubmitReportsResponse> s = ingestor_.Submit(batch_);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->rejections_size(), 1);
  EXPECT_EQ(s->rejections(0).code(), static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s->rejections(0).reason(), HasSubstr("reports[0].window_firsts.day"));
  EXPECT_TRUE(s->rejections(0).permanent());
}

// Reports of older SDKs carry no flags: a whole week of them keeps the period form.
TEST_F(WindowQueryTest, AWeekWithoutFlagsKeepsThePeriodForm) {
  Create("m");
  for (int d = 0; d < 7; ++d) {
    for (int i = 0; i < 20; ++i) Add("m", kMonday + d * kDay, i % 3 == 0, -1);
  }
  Flush();
  const v1::Prevalence week = Get("m", kMonday, kMonday + 7 * kDay);
  EXPECT_EQ(week.estimand(), "mean_period_prevalence");
  EXPECT_EQ(week.variance_bound(), "minkowski");
  EXPECT_EQ(week.n(), 140);
}

// `plan --window=week --reports_per_device=7`: the half-width needs devices active in the week;
// their seven reports each do not narrow it.
TEST(WindowPlanTest, APlanWithAWindowAnswersInDevices) {
  DesignAdvisor advisor(/*registry=*/nullptr);
  v1::PlanSurveyRequest request;
  request.mutable_design()->mutable_two_coin();
  request.set_half_width(0.03);
  request.set_assumed_prevalence(-1);
  absl::StatusOr<v1::SurveyPlan> reports = advisor.Plan(request);
  ASSERT_TRUE(reports.ok()) << reports.status();
  EXPECT_EQ(reports->devices_needed(), 0);
  request.set_window("week");
  request.set_reports_per_device(7);
  absl::StatusOr<v1::SurveyPlan> devices = advisor.Plan(request);
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ(devices->window(), "week");
  EXPECT_EQ(devices->devices_needed(), reports->reports_needed());
  EXPECT_EQ(devices->reports_sent(), 7 * reports->reports_needed());
  request.set_window("fortnight");
  EXPECT_THAT(advisor.Plan(request).status().message(), HasSubstr("window"));
  request.set_window("day");
  request.set_reports_per_device(0.5);
  EXPECT_THAT(advisor.Plan(request).status().message(), HasSubstr("reports_per_device"));
}

}  // namespace window_query_test
}  // namespace
}  // namespace deniable::server
