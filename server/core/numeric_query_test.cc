// Queries of numeric metrics (issue 28): 1BitMean's mean and total, dBitFlip's histogram and
// quantiles, per group, per series bucket and as differences, with the figures computed here from
// the formulas of docs/statistics.md section 9 and common/numeric.h.
#include <cmath>
#include <string>
#include <vector>

#include "deniable/common/confidence_sequence.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/convert/interval_method_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace numeric_query_test {

using ::testing::HasSubstr;

constexpr int64_t kDay = 86400;
constexpr int64_t kNow = 1'700'006'400;  // a UTC midnight (19676 days)
constexpr int64_t kDay1 = kNow - 2 * kDay;
constexpr int64_t kDay2 = kNow - kDay;

class NumericQueryTest : public ::testing::Test {
 protected:
  NumericQueryTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        query_(&registry_, &storage_, QueryOptions{.default_min_reports = 50}) {}

  void Create(const std::string& name, double lo, double hi, double epsilon,
              v1::NumericMechanism mechanism, int buckets = 0, int d = 0) {
    v1::CreateMetricRequest request;
    request.set_name(name);
    request.mutable_range()->set_lo(lo);
    request.mutable_range()->set_hi(hi);
    request.mutable_range()->set_unit("s");
    v1::Numeric* n = request.mutable_design()->mutable_numeric();
    n->set_mechanism(mechanism);
    n->set_epsilon(epsilon);
    n->set_buckets(static_cast<uint32_t>(buckets));
    n->set_sampled_buckets(static_cast<uint32_t>(d));
    absl::StatusOr<v1::Metric> created = registry_.Create(request);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  v1::Report NewReport(const std::string& metric, int64_t time, const std::string& region) {
    v1::Report r;
    r.set_metric(metric);
    r.set_design_version(1);
    std::string id(16, '\0');
    for (int b = 0; b < 4; ++b) id[b] = static_cast<char>((next_id_ >> (8 * b)) & 0xff);
    ++next_id_;
    r.set_report_id(id);
    r.set_event_time_seconds(time);
    if (!region.empty()) (*r.mutable_labels())["region"] = region;
    return r;
  }

  // `n` 1BitMean reports of which `ones` have bit 1.
  void StoreBits(const std::string& metric, int n, int ones, int64_t time,
                 const std::string& region = "") {
    v1::SubmitReportsRequest request;
    for (int i = 0; i < n; ++i) {
      v1::Report r = NewReport(metric, time, region);
      r.set_bit(i < ones ? 1 : 0);
      *request.add_reports() = r;
    }
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->accepted(), static_cast<uint32_t>(n)) << response->ShortDebugString();
  }

