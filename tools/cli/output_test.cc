#include "tools/cli/output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/common/heavy_hitters_estimate.h"
#include "deniable/common/shuffle.h"
#include "deniable/convert/design_advice.h"
#include "deniable/convert/heavy_hitters_advice.h"
#include "tools/cli/cli_kinds.h"
#include "tools/cli/heavy_hitters_output.h"

namespace deniable::tools {
namespace {
namespace output_test {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Design TwoCoinWire() {
  v1::Design d;
  d.set_a(0.75);
  d.set_b(0.25);
  d.set_epsilon(std::log(3.0));
  return d;
}

// A description with the central figures DescribeDesign gives for n reports (design_advisor.cc).
v1::DesignDescription Described(const v1::Design& design, double gamma, int64_t n) {
  v1::DesignDescription d;
  *d.mutable_design() = design;
  const double eps0 =
      design.epsilon_infinite() ? std::numeric_limits<double>::infinity() : design.epsilon();
  const CentralPrivacy c = AmplifiedEpsilon(eps0, gamma, n, kDefaultCentralDelta).value();
  d.set_central_epsilon(c.epsilon);
  d.set_central_delta(c.delta);
  d.set_central_n(c.n);
  d.set_central_note(c.note);
  return d;
}

// `deniable design --n=2532` for the two-coin scheme: the Chile replay's central epsilon.
// `deniable alerts` (issue 41): each rule's state from ListAlerts.
TEST(FormatAlertsTest, ShowsFiringIntervalWindowAndStatus) {
  v1::ListAlertsResponse r;
  EXPECT_EQ(FormatAlerts(r), "no alert rules\n");
  v1::AlertState* a = r.add_alerts();
  a->set_rule("crash_high");
  a->set_metric("crash");
  a->set_quantity("prevalence");
  a->set_kind(v1::AlertState::ABOVE);
  a->set_threshold(0.2);
  a->set_window_seconds(86400);
  a->set_level(0.95);
  a->set_firing(true);
  a->set_evaluated(true);
  a->set_status("ok");
  a->set_estimate(0.61);
  a->set_lower(0.43);
  a->set_upper(0.79);
  a->set_window_start_seconds(1700006400);
  a->set_window_number(3);
  a->set_window_level(0.99662292);
  a->set_evaluated_at_seconds(1700028001);
  a->set_changed_at_seconds(1700028001);
  v1::AlertState* b = r.add_alerts();
  b->set_rule("moved");
  b->set_metric("vote");
  b->set_quantity("share:Y");
  b->set_kind(v1::AlertState::CHANGED_BY);
  b->set_threshold(0.05);
  b->set_window_seconds(604800);
  b->set_level(0.99);
  b->set_status("not evaluated yet");
  EXPECT_EQ(FormatAlerts(r),
            "crash_high (crash, prevalence above 0.2, level 0.95, windows of 86400 s): FIRING\n"
            "  estimate 0.61, anytime interval [0.43, 0.79] at level 0.99662292 (window 3, from "
            "2023-11-15T00:00:00Z)\n"
            "  status: ok; evaluated 2023-11-15T06:00:01Z; changed 2023-11-15T06:00:01Z\n"
            "moved (vote, share:Y changed by 0.05, level 0.99, windows of 604800 s): not firing\n"
            "  no interval\n"
            "  status: not evaluated yet; evaluated never; changed never\n");
}

TEST(CentralPrivacyLineTest, ShowsTheAmplifiedEpsilonBesideTheLocalOne) {
  const std::string line = CentralPrivacyLine(Described(TwoCoinWire(), 0.5, 2532));
  EXPECT_THAT(line, HasSubstr("0.1023 nats at delta = 1e-06 for n = 2532 reports"));
  EXPECT_THAT(line, HasSubstr("local 1.0986 nats per report"));
  EXPECT_EQ(CentralPrivacyLine(v1::DesignDescription()), "");  // no --n
}

TEST(CentralPrivacyLineTest, SaysWhyWhenNotAmplified) {
  EXPECT_THAT(CentralPrivacyLine(Described(TwoCoinWire(), 0.5, 20)),
              HasSubstr("= local epsilon: no amplification"));
  v1::Design tails;
  tails.set_a(1.0);
  tails.set_b(0.5);
  tails.set_epsilon(std::numeric_limits<double>::infinity());
  tails.set_epsilon_infinite(true);
  EXPECT_THAT(CentralPrivacyLine(Described(tails, 0.0, 2532)), HasSubstr("infinite"));
}

TEST(FormatPrevalenceTest, PrintsTheCentralEpsilonOnlyWhenSet) {
  v1::Prevalence p;
  p.set_n(2532);
  p.set_epsilon(std::log(3.0));
  *p.mutable_design() = TwoCoinWire();
  EXPECT_THAT(FormatPrevalence(p), Not(HasSubstr("central epsilon")));
  p.set_central_n(2532);
  p.set_central_epsilon(0.10232);
  p.set_central_delta(1e-6);
  p.set_central_method("shuffle_numerical");
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("central epsilon      0.1023 nats at delta = 1e-06 "
                                             "over these 2532 reports"));
  p.set_central_method("local_only");
  p.set_central_epsilon(std::log(3.0));
  p.set_central_note("the reports span 3 reporting periods");
  EXPECT_THAT(FormatPrevalence(p),
              HasSubstr("central epsilon      = local epsilon 1.0986 nats: the reports span 3"));
}

// The Chile windows of issue 29: 34.32 % then 32.66 %. The wire's difference is first - second
// (+1.66 points); the CLI printed it unsigned as a rise. It prints second minus first.
TEST(FormatDifferenceTest, StatesSecondMinusFirstWithSignUnitAndWords) {
  v1::Difference d;
  d.mutable_first()->set_metric("uses_drugs");
  d.mutable_first()->set_estimate_unbiased(0.3432);
  d.mutable_first()->set_n(1266);
  d.mutable_second()->set_metric("uses_drugs");
  d.mutable_second()->set_estimate_unbiased(0.3266);
  d.mutable_second()->set_n(1266);
  d.set_difference(0.0166);
  d.set_standard_error(0.0133);
  d.set_ci_lower(-0.0095);
  d.set_ci_upper(0.0427);
  d.set_confidence_level(0.95);
  d.mutable_first()->set_start_time_seconds(1794909600);  // 2026-11-17T10:00:00Z
  d.mutable_first()->set_end_time_seconds(1795514400);
  d.mutable_second()->set_start_time_seconds(1795514400);
  d.mutable_second()->set_end_time_seconds(1796119200);
  const std::string out = FormatDifference(d);
  // Issue 38: the interval [-4.27, +0.95] covers 0, which the words say (as the dashboard's);
  // the windows the command resolved are printed.
  EXPECT_THAT(out, HasSubstr("change               -1.66 percentage points, second minus first: "
                             "fell by 1.66 points (the interval includes 0: no clear change) "
                             "(standard error 1.33)"));
  EXPECT_THAT(out, HasSubstr("95 % interval        [-4.27, +0.95] percentage points (Wald)"));
  EXPECT_THAT(out, HasSubstr("first window         2026-11-17T10:00:00Z to 2026-11-24T10:00:00Z "
                             "(UTC)\nsecond window        2026-11-24T10:00:00Z to "
                             "2026-12-01T10:00:00Z (UTC)\n"));
  EXPECT_THAT(out, Not(HasSubstr("+1.66")));
  d.set_ci_lower(0.0005);  // an interval of the change [-4.27, -0.05]: a clear fall
  EXPECT_THAT(FormatDifference(d), HasSubstr("fell by 1.66 points (standard error 1.33)"));
}

TEST(FormatDifferenceTest, ChangeWordsNameTheDirection) {
  EXPECT_EQ(ChangeWords(0.0166), "rose by 1.66 points");
  EXPECT_EQ(ChangeWords(-0.0166), "fell by 1.66 points");
  EXPECT_EQ(ChangeWords(0.00001), "unchanged (0.00 points)");
  EXPECT_EQ(ChangeWords(-0.0374, -0.33, 0.26),
            "fell by 3.74 points (the interval includes 0: no clear change)");
  EXPECT_EQ(ChangeWords(-0.0374, -0.06, -0.01), "fell by 3.74 points");
  EXPECT_EQ(ChangeWords(0.0, -0.01, 0.01), "unchanged (0.00 points)");
}

// Issue 38: `--start=-7d` resolves to a time the output now shows (RFC 3339 UTC); no end is said.
TEST(FormatPrevalenceTest, PrintsTheTimeRange) {
  v1::Prevalence p;
  p.set_metric("m");
  *p.mutable_design() = TwoCoinWire();
  p.set_n(10);
  p.set_start_time_seconds(1795514400);
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("metric               m\ntime range           "
                                             "2026-11-24T10:00:00Z to the latest report (no "
                                             "end)\n"));
  p.set_end_time_seconds(1796119200);
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("time range           2026-11-24T10:00:00Z to "
                                             "2026-12-01T10:00:00Z (UTC)\n"));
  p.set_start_time_seconds(0);
  p.set_end_time_seconds(0);
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("time range           the first report (no start) to "
                                             "the latest report (no end)\n"));
}

