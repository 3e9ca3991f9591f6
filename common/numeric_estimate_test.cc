// The numeric estimators (numeric.h): the mean's mapping of the prevalence machinery, the
// histogram per bucket, the quantiles' band, the planner, design versions, and a seeded
// simulation of the histogram's and quantiles' simultaneous coverage.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/common/numeric_mechanism.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace numeric_estimate_test {

using ::testing::HasSubstr;

NumericDesign MeanDesign(double eps) {
  return NumericDesign::Create(NumericMechanism::kOneBitMean, eps, {10.0, 110.0}, 0).value();
}

NumericDesign Histogram(double eps, int k, int d) {
  return NumericDesign::EqualWidth(NumericMechanism::kDBitFlip, eps, 0.0, 100.0, k, d).value();
}

TEST(EstimateMeanTest, MapsThePrevalenceOfTheBit) {
  const NumericDesign d = MeanDesign(std::log(3.0));
  const Channel c = Design::SymmetricEpsilon(std::log(3.0)).value().channel();
  const MeanEstimate e = EstimateMean(d, 1000, 600, 0.95, IntervalMethod::kWilson).value();
  const PrevalenceEstimate p = EstimatePrevalence(c, 600, 1000).value();
  const PrevalenceInterval i =
      MakePrevalenceInterval(c, 600, 1000, 0.95, IntervalMethod::kWilson).value();
  // ybar = 0.6: (0.6 * 4 - 1) / 2 = 0.7, mean = 10 + 100 * 0.7 = 80 (DKY17's estimator).
  EXPECT_NEAR(e.mean, 80.0, 1e-12);
  EXPECT_NEAR(e.mean, 10.0 + 100.0 * p.unbiased, 1e-12);
  EXPECT_NEAR(e.standard_error, 100.0 * p.standard_error, 1e-12);
  EXPECT_NEAR(e.ci_lower, 10.0 + 100.0 * i.lower, 1e-12);
  EXPECT_NEAR(e.ci_upper, 10.0 + 100.0 * i.upper, 1e-12);
  EXPECT_NEAR(e.total, 80.0 * 1000, 1e-9);
  EXPECT_NEAR(e.total_ci_upper, e.ci_upper * 1000, 1e-9);
  EXPECT_NEAR(e.total_standard_error, e.standard_error * 1000, 1e-9);
}

TEST(EstimateMeanTest, MeanFromShareOfOneVersionIsEstimateMean) {
  const NumericDesign d = MeanDesign(1.5);
  const auto m = MechanismFor(d);
  MechanismEstimateOptions options;
  options.method = IntervalMethod::kJeffreys;
  const MechanismEstimate share = m->Estimate(std::vector<int64_t>{250, 140}, options).value();
  const MeanEstimate got = MeanFromShare(d, 250, share.coordinates[0], IntervalMethod::kJeffreys);
  const MeanEstimate want = EstimateMean(d, 250, 140, 0.95, IntervalMethod::kJeffreys).value();
  EXPECT_NEAR(got.mean, want.mean, 1e-12);
  EXPECT_NEAR(got.standard_error, want.standard_error, 1e-12);
  EXPECT_NEAR(got.ci_lower, want.ci_lower, 1e-12);
  EXPECT_NEAR(got.ci_upper, want.ci_upper, 1e-12);
  EXPECT_NEAR(got.total_ci_upper, want.total_ci_upper, 1e-9);
  EXPECT_EQ(got.ones, 140);
}

