// The mechanisms of mechanism.h against the functions they delegate to: for every design, the
// same results, compared exactly (==, not within a tolerance).
#include "deniable/common/mechanism.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "categorical_test_util.h"
#include "deniable/common/categorical_coverage.h"
#include "deniable/common/coverage.h"
#include "deniable/common/draws.h"
#include "deniable/common/estimator.h"
#include "deniable/common/method_choice.h"
#include "deniable/common/numeric.h"
#include "deniable/common/planner.h"
#include "deniable/common/randomizer.h"
#include "deniable/common/shuffle.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace mechanism_test {

using ::testing::HasSubstr;
using testing_util::Make;

std::vector<Design> YesNoDesigns() {
  return {Design::SymmetricEpsilon(std::log(3.0)).value(),
          Design::SymmetricEpsilon(3.0).value(),
          Design::ForcedResponse(0.6, 0.3).value(),
          Design::TwoCoin(),
          Design::TailsSaysYes(),
          Design::UnrelatedQuestion(0.7, 0.2).value(),
          Design::MirroredQuestion(0.8).value(),
          Design::TruthWithGamma(0.3).value()};
}

std::vector<CategoricalDesign> CategoricalDesigns() {
  return {Make(CategoricalMechanism::kDirectEncoding, 2, 1.0),
          Make(CategoricalMechanism::kDirectEncoding, 4, std::log(3.0)),
          Make(CategoricalMechanism::kOptimizedUnaryEncoding, 8, 1.0),
          Make(CategoricalMechanism::kOptimizedUnaryEncoding, 3, 2.5),
          Make(CategoricalMechanism::kOptimizedLocalHashing, 16, 2.0),
          Make(CategoricalMechanism::kOptimizedLocalHashing, 5, 0.7)};
}

void ExpectSameInterval(const PrevalenceInterval& got, const PrevalenceInterval& want) {
  EXPECT_EQ(got.lower, want.lower);
  EXPECT_EQ(got.upper, want.upper);
  EXPECT_EQ(got.clipped, want.clipped);
}

void ExpectSameFigures(const PrivacyFigures& got, const PrivacyFigures& want) {
  EXPECT_EQ(got.epsilon, want.epsilon);
  EXPECT_EQ(got.posterior_given_yes, want.posterior_given_yes);
  EXPECT_EQ(got.posterior_given_no, want.posterior_given_no);
  EXPECT_EQ(got.prior_entropy_bits, want.prior_entropy_bits);
  EXPECT_EQ(got.conditional_entropy_bits, want.conditional_entropy_bits);
  EXPECT_EQ(got.mutual_information_bits, want.mutual_information_bits);
}

// Issue 37: a layout is at most kMaxCounterLayoutLength counters (coordinates are uint32_t end to
// end; a sketch of 2^21 counters fits, one past the bound does not).
TEST(CounterLayoutTest, OfRefusesLayoutsPastTheMaximumNamingTheLayout) {
  EXPECT_EQ(CounterLayout::Of(int64_t{1} << 21).value().length(), (1 << 21) + 1);
  EXPECT_EQ(CounterLayout::Of(kMaxCounterLayoutLength - 1).value().length(),
            kMaxCounterLayoutLength);
  for (int64_t bad : {int64_t{0}, kMaxCounterLayoutLength, int64_t{1} << 40}) {
    absl::StatusOr<CounterLayout> layout = CounterLayout::Of(bad);
    EXPECT_EQ(layout.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(layout.status().message()), ::testing::HasSubstr("layout"));
  }
  CounterIncrements far;
  far.ones = {0, 70000};  // past uint16_t
  std::vector<int64_t> counters(70002, 0);
  far.AddTo(counters);
  EXPECT_EQ(counters[0], 1);
  EXPECT_EQ(counters[1], 1);
  EXPECT_EQ(counters[70001], 1);
}