// A bucket or group below min_reports: the word "suppressed", never an estimate of 0.
TEST(FormatSeriesTest, PrintsSuppressedBucketsAsSuppressed) {
  v1::Series series;
  series.set_metric("m");
  series.set_bucket(v1::DAY);
  v1::Prevalence* small = series.add_buckets();
  small->set_start_time_seconds(86400);
  small->set_n(3);
  small->set_suppressed(true);
  const std::string out = FormatSeries(series);
  EXPECT_THAT(out, HasSubstr("1970-01-02 00:00            3 suppressed"));
  EXPECT_THAT(out, Not(HasSubstr("0.00 %")));

  v1::Prevalence p;
  p.set_n(500);
  *p.mutable_design() = TwoCoinWire();
  v1::Prevalence* g = p.add_groups();
  g->set_group_value("X");
  g->set_n(3);
  g->set_suppressed(true);
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("X                   3 suppressed"));
}

// Issue 26: a whole-window estimate says what n counts, in words, and plan answers in devices.
TEST(OutputTest, WindowEstimateAndPlanSayWhatIsCounted) {
  v1::Prevalence p;
  p.set_n(2000);
  *p.mutable_design() = TwoCoinWire();
  p.set_estimand("active_device_prevalence");
  p.set_window("week");
  p.set_windows(1);
  p.set_explanation("2000 devices active in the week of 2026-11-02, each counted once");
  const std::string out = FormatPrevalence(p);
  EXPECT_THAT(out, HasSubstr("the share among the devices active in the week, each counted once"));
  EXPECT_THAT(out, HasSubstr("counted              2000 devices active in the week of "
                             "2026-11-02, each counted once\n"));
  v1::SurveyPlan plan;
  *plan.mutable_design() = TwoCoinWire();
  plan.set_reports_needed(4269);
  plan.set_window("week");
  plan.set_reports_per_device(7);
  plan.set_devices_needed(4269);
  plan.set_reports_sent(29883);
  EXPECT_THAT(FormatPlan(plan), HasSubstr("devices needed              4269 active in the week, "
                                          "each counted once (they send 29883 reports"));
}

