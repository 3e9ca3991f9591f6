// Issue 41 alerts: rules files, a simulated rise that fires, a flat fleet that fires falsely at
// most at the level over many seeded runs, the gauge, the state JSON and the webhook received by
// a test HTTP listener.
#include "server/alerts/alert_monitor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "deniable/common/confidence_sequence.h"
#include "deniable/common/interval.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/text_serializer.h"
#include "server/alerts/alert_rules.h"
#include "server/alerts/webhook.h"
#include "server/core/core_test_util.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {

using ::testing::HasSubstr;
using testing_util::CountedBatch;
using testing_util::TwoCoinMetric;

constexpr int64_t kDay = 86400;
constexpr int64_t kStart = 1'700'006'400;  // a UTC midnight

TEST(AlertRulesTest, ParsesRulesWithDefaults) {
  absl::StatusOr<std::vector<AlertRule>> rules = ParseAlertRules(
      R"({"rules": [{"name": "crash_high", "metric": "crash", "above": 0.2},
                    {"name": "moved", "metric": "vote", "quantity": "share:Y", "changed_by": 0.05,
                     "window_seconds": 604800, "level": 0.99, "tuned_reports": 5000}]})",
      "rules.json");
  ASSERT_TRUE(rules.ok()) << rules.status();
  ASSERT_EQ(rules->size(), 2u);
  EXPECT_EQ((*rules)[0].quantity, "prevalence");
  EXPECT_EQ((*rules)[0].kind, AlertRule::Kind::kAbove);
  EXPECT_EQ((*rules)[0].window_seconds, 86400);
  EXPECT_EQ((*rules)[0].level, 0.95);
  EXPECT_EQ((*rules)[1].kind, AlertRule::Kind::kChangedBy);
  EXPECT_EQ((*rules)[1].threshold, 0.05);
  EXPECT_EQ((*rules)[1].tuned_reports, 5000);
}

TEST(AlertRulesTest, BadFilesNameTheFileAndTheField) {
  const auto message = [](const char* json) {
    return std::string(ParseAlertRules(json, "rules.json").status().message());
  };
  EXPECT_THAT(message("{"), HasSubstr("rules.json: not a JSON object"));
  EXPECT_THAT(message(R"({"rule": []})"), HasSubstr("rules.json: rule: unknown field"));
  EXPECT_THAT(message(R"({"rules": 3})"), HasSubstr("rules.json: rules: must be a list"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m", "abov": 1}]})"),
              HasSubstr("rules.json: rules[0].abov: unknown field"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "above": 0.1}]})"),
              HasSubstr("rules[0].metric: is required"));
  EXPECT_THAT(message(R"({"rules": [{"name": "A", "metric": "m", "above": 0.1}]})"),
              HasSubstr("rules[0].name: must match"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m", "above": "x"}]})"),
              HasSubstr("rules[0].above: must be a finite number"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m"}]})"),
              HasSubstr("rules[0].above: give exactly one of above and changed_by"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m", "changed_by": -1}]})"),
              HasSubstr("rules[0].changed_by: must be > 0"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m", "above": 0, "level": 1}]})"),
              HasSubstr("rules[0].level: must be in (0, 1)"));
  EXPECT_THAT(
      message(R"({"rules": [{"name": "a", "metric": "m", "above": 0, "window_seconds": 60}]})"),
      HasSubstr("rules[0].window_seconds: must be in [3600"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m", "above": 0, "quantity": "x"}]})"),
              HasSubstr("rules[0].quantity: must be prevalence, share:<category> or mean"));
  EXPECT_THAT(message(R"({"rules": [{"name": "a", "metric": "m", "above": 0},
                                    {"name": "a", "metric": "n", "above": 0}]})"),
              HasSubstr("rules[1].name: \"a\" names an earlier rule too"));
  absl::StatusOr<std::vector<AlertRule>> missing = LoadAlertRules("/nonexistent/rules.json");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/rules.json: cannot read"));
  EXPECT_THAT(
      message(R"({"rules": [{"name": "a", "metric": "m", "above": 0, "since_seconds": -1}]})"),
      HasSubstr("rules[0].since_seconds: must be >= 0"));
  absl::StatusOr<std::vector<AlertRule>> since = ParseAlertRules(
      R"({"rules": [{"name": "a", "metric": "m", "above": 0, "since_seconds": 1700000000}]})",
      "rules.json");
  ASSERT_TRUE(since.ok()) << since.status();
  EXPECT_EQ((*since)[0].since_seconds, 1700000000);
  EXPECT_EQ((*ParseAlertRules(R"({"rules": [{"name": "a", "metric": "m", "above": 0}]})", "f"))[0]
                .since_seconds,
            -1);
}