TEST(EstimateMeanTest, RefusesBadInput) {
  const NumericDesign d = MeanDesign(1.0);
  EXPECT_THAT(EstimateMean(d, 0, 0, 0.95, IntervalMethod::kWilson).status().message(),
              HasSubstr("n"));
  EXPECT_THAT(EstimateMean(d, 10, 11, 0.95, IntervalMethod::kWilson).status().message(),
              HasSubstr("ones"));
  EXPECT_THAT(EstimateMean(d, 10, 5, 1.0, IntervalMethod::kWilson).status().message(),
              HasSubstr("confidence_level"));
  EXPECT_EQ(
      EstimateMean(Histogram(1.0, 4, 0), 10, 5, 0.95, IntervalMethod::kWilson).status().code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST(EstimateHistogramTest, EachBucketIsABinaryChannel) {
  const NumericDesign d = Histogram(2.0, 4, 2);
  const Channel c = DBitFlipChannel(d);
  // n = 100 reports, s = (50, 50, 60, 40), y = (30, 20, 25, 10).
  const std::vector<int64_t> counters = {100, 50, 50, 60, 40, 30, 20, 25, 10};
  const HistogramEstimate h =
      EstimateHistogram(d, counters, 0.9, IntervalMethod::kWilson, SimultaneousMethod::kSidak)
          .value();
  ASSERT_EQ(h.buckets.size(), 4u);
  EXPECT_NEAR(h.per_bucket_level, std::pow(0.9, 0.25), 1e-15);
  double consistent = 0;
  for (size_t j = 0; j < 4; ++j) {
    const BucketEstimate& b = h.buckets[j];
    const PrevalenceEstimate p = EstimatePrevalence(c, counters[5 + j], counters[1 + j]).value();
    EXPECT_EQ(b.lower, 25.0 * static_cast<double>(j));
    EXPECT_EQ(b.sampled, counters[1 + j]);
    EXPECT_EQ(b.unbiased, p.unbiased);
    EXPECT_EQ(b.standard_error, p.standard_error);
    const PrevalenceInterval joint =
        MakePrevalenceInterval(c, counters[5 + j], counters[1 + j], h.per_bucket_level,
                               IntervalMethod::kWilson)
            .value();
    EXPECT_EQ(b.simultaneous_lower, joint.lower);
    EXPECT_EQ(b.simultaneous_upper, joint.upper);
    EXPECT_LE(b.simultaneous_lower, b.ci_lower);
    consistent += b.consistent;
    EXPECT_GE(b.consistent, 0.0);
  }
  EXPECT_NEAR(consistent, 1.0, 1e-12);
}

TEST(EstimateHistogramTest, ABucketNobodySampledIsUnknown) {
  const NumericDesign d = Histogram(2.0, 3, 1);
  const HistogramEstimate h =
      EstimateHistogram(d, std::vector<int64_t>{5, 3, 2, 0, 2, 1, 0}, 0.95, IntervalMethod::kWilson,
                        SimultaneousMethod::kBonferroni)
          .value();
  EXPECT_TRUE(std::isnan(h.buckets[2].unbiased));
  EXPECT_EQ(h.buckets[2].ci_lower, 0.0);
  EXPECT_EQ(h.buckets[2].simultaneous_upper, 1.0);
}

TEST(EstimateHistogramTest, RefusesBadCounters) {
  const NumericDesign d = Histogram(2.0, 2, 0);
  const auto refuse = [&](std::vector<int64_t> c) {
    return std::string(
        EstimateHistogram(d, c, 0.95, IntervalMethod::kWilson, SimultaneousMethod::kSidak)
            .status()
            .message());
  };
  EXPECT_THAT(refuse({10, 10, 10, 5}), HasSubstr("counters"));
  EXPECT_THAT(refuse({10, 11, 10, 5, 5}), HasSubstr("s_0"));
  EXPECT_THAT(refuse({10, 10, 10, 5, 11}), HasSubstr("y_1"));
  EXPECT_EQ(EstimateHistogram(MeanDesign(1.0), std::vector<int64_t>{1, 1}, 0.95,
                              IntervalMethod::kWilson, SimultaneousMethod::kSidak)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(EstimateQuantilesTest, PointInsideItsBucketAndIntervalOnEdges) {
  const NumericDesign d = Histogram(std::log(9.0), 4, 0);  // a = 3: (3/4, 1/4)
  // Shares (0.1, 0.4, 0.3, 0.2) exactly: y_j / n = 1/4 + f_j / 2.
  const int64_t n = 10000;
  const std::vector<int64_t> counters = {n, n, n, n, n, 3000, 4500, 4000, 3500};
  const HistogramEstimate h =
      EstimateHistogram(d, counters, 0.95, IntervalMethod::kWilson, SimultaneousMethod::kSidak)
          .value();
  const std::vector<double> levels = {0.05, 0.5, 0.9};
  const std::vector<QuantileEstimate> q = EstimateQuantiles(d, h, levels).value();
  ASSERT_EQ(q.size(), 3u);
  EXPECT_NEAR(q[0].value, 12.5, 1e-9);  // half of bucket 0's 0.1
  EXPECT_NEAR(q[1].value, 50.0, 1e-9);  // 0.1 + 0.4 = 0.5 at edge 50
  EXPECT_NEAR(q[2].value, 87.5, 1e-9);  // 0.8 + half of 0.2
  for (const QuantileEstimate& e : q) {
    EXPECT_LE(e.ci_lower, e.value);
    EXPECT_GE(e.ci_upper, e.value);
  }
  EXPECT_EQ(q[0].ci_lower, 0.0);
  EXPECT_EQ(q[0].ci_upper, 25.0);
  EXPECT_EQ(q[2].ci_lower, 75.0);
  EXPECT_EQ(q[2].ci_upper, 100.0);
  EXPECT_THAT(EstimateQuantiles(d, h, std::vector<double>{0.5, 1.0}).status().message(),
              HasSubstr("levels[1]"));
}

TEST(NumericPlanTest, MeanOnTheValueScaleAndEveryBucket) {
  const auto mean = MechanismFor(MeanDesign(std::log(3.0)));
  PlanTarget value;
  value.value_half_width = 5.0;  // +/- 5 on [10, 110]: +/- 0.05 on the share scale
  PlanTarget share;
  share.half_width = 0.05;
  EXPECT_EQ(mean->Plan(value).value().reports_needed, mean->Plan(share).value().reports_needed);
  // Worst case: z^2 / (4 h^2 (a - b)^2) = 1.96^2 / (4 * 0.0025 * 0.25) = 1536.6 -> 1537.
  EXPECT_EQ(mean->Plan(share).value().reports_needed_worst_case, 1537);

  const NumericDesign d = Histogram(2.0, 10, 5);
  const auto flip = MechanismFor(d);
  PlanTarget buckets;
  buckets.half_width = 0.05;
  const MechanismPlan p = flip->Plan(buckets).value();
  const Channel c = DBitFlipChannel(d);
  const double z = TwoSidedNormalQuantile(std::pow(0.95, 0.1));
  // m reports per bucket give the half-width; with d = 5 of k = 10 a bucket is sampled by
  // Binomial(n, 1/2) reports, and n is the fewest with 10 P(s_j < m) <= 5 % (issue 38).
  const int64_t m =
      static_cast<int64_t>(std::ceil(z * z * 0.25 / (0.05 * 0.05 * (c.a - c.b) * (c.a - c.b))));
  auto below = [&](int64_t n) {  // P(Binomial(n, 1/2) < m)
    double sum = 0.0;
    for (int64_t s = 0; s < m; ++s) {
      sum += std::exp(std::lgamma(n + 1.0) - std::lgamma(s + 1.0) - std::lgamma(n - s + 1.0) -
                      static_cast<double>(n) * std::log(2.0));
    }
    return sum;
  };
  EXPECT_LE(10 * below(p.reports_needed_worst_case), 0.05);
  EXPECT_GT(10 * below(p.reports_needed_worst_case - 1), 0.05);
  EXPECT_GT(p.reports_needed_worst_case, 2 * m);  // more than m on average
  buckets.assumed_shares = std::vector<double>(10, 0.1);
  EXPECT_LT(flip->Plan(buckets).value().reports_needed, p.reports_needed_worst_case);
  buckets.assumed_shares = {0.5};
  EXPECT_THAT(flip->Plan(buckets).status().message(), HasSubstr("assumed_shares"));
}

// Issue 38: a dBitFlip plan with d < k meets its half-width with the stated probability. A
// bucket is sampled by s_j ~ Binomial(n, d / k) reports; a plan for their mean n d / k missed
// the half-width whenever a binding bucket fell short, about half the time each. Seeded replays
// of the plan: two buckets hold half the values each (lambda = 1/2, where the plan's bound is
// tight), every report randomized by the mechanism, the Wald intervals of the plan.
TEST(NumericPlanTest, DBitFlipPlanMeetsItsHalfWidthInSeededReplays) {
  const NumericDesign d = Histogram(2.0, 8, 2);
  const auto m = MechanismFor(d);
  const double h = 0.05, level = 0.95;
  const std::vector<double> truth = {0.5, 0, 0, 0, 0, 0, 0, 0.5};
  absl::StatusOr<HistogramPlan> plan =
      PlanHistogramSurvey(d, h, level, SimultaneousMethod::kSidak, truth);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const Channel c = DBitFlipChannel(d);
  const double z = TwoSidedNormalQuantile(plan->per_bucket_level);
  const int64_t per_bucket =
      static_cast<int64_t>(std::ceil(z * z * 0.25 / (h * h * (c.a - c.b) * (c.a - c.b))));
  const int64_t on_average = per_bucket * 8 / 2;  // the old plan: n d / k = m on average
  EXPECT_GT(plan->reports_needed, on_average);
  EXPECT_LT(plan->reports_needed, on_average * 11 / 10);
  // Replays: how many of `replays` have every bucket's simultaneous half-width <= h.
  const int replays = 40;
  auto missed = [&](int64_t n, uint64_t seed) {
    std::mt19937_64 gen(seed);
    int misses = 0;
    for (int r = 0; r < replays; ++r) {
      std::vector<int64_t> counters(static_cast<size_t>(m->Layout().length()), 0);
      for (int64_t i = 0; i < n; ++i) {
        const int level_of = i % 2 == 0 ? 0 : 7;
        m->Validate(m->Randomize(level_of, gen).value(), "r", "m").value().AddTo(counters);
      }
      const HistogramEstimate e =
          EstimateHistogram(d, counters, level, IntervalMethod::kWald, SimultaneousMethod::kSidak)
              .value();
      bool met = true;
      for (const BucketEstimate& b : e.buckets) {
        met = met && (b.simultaneous_upper - b.simultaneous_lower) / 2 <= h;
      }
      misses += met ? 0 : 1;
    }
    return misses;
  };
  const int now = missed(plan->reports_needed, 20261202);
  const int before = missed(on_average, 20261202);
  std::printf(
      "d_bit_flip k=8 d=2 eps=2 h=0.05: plan %lld reports, %d of %d replays missed h; "
      "n d / k = m on average (%lld reports): %d of %d missed\n",
      static_cast<long long>(plan->reports_needed), now, replays,
      static_cast<long long>(on_average), before, replays);
  // 95 % promised: at most 2 of 40 (the union bound gives about 1 %, 0.5 expected).
  EXPECT_LE(now, 2);
  EXPECT_GE(before, 10);  // the old plan's sizing misses most of the time
  // d = k: every report samples every bucket, so n = m.
  const NumericDesign all = Histogram(2.0, 8, 8);
  EXPECT_EQ(
      PlanHistogramSurvey(all, h, level, SimultaneousMethod::kSidak, truth).value().reports_needed,
      per_bucket);
}

TEST(NumericVersionsTest, HistogramsOfTheSameEdgesCombine) {
  const auto v1 = MechanismFor(Histogram(2.0, 3, 3));
  const auto v2 = MechanismFor(Histogram(1.0, 3, 1));
  const std::vector<VersionCounters> parts = {{v1, {100, 100, 100, 100, 70, 40, 30}},
                                              {v2, {60, 20, 40, 0, 12, 20, 0}}};
  const MechanismEstimate e = EstimateVersions(parts, {}, VersionCombination::kByReports).value();
  ASSERT_EQ(e.coordinates.size(), 3u);
  EXPECT_EQ(e.n, 160);
  EXPECT_EQ(e.coordinates[0].trials, 120);  // 100 + 20 reports sampled bucket 0
  EXPECT_EQ(e.coordinates[2].trials, 100);  // version 2 never sampled bucket 2
  const MechanismEstimate only = v1->Estimate(parts[0].counters, {}).value();
  EXPECT_NEAR(e.coordinates[2].unbiased, only.coordinates[2].unbiased, 1e-12);
  // By reports: bucket 0 weighs version 1's estimate 100/120.
  const MechanismEstimate second = v2->Estimate(parts[1].counters, {}).value();
  EXPECT_NEAR(e.coordinates[0].unbiased,
              (100.0 * only.coordinates[0].unbiased + 20.0 * second.coordinates[0].unbiased) / 120,
              1e-12);
  const auto other_edges = MechanismFor(
      NumericDesign::Create(NumericMechanism::kDBitFlip, 2.0, {0, 10, 50, 100}, 0).value());
  const std::vector<VersionCounters> mixed = {parts[0], {other_edges, parts[0].counters}};
  EXPECT_THAT(EstimateVersions(mixed, {}, VersionCombination::kByReports).status().message(),
              HasSubstr("parts[1]"));
}

TEST(NumericVersionsTest, MeansCombineOnTheShareScale) {
  const auto v1 = MechanismFor(MeanDesign(1.0));
  const auto v2 = MechanismFor(MeanDesign(2.0));
  const std::vector<VersionCounters> parts = {{v1, {100, 60}}, {v2, {300, 150}}};
  const MechanismEstimate e = EstimateVersions(parts, {}, VersionCombination::kByReports).value();
  ASSERT_EQ(e.coordinates.size(), 1u);
  EXPECT_EQ(e.n, 400);
  EXPECT_EQ(e.coordinates[0].trials, 400);
}

// Seeded simulation: n devices with fixed values, R surveys through Randomize -> Validate ->
// counters -> EstimateHistogram -> EstimateQuantiles; the share of surveys whose simultaneous
// bucket intervals all cover the true shares, and whose quantile intervals cover the true
// quantiles (inf{x : F_n(x) >= q}).
TEST(NumericQuantileCoverageTest, SeededSimulation) {
  struct Case {
    double eps;
    int k, d, n;
  };
  const int surveys = 200;
  const double level = 0.95;
  // Three binomial standard errors of a 95% coverage from 200 surveys: 0.046.
  const double margin = 3.0 * std::sqrt(level * (1.0 - level) / surveys);
  const std::vector<double> levels = {0.5, 0.9, 0.99};
  std::printf("seeded coverage (%d surveys, 95%% level, margin %.3f):\n", surveys, margin);
  std::printf("%6s %3s %3s %6s %10s %8s %8s %8s %8s\n", "eps", "k", "d", "n", "histogram", "p50",
              "p90", "p99", "all_q");
  std::mt19937_64 gen(20261128);
  for (const Case& c : std::vector<Case>{{std::log(3.0), 10, 10, 1000},
                                         {2.0, 10, 3, 2000},
                                         {1.0, 5, 5, 500},
                                         {std::log(3.0), 20, 20, 3000}}) {
    const NumericDesign d = Histogram(c.eps, c.k, c.d);
    const auto m = MechanismFor(d);
    // Skewed values: x = 100 u^2.
    std::vector<double> values;
    std::vector<int> level_of;
    std::vector<double> truth(static_cast<size_t>(c.k), 0.0);
    for (int i = 0; i < c.n; ++i) {
      const double u = (i + 0.5) / c.n;
      values.push_back(100.0 * u * u);
      level_of.push_back(LevelOf(d, values.back(), 0.0));
      truth[static_cast<size_t>(level_of.back())] += 1.0 / c.n;
    }
    std::vector<double> true_quantile;
    for (double q : levels) {
      true_quantile.push_back(values[static_cast<size_t>(std::ceil(q * c.n)) - 1]);
    }
    int histogram_covered = 0, all_covered = 0;
    std::vector<int> covered(levels.size(), 0);
    for (int s = 0; s < surveys; ++s) {
      std::vector<int64_t> counters(static_cast<size_t>(m->Layout().length()), 0);
      for (int i = 0; i < c.n; ++i) {
        const WireAnswer w = m->Randomize(level_of[static_cast<size_t>(i)], gen).value();
        m->Validate(w, "r", "m").value().AddTo(counters);
      }
      const HistogramEstimate h =
          EstimateHistogram(d, counters, level, IntervalMethod::kWilson, SimultaneousMethod::kSidak)
              .value();
      bool all = true;
      for (size_t j = 0; j < truth.size(); ++j) {
        all = all && h.buckets[j].simultaneous_lower <= truth[j] + 1e-12 &&
              truth[j] <= h.buckets[j].simultaneous_upper + 1e-12;
      }
      histogram_covered += all ? 1 : 0;
      const std::vector<QuantileEstimate> q = EstimateQuantiles(d, h, levels).value();
      bool every = true;
      for (size_t i = 0; i < levels.size(); ++i) {
        const bool in = q[i].ci_lower <= true_quantile[i] && true_quantile[i] <= q[i].ci_upper;
        covered[i] += in ? 1 : 0;
        every = every && in;
      }
      all_covered += every ? 1 : 0;
    }
    const auto share = [&](int x) { return static_cast<double>(x) / surveys; };
    std::printf("%6.3f %3d %3d %6d %10.3f %8.3f %8.3f %8.3f %8.3f\n", c.eps, c.k, c.d, c.n,
                share(histogram_covered), share(covered[0]), share(covered[1]), share(covered[2]),
                share(all_covered));
    EXPECT_GE(share(histogram_covered), level - margin);
    EXPECT_GE(share(all_covered), level - margin);
  }
}

}  // namespace numeric_estimate_test
}  // namespace
}  // namespace deniable