// A survey question (create-metric --reporting_period=once) keeps 86400 in
// reporting_period_seconds for older readers; the CLI says "once" (issue 38), not "86400 s".
TEST(FormatMetric, ReportingOnceSaysOnce) {
  v1::Metric m;
  m.set_name("chile_age");
  *m.mutable_design() = TwoCoinWire();
  m.set_reporting_period_seconds(86400);
  m.set_reporting_once(true);
  EXPECT_THAT(FormatMetric(m), HasSubstr("report period   once (one report per device ever)\n"));
  EXPECT_THAT(FormatMetric(m), Not(HasSubstr("86400")));
  m.set_reporting_once(false);
  EXPECT_THAT(FormatMetric(m), HasSubstr("report period   86400 s, "));
}

// A heavy-hitters metric as create-metric --design=heavy_hitters prints it (issue 40): what it
// memoizes, its epsilon per report with the odds ratio, and the posterior range at 50 %.
v1::Metric HeavyHittersMetric() {
  v1::Metric m;
  m.set_name("crash_sig");
  m.set_reporting_period_seconds(86400);
  m.set_randomization(v1::MEMOIZED);
  v1::Design* d = m.mutable_design();
  d->mutable_parameters()->mutable_heavy_hitters()->set_epsilon(std::log(3.0));
  d->mutable_parameters()->mutable_heavy_hitters()->set_max_length(16);
  d->mutable_parameters()->mutable_heavy_hitters()->set_salt(7);
  d->set_version(1);
  d->set_a(0.75);
  d->set_b(0.25);
  d->set_epsilon(std::log(3.0));
  return m;
}