class AlertMonitorTest : public ::testing::Test {
 protected:
  AlertMonitorTest()
      : clock_(absl::FromUnixSeconds(kStart)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 50}) {}

  void SetUp() override { ASSERT_TRUE(registry_.Create(TwoCoinMetric("crash")).ok()); }

  // `n` two-coin reports of devices whose true answer is "yes" with probability `pi`, at `time`.
  void Send(int n, double pi, int64_t time) {
    int yes = 0;
    for (int i = 0; i < n; ++i) {
      const bool truth = Uniform() < pi;
      if (Uniform() < (truth ? 0.75 : 0.25)) ++yes;
    }
    clock_.Set(absl::FromUnixSeconds(time));
    absl::StatusOr<v1::SubmitReportsResponse> r =
        ingestor_.Submit(CountedBatch("crash", yes, n - yes, time, 1, &next_id_));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->accepted(), static_cast<uint32_t>(n)) << r->ShortDebugString();
  }

  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }

  AlertMonitor::PrevalenceFn Query() {
    return [this](const v1::GetPrevalenceRequest& r) { return query_.Get(r); };
  }

  static AlertRule Above(const std::string& name, double x) {
    AlertRule rule;
    rule.name = name;
    rule.metric = "crash";
    rule.threshold = x;
    return rule;
  }

  std::mt19937_64 gen_{41};
  uint64_t next_id_ = 1;
  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
};

