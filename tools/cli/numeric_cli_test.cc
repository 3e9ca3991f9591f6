// The CLI for numeric metrics (issue 28): --range and the numeric design flags, --quantiles,
// reading a numeric column, and the tables of the mean, total, histogram and quantiles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "client/src/testing/fake_transport.h"
#include "tools/cli/numeric_flags.h"
#include "tools/cli/numeric_output.h"
#include "tools/cli/numeric_plan.h"
#include "tools/cli/output.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {
namespace {
namespace numeric_cli_test {

using ::testing::HasSubstr;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

TEST(NumericRangeFlagTest, ReadsLoHiAndUnit) {
  auto range = RangeFromFlagValues({.range = "18,90", .unit = "years"});
  ASSERT_TRUE(range.ok() && range->has_value()) << range.status();
  EXPECT_EQ((*range)->lo(), 18);
  EXPECT_EQ((*range)->hi(), 90);
  EXPECT_EQ((*range)->unit(), "years");
  EXPECT_EQ((**RangeFromFlagValues({.range = "-10.5, 1e3"})).lo(), -10.5);
  EXPECT_EQ(*RangeFromFlagValues({}), std::nullopt);
}

TEST(NumericRangeFlagTest, RefusesNamingTheFlag) {
  for (const char* bad : {"5", "1,2,3", "a,b", "10,10", "10,1", "0,inf", "nan,1", ""}) {
    if (std::string(bad).empty()) continue;
    auto range = RangeFromFlagValues({.range = bad});
    EXPECT_EQ(range.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(Message(range.status()), HasSubstr("--range")) << bad;
  }
  EXPECT_THAT(Message(RangeFromFlagValues({.unit = "years"}).status()), HasSubstr("--unit"));
  EXPECT_THAT(Message(RangeFromFlagValues({.range = "0,1", .unit = std::string(33, 'x')}).status()),
              HasSubstr("--unit"));
}

TEST(NumericDesignFlagsTest, NamesTheMechanismOrLetsTheServerChoose) {
  v1::NumericRange range;
  range.set_lo(0);
  range.set_hi(100);
  range.set_unit("ms");
  auto picked = NumericDesignFromFlagValues({.design = "numeric", .epsilon = 1.1}, range);
  ASSERT_TRUE(picked.ok() && picked->has_value()) << picked.status();
  EXPECT_EQ((*picked)->numeric().mechanism(), v1::NUMERIC_MECHANISM_UNSPECIFIED);
  EXPECT_EQ((*picked)->numeric().epsilon(), 1.1);
  EXPECT_EQ((*picked)->numeric().unit(), "ms");
  // --range alone with --epsilon means --design=numeric.
  auto implicit = NumericDesignFromFlagValues({.epsilon = 1, .range = "0,100"}, range);
  ASSERT_TRUE(implicit.ok() && implicit->has_value());
  auto mean = NumericDesignFromFlagValues({.epsilon = 1, .mechanism = "one_bit_mean"}, range);
  EXPECT_EQ((*mean)->numeric().mechanism(), v1::ONE_BIT_MEAN);
  auto histogram = NumericDesignFromFlagValues(
      {.epsilon = 1, .mechanism = "d_bit_flip", .buckets = 5, .sampled_buckets = 2}, range);
  ASSERT_TRUE(histogram.ok()) << histogram.status();
  EXPECT_EQ((*histogram)->numeric().mechanism(), v1::D_BIT_FLIP);
  EXPECT_EQ((*histogram)->numeric().buckets(), 5u);
  EXPECT_EQ((*histogram)->numeric().sampled_buckets(), 2u);
  auto edges = NumericDesignFromFlagValues(
      {.design = "d_bit_flip", .epsilon = 1, .bucket_edges = {"0", "10", "50", "100"}}, range);
  ASSERT_TRUE(edges.ok()) << edges.status();
  EXPECT_THAT((*edges)->numeric().bucket_edges(), testing::ElementsAre(0, 10, 50, 100));
  EXPECT_EQ((*edges)->numeric().buckets(), 3u);
  // add-version: no range of its own; the server takes the metric's.
  EXPECT_TRUE(NumericDesignFromFlagValues({.design = "numeric", .epsilon = 2}, std::nullopt).ok());
  // Nothing numeric asked: a yes/no or categorical design.
  EXPECT_EQ(*NumericDesignFromFlagValues({.design = "two_coin"}, std::nullopt), std::nullopt);
  EXPECT_EQ(*NumericDesignFromFlagValues({.epsilon = 1}, std::nullopt), std::nullopt);
}

TEST(NumericDesignFlagsTest, RefusesNamingTheFlag) {
  v1::NumericRange range;
  range.set_lo(0);
  range.set_hi(100);
  struct Case {
    NumericFlagValues flags;
    const char* flag;
  };
  const std::vector<Case> cases = {
      {{.design = "numeric"}, "--epsilon"},
      {{.design = "numeric", .epsilon = -1}, "--epsilon"},
      {{.design = "two_coin", .epsilon = 1, .range = "0,100"}, "--design"},
      {{.design = "k_rr", .epsilon = 1, .mechanism = "d_bit_flip"}, "--design"},
      {{.epsilon = 1, .mechanism = "median"}, "--mechanism"},
      {{.design = "one_bit_mean", .epsilon = 1, .mechanism = "d_bit_flip"}, "--mechanism"},
      {{.epsilon = 1, .buckets = 300}, "--buckets"},
      {{.epsilon = 1, .buckets = -2}, "--buckets"},
      {{.epsilon = 1, .buckets = 4, .bucket_edges = {"0", "100"}}, "--buckets"},
      {{.epsilon = 1, .bucket_edges = {"0"}}, "--bucket_edges"},
      {{.epsilon = 1, .bucket_edges = {"0", "x", "100"}}, "--bucket_edges"},
      {{.epsilon = 1, .bucket_edges = {"0", "50", "50", "100"}}, "--bucket_edges"},
      {{.epsilon = 1, .bucket_edges = {"5", "50", "100"}}, "--bucket_edges"},  // not from LO
      {{.epsilon = 1, .bucket_edges = {"0", "50", "90"}}, "--bucket_edges"},   // not to HI
      {{.epsilon = 1, .mechanism = "one_bit_mean", .sampled_buckets = 2}, "--sampled_buckets"},
      {{.epsilon = 1, .buckets = 4, .sampled_buckets = 5}, "--sampled_buckets"},
      {{.epsilon = 1, .sampled_buckets = -1}, "--sampled_buckets"},
  };
  for (const Case& c : cases) {
    auto design = NumericDesignFromFlagValues(c.flags, range);
    EXPECT_EQ(design.status().code(), absl::StatusCode::kInvalidArgument) << c.flag;
    EXPECT_THAT(Message(design.status()), HasSubstr(c.flag));
  }
}

TEST(QuantilesFlagTest, ReadsLevelsInTheOpenUnitInterval) {
  EXPECT_THAT(*QuantilesFromFlag({"0.5", "0.9", "0.99"}), testing::ElementsAre(0.5, 0.9, 0.99));
  EXPECT_TRUE(QuantilesFromFlag({})->empty());
  for (const char* bad : {"0", "1", "1.5", "-0.1", "half", "nan"}) {
    auto levels = QuantilesFromFlag({"0.5", bad});
    EXPECT_EQ(levels.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(Message(levels.status()), HasSubstr("--quantiles")) << bad;
    EXPECT_THAT(Message(levels.status()), HasSubstr("level 2 of 2")) << bad;
  }
}

TEST(NumericValueTest, KeepsFourSignificantDigitsOfTheRange) {
  EXPECT_EQ(NumericValue(38.3204, 72), "38.32");
  EXPECT_EQ(NumericValue(33971.01, 200000), "33971");
  EXPECT_EQ(NumericValue(0.123456, 1), "0.1235");
  EXPECT_EQ(NumericValue(-0.001, 72), "0.00");
  EXPECT_EQ(NumericValue(std::nan(""), 72), "n/a");
  EXPECT_EQ(QuantileName(0.5), "median (0.5)");
  EXPECT_EQ(QuantileName(0.9), "p90 (0.9)");
  EXPECT_EQ(QuantileName(0.999), "p99.9 (0.999)");
}

v1::Prevalence MeanPrevalence() {
  v1::Prevalence p;
  p.set_metric("chile_age");
  p.set_n(2531);
  p.set_yes_count(1250);
  p.set_yes_share(1250.0 / 2531);
  p.set_confidence_level(0.95);
  p.set_method(v1::WILSON);
  v1::Numeric* d = p.mutable_design()->mutable_parameters()->mutable_numeric();
  d->set_mechanism(v1::ONE_BIT_MEAN);
  d->set_epsilon(1.0986122886681098);
  d->add_bucket_edges(18);
  d->add_bucket_edges(90);
  d->set_buckets(1);
  d->set_unit("years");
  p.mutable_design()->set_version(1);
  v1::NumericEstimate* e = p.mutable_numeric();
  e->set_lo(18);
  e->set_hi(90);
  e->set_unit("years");
  e->set_mechanism("one_bit_mean");
  e->set_mean(38.871);
  e->set_mean_standard_error(1.4312);
  e->set_mean_ci_lower(36.05);
  e->set_mean_ci_upper(41.66);
  e->set_devices(2531);
  e->set_total(98382.5);
  e->set_total_standard_error(3622.4);
  e->set_total_ci_lower(91241.6);
  e->set_total_ci_upper(105441.5);
  return p;
}

v1::Prevalence HistogramPrevalence() {
  v1::Prevalence p;
  p.set_metric("chile_income_histogram");
  p.set_n(2449);
  p.set_confidence_level(0.95);
  v1::Numeric* d = p.mutable_design()->mutable_parameters()->mutable_numeric();
  d->set_mechanism(v1::D_BIT_FLIP);
  d->set_epsilon(1.0986122886681098);
  for (double edge : {0.0, 10000.0, 50000.0, 200000.0}) d->add_bucket_edges(edge);
  d->set_buckets(3);
  d->set_sampled_buckets(3);
  d->set_unit("pesos");
  v1::NumericEstimate* e = p.mutable_numeric();
  e->set_lo(0);
  e->set_hi(200000);
  e->set_unit("pesos");
  e->set_mechanism("d_bit_flip");
  e->set_simultaneous_method("sidak");
  e->set_per_bucket_level(0.983048);
  const double shares[] = {0.25, 0.5, 0.25};
  for (int j = 0; j < 3; ++j) {
    v1::NumericBucket* b = e->add_buckets();
    b->set_lower(d->bucket_edges(j));
    b->set_upper(d->bucket_edges(j + 1));
    b->set_sampled(2449);
    b->set_ones(1000 + j);
    b->set_estimate_unbiased(shares[j] + 0.01);
    b->set_estimate_consistent(shares[j]);
    b->set_standard_error(0.0377);
    b->set_ci_lower(shares[j] - 0.07);
    b->set_ci_upper(shares[j] + 0.08);
    b->set_simultaneous_lower(shares[j] - 0.09);
    b->set_simultaneous_upper(shares[j] + 0.1);
  }
  v1::NumericQuantile* median = e->add_quantiles();
  median->set_level(0.5);
  median->set_value(30000);
  median->set_ci_lower(12000);
  median->set_ci_upper(52000);
  return p;
}

TEST(NumericOutputTest, PrintsTheMeanAndTheTotalOverTheReportingDevices) {
  const std::string out = FormatPrevalence(MeanPrevalence());
  EXPECT_THAT(out, HasSubstr("one_bit_mean v1 (epsilon = 1.0986 nats, values in [18, 90] years)"));
  EXPECT_THAT(out, HasSubstr("mean                 38.87 years (standard error 1.43)\n"));
  EXPECT_THAT(out, HasSubstr("95 % interval        [36.05, 41.66] years (WILSON)\n"));
  EXPECT_THAT(out, HasSubstr("total                98382.50 years over 2531 reporting devices"));
  EXPECT_THAT(out, HasSubstr("[91241.60, 105441.50] years"));
  EXPECT_THAT(out, HasSubstr("reports (n)          2531\n"));
}

TEST(NumericOutputTest, PrintsTheHistogramWithSimultaneousIntervalsAndTheQuantiles) {
  const std::string out = FormatPrevalence(HistogramPrevalence());
  EXPECT_THAT(out, HasSubstr("d_bit_flip (k = 3 buckets, d = 3 sampled per report"));
  EXPECT_THAT(out, HasSubstr("sidak, each at 98.3048 %, all 3 together at 95 %"));
  EXPECT_THAT(out, HasSubstr("SIMULTANEOUS 95 %"));
  // The last bucket includes HI; each row: sampled, ones, unbiased, consistent, SE, intervals.
  EXPECT_THAT(out, HasSubstr("[10000, 50000)"));
  EXPECT_THAT(out, HasSubstr("[50000, 200000]"));
  EXPECT_THAT(
      out,
      testing::ContainsRegex(
          R"(\[10000, 50000\) +2449 +1001 +51.00 % +50.00 % +3.77 % +\[43.00 %, 58.00 %\] +\[41.00 %, 60.00 %\])"));
  EXPECT_THAT(out, testing::ContainsRegex(R"(median \(0.5\) +30000 \[12000, 52000\])"));
  EXPECT_THAT(out, Not(HasSubstr("mean ")));
}

// Issue 38: a numeric answer speaks of its mean (or median), first, not of a prevalence; and it
// prints the window it covers.
TEST(NumericOutputTest, TheMeanOrMedianComesFirstInValueWords) {
  v1::Prevalence mean = MeanPrevalence();
  mean.set_estimand("active_device_prevalence");
  mean.set_window("week");
  mean.set_start_time_seconds(1793491200);  // 2026-11-01
  mean.set_end_time_seconds(1794096000);
  std::string out = FormatPrevalence(mean);
  EXPECT_THAT(out, testing::StartsWith("metric               chile_age\n"
                                       "mean                 38.87 years"));
  EXPECT_THAT(out, HasSubstr("estimate of          the mean value among the devices active in "
                             "the week"));
  EXPECT_THAT(out, HasSubstr("time range           2026-11-01T00:00:00Z to "
                             "2026-11-08T00:00:00Z (UTC)\n"));
  EXPECT_THAT(out, Not(HasSubstr("prevalence")));
  EXPECT_THAT(out, Not(HasSubstr("share")));
  mean.set_estimand("mean_period_prevalence");
  mean.set_periods(7);
  EXPECT_THAT(FormatPrevalence(mean), HasSubstr("estimate of          the mean over 7"));
  const std::string histogram = FormatPrevalence(HistogramPrevalence());
  EXPECT_THAT(histogram, testing::ContainsRegex("^metric +[a-z_]+\nmedian +30000 pesos, 95 % "
                                                "interval \\[12000, 52000\\] pesos"));
  EXPECT_THAT(histogram, Not(HasSubstr("prevalence")));
}

TEST(NumericOutputTest, SeriesPrintsTheMeanPerBucketAndSuppressedBuckets) {
  v1::Series series;
  series.set_metric("chile_age");
  series.set_bucket(v1::DAY);
  v1::Prevalence* day = series.add_buckets();
  *day = MeanPrevalence();
  day->set_start_time_seconds(1793491200);  // 2026-11-01
  v1::Prevalence* few = series.add_buckets();
  few->set_start_time_seconds(1793577600);
  few->set_n(3);
  few->set_suppressed(true);
  *few->mutable_design() = day->design();
  const std::string out = FormatSeries(series);
  EXPECT_THAT(out, testing::ContainsRegex(R"(2026-11-01 00:00 +2531 +38.87 \[36.05, 41.66\])"));
  EXPECT_THAT(out, testing::ContainsRegex(R"(2026-11-02 00:00 +3 +suppressed)"));
  v1::Series histogram;
  *histogram.add_buckets() = HistogramPrevalence();
  EXPECT_THAT(FormatSeries(histogram), HasSubstr("median (0.5)"));
}

TEST(NumericOutputTest, DifferenceIsSecondMinusFirstInTheUnit) {
  v1::Difference d;
  *d.mutable_first() = MeanPrevalence();
  *d.mutable_second() = MeanPrevalence();
  d.mutable_second()->mutable_numeric()->set_mean(40.871);
  d.set_confidence_level(0.95);
  const std::string out = FormatDifference(d);
  // The interval covers 0: the words say so (issue 38), as the dashboard's.
  EXPECT_THAT(out, HasSubstr("change               +2.00 years, second minus first: rose by 2.00 "
                             "years (the interval includes 0: no clear change) (standard error "
                             "2.02)"));
  // z = 1.96, se = sqrt(2) * 1.4312 = 2.024: [2 - 3.967, 2 + 3.967].
  EXPECT_THAT(out, HasSubstr("95 % interval        [-1.97, +5.97] years (Wald)"));
  v1::Difference h;
  *h.mutable_first() = HistogramPrevalence();
  *h.mutable_second() = HistogramPrevalence();
  h.mutable_second()->mutable_numeric()->mutable_buckets(0)->set_estimate_unbiased(0.36);
  EXPECT_THAT(FormatDifference(h), HasSubstr("rose by 10.00 points"));
}

TEST(NumericTruthTest, ClipsLikeTheDeviceAndCountsBucketsAndQuantiles) {
  const v1::Prevalence p = HistogramPrevalence();
  const NumericTruth truth = ComputeNumericTruth({2500, 7500, 15000, 35000, 75000, 250000, -10}, p);
  EXPECT_EQ(truth.devices, 7);
  EXPECT_EQ(truth.clipped, 2);  // 250000 -> 200000, -10 -> 0
  EXPECT_DOUBLE_EQ(truth.mean, (0 + 2500 + 7500 + 15000 + 35000 + 75000 + 200000) / 7.0);
  EXPECT_THAT(truth.bucket_shares, testing::ElementsAre(3 / 7.0, 2 / 7.0, 2 / 7.0));
  EXPECT_THAT(truth.quantiles, testing::ElementsAre(15000));  // the 4th of 7
}

TEST(NumericOutputTest, ReplayPrintsTheEstimateBesideTheTruth) {
  ReplayResult result;
  result.devices = 2531;
  SurveySpec spec;
  spec.csv_path = "chile.csv";
  spec.value_column = "age";
  NumericTruth truth;
  truth.devices = 2531;
  truth.mean = 38.32;
  const std::string out = FormatNumericReplay(result, spec, MeanPrevalence(), truth);
  EXPECT_THAT(out,
              HasSubstr("server mean          38.87 years  95 % interval [36.05, 41.66] years"));
  EXPECT_THAT(out, HasSubstr("true mean            38.32 years  (of the 2531 replayed values"));
  EXPECT_THAT(out, HasSubstr("the interval covers the true mean"));
  truth.bucket_shares = {0.2, 0.5, 0.3};
  truth.quantiles = {60000};
  const std::string h = FormatNumericReplay(result, spec, HistogramPrevalence(), truth);
  EXPECT_THAT(h, testing::ContainsRegex(R"(\[0, 10000\) +26.00 % +\[16.00 %, 35.00 %\] +20.00 %)"));
  EXPECT_THAT(h, HasSubstr("cover 3 of the 3 true shares"));
  EXPECT_THAT(h, testing::ContainsRegex(
                     R"(median \(0.5\) +30000 +\[12000, 52000\] +60000 pesos \(missed\))"));
}

TEST(NumericSurveyTest, ReadsTheValueColumnAndRefusesWhatIsNotANumber) {
  char path[] = "/tmp/numeric_surveyXXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "region,age\nN,65\nS, 29.5 \nC,\n";
  SurveySpec spec;
  spec.csv_path = path;
  spec.value_column = "age";
  auto blank = ReadSurvey(spec);
  EXPECT_THAT(Message(blank.status()), HasSubstr("record 4 has a blank \"age\""));
  spec.blank = BlankAnswers::kSkip;
  int64_t skipped = 0;
  auto rows = ReadSurvey(spec, &skipped);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_TRUE((*rows)[0].has_value);
  EXPECT_EQ((*rows)[0].value, 65);
  EXPECT_EQ((*rows)[1].value, 29.5);
  EXPECT_EQ(skipped, 1);
  spec.blank = BlankAnswers::kNo;
  EXPECT_THAT(Message(ReadSurvey(spec).status()), HasSubstr("--blank=skip"));
  std::ofstream(path) << "region,age\nN,sixty\n";
  spec.blank = BlankAnswers::kRefuse;
  auto word = ReadSurvey(spec);
  EXPECT_THAT(Message(word.status()), HasSubstr("record 2: its \"age\" is not a finite number"));
  EXPECT_THAT(Message(word.status()), testing::Not(HasSubstr("sixty")));
  spec.value_column = "height";
  EXPECT_THAT(Message(ReadSurvey(spec).status()), HasSubstr("value_column"));
  std::remove(path);
}

// A survey file of `rows` ("region,age\n" and one line per value), removed at the end.
class ValueFile {
 public:
  explicit ValueFile(const std::vector<double>& values) {
    std::ofstream out(path_);
    out << "region,age\n";
    for (size_t i = 0; i < values.size(); ++i)
      out << (i % 2 ? "N" : "S") << "," << values[i] << "\n";
  }
  ~ValueFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_ = "/tmp/numeric_replay_" + std::to_string(getpid()) + ".csv";
};

TEST(ReplayNumericSurveyTest, EachRespondentSendsOneBitWhoseMeanEstimatesTheValues) {
  std::vector<double> values;  // 2000 values in [10, 90], one clipped below and one above
  for (int i = 0; i < 1998; ++i) values.push_back(18 + (i * 37) % 60);
  values.push_back(5);
  values.push_back(120);
  ValueFile file(values);
  SurveySpec spec;
  spec.csv_path = file.path();
  spec.value_column = "age";
  spec.label_columns = {"region"};
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec);
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto collector = std::make_shared<client::testing::FakeTransport>();
  collector->SetNumeric(v1::ONE_BIT_MEAN, std::log(3.0), {10, 90});
  std::mt19937_64 engine(28);  // seeded: the test is deterministic
  absl::BitGenRef gen(engine);
  absl::StatusOr<ReplayResult> result =
      ReplaySurvey(*rows, "m", collector, client::ReporterOptions(), &gen);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->devices, 2000);
  EXPECT_EQ(result->true_values, values);
  const std::vector<v1::Report> sent = collector->SentReports();
  ASSERT_EQ(sent.size(), 2000u);
  int64_t ones = 0;
  for (const v1::Report& r : sent) {
    EXPECT_FALSE(r.has_numeric());  // 1BitMean: the bit alone
    ones += r.bit();
  }
  EXPECT_EQ(sent[1].labels().at("region"), "N");
  // The debiased mean of the bits, lo + m (ybar (e^eps + 1) - 1) / (e^eps - 1), against the mean
  // of the clipped values, within 4 of its worst-case standard errors m C / (2 sqrt n) = 1.79.
  double truth = 0;
  for (double v : values) truth += std::clamp(v, 10.0, 90.0) / 2000;
  const double mean = 10 + 80 * (static_cast<double>(ones) / 2000 * 4 - 1) / 2;
  EXPECT_NEAR(mean, truth, 4 * 80 * 2 / (2 * std::sqrt(2000.0)));
  v1::Prevalence p = MeanPrevalence();
  p.mutable_numeric()->set_lo(10);
  p.mutable_numeric()->set_hi(90);
  const NumericTruth t = ComputeNumericTruth(result->true_values, p);
  EXPECT_EQ(t.clipped, 2);
  EXPECT_NEAR(t.mean, truth, 1e-9);
}

TEST(ReplayNumericSurveyTest, DBitFlipReportsNameTheirSampledBuckets) {
  ValueFile file({1, 5, 9, 3, 7});
  SurveySpec spec;
  spec.csv_path = file.path();
  spec.value_column = "age";
  auto rows = ReadSurvey(spec);
  ASSERT_TRUE(rows.ok()) << rows.status();
  auto collector = std::make_shared<client::testing::FakeTransport>();
  collector->SetNumeric(v1::D_BIT_FLIP, std::log(3.0), {0, 2, 4, 6, 8, 10}, 2);
  std::mt19937_64 engine(28);
  absl::BitGenRef gen(engine);
  auto result = ReplaySurvey(*rows, "m", collector, client::ReporterOptions(), &gen);
  ASSERT_TRUE(result.ok()) << result.status();
  const std::vector<v1::Report> sent = collector->SentReports();
  ASSERT_EQ(sent.size(), 5u);
  for (const v1::Report& r : sent) {
    ASSERT_TRUE(r.has_numeric());
    EXPECT_EQ(r.numeric().buckets_size(), 2);  // d = 2 of k = 5, ascending, one bit each
    EXPECT_EQ(r.numeric().bits_size(), 2);
    EXPECT_LT(r.numeric().buckets(0), r.numeric().buckets(1));
    EXPECT_LT(r.numeric().buckets(1), 5u);
    EXPECT_EQ(r.bit(), 0u);
  }
}

TEST(NumericPlanTest, MeanWithinHalfWidthFromTheVarianceBound) {
  v1::Numeric design;
  design.set_mechanism(v1::ONE_BIT_MEAN);
  design.set_epsilon(std::log(3.0));  // C = (3 + 1) / (3 - 1) = 2
  v1::NumericRange range;
  range.set_lo(18);
  range.set_hi(90);
  range.set_unit("years");
  auto plan = PlanNumeric(design, range, 2, 0.95, v1::SIMULTANEOUS_METHOD_UNSPECIFIED);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // n = ceil(z^2 m^2 C^2 / (4 h^2)) = ceil(1.959964^2 * 72^2 * 4 / 16) = ceil(4978.5).
  EXPECT_EQ(plan->devices_needed, 4979);
  EXPECT_EQ(plan->mechanism, "one_bit_mean");
  // The bound holds at n: z m C / (2 sqrt n) <= h, and fails at n - 1.
  const double z = 1.959963984540054;
  EXPECT_LE(z * 72 * 2 / (2 * std::sqrt(4979.0)), 2.0);
  EXPECT_GT(z * 72 * 2 / (2 * std::sqrt(4978.0)), 2.0);
  EXPECT_THAT(FormatNumericPlan(*plan), HasSubstr("the mean within +/- 2.00 years at 95 %"));
  EXPECT_THAT(Message(PlanNumeric(design, range, 0, 0.95, v1::SIDAK).status()),
              HasSubstr("--half_width"));
  EXPECT_THAT(Message(PlanNumeric(design, range, 2, 1.5, v1::SIDAK).status()),
              HasSubstr("--level"));
}

TEST(NumericPlanTest, EveryBucketWithinHalfWidthTogether) {
  v1::Numeric design;
  design.set_mechanism(v1::D_BIT_FLIP);
  design.set_epsilon(std::log(3.0));
  design.set_buckets(4);
  design.set_sampled_buckets(2);
  v1::NumericRange range;
  range.set_lo(0);
  range.set_hi(100);
  auto plan = PlanNumeric(design, range, 0.05, 0.95, v1::BONFERRONI);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->per_bucket_level, 1 - 0.05 / 4);
  const double a = std::sqrt(3.0), gap = (a - 1) / (a + 1);
  const double z = 2.4977054744123237;  // two-sided at 98.75 %
  const double n = 4.0 / 2 * z * z / (4 * 0.05 * 0.05 * gap * gap);
  // Every bucket sampled by enough of the Binomial(n, d / k) reports with probability 95 %, not
  // on average (issue 38): a little more than n.
  EXPECT_GT(static_cast<double>(plan->devices_needed), std::ceil(n) + 1);
  EXPECT_LE(static_cast<double>(plan->devices_needed), 1.03 * n);
  // The server's pick for --design=numeric with buckets: d_bit_flip.
  design.set_mechanism(v1::NUMERIC_MECHANISM_UNSPECIFIED);
  EXPECT_EQ(PlanNumeric(design, range, 0.05, 0.95, v1::SIDAK)->mechanism, "d_bit_flip");
  EXPECT_THAT(Message(PlanNumeric(design, range, 1.5, 0.95, v1::SIDAK).status()),
              HasSubstr("--half_width"));
}

}  // namespace numeric_cli_test
}  // namespace
}  // namespace deniable::tools