TEST(MechanismTest, YesNoLayoutChannelAndPrivacyAreTheDesigns) {
  for (const Design& d : YesNoDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    EXPECT_EQ(m->kind(), ReportKind::kYesNo);
    EXPECT_EQ(m->ToString(), d.ToString());
    EXPECT_EQ(m->Layout().coordinates, 1);
    EXPECT_EQ(m->Layout().length(), 2);
    EXPECT_EQ(m->ChannelOf(0).a, d.channel().a);
    EXPECT_EQ(m->ChannelOf(0).b, d.channel().b);
    EXPECT_EQ(m->Epsilon(), Epsilon(d.channel()));
    EXPECT_EQ(m->CloneProbability(), BinaryCloneProbability(d.channel()));
    for (double prior : {0.0, 0.1, 0.5, 0.93, 1.0}) {
      absl::StatusOr<MechanismPrivacy> got = m->Privacy(PrivacyQuestion{prior, {}});
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectSameFigures(got->binary, ComputePrivacyFigures(d.channel(), prior).value());
      EXPECT_FALSE(got->categorical.has_value());
    }
    EXPECT_FALSE(m->Privacy(PrivacyQuestion{1.5, {}}).ok());
  }
}

TEST(MechanismTest, YesNoEstimateIsEstimatePrevalenceAndItsInterval) {
  for (const Design& d : YesNoDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    for (const auto& [n, yes] : std::vector<std::pair<int64_t, int64_t>>{
             {1, 0}, {1, 1}, {50, 13}, {1000, 640}, {12345, 12345}}) {
      for (IntervalMethod method :
           {IntervalMethod::kWilson, IntervalMethod::kClopperPearson, IntervalMethod::kJeffreys}) {
        const std::vector<int64_t> counters = {n, yes};
        absl::StatusOr<MechanismEstimate> got =
            m->Estimate(counters, MechanismEstimateOptions{0.9, method, {}});
        ASSERT_TRUE(got.ok()) << got.status();
        const PrevalenceEstimate want = EstimatePrevalence(d.channel(), yes, n).value();
        const PrevalenceInterval interval =
            MakePrevalenceInterval(d.channel(), yes, n, 0.9, method).value();
        EXPECT_EQ(got->n, n);
        EXPECT_EQ(got->method, method);
        ASSERT_EQ(got->coordinates.size(), 1u);
        const CoordinateEstimate& c = got->coordinates[0];
        EXPECT_EQ(c.successes, yes);
        EXPECT_EQ(c.success_share, want.yes_share);
        EXPECT_EQ(c.unbiased, want.unbiased);
        EXPECT_EQ(c.clipped, want.clipped);
        EXPECT_EQ(c.variance, want.variance);
        EXPECT_EQ(c.standard_error, want.standard_error);
        ExpectSameInterval(c.interval, interval);
        ExpectSameInterval(c.simultaneous, interval);
      }
      // No method: the channel's default.
      const std::vector<int64_t> counters = {n, yes};
      EXPECT_EQ(m->Estimate(counters, MechanismEstimateOptions{}).value().method,
                DefaultIntervalMethod(d.channel()).method);
    }
    const std::vector<int64_t> wrong = {10, 2, 3};
    absl::StatusOr<MechanismEstimate> bad = m->Estimate(wrong, MechanismEstimateOptions{});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(bad.status().message(), HasSubstr("counters"));
  }
}

TEST(MechanismTest, YesNoPlanAndCoverageAreThePlannersAndExactCoverage) {
  for (const Design& d : YesNoDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    for (double pi : {-1.0, 0.0, 0.2, 0.5}) {
      PlanTarget target;
      target.half_width = 0.03;
      target.confidence_level = 0.95;
      target.assumed_prevalence = pi;
      absl::StatusOr<MechanismPlan> got = m->Plan(target);
      ASSERT_TRUE(got.ok()) << got.status();
      const int64_t worst = WorstCaseSampleSize(d.channel(), 0.03, 0.95).value();
      EXPECT_EQ(got->reports_needed_worst_case, worst);
      if (pi < 0) {
        EXPECT_EQ(got->reports_needed, worst);
        EXPECT_FALSE(got->variance_inflation.has_value());
      } else {
        EXPECT_EQ(got->reports_needed, RequiredSampleSize(d.channel(), 0.03, 0.95, pi).value());
        absl::StatusOr<double> inflation = VarianceInflation(d.channel(), pi);
        ASSERT_EQ(got->variance_inflation.has_value(), inflation.ok());
        if (inflation.ok()) {
          EXPECT_EQ(*got->variance_inflation, *inflation);
        }
      }
      EXPECT_FALSE(got->categorical.has_value());
    }
    for (double pi : {0.0, 0.05, 0.5}) {
      const std::vector<double> truth = {pi};
      const IntervalMethod method = DefaultIntervalMethod(d.channel()).method;
      absl::StatusOr<double> got = m->ExactCoverage(
          200, truth, MechanismEstimateOptions{0.95, std::nullopt, SimultaneousMethod::kSidak});
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got,
                deniable::ExactCoverage(d.channel(), 200, 0.95, method, truth).value().coverage[0]);
    }
  }
}