// The kind's output hooks, as main registers them (RegisterHeavyHittersCommands).
void RegisterHeavyHittersOutput() {
  static const bool registered = [] {
    CliKind kind;
    AddHeavyHittersOutput(&kind);
    RegisterCliKind(std::move(kind));
    return true;
  }();
  (void)registered;
}

TEST(FormatMetric, HeavyHittersStatesItsPrivacyAndWhatItMemoizes) {
  RegisterHeavyHittersOutput();
  const std::string out = FormatMetric(HeavyHittersMetric());
  EXPECT_THAT(out, Not(HasSubstr("memoized bit")));
  EXPECT_THAT(out, HasSubstr("86400 s, memoized report per distinct value\n"));
  // eps = ln 3: e^eps = 3; at a prior of 1/2 the posterior is 3/4 or 1/4.
  EXPECT_THAT(out, HasSubstr("privacy         1.0986 nats per report (e^eps = 3.0000)"));
  EXPECT_THAT(out, HasSubstr("P(holds it | report) is between 25.00 % and 75.00 %"));
  EXPECT_THAT(out, HasSubstr("deniable design --metric=crash_sig"));
}

TEST(FormatDesignDescription, HeavyHittersPosteriorAndCentralEpsilon) {
  RegisterHeavyHittersOutput();
  v1::DescribeDesignRequest request;
  request.set_prior(0.1);
  request.set_n(100000);
  const v1::DesignDescription d =
      DescribeStoredDesign(request, HeavyHittersMetric().design(), {}).value();
  const std::string out = FormatDesignDescription(d);
  EXPECT_THAT(out, HasSubstr("1.0986 nats per report (e^eps = 3.0000)"));
  // 0.1 * 3/4 / (0.1 * 3/4 + 0.9 * 1/4) = 25 %; 0.1 * 1/4 / (0.1 * 1/4 + 0.9 * 3/4) = 1/28.
  EXPECT_THAT(out, HasSubstr("P(holds v | report), max    25.00 %"));
  EXPECT_THAT(out, HasSubstr("P(holds v | report), min    3.57 %"));
  EXPECT_THAT(out, Not(HasSubstr("P(yes | report yes)")));
  const CentralPrivacy c =
      AmplifiedEpsilon(std::log(3.0), std::exp(-std::log(3.0)), 100000, kDefaultCentralDelta)
          .value();
  EXPECT_THAT(out, HasSubstr(absl::StrFormat("central epsilon             %.4f nats at delta = "
                                             "1e-06 for n = 100000 reports",
                                             c.epsilon)));
}

// A kind registered through cli_kinds.h prints its own lines where the shared output asks it,
// and leaves the other kinds' metrics and designs alone.
TEST(CliKinds, FormatMetricAndDescriptionAskTheRegisteredKinds) {
  CliKind kind;
  kind.metric_lines = [](const v1::Metric& m) -> std::optional<CliMetricLines> {
    if (m.name() != "seam_kind") return std::nullopt;
    return CliMetricLines{.memoized = "memoized seam",
                          .fresh = "fresh seam",
                          .privacy = "privacy         seam line\n"};
  };
  kind.describe = [](const v1::DesignDescription& d) -> std::optional<std::string> {
    if (d.prior() != 0.125) return std::nullopt;
    return std::string("seam description\n");
  };
  RegisterCliKind(std::move(kind));
  v1::Metric m = HeavyHittersMetric();
  m.clear_design();
  *m.mutable_design() = TwoCoinWire();
  m.set_name("seam_kind");
  std::string out = FormatMetric(m);
  EXPECT_THAT(out, HasSubstr("86400 s, memoized seam\n"));
  EXPECT_THAT(out, HasSubstr("\nprivacy         seam line\ntime precision"));
  m.set_randomization(v1::FRESH_PER_PERIOD);
  EXPECT_THAT(FormatMetric(m), HasSubstr("86400 s, fresh seam\n"));
  m.set_name("other");
  out = FormatMetric(m);
  EXPECT_THAT(out, HasSubstr("86400 s, fresh bit each period\n"));
  EXPECT_THAT(out, Not(HasSubstr("seam")));
  v1::DesignDescription d;
  *d.mutable_design() = TwoCoinWire();
  d.set_prior(0.125);
  EXPECT_EQ(FormatDesignDescription(d), "seam description\n");
  d.set_prior(0.5);
  EXPECT_THAT(FormatDesignDescription(d), HasSubstr("P(yes | report yes)"));
}