  v1::GetPrevalenceRequest Request(const std::string& metric, int64_t start, int64_t end) {
    v1::GetPrevalenceRequest r;
    r.set_metric(metric);
    r.set_start_time_seconds(start);
    r.set_end_time_seconds(end);
    return r;
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery query_;
  uint64_t next_id_ = 1;
};

// mean = lo + m ((ybar (e^eps + 1) - 1) / (e^eps - 1)), its SE m sqrt(ybar (1 - ybar) / n) / (a -
// b) with a - b = (e^eps - 1)/(e^eps + 1); total = mean n. A group below min_reports is suppressed.
TEST_F(NumericQueryTest, OneBitMeanServesTheMeanAndTotalFromTheFormula) {
  Create("session", 10, 130, std::log(3.0), v1::ONE_BIT_MEAN);
  StoreBits("session", 180, 120, kDay1, "a");
  StoreBits("session", 20, 10, kDay1, "b");
  v1::GetPrevalenceRequest request = Request("session", kDay1, kDay1 + kDay);
  request.set_group_by("region");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(p->has_numeric());
  const v1::NumericEstimate& num = p->numeric();
  const double e = 3.0, m = 120.0, n = 200.0, ybar = 130.0 / 200.0;
  const double mean = 10 + m * (ybar * (e + 1) - 1) / (e - 1);  // 106
  EXPECT_NEAR(mean, 106.0, 1e-12);
  EXPECT_NEAR(num.mean(), mean, 1e-9);
  const double se = m * std::sqrt(ybar * (1 - ybar) / n) / ((e - 1) / (e + 1));
  EXPECT_NEAR(num.mean_standard_error(), se, 1e-9);
  EXPECT_NEAR(num.mean_ci_lower(), 10 + m * p->ci_lower(), 1e-9);
  EXPECT_NEAR(num.mean_ci_upper(), 10 + m * p->ci_upper(), 1e-9);
  EXPECT_LT(num.mean_ci_lower(), mean);
  EXPECT_GT(num.mean_ci_upper(), mean);
  EXPECT_NEAR(num.total(), mean * n, 1e-6);
  EXPECT_NEAR(num.total_standard_error(), se * n, 1e-6);
  EXPECT_NEAR(num.total_ci_upper(), num.mean_ci_upper() * n, 1e-6);
  EXPECT_EQ(num.devices(), 200);
  EXPECT_EQ(num.mechanism(), "one_bit_mean");
  EXPECT_EQ(num.unit(), "s");
  EXPECT_EQ(num.lo(), 10);
  EXPECT_EQ(num.hi(), 130);
  EXPECT_EQ(num.buckets_size(), 0);
  EXPECT_EQ(num.estimand(), "period_mean");
  EXPECT_EQ(p->groups(0).numeric().estimand(), "period_mean");
  EXPECT_EQ(p->groups(1).numeric().estimand(), "");  // suppressed: no estimate
  // The bit's yes/no figures stay: the share of (x - lo) / (hi - lo).
  EXPECT_EQ(p->yes_count(), 130);
  EXPECT_NEAR(p->estimate_unbiased(), 0.8, 1e-12);
  // The same figures as common/numeric.h's EstimateMean on the one version's counts.
  std::shared_ptr<const MetricInfo> metric = *registry_.Find("session");
  absl::StatusOr<IntervalMethod> method = MethodFromProto(p->method());
  ASSERT_TRUE(method.ok());
  absl::StatusOr<MeanEstimate> direct =
      EstimateMean(*metric->current().numeric, 200, 130, 0.95, *method);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_NEAR(direct->mean, num.mean(), 1e-9);
  EXPECT_NEAR(direct->ci_lower, num.mean_ci_lower(), 1e-9);
  EXPECT_NEAR(direct->ci_upper, num.mean_ci_upper(), 1e-9);
  // Groups: a is served, b (20 < 50 reports) only its size.
  ASSERT_EQ(p->groups_size(), 2);
  const double mean_a = 10 + m * ((120.0 / 180.0) * (e + 1) - 1) / (e - 1);
  EXPECT_NEAR(p->groups(0).numeric().mean(), mean_a, 1e-9);
  EXPECT_TRUE(p->groups(1).suppressed());
  EXPECT_TRUE(std::isnan(p->groups(1).numeric().mean()));
  EXPECT_EQ(p->groups(1).numeric().devices(), 20);
}

// Over two reporting periods the mean is the n_t / N weighted mean of the periods' means; the
// series serves each day's; the difference of two days is the difference of their means.
TEST_F(NumericQueryTest, PeriodsSeriesAndDifferenceOfMeans) {
  Create("session", 0, 60, std::log(3.0), v1::ONE_BIT_MEAN);
  StoreBits("session", 100, 70, kDay1);
  StoreBits("session", 300, 150, kDay2);
  const auto day_mean = [](double ones, double n) {
    return 60 * ((ones / n) * 4 - 1) / 2;  // e^eps = 3
  };
  const double m1 = day_mean(70, 100), m2 = day_mean(150, 300);
  absl::StatusOr<v1::Prevalence> both = query_.Get(Request("session", kDay1, kNow));
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->periods(), 2);
  EXPECT_NEAR(both->numeric().mean(), 0.25 * m1 + 0.75 * m2, 1e-9);
  EXPECT_EQ(both->numeric().devices(), 400);