TEST(MechanismTest, YesNoRandomizeAndValidate) {
  for (const Design& d : YesNoDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    std::mt19937_64 a(7), b(7);
    for (int i = 0; i < 200; ++i) {
      const int32_t x = i % 2;
      absl::StatusOr<WireAnswer> got = m->Randomize(x, a);
      ASSERT_TRUE(got.ok());
      EXPECT_EQ(got->bit, RandomizeAnswer(d.channel(), x == 1, b) ? 1u : 0u);
      EXPECT_FALSE(got->has_categorical);
      absl::StatusOr<CounterIncrements> inc = m->Validate(*got, "reports[0]", "m");
      ASSERT_TRUE(inc.ok());
      EXPECT_EQ(inc->ones.size(), got->bit);
    }
    EXPECT_THAT(m->Randomize(2, a).status().message(), HasSubstr("value"));
    WireAnswer two;
    two.bit = 2;
    EXPECT_EQ(m->Validate(two, "reports[4]", "m").status().message(),
              "reports[4].bit: must be 0 or 1, but is 2");
    WireAnswer categorical;
    categorical.has_categorical = true;
    EXPECT_EQ(m->Validate(categorical, "reports[1]", "m").status().message(),
              "reports[1].categorical: metric \"m\" is a yes/no metric: its reports carry `bit` "
              "and no categorical report");
  }
}

TEST(MechanismTest, CategoricalLayoutChannelAndPrivacyAreTheDesigns) {
  for (const CategoricalDesign& d : CategoricalDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    EXPECT_EQ(m->kind(), ReportKind::kCategorical);
    EXPECT_EQ(m->ToString(), d.ToString());
    EXPECT_EQ(m->Layout().coordinates, d.k());
    EXPECT_EQ(m->Layout().length(), d.k() + 1);
    for (int j = 0; j < d.k(); ++j) {
      EXPECT_EQ(m->ChannelOf(j).a, d.p_star());
      EXPECT_EQ(m->ChannelOf(j).b, d.q_star());
    }
    EXPECT_EQ(m->Epsilon(), d.epsilon());
    EXPECT_EQ(m->CloneProbability(), d.CloneProbability());
    std::vector<double> skewed(static_cast<size_t>(d.k()), 0.5 / (d.k() - 1));
    skewed[0] = 0.5;
    for (const std::vector<double>& prior : {std::vector<double>{}, skewed}) {
      absl::StatusOr<MechanismPrivacy> got = m->Privacy(PrivacyQuestion{0.25, prior});
      ASSERT_TRUE(got.ok()) << got.status();
      ExpectSameFigures(got->binary, ComputePrivacyFigures(d.SupportChannel(), 0.25).value());
      const CategoricalPrivacyFigures want =
          ComputeCategoricalPrivacyFigures(d, prior.empty() ? UniformPrior(d.k()) : prior).value();
      ASSERT_TRUE(got->categorical.has_value());
      EXPECT_EQ(got->categorical->prior, want.prior);
      EXPECT_EQ(got->categorical->entropy_bits, want.entropy_bits);
      EXPECT_EQ(got->categorical->conditional_entropy_bits, want.conditional_entropy_bits);
      EXPECT_EQ(got->categorical->mutual_information_bits, want.mutual_information_bits);
      ASSERT_EQ(got->categorical->reported.size(), want.reported.size());
      for (size_t r = 0; r < want.reported.size(); ++r) {
        EXPECT_EQ(got->categorical->reported[r].probability, want.reported[r].probability);
        EXPECT_EQ(got->categorical->reported[r].posterior, want.reported[r].posterior);
      }
    }
  }
}