// `deniable plan --design=heavy_hitters --epsilon=4 --find_share=0.05` (issue 40): the common
// planner's devices, the target and the assumption.
TEST(FormatHeavyHittersPlan, StatesDevicesNeededForTheShare) {
  v1::DesignParameters design;
  design.mutable_heavy_hitters()->set_epsilon(4);
  const HeavyHittersPlan plan = PlanHeavyHitters(design, 0.05, 0.9, 0, 0).value();
  HeavyHittersDesign d;
  d.epsilon = 4;
  const int64_t devices = HeavyHittersDevicesNeeded(d, 0.05, 0.9, {}).value();
  const std::string out = FormatHeavyHittersPlan(plan);
  EXPECT_THAT(
      out, HasSubstr(absl::StrFormat("devices needed              %d, one value each\n", devices)));
  EXPECT_THAT(out, HasSubstr("a value held by 5.00 % of devices, found by `top` with probability "
                             "0.90 (simultaneous level 95 %, 64 prefixes per level)"));
  EXPECT_THAT(out, HasSubstr("eps = 4.0000 nats per report, max_length = 32 bytes"));
  EXPECT_THAT(out, HasSubstr("section 11.4"));
}

// `top` and `frequency` answers (issue 40): the central epsilon of their reports by the shuffle
// bound with the clone probability e^-eps.
TEST(HeavyHittersCentralLine, IsTheShuffleBoundOfTheAnswersReports) {
  v1::TopValues top;
  top.set_epsilon(4);
  top.set_devices(100000);
  const CentralPrivacy c =
      AmplifiedEpsilon(4, std::exp(-4.0), 100000, kDefaultCentralDelta).value();
  EXPECT_THAT(HeavyHittersCentralLine(top),
              HasSubstr(absl::StrFormat("central epsilon %.4f nats at delta = 1e-06 over these "
                                        "100000 reports",
                                        c.epsilon)));
  EXPECT_THAT(HeavyHittersCentralLine(top), HasSubstr("0.1700 nats"));
  top.set_devices(20);
  EXPECT_THAT(HeavyHittersCentralLine(top), HasSubstr("central epsilon = local epsilon 4.0000"));
  top.set_devices(0);
  EXPECT_EQ(HeavyHittersCentralLine(top), "");
}

TEST(HeavyHittersWindowLine, NamesTheWindowAndHowDevicesWereCounted) {
  EXPECT_THAT(HeavyHittersWindowLine("day", 1796169600),
              HasSubstr("counted: the devices active in the day 2026-12-02 (UTC), each once"));
  EXPECT_THAT(HeavyHittersWindowLine("week", 1795996800), HasSubstr("the week of 2026-11-30"));
  EXPECT_THAT(HeavyHittersWindowLine("month", 1793491200), HasSubstr("the month of 2026-11 "));
}

// Issue 41: an anytime interval is labelled so, not by the fixed-n method it replaced.
TEST(FormatPrevalenceTest, NamesAnAnytimeInterval) {
  v1::Prevalence p;
  p.set_metric("m");
  p.set_n(100);
  p.set_confidence_level(0.95);
  p.set_method(v1::WILSON);
  p.mutable_yes_no();
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("(WILSON)"));
  p.set_interval_kind(v1::ANYTIME);
  EXPECT_THAT(FormatPrevalence(p), HasSubstr("(ANYTIME)"));
  EXPECT_THAT(FormatPrevalence(p), Not(HasSubstr("(WILSON)")));
}

}  // namespace output_test
}  // namespace
}  // namespace deniable::tools