  v1::GetSeriesRequest series;
  series.set_metric("session");
  series.set_start_time_seconds(kDay1);
  series.set_end_time_seconds(kNow);
  series.set_bucket(v1::DAY);
  absl::StatusOr<v1::Series> s = query_.Series(series);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->buckets_size(), 2);
  EXPECT_NEAR(s->buckets(0).numeric().mean(), m1, 1e-9);
  EXPECT_NEAR(s->buckets(1).numeric().mean(), m2, 1e-9);

  v1::GetDifferenceRequest difference;
  difference.mutable_first()->set_metric("session");
  difference.mutable_first()->set_start_time_seconds(kDay1);
  difference.mutable_first()->set_end_time_seconds(kDay2);
  difference.mutable_second()->set_metric("session");
  difference.mutable_second()->set_start_time_seconds(kDay2);
  difference.mutable_second()->set_end_time_seconds(kNow);
  absl::StatusOr<v1::Difference> d = query_.Difference(difference);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->difference(), m1 - m2, 1e-9);  // in seconds, not on [-1, 1]
  EXPECT_NEAR(m1 - m2, 24.0, 1e-9);             // 54 - 30
  const double se = std::hypot(d->first().numeric().mean_standard_error(),
                               d->second().numeric().mean_standard_error());
  EXPECT_NEAR(d->standard_error(), se, 1e-12);
  EXPECT_NEAR(d->ci_upper(), m1 - m2 + 1.959963984540054 * se, 1e-6);
}

// dBitFlip: bucket j's share (y_j / s_j - 1/(a+1)) / ((a-1)/(a+1)) among the s_j reports that
// sampled it; the served buckets and quantiles equal common/numeric.h's on the counter vector.
TEST_F(NumericQueryTest, DBitFlipServesTheHistogramAndQuantiles) {
  Create("load", 0, 100, std::log(9.0), v1::D_BIT_FLIP, 4, 2);  // a = e^(eps/2) = 3
  const std::vector<std::pair<uint32_t, uint32_t>> pairs = {{0, 1}, {0, 2}, {0, 3},
                                                            {1, 2}, {1, 3}, {2, 3}};
  const std::vector<int> ones_in_ten = {7, 4, 3, 2};
  std::vector<int64_t> counters(1 + 2 * 4, 0);  // [n, s_0..s_3, y_0..y_3]
  v1::SubmitReportsRequest request;
  for (int i = 0; i < 240; ++i) {
    v1::Report r = NewReport("load", kDay1, "");
    const auto [j0, j1] = pairs[static_cast<size_t>(i % 6)];
    ++counters[0];
    for (uint32_t j : {j0, j1}) {
      const bool bit = ((i / 6) * 7 + static_cast<int>(j) * 3) % 10 < ones_in_ten[j];
      r.mutable_numeric()->add_buckets(j);
      r.mutable_numeric()->add_bits(bit);
      ++counters[1 + j];
      if (bit) ++counters[5 + j];
    }
    *request.add_reports() = r;
  }
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->accepted(), 240u) << response->ShortDebugString();

  v1::GetPrevalenceRequest query = Request("load", kDay1, kDay1 + kDay);
  query.add_quantiles(0.5);
  query.add_quantiles(0.9);
  absl::StatusOr<v1::Prevalence> p = query_.Get(query);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->n(), 240);
  EXPECT_EQ(p->yes_count(), 0);
  EXPECT_EQ(p->estimate_unbiased(), 0);
  const v1::NumericEstimate& num = p->numeric();
  EXPECT_EQ(num.mechanism(), "d_bit_flip");
  EXPECT_EQ(p->estimand(), "period_prevalence");
  EXPECT_EQ(num.estimand(), "period_distribution");
  EXPECT_TRUE(std::isnan(num.mean()));
  EXPECT_EQ(num.devices(), 240);
  ASSERT_EQ(num.buckets_size(), 4);
  const double a = 3.0;
  for (int j = 0; j < 4; ++j) {
    const v1::NumericBucket& b = num.buckets(j);
    EXPECT_EQ(b.lower(), 25.0 * j);
    EXPECT_EQ(b.upper(), 25.0 * (j + 1));
    EXPECT_EQ(b.sampled(), counters[1 + static_cast<size_t>(j)]);
    EXPECT_EQ(b.sampled(), 120);
    EXPECT_EQ(b.ones(), counters[5 + static_cast<size_t>(j)]);
    const double share = static_cast<double>(b.ones()) / static_cast<double>(b.sampled());
    EXPECT_NEAR(b.estimate_unbiased(), (share - 1 / (a + 1)) / ((a - 1) / (a + 1)), 1e-12) << j;
    EXPECT_LE(b.simultaneous_lower(), b.ci_lower());
    EXPECT_GE(b.simultaneous_upper(), b.ci_upper());
  }
  EXPECT_EQ(num.simultaneous_method(), "sidak");
  EXPECT_NEAR(num.per_bucket_level(), std::pow(0.95, 0.25), 1e-12);
  // The same as common/numeric.h's estimators on the one counter vector.
  std::shared_ptr<const MetricInfo> metric = *registry_.Find("load");
  absl::StatusOr<IntervalMethod> method = MethodFromProto(p->method());
  ASSERT_TRUE(method.ok());
  absl::StatusOr<HistogramEstimate> h = EstimateHistogram(
      *metric->current().numeric, counters, 0.95, *method, SimultaneousMethod::kSidak);
  ASSERT_TRUE(h.ok()) << h.status();
  for (int j = 0; j < 4; ++j) {
    const BucketEstimate& want = h->buckets[static_cast<size_t>(j)];
    const v1::NumericBucket& got = num.buckets(j);
    EXPECT_NEAR(got.estimate_unbiased(), want.unbiased, 1e-12) << j;
    EXPECT_NEAR(got.estimate_consistent(), want.consistent, 1e-12) << j;
    EXPECT_NEAR(got.standard_error(), want.standard_error, 1e-12) << j;
    EXPECT_NEAR(got.ci_lower(), want.ci_lower, 1e-9) << j;
    EXPECT_NEAR(got.ci_upper(), want.ci_upper, 1e-9) << j;
    EXPECT_NEAR(got.simultaneous_lower(), want.simultaneous_lower, 1e-9) << j;
    EXPECT_NEAR(got.simultaneous_upper(), want.simultaneous_upper, 1e-9) << j;
  }
  const std::vector<double> levels = {0.5, 0.9};
  absl::StatusOr<std::vector<QuantileEstimate>> q =
      EstimateQuantiles(*metric->current().numeric, *h, levels);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(num.quantiles_size(), 2);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(num.quantiles(i).level(), levels[static_cast<size_t>(i)]);
    EXPECT_NEAR(num.quantiles(i).value(), (*q)[static_cast<size_t>(i)].value, 1e-9);
    EXPECT_NEAR(num.quantiles(i).ci_lower(), (*q)[static_cast<size_t>(i)].ci_lower, 1e-9);
    EXPECT_NEAR(num.quantiles(i).ci_upper(), (*q)[static_cast<size_t>(i)].ci_upper, 1e-9);
  }
  // No quantiles asked: 0.5, 0.9 and 0.99.
  absl::StatusOr<v1::Prevalence> defaults = query_.Get(Request("load", kDay1, kDay1 + kDay));
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  ASSERT_EQ(defaults->numeric().quantiles_size(), 3);
  EXPECT_EQ(defaults->numeric().quantiles(2).level(), 0.99);
}