TEST(MechanismTest, CategoricalEstimateIsEstimateCategories) {
  for (const CategoricalDesign& d : CategoricalDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    // Counts from the design itself, so that k-RR's sum to n.
    std::mt19937_64 gen(11);
    std::vector<int64_t> support(static_cast<size_t>(d.k()), 0);
    const int64_t n = 3000;
    for (int64_t i = 0; i < n; ++i) {
      AddSupport(d, RandomizeCategory(d, static_cast<int32_t>(i % 3 % d.k()), gen).value(),
                 &support);
    }
    std::vector<int64_t> counters = {n};
    counters.insert(counters.end(), support.begin(), support.end());
    for (SimultaneousMethod sim : {SimultaneousMethod::kSidak, SimultaneousMethod::kBonferroni}) {
      for (std::optional<IntervalMethod> method :
           {std::optional<IntervalMethod>(), std::optional(IntervalMethod::kClopperPearson)}) {
        absl::StatusOr<MechanismEstimate> got =
            m->Estimate(counters, MechanismEstimateOptions{0.9, method, sim});
        ASSERT_TRUE(got.ok()) << got.status();
        const CategoricalEstimate want =
            EstimateCategories(d, support, n, 0.9, method, sim).value();
        EXPECT_EQ(got->n, want.n);
        EXPECT_EQ(got->method, want.method);
        EXPECT_EQ(got->per_coordinate_level, want.per_category_level);
        ASSERT_EQ(got->coordinates.size(), want.categories.size());
        for (size_t v = 0; v < want.categories.size(); ++v) {
          const CoordinateEstimate& c = got->coordinates[v];
          const CategoryEstimate& w = want.categories[v];
          EXPECT_EQ(c.successes, w.support_count);
          EXPECT_EQ(c.success_share, w.support_share);
          EXPECT_EQ(c.unbiased, w.unbiased);
          EXPECT_EQ(c.clipped, w.consistent);
          EXPECT_EQ(c.variance, w.variance);
          EXPECT_EQ(c.standard_error, w.standard_error);
          ExpectSameInterval(c.interval, w.interval);
          ExpectSameInterval(c.simultaneous, w.simultaneous);
        }
      }
    }
    const std::vector<int64_t> short_vector = {n, 1};
    EXPECT_THAT(m->Estimate(short_vector, MechanismEstimateOptions{}).status().message(),
                HasSubstr("counters"));
  }
}

TEST(MechanismTest, CategoricalPlanAndCoverageArePlanCategoricalSurveyAndExactCoverage) {
  for (const CategoricalDesign& d : CategoricalDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    std::vector<double> shares(static_cast<size_t>(d.k()), 1.0 / d.k());
    for (const std::vector<double>& assumed : {std::vector<double>{}, shares}) {
      PlanTarget target;
      target.half_width = 0.04;
      target.confidence_level = 0.9;
      target.assumed_shares = assumed;
      target.simultaneous = SimultaneousMethod::kBonferroni;
      absl::StatusOr<MechanismPlan> got = m->Plan(target);
      ASSERT_TRUE(got.ok()) << got.status();
      const CategoricalPlan want =
          PlanCategoricalSurvey(d, 0.04, 0.9, SimultaneousMethod::kBonferroni, assumed).value();
      EXPECT_EQ(got->reports_needed, want.reports_needed);
      EXPECT_EQ(got->reports_needed_worst_case, want.reports_needed_worst_case);
      ASSERT_TRUE(got->categorical.has_value());
      EXPECT_EQ(got->categorical->reports_needed_simultaneous, want.reports_needed_simultaneous);
      EXPECT_EQ(got->categorical->per_category_level, want.per_category_level);
      EXPECT_FALSE(got->variance_inflation.has_value());
    }
    absl::StatusOr<double> got = m->ExactCoverage(
        60, shares, MechanismEstimateOptions{0.95, {}, SimultaneousMethod::kSidak});
    absl::StatusOr<double> want =
        ExactSimultaneousCoverage(d, 60, shares, 0.95, std::nullopt, SimultaneousMethod::kSidak);
    ASSERT_EQ(got.status().code(), want.status().code());
    if (want.ok()) {
      EXPECT_EQ(*got, *want);
    }
  }
}