// A share rising from 0.1 to 0.6 at hour 6 fires "above 0.3" after the rise, never before, once.
TEST_F(AlertMonitorTest, ARiseFires) {
  std::vector<std::string> hooks;
  prometheus::Registry metrics;
  AlertMonitor monitor({Above("crash_high", 0.3)}, Query(), &metrics,
                       [&hooks](const std::string& json) { hooks.push_back(json); });
  int first_firing_hour = -1;
  for (int hour = 0; hour < 24; ++hour) {
    const int64_t t = kStart + hour * 3600;
    Send(200, hour < 6 ? 0.1 : 0.6, t);
    monitor.EvaluateAll(absl::FromUnixSeconds(t + 1));
    const AlertState s = monitor.States()[0];
    if (hour < 6) {
      EXPECT_FALSE(s.firing) << hour;
    }
    if (s.firing && first_firing_hour < 0) first_firing_hour = hour;
  }
  EXPECT_GE(first_firing_hour, 6);
  // The rule watches the day's prevalence, which crosses 0.3 only after hour 9 (6 hours at 0.1
  // and h - 5 at 0.6 average above 0.3 from h = 10 on); then the interval must clear it.
  EXPECT_LE(first_firing_hour, 16);
  std::printf("above 0.3 first fired at hour %d (the rise was at hour 6)\n", first_firing_hour);
  ASSERT_EQ(hooks.size(), 1u);
  EXPECT_THAT(hooks[0], HasSubstr("\"rule\":\"crash_high\",\"metric\":\"crash\""));
  EXPECT_THAT(hooks[0], HasSubstr("\"firing\":true"));
  const std::string scrape = prometheus::TextSerializer().Serialize(metrics.Collect());
  EXPECT_THAT(scrape, HasSubstr("deniable_alert_firing{metric=\"crash\",rule=\"crash_high\"} 1"));
  EXPECT_THAT(monitor.StatesJson(), HasSubstr("\"firing\":true,\"status\":\"ok\""));
  // The next day starts empty: too few reports, so the rule stops firing and says why.
  monitor.EvaluateAll(absl::FromUnixSeconds(kStart + kDay + 60));
  EXPECT_FALSE(monitor.States()[0].firing);
  EXPECT_THAT(monitor.States()[0].status, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_EQ(hooks.size(), 2u);
  EXPECT_THAT(prometheus::TextSerializer().Serialize(metrics.Collect()),
              HasSubstr("deniable_alert_firing{metric=\"crash\",rule=\"crash_high\"} 0"));
}

// since_seconds fixes window 1 of the spending: a restart does not start it again.
TEST_F(AlertMonitorTest, SinceSecondsSetsTheSpendingsFirstWindow) {
  AlertRule rule = Above("crash_high", 0.3);
  rule.since_seconds = kStart - 9 * kDay + 5;  // in the window 9 days before kStart's
  AlertRule later = Above("later", 0.3);
  later.since_seconds = kStart + kDay;
  AlertRule unset = Above("unset", 0.3);  // window 1: the first evaluation's
  AlertMonitor monitor({rule, later, unset}, Query(), nullptr, nullptr);
  Send(2000, 0.7, kStart + 3600);
  monitor.EvaluateAll(absl::FromUnixSeconds(kStart + 3601));
  std::vector<AlertState> s = monitor.States();
  EXPECT_EQ(s[0].window_number, 10);
  EXPECT_EQ(s[0].window_level, WindowLevel(0.95, 10));
  EXPECT_TRUE(s[0].firing);
  EXPECT_FALSE(s[1].firing);
  EXPECT_EQ(s[1].window_number, 0);
  EXPECT_THAT(s[1].status, HasSubstr("not started"));
  EXPECT_EQ(s[2].window_number, 1);
  EXPECT_THAT(monitor.StatesJson(),
              HasSubstr(absl::StrCat("\"window_start_seconds\":", kStart,
                                     ",\"window_number\":10,\"window_level\":0.99969603")));
  // The same through QueryService.ListAlerts.
  const v1::ListAlertsResponse proto = monitor.StatesProto();
  ASSERT_EQ(proto.alerts_size(), 3);
  EXPECT_EQ(proto.alerts(0).rule(), "crash_high");
  EXPECT_EQ(proto.alerts(0).kind(), v1::AlertState::ABOVE);
  EXPECT_TRUE(proto.alerts(0).firing() && proto.alerts(0).evaluated());
  EXPECT_EQ(proto.alerts(0).window_number(), 10);
  EXPECT_EQ(proto.alerts(0).window_level(), WindowLevel(0.95, 10));
  EXPECT_EQ(proto.alerts(0).lower(), s[0].lower);
  EXPECT_EQ(proto.alerts(0).evaluated_at_seconds(), kStart + 3601);
  EXPECT_EQ(proto.alerts(0).changed_at_seconds(), kStart + 3601);
  EXPECT_FALSE(proto.alerts(1).evaluated());
  EXPECT_EQ(proto.alerts(1).window_level(), 0);
  EXPECT_EQ(proto.alerts(1).changed_at_seconds(), 0);
  EXPECT_THAT(proto.alerts(1).status(), HasSubstr("not started"));
  monitor.EvaluateAll(absl::FromUnixSeconds(kStart + 3 * kDay));
  s = monitor.States();
  EXPECT_EQ(s[0].window_number, 13);
  EXPECT_EQ(s[1].window_number, 3);
  EXPECT_EQ(s[2].window_number, 4);
}

// A change from 0.2 yesterday to 0.5 today fires "changed_by 0.1"; a flat day does not.
TEST_F(AlertMonitorTest, AChangeAgainstThePreviousWindowFires) {
  AlertRule rule = Above("moved", 0.1);
  rule.kind = AlertRule::Kind::kChangedBy;
  AlertMonitor monitor({rule}, Query(), nullptr, nullptr);
  Send(2000, 0.2, kStart + 3600);
  Send(2000, 0.2, kStart + kDay + 3600);
  monitor.EvaluateAll(absl::FromUnixSeconds(kStart + kDay + 7200));
  EXPECT_FALSE(monitor.States()[0].firing);
  EXPECT_EQ(monitor.States()[0].status, "ok");
  Send(3000, 0.5, kStart + 2 * kDay + 3600);
  monitor.EvaluateAll(absl::FromUnixSeconds(kStart + 2 * kDay + 7200));
  const AlertState s = monitor.States()[0];
  EXPECT_TRUE(s.firing);
  EXPECT_GT(s.lower, 0.1);
  EXPECT_LT(s.lower, s.estimate);
}

// The smallest c with P(Binomial(n, p) > c) <= tail.
int64_t BinomialUpperAllowance(int64_t n, double p, double tail) {
  double cdf = 0;
  for (int64_t c = 0; c <= n; ++c) {
    cdf += std::exp(std::lgamma(n + 1.0) - std::lgamma(c + 1.0) - std::lgamma(n - c + 1.0) +
                    c * std::log(p) + (n - c) * std::log1p(-p));
    if (1.0 - cdf <= tail) return c;
  }
  return n;
}

// 200 seeded runs of a flat fleet at pi = 0.3, each on a day of its own after a day of the same
// fleet, evaluated after every 100 reports (10 looks): "above 0.3" (the truth on the threshold,
// the worst case) and "changed_by 0.01" fire in at most alpha of the runs, up to the binomial
// allowance; the exact counts for the seed are asserted too.
// The query service costs milliseconds per call (the shuffle bound), so this test answers the
// monitor's queries from the runs' counts with the same confidence sequence
// (AnytimePrevalenceInterval; the server's equality with it is prevalence_query_test's
// AnytimeIntervalIsTheConfidenceSequence), and checks that the monitor asks for ANYTIME at the
// right levels and windows.
TEST(AlertFleetTest, AFlatFleetFiresFalselyAtMostAtTheLevel) {
  AlertRule above;
  above.name = "flat_above";
  above.metric = "crash";
  above.threshold = 0.3;
  above.tuned_reports = 1000;  // tightest where these runs are
  AlertRule change = above;
  change.name = "moved";
  change.kind = AlertRule::Kind::kChangedBy;
  change.threshold = 0.01;
  constexpr int kRuns = 1000;
  std::mt19937_64 gen(4141);
  const auto uniform = [&gen] { return static_cast<double>(gen() >> 11) * 0x1.0p-53; };
  const auto yes_of = [&](int n) {
    int yes = 0;
    for (int i = 0; i < n; ++i) {
      const bool truth = uniform() < 0.3;
      if (uniform() < (truth ? 0.75 : 0.25)) ++yes;
    }
    return yes;
  };
  int64_t counts[2][2] = {};  // [previous, current][yes, n]
  bool bad_request = false;
  AlertMonitor monitor(
      {above, change},
      [&](const v1::GetPrevalenceRequest& r) -> absl::StatusOr<v1::Prevalence> {
        const int day = r.start_time_seconds() == kStart + kDay ? 1 : 0;
        bad_request |=
            r.interval() != v1::ANYTIME || r.end_time_seconds() != r.start_time_seconds() + kDay;
        absl::StatusOr<AnytimeInterval> ci =
            AnytimePrevalenceInterval(Channel{0.75, 0.25}, counts[day][0], counts[day][1],
                                      r.confidence_level(), r.anytime_tuned_reports());
        if (!ci.ok()) return ci.status();
        v1::Prevalence p;
        p.set_estimate_unbiased(ci->center);
        p.set_ci_lower(ci->lower);
        p.set_ci_upper(ci->upper);
        p.mutable_yes_no();
        return p;
      },
      nullptr, nullptr);
  int above_runs = 0, change_runs = 0, fixed_runs = 0;
  for (int run = 0; run < kRuns; ++run) {
    bool fixed_fired = false;     // the same rule on the fixed-n Wilson interval, for comparison
    counts[0][0] = yes_of(1000);  // the previous day, whole
    counts[0][1] = 1000;
    counts[1][0] = counts[1][1] = 0;
    bool above_fired = false, change_fired = false;
    for (int look = 1; look <= 10; ++look) {
      counts[1][0] += yes_of(100);
      counts[1][1] += 100;
      monitor.EvaluateAll(absl::FromUnixSeconds(kStart + kDay + look * 3600));
      const std::vector<AlertState> s = monitor.States();
      above_fired |= s[0].firing;
      change_fired |= s[1].firing;
      absl::StatusOr<PrevalenceInterval> wilson = MakePrevalenceInterval(
          Channel{0.75, 0.25}, counts[1][0], counts[1][1], 0.95, IntervalMethod::kWilson);
      fixed_fired |= wilson.ok() && wilson->lower > 0.3;
    }
    above_runs += above_fired;
    change_runs += change_fired;
    fixed_runs += fixed_fired;
  }
  EXPECT_FALSE(bad_request);
  const int64_t allowance = BinomialUpperAllowance(kRuns, 0.05, 1e-6);
  std::printf(
      "flat fleet, %d runs of 10 looks: above fired in %d, changed_by in %d, the same rule on "
      "the fixed-n interval in %d (allowance %lld)\n",
      kRuns, above_runs, change_runs, fixed_runs, static_cast<long long>(allowance));
  EXPECT_LE(above_runs, allowance);
  EXPECT_LE(change_runs, allowance);
  EXPECT_GT(fixed_runs, 3 * above_runs);
  // The exact counts for the seed: Hoeffding's bound makes false alarms rarer than alpha (and
  // this first window gets alpha_1 = 0.61 alpha of the spending: 1 run before the spending).
  EXPECT_EQ(above_runs, 0);
  EXPECT_EQ(change_runs, 0);
}

// The level is spent across windows: alpha_w = alpha * 6 / (pi^2 w^2) sums to alpha.
TEST(AlertSpendingTest, WindowLevelsSumToTheLevel) {
  EXPECT_NEAR(1 - WindowLevel(0.95, 1), 0.05 * 6 / (M_PI * M_PI), 1e-15);
  EXPECT_NEAR(1 - WindowLevel(0.95, 10), 0.05 * 6 / (M_PI * M_PI * 100), 1e-15);
  double spent = 0;
  for (int64_t w = 1; w <= 1'000'000; ++w) spent += 1 - WindowLevel(0.95, w);
  EXPECT_LT(spent, 0.05);
  EXPECT_GT(spent, 0.05 - 1e-6);
}

// 300 seeded runs of a flat fleet at pi = 0.3 watched for 100 consecutive days (a new confidence
// sequence each day, 10 looks of 200 reports a day), then a day at pi = 0.7. Over the 100 flat
// days, "above 0.3" and "changed_by 0.01" fire falsely in at most alpha of the runs (up to the
// binomial allowance; exact counts for the seed), while the same rules restarted at the full
// alpha every day (no spending, as before) fire falsely in more runs than alpha allows. The rise
// on day 101 still fires both rules in every run. Queries are answered from the runs' counts by
// the same confidence sequence as in AFlatFleetFiresFalselyAtMostAtTheLevel.
TEST(AlertFleetTest, FalseAlarmsOverManyWindowsStayAtTheLevel) {
  AlertRule above;
  above.name = "flat_above";
  above.metric = "crash";
  above.threshold = 0.3;
  above.tuned_reports = 2000;
  AlertRule change = above;
  change.name = "moved";
  change.kind = AlertRule::Kind::kChangedBy;
  change.threshold = 0.01;
  constexpr int kRuns = 300, kFlatDays = 100, kLooks = 10, kPerLook = 200;
  const Channel channel{0.75, 0.25};
  std::mt19937_64 gen(4142);
  const auto uniform = [&gen] { return static_cast<double>(gen() >> 11) * 0x1.0p-53; };
  const auto yes_of = [&](int n, double pi) {
    int yes = 0;
    for (int i = 0; i < n; ++i) {
      const bool truth = uniform() < pi;
      if (uniform() < (truth ? 0.75 : 0.25)) ++yes;
    }
    return yes;
  };
  // counts[d + 1] = {yes, n} of day d (day -1: the day before the first evaluation).
  std::vector<std::pair<int64_t, int64_t>> counts;
  bool bad_request = false;
  const AlertMonitor::PrevalenceFn query =
      [&](const v1::GetPrevalenceRequest& r) -> absl::StatusOr<v1::Prevalence> {
    const int64_t d = (r.start_time_seconds() - kStart) / kDay;
    bad_request |= r.interval() != v1::ANYTIME || d < -1 ||
                   d + 1 >= static_cast<int64_t>(counts.size()) ||
                   r.end_time_seconds() != r.start_time_seconds() + kDay;
    if (bad_request) return absl::InternalError("bad request");
    absl::StatusOr<AnytimeInterval> ci =
        AnytimePrevalenceInterval(channel, counts[d + 1].first, counts[d + 1].second,
                                  r.confidence_level(), r.anytime_tuned_reports());
    if (!ci.ok()) return ci.status();
    v1::Prevalence p;
    p.set_estimate_unbiased(ci->center);
    p.set_ci_lower(ci->lower);
    p.set_ci_upper(ci->upper);
    p.mutable_yes_no();
    return p;
  };
  // The same rules without spending: every day at the rule's full level.
  const auto unspent = [&](int64_t d, bool* above_fired, bool* change_fired) {
    const double half = BonferroniLevel(0.95, 2);
    absl::StatusOr<AnytimeInterval> cur = AnytimePrevalenceInterval(
        channel, counts[d + 1].first, counts[d + 1].second, 0.95, above.tuned_reports);
    absl::StatusOr<AnytimeInterval> cur2 = AnytimePrevalenceInterval(
        channel, counts[d + 1].first, counts[d + 1].second, half, above.tuned_reports);
    absl::StatusOr<AnytimeInterval> prev = AnytimePrevalenceInterval(
        channel, counts[d].first, counts[d].second, half, above.tuned_reports);
    *above_fired |= cur.ok() && cur->lower > 0.3;
    *change_fired |= cur2.ok() && prev.ok() &&
                     (cur2->lower - prev->upper >= 0.01 || cur2->upper - prev->lower <= -0.01);
  };
  int above_runs = 0, change_runs = 0, unspent_above_runs = 0, unspent_change_runs = 0;
  int rise_above_runs = 0, rise_change_runs = 0;
  int64_t last_window = 0;
  double last_level = 0;
  for (int run = 0; run < kRuns; ++run) {
    AlertMonitor monitor({above, change}, query, nullptr, nullptr);
    counts.assign(1, {yes_of(kLooks * kPerLook, 0.3), kLooks * kPerLook});
    bool above_fired = false, change_fired = false, unspent_above = false, unspent_change = false;
    bool rise_above = false, rise_change = false;
    for (int64_t d = 0; d <= kFlatDays; ++d) {
      const double pi = d < kFlatDays ? 0.3 : 0.7;
      counts.emplace_back(0, 0);
      for (int look = 1; look <= kLooks; ++look) {
        counts[d + 1].first += yes_of(kPerLook, pi);
        counts[d + 1].second += kPerLook;
        monitor.EvaluateAll(absl::FromUnixSeconds(kStart + d * kDay + look * 3600));
        const std::vector<AlertState> s = monitor.States();
        if (d < kFlatDays) {
          above_fired |= s[0].firing;
          change_fired |= s[1].firing;
          unspent(d, &unspent_above, &unspent_change);
        } else {
          rise_above |= s[0].firing;
          rise_change |= s[1].firing;
          last_window = s[0].window_number;
          last_level = s[0].window_level;
        }
      }
    }
    above_runs += above_fired;
    change_runs += change_fired;
    unspent_above_runs += unspent_above;
    unspent_change_runs += unspent_change;
    rise_above_runs += rise_above;
    rise_change_runs += rise_change;
  }
  EXPECT_FALSE(bad_request);
  const int64_t allowance = BinomialUpperAllowance(kRuns, 0.05, 1e-6);
  std::printf(
      "flat fleet, %d runs of %d days x %d looks: false firing runs with spending: above %d, "
      "changed_by %d; without (full alpha each day): above %d, changed_by %d (allowance %lld); "
      "the rise on window %lld (level %.9f) fired above in %d runs, changed_by in %d\n",
      kRuns, kFlatDays, kLooks, above_runs, change_runs, unspent_above_runs, unspent_change_runs,
      static_cast<long long>(allowance), static_cast<long long>(last_window), last_level,
      rise_above_runs, rise_change_runs);
  EXPECT_LE(above_runs, allowance);
  EXPECT_LE(change_runs, allowance);
  // Without spending the false alarms add up across the days, far beyond alpha.
  EXPECT_GT(unspent_above_runs, allowance);
  EXPECT_EQ(above_runs, 1);
  EXPECT_EQ(change_runs, 0);
  EXPECT_EQ(unspent_above_runs, 96);
  EXPECT_EQ(unspent_change_runs, 0);
  EXPECT_EQ(last_window, kFlatDays + 1);
  EXPECT_EQ(rise_above_runs, kRuns);
  EXPECT_EQ(rise_change_runs, kRuns);
}

// A one-shot HTTP listener on 127.0.0.1: accepts one connection, reads one request with its
// Content-Length body, answers `status`, and notifies.
class TestListener {
 public:
  explicit TestListener(int status) : status_(status) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(fd_, 1);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TestListener() {
    thread_.join();
    close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  absl::Notification& received() { return received_; }
  const std::string& request() const { return request_; }

 private:
  void Serve() {
    const int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char buf[4096];
    size_t want = std::string::npos;
    while (want == std::string::npos || request_.size() < want) {
      const ssize_t got = read(c, buf, sizeof(buf));
      if (got <= 0) break;
      request_.append(buf, static_cast<size_t>(got));
      const size_t end = request_.find("\r\n\r\n");
      if (end != std::string::npos && want == std::string::npos) {
        const size_t cl = request_.find("Content-Length: ");
        want = end + 4 +
               (cl != std::string::npos && cl < end ? std::stoul(request_.substr(cl + 16)) : 0);
      }
    }
    const std::string reply = "HTTP/1.1 " + std::to_string(status_) +
                              " X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
    (void)!write(c, reply.data(), reply.size());
    close(c);
    received_.Notify();
  }

  int status_;
  int fd_ = -1;
  int port_ = 0;
  std::string request_;
  absl::Notification received_;
  std::thread thread_;
};

TEST_F(AlertMonitorTest, TheWebhookReachesAListener) {
  TestListener listener(204);
  absl::Status posted;
  AlertMonitor monitor({Above("crash_high", 0.3)}, Query(), nullptr, [&](const std::string& json) {
    posted = PostJson(listener.url(), json, absl::Seconds(10));
  });
  Send(2000, 0.7, kStart + 3600);
  EXPECT_EQ(monitor.EvaluateAll(absl::FromUnixSeconds(kStart + 3601)), 1);
  ASSERT_TRUE(listener.received().WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_TRUE(posted.ok()) << posted;
  EXPECT_THAT(listener.request(), HasSubstr("POST /hook HTTP/1.1"));
  EXPECT_THAT(listener.request(), HasSubstr("Content-Type: application/json"));
  EXPECT_THAT(listener.request(), HasSubstr("\"rule\":\"crash_high\""));
  EXPECT_THAT(listener.request(), HasSubstr("\"firing\":true"));
}

TEST(WebhookTest, RefusalsAndBadUrlsAreErrors) {
  TestListener listener(500);
  absl::Status s = PostJson(listener.url(), "{}", absl::Seconds(10));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("answered HTTP 500"));
  EXPECT_EQ(PostJson("ftp://x", "{}", absl::Seconds(1)).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace deniable::server