// A whole day of a metric whose devices send window flags is estimated from the day's first
// reports (devices counted once, docs/statistics.md section 4.4): the mean of those alone.
TEST_F(NumericQueryTest, AWholeDayCountsEachDeviceOnce) {
  Create("session", 0, 60, std::log(3.0), v1::ONE_BIT_MEAN);
  v1::SubmitReportsRequest request;
  for (int i = 0; i < 150; ++i) {
    v1::Report r = NewReport("session", kDay1 + (i < 100 ? 0 : 3600), "");
    const bool first = i < 100;  // 100 devices' first reports, then 50 repeats of bit 1
    r.set_bit(first ? (i < 70 ? 1 : 0) : 1);
    r.mutable_window_firsts()->set_day(first);
    *request.add_reports() = r;
  }
  ASSERT_TRUE(ingestor_.Submit(request).ok());
  absl::StatusOr<v1::Prevalence> p = query_.Get(Request("session", kDay1, kDay2));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->estimand(), "active_device_prevalence");      // kept for older readers
  EXPECT_EQ(p->numeric().estimand(), "active_device_mean");  // issue 38: a mean, not a prevalence
  EXPECT_EQ(p->numeric().devices(), 100);
  EXPECT_NEAR(p->numeric().mean(), 60 * ((0.7 * 4 - 1) / 2), 1e-9);  // 54, e^eps = 3
  EXPECT_NEAR(p->numeric().total(), 5400, 1e-6);
}