TEST(MechanismTest, CategoricalRandomizeAndValidateCountTheSupportedCategories) {
  for (const CategoricalDesign& d : CategoricalDesigns()) {
    SCOPED_TRACE(d.ToString());
    const auto m = MechanismFor(d);
    std::mt19937_64 a(5), b(5);
    for (int i = 0; i < 100; ++i) {
      const int32_t x = i % d.k();
      absl::StatusOr<WireAnswer> got = m->Randomize(x, a);
      ASSERT_TRUE(got.ok());
      const CategoricalReport want = RandomizeCategory(d, x, b).value();
      ASSERT_TRUE(got->has_categorical);
      EXPECT_EQ(got->bit, 0u);
      absl::StatusOr<CounterIncrements> inc = m->Validate(*got, "reports[0]", "m");
      ASSERT_TRUE(inc.ok()) << inc.status();
      std::vector<uint32_t> supported;
      for (int v = 0; v < d.k(); ++v) {
        if (Supports(d, want, v)) supported.push_back(static_cast<uint32_t>(v));
      }
      EXPECT_EQ(std::vector<uint32_t>(inc->ones.begin(), inc->ones.end()), supported);
      std::vector<int64_t> counters(static_cast<size_t>(m->Layout().length()), 0);
      inc->AddTo(counters);
      EXPECT_EQ(counters[0], 1);
      for (int v = 0; v < d.k(); ++v) {
        EXPECT_EQ(counters[static_cast<size_t>(1 + v)], Supports(d, want, v) ? 1 : 0);
      }
    }
    WireAnswer yes_no;
    yes_no.bit = 1;
    EXPECT_EQ(m->Validate(yes_no, "reports[2]", "m").status().message(),
              absl::StrCat("reports[2].categorical: metric \"m\" has ", d.k(),
                           " categories: a report must carry its categorical report (and bit 0)"));
    WireAnswer with_bit = m->Randomize(0, a).value();
    with_bit.bit = 1;
    EXPECT_EQ(m->Validate(with_bit, "reports[3]", "m").status().message(),
              "reports[3].bit: must be 0 in a report of categorical metric \"m\" (the answer is in "
              "reports[3].categorical)");
  }
}

TEST(MechanismTest, CategoricalValidateNamesTheFieldOfAnotherMechanism) {
  const auto krr = MechanismFor(Make(CategoricalMechanism::kDirectEncoding, 4, 1.0));
  WireAnswer answer;
  answer.has_categorical = true;
  answer.categorical.bits = std::string(1, '\x01');
  EXPECT_EQ(krr->Validate(answer, "reports[0]", "m").status().message(),
            "reports[0].categorical.bits: must be unset in a k_rr report (it belongs to another "
            "mechanism's report)");
  answer.categorical.bits.clear();
  answer.categorical.category = 4;
  absl::StatusOr<CounterIncrements> out_of_range = krr->Validate(answer, "reports[0]", "m");
  EXPECT_EQ(out_of_range.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out_of_range.status().message(), HasSubstr("reports[0].categorical.category:"));
}

// A kind of numbers that knows nothing of strings: the seam's defaults refuse the string calls
// and a string kind's place for it.
class NumbersOnlyKind final : public Mechanism {
 public:
  ReportKind kind() const override { return ReportKind::kYesNo; }
  std::string ToString() const override { return "numbers_only"; }
  CounterLayout Layout() const override { return CounterLayout{1}; }
  Channel ChannelOf(int /*j*/) const override { return Design::TwoCoin().channel(); }
  double Epsilon() const override { return 1.0; }
  double CloneProbability() const override { return 0.5; }
  using Mechanism::Randomize;
  absl::StatusOr<WireAnswer> Randomize(int32_t /*value*/, Draws& /*draws*/) const override {
    return WireAnswer{};
  }
  absl::StatusOr<MechanismPrivacy> Privacy(const PrivacyQuestion& /*question*/) const override {
    return MechanismPrivacy{};
  }
  absl::StatusOr<MechanismEstimate> Estimate(
      std::span<const int64_t> /*counters*/,
      const MechanismEstimateOptions& /*options*/) const override {
    return MechanismEstimate{};
  }
  absl::StatusOr<MechanismPlan> Plan(const PlanTarget& /*target*/) const override {
    return MechanismPlan{};
  }
  absl::StatusOr<double> ExactCoverage(int64_t /*n*/, std::span<const double> /*truth*/,
                                       const MechanismEstimateOptions& /*options*/) const override {
    return 1.0;
  }

 private:
  // Accepts every answer: whatever is refused below, the seam refused.
  absl::StatusOr<CounterIncrements> ValidateKind(const WireAnswer& /*answer*/,
                                                 absl::string_view /*field*/,
                                                 absl::string_view /*metric*/) const override {
    return CounterIncrements{};
  }
};