// dBitFlip across design versions and days: a bucket's share combines versions and periods as a
// yes/no prevalence does; the difference of two days is per bucket; a small group is suppressed.
TEST_F(NumericQueryTest, DBitFlipVersionsDifferenceAndSuppressedGroups) {
  Create("load", 0, 100, std::log(9.0), v1::D_BIT_FLIP, 2);  // k = d = 2
  const auto store = [&](int n, int in_low, int64_t time, uint32_t version,
                         const std::string& region) {
    v1::SubmitReportsRequest request;
    for (int i = 0; i < n; ++i) {
      v1::Report r = NewReport("load", time, region);
      r.set_design_version(version);
      r.mutable_numeric()->add_buckets(0);
      r.mutable_numeric()->add_buckets(1);
      r.mutable_numeric()->add_bits(i < in_low);
      r.mutable_numeric()->add_bits(i >= in_low);
      *request.add_reports() = r;
    }
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->accepted(), static_cast<uint32_t>(n)) << response->ShortDebugString();
  };
  store(100, 75, kDay1, 1, "a");
  store(10, 5, kDay1, 1, "b");
  v1::AddDesignVersionRequest next;
  next.set_metric("load");
  next.mutable_design()->mutable_numeric()->set_mechanism(v1::D_BIT_FLIP);
  next.mutable_design()->mutable_numeric()->set_epsilon(std::log(16.0));  // a = 4
  next.mutable_design()->mutable_numeric()->set_buckets(2);
  ASSERT_TRUE(registry_.AddVersion(next).ok());
  store(200, 80, kDay2, 2, "a");

  // Per bucket and version: (y/s - 1/(a+1)) / ((a-1)/(a+1)).
  const auto share = [](double ones, double s, double a) {
    return (ones / s - 1 / (a + 1)) / ((a - 1) / (a + 1));
  };
  v1::GetPrevalenceRequest request = Request("load", kDay1, kNow);
  request.set_group_by("region");
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->periods(), 2);
  EXPECT_EQ(p->versions_size(), 2);
  EXPECT_EQ(p->n(), 310);
  const double day1 = share(80, 110, 3), day2 = share(80, 200, 4);  // bucket 0
  EXPECT_NEAR(p->numeric().buckets(0).estimate_unbiased(), (110 * day1 + 200 * day2) / 310, 1e-12);
  ASSERT_EQ(p->groups_size(), 2);
  EXPECT_FALSE(p->groups(0).suppressed());
  EXPECT_EQ(p->groups(0).numeric().buckets_size(), 2);
  EXPECT_TRUE(p->groups(1).suppressed());  // b: 10 < 50 reports
  EXPECT_EQ(p->groups(1).numeric().devices(), 10);
  EXPECT_EQ(p->groups(1).numeric().buckets_size(), 0);
  EXPECT_EQ(p->groups(1).numeric().mechanism(), "d_bit_flip");

  v1::GetDifferenceRequest difference;
  difference.mutable_first()->set_metric("load");
  difference.mutable_first()->set_start_time_seconds(kDay1);
  difference.mutable_first()->set_end_time_seconds(kDay2);
  difference.mutable_second()->set_metric("load");
  difference.mutable_second()->set_start_time_seconds(kDay2);
  difference.mutable_second()->set_end_time_seconds(kNow);
  absl::StatusOr<v1::Difference> d = query_.Difference(difference);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->difference(), 0);
  ASSERT_EQ(d->shares_size(), 2);
  EXPECT_EQ(d->shares(0).category(), "[0, 50)");
  EXPECT_EQ(d->shares(1).category(), "[50, 100)");
  EXPECT_NEAR(d->shares(0).difference(), day1 - day2, 1e-12);
  EXPECT_NEAR(d->shares(1).difference(), share(30, 110, 3) - share(120, 200, 4), 1e-12);
}

TEST_F(NumericQueryTest, BadQuantilesAndMixedDifferencesAreRefused) {
  Create("session", 0, 60, 1.0, v1::ONE_BIT_MEAN);
  v1::CreateMetricRequest yes_no;
  yes_no.set_name("crash");
  yes_no.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(registry_.Create(yes_no).ok());
  StoreBits("session", 100, 50, kDay1);
  v1::SubmitReportsRequest crashes;
  for (int i = 0; i < 100; ++i) {
    v1::Report r = NewReport("crash", kDay1, "");
    r.set_bit(i % 2);
    *crashes.add_reports() = r;
  }
  ASSERT_TRUE(ingestor_.Submit(crashes).ok());
  v1::GetPrevalenceRequest request = Request("session", kDay1, kNow);
  request.add_quantiles(0.5);
  request.add_quantiles(1.0);
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("quantiles[1]"));

  v1::GetDifferenceRequest difference;
  difference.mutable_first()->set_metric("session");
  difference.mutable_second()->set_metric("crash");
  absl::StatusOr<v1::Difference> d = query_.Difference(difference);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(d.status().message()), HasSubstr("second.metric"));
}