TEST(MechanismTest, TheSeamRefusesAStringKindsPlaceForEveryKindOfNumbers) {
  WireAnswer answer;
  answer.has_heavy_hitters = true;
  const std::string want =
      "reports[2].heavy_hitters: metric \"m\" is not a heavy-hitters metric: its reports carry "
      "no heavy_hitters place";
  const NumbersOnlyKind fake;
  const absl::StatusOr<CounterIncrements> refused = fake.Validate(answer, "reports[2]", "m");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), want);
  EXPECT_TRUE(fake.Validate(WireAnswer{}, "reports[2]", "m").ok());
  EXPECT_FALSE(fake.TakesStrings());
  EXPECT_TRUE(fake.AnsweredByPrevalence("m").ok());
  std::mt19937 gen(1);
  BitGenDraws draws(gen);
  EXPECT_EQ(fake.DrawDeviceGroup(draws), 0u);
  EXPECT_EQ(fake.RandomizeString("a", 0, draws).status().code(),
            absl::StatusCode::kFailedPrecondition);
  for (const std::shared_ptr<const Mechanism>& m :
       {MechanismFor(Design::TwoCoin()),
        MechanismFor(Make(CategoricalMechanism::kDirectEncoding, 4, 1.0)),
        MechanismFor(Make(CategoricalMechanism::kOptimizedUnaryEncoding, 4, 1.0)),
        MechanismFor(
            NumericDesign::Create(NumericMechanism::kOneBitMean, 1.0, {0.0, 100.0}, 0).value()),
        MechanismFor(NumericDesign::EqualWidth(NumericMechanism::kDBitFlip, 1.0, 0.0, 100.0, 4, 2)
                         .value())}) {
    const absl::StatusOr<CounterIncrements> got = m->Validate(answer, "reports[2]", "m");
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << m->ToString();
    EXPECT_EQ(got.status().message(), want) << m->ToString();
  }
}

TEST(MechanismTest, EstimateVersionsOfOnePartIsItsEstimate) {
  const auto m = MechanismFor(Design::TwoCoin());
  const std::vector<VersionCounters> one = {{m, {400, 150}}};
  const MechanismEstimate got =
      EstimateVersions(one, MechanismEstimateOptions{}, VersionCombination::kByReports).value();
  const MechanismEstimate want = m->Estimate(one[0].counters, MechanismEstimateOptions{}).value();
  EXPECT_EQ(got.coordinates[0].unbiased, want.coordinates[0].unbiased);
  EXPECT_EQ(got.coordinates[0].interval.lower, want.coordinates[0].interval.lower);
}

TEST(MechanismTest, EstimateVersionsCombinesEachCoordinateAsCombineVersions) {
  const auto v1 = MechanismFor(Design::TwoCoin());
  const auto v2 = MechanismFor(Design::SymmetricEpsilon(2.0).value());
  const std::vector<VersionCounters> parts = {{v1, {400, 150}}, {v2, {600, 200}}};
  const MechanismEstimate got =
      EstimateVersions(parts, MechanismEstimateOptions{}, VersionCombination::kByReports).value();
  const std::vector<PrevalenceEstimate> binary = {
      EstimatePrevalence(v1->ChannelOf(0), 150, 400).value(),
      EstimatePrevalence(v2->ChannelOf(0), 200, 600).value()};
  const CombinedEstimate want = CombineByReports(binary).value();
  EXPECT_EQ(got.n, 1000);
  EXPECT_EQ(got.coordinates[0].successes, 350);
  EXPECT_EQ(got.coordinates[0].unbiased, want.unbiased);
  EXPECT_EQ(got.coordinates[0].variance, want.variance);
  EXPECT_EQ(got.method, IntervalMethod::kWald);
  const auto other = MechanismFor(Make(CategoricalMechanism::kDirectEncoding, 3, 1.0));
  const std::vector<VersionCounters> mixed = {{v1, {400, 150}}, {other, {10, 3, 3, 4}}};
  EXPECT_THAT(EstimateVersions(mixed, MechanismEstimateOptions{}, VersionCombination::kByReports)
                  .status()
                  .message(),
              HasSubstr("parts[1]"));
}

}  // namespace mechanism_test
}  // namespace
}  // namespace deniable