// Issue 41: interval = ANYTIME for numbers: 1BitMean's mean and total from its share's confidence
// sequence; dBitFlip's buckets on their s_j reports, Bonferroni over k, quantiles not served.
TEST_F(NumericQueryTest, AnytimeMeansAndBuckets) {
  Create("session", 10, 130, std::log(3.0), v1::ONE_BIT_MEAN);
  StoreBits("session", 1000, 600, kDay1);
  v1::GetPrevalenceRequest request = Request("session", kDay1 - kDay1 % kDay, kDay1 + 1);
  request.set_interval(v1::ANYTIME);
  absl::StatusOr<v1::Prevalence> p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  const Channel bit = (*registry_.Find("session"))->current().mechanism->ChannelOf(0);
  absl::StatusOr<AnytimeInterval> share = AnytimePrevalenceInterval(bit, 600, 1000, 0.95, 10000);
  ASSERT_TRUE(share.ok());
  EXPECT_EQ(p->interval_kind(), v1::ANYTIME);
  EXPECT_NEAR(p->numeric().mean_ci_lower(), 10 + 120 * share->lower, 1e-9);
  EXPECT_NEAR(p->numeric().mean_ci_upper(), 10 + 120 * share->upper, 1e-9);
  EXPECT_NEAR(p->numeric().total_ci_upper(), 1000 * (10 + 120 * share->upper), 1e-6);

  Create("load", 0, 100, std::log(9.0), v1::D_BIT_FLIP, 4, 2);
  const std::vector<std::pair<uint32_t, uint32_t>> pairs = {{0, 1}, {0, 2}, {0, 3},
                                                            {1, 2}, {1, 3}, {2, 3}};
  std::vector<int64_t> sampled(4, 0), ones(4, 0);
  v1::SubmitReportsRequest batch;
  for (int i = 0; i < 240; ++i) {
    v1::Report r = NewReport("load", kDay1, "");
    const auto [j0, j1] = pairs[static_cast<size_t>(i % 6)];
    for (uint32_t j : {j0, j1}) {
      const bool b = (i * 7 + static_cast<int>(j) * 3) % 10 < 4;
      r.mutable_numeric()->add_buckets(j);
      r.mutable_numeric()->add_bits(b);
      ++sampled[j];
      if (b) ++ones[j];
    }
    *batch.add_reports() = r;
  }
  ASSERT_TRUE(ingestor_.Submit(batch).ok());
  request = Request("load", kDay1 - kDay1 % kDay, kDay1 + 1);
  request.set_interval(v1::ANYTIME);
  p = query_.Get(request);
  ASSERT_TRUE(p.ok()) << p.status();
  const Mechanism& m = *(*registry_.Find("load"))->current().mechanism;
  const v1::NumericEstimate& num = p->numeric();
  ASSERT_EQ(num.buckets_size(), 4);
  EXPECT_EQ(num.quantiles_size(), 0);
  EXPECT_EQ(num.simultaneous_method(), "bonferroni");
  for (int j = 0; j < 4; ++j) {
    SCOPED_TRACE(j);
    EXPECT_EQ(num.buckets(j).sampled(), sampled[j]);
    absl::StatusOr<AnytimeInterval> alone =
        AnytimePrevalenceInterval(m.ChannelOf(4 + j), ones[j], sampled[j], 0.95, 10000);
    absl::StatusOr<AnytimeInterval> together =
        AnytimePrevalenceInterval(m.ChannelOf(4 + j), ones[j], sampled[j], 1 - 0.05 / 4, 10000);
    ASSERT_TRUE(alone.ok() && together.ok());
    EXPECT_NEAR(num.buckets(j).ci_lower(), alone->lower, 1e-12);
    EXPECT_NEAR(num.buckets(j).ci_upper(), alone->upper, 1e-12);
    EXPECT_NEAR(num.buckets(j).simultaneous_lower(), together->lower, 1e-12);
    EXPECT_NEAR(num.buckets(j).simultaneous_upper(), together->upper, 1e-12);
  }
  request.add_quantiles(0.5);
  EXPECT_EQ(query_.Get(request).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace numeric_query_test
}  // namespace
}  // namespace deniable::server
