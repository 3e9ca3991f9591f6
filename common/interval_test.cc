#include "deniable/common/interval.h"

#include <cmath>
#include <functional>
#include <limits>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace interval_test {

using ::testing::HasSubstr;

constexpr double kZ95 = 1.959963984540054;  // Phi^-1(0.975), from standard tables

double LogChoose(int64_t n, int64_t k) {
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

// P(Y >= y) for Y ~ Binomial(n, p), by summing the pmf.
double UpperTail(int64_t y, int64_t n, double p) {
  double s = 0;
  for (int64_t k = y; k <= n; ++k) {
    s += std::exp(LogChoose(n, k) + k * std::log(p) + (n - k) * std::log1p(-p));
  }
  return s;
}

// P(Y <= y).
double LowerTail(int64_t y, int64_t n, double p) {
  double s = 0;
  for (int64_t k = 0; k <= y; ++k) {
    s += std::exp(LogChoose(n, k) + k * std::log(p) + (n - k) * std::log1p(-p));
  }
  return s;
}

// CDF of Beta(al, be) at x by composite Simpson's rule. REQUIRES al, be >= 1.5 (smooth density).
double BetaCdf(double al, double be, double x) {
  const int steps = 20000;
  const double h = x / steps;
  const double log_norm = std::lgamma(al + be) - std::lgamma(al) - std::lgamma(be);
  auto f = [&](double t) {
    if (t <= 0 || t >= 1) return 0.0;
    return std::exp(log_norm + (al - 1) * std::log(t) + (be - 1) * std::log1p(-t));
  };
  double s = f(0) + f(x);
  for (int i = 1; i < steps; ++i) s += (i % 2 ? 4 : 2) * f(i * h);
  return s * h / 3;
}

Interval Lambda(IntervalMethod m, int64_t y, int64_t n, double level = 0.95) {
  absl::StatusOr<Interval> ci = YesShareInterval(m, y, n, level);
  EXPECT_TRUE(ci.ok()) << ci.status();
  return ci.value_or(Interval{});
}

TEST(IntervalTest, NormalQuantileMatchesTables) {
  EXPECT_NEAR(TwoSidedNormalQuantile(0.95), kZ95, 1e-12);
  EXPECT_NEAR(TwoSidedNormalQuantile(0.90), 1.6448536269514722, 1e-12);
  EXPECT_NEAR(TwoSidedNormalQuantile(0.99), 2.5758293035489004, 1e-12);
}

TEST(IntervalTest, MethodNamesRoundTrip) {
  for (IntervalMethod m :
       {IntervalMethod::kWald, IntervalMethod::kWilson, IntervalMethod::kAgrestiCoull,
        IntervalMethod::kJeffreys, IntervalMethod::kClopperPearson}) {
    absl::StatusOr<IntervalMethod> parsed = ParseIntervalMethod(IntervalMethodName(m));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, m);
  }
  absl::StatusOr<IntervalMethod> bad = ParseIntervalMethod("bayes");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("wilson"));
}

// Wald: 0.6 -/+ 1.96 sqrt(0.24 / 200).
TEST(IntervalTest, WaldIsYesSharePlusMinusZStandardErrors) {
  const Interval ci = Lambda(IntervalMethod::kWald, 120, 200);
  const double half = kZ95 * std::sqrt(0.6 * 0.4 / 200);
  EXPECT_NEAR(ci.lower, 0.6 - half, 1e-12);
  EXPECT_NEAR(ci.upper, 0.6 + half, 1e-12);
  EXPECT_NEAR(ci.lower, 0.5321, 1e-4);
}

// Wald degenerates at y = 0: zero width (the known failure, Brown, Cai & DasGupta 2001).
TEST(IntervalTest, WaldHasZeroWidthAtZeroCount) {
  const Interval ci = Lambda(IntervalMethod::kWald, 0, 30);
  EXPECT_EQ(ci.lower, 0.0);
  EXPECT_EQ(ci.upper, 0.0);
}

// Wilson's ends are the two roots p of the score equation (lambda_hat - p)^2 = z^2 p (1 - p) / n.
TEST(IntervalTest, WilsonEndsSolveTheScoreEquation) {
  for (auto [y, n] :
       {std::pair<int64_t, int64_t>{120, 200}, {0, 20}, {3, 20}, {20, 20}, {7, 1000}}) {
    const Interval ci = Lambda(IntervalMethod::kWilson, y, n);
    const double p_hat = static_cast<double>(y) / n;
    for (double p : {ci.lower, ci.upper}) {
      const double residual = (p_hat - p) * (p_hat - p) - kZ95 * kZ95 * p * (1 - p) / n;
      EXPECT_NEAR(residual, 0.0, 1e-12) << y << "/" << n << " end " << p;
    }
    EXPECT_LE(ci.lower, p_hat);
    EXPECT_GE(ci.upper, p_hat);
    EXPECT_LT(ci.lower, ci.upper);
  }
}

// Agresti-Coull is centred where Wilson is, (y + z^2/2) / (n + z^2), and always contains it
// (Agresti & Coull 1998).
TEST(IntervalTest, AgrestiCoullSharesWilsonCentreAndContainsWilson) {
  for (int64_t y : {0, 1, 5, 10, 19, 20}) {
    const int64_t n = 20;
    const Interval ac = Lambda(IntervalMethod::kAgrestiCoull, y, n);
    const Interval w = Lambda(IntervalMethod::kWilson, y, n);
    const double center = (y + kZ95 * kZ95 / 2) / (n + kZ95 * kZ95);
    const double half = kZ95 * std::sqrt(center * (1 - center) / (n + kZ95 * kZ95));
    EXPECT_NEAR(ac.lower, std::max(0.0, center - half), 1e-12) << y;
    EXPECT_NEAR(ac.upper, std::min(1.0, center + half), 1e-12) << y;
    EXPECT_NEAR((w.lower + w.upper) / 2, center, 1e-12) << y;  // not clipped: Wilson is in [0,1]
    EXPECT_LE(ac.lower, w.lower + 1e-15) << y;
    EXPECT_GE(ac.upper, w.upper - 1e-15) << y;
  }
}

// Clopper-Pearson: P(Y >= y; n, L) = alpha / 2 and P(Y <= y; n, U) = alpha / 2.
TEST(IntervalTest, ClopperPearsonEndsSolveTheBinomialTailEquations) {
  for (auto [y, n] :
       {std::pair<int64_t, int64_t>{3, 20}, {10, 20}, {1, 50}, {64, 200}, {530, 1000}}) {
    const Interval ci = Lambda(IntervalMethod::kClopperPearson, y, n);
    EXPECT_NEAR(UpperTail(y, n, ci.lower), 0.025, 1e-9) << y << "/" << n;
    EXPECT_NEAR(LowerTail(y, n, ci.upper), 0.025, 1e-9) << y << "/" << n;
  }
}

// At y = 0 the upper end is 1 - (alpha/2)^(1/n); at y = n the lower end is (alpha/2)^(1/n).
TEST(IntervalTest, ClopperPearsonClosedFormAtTheEdges) {
  const Interval zero = Lambda(IntervalMethod::kClopperPearson, 0, 10);
  EXPECT_EQ(zero.lower, 0.0);
  EXPECT_NEAR(zero.upper, 1 - std::pow(0.025, 0.1), 1e-12);
  EXPECT_NEAR(zero.upper, 0.3085, 1e-4);
  const Interval all = Lambda(IntervalMethod::kClopperPearson, 10, 10);
  EXPECT_NEAR(all.lower, std::pow(0.025, 0.1), 1e-12);
  EXPECT_EQ(all.upper, 1.0);
}

// Jeffreys: the ends are the alpha/2 and 1 - alpha/2 quantiles of Beta(y + 1/2, n - y + 1/2),
// checked against a numerical integration of the Beta density.
TEST(IntervalTest, JeffreysEndsAreBetaQuantiles) {
  for (auto [y, n] : {std::pair<int64_t, int64_t>{7, 20}, {2, 30}, {40, 50}}) {
    const Interval ci = Lambda(IntervalMethod::kJeffreys, y, n);
    const double al = y + 0.5, be = n - y + 0.5;
    EXPECT_NEAR(BetaCdf(al, be, ci.lower), 0.025, 1e-8) << y << "/" << n;
    EXPECT_NEAR(BetaCdf(al, be, ci.upper), 0.975, 1e-8) << y << "/" << n;
  }
  // Brown, Cai & DasGupta's modification: the end is 0 at y = 0 and 1 at y = n.
  EXPECT_EQ(Lambda(IntervalMethod::kJeffreys, 0, 20).lower, 0.0);
  EXPECT_EQ(Lambda(IntervalMethod::kJeffreys, 20, 20).upper, 1.0);
}

// Jeffreys sits inside Clopper-Pearson: Beta(y, n - y + 1) <= Beta(y + 1/2, n - y + 1/2) <=
// Beta(y + 1, n - y) in the stochastic order, so the quantiles are ordered the same way.
TEST(IntervalTest, JeffreysLiesInsideClopperPearson) {
  for (int64_t y = 0; y <= 25; ++y) {
    const Interval cp = Lambda(IntervalMethod::kClopperPearson, y, 25);
    const Interval j = Lambda(IntervalMethod::kJeffreys, y, 25);
    EXPECT_GE(j.lower, cp.lower) << y;
    EXPECT_LE(j.upper, cp.upper) << y;
  }
}

TEST(IntervalTest, HigherLevelGivesWiderInterval) {
  for (IntervalMethod m :
       {IntervalMethod::kWald, IntervalMethod::kWilson, IntervalMethod::kAgrestiCoull,
        IntervalMethod::kJeffreys, IntervalMethod::kClopperPearson}) {
    const Interval narrow = Lambda(m, 30, 100, 0.90);
    const Interval wide = Lambda(m, 30, 100, 0.99);
    EXPECT_LT(wide.lower, narrow.lower) << IntervalMethodName(m);
    EXPECT_GT(wide.upper, narrow.upper) << IntervalMethodName(m);
  }
}

// Two coins: pi = 2 lambda - 1/2 maps each end; y = 120 of 200 gives an interior interval.
TEST(IntervalTest, PrevalenceIntervalMapsEndsThroughTwoCoinIdentity) {
  const Interval lam = Lambda(IntervalMethod::kWilson, 120, 200);
  absl::StatusOr<PrevalenceInterval> ci =
      MakePrevalenceInterval(Design::TwoCoin().channel(), 120, 200, 0.95, IntervalMethod::kWilson);
  ASSERT_TRUE(ci.ok()) << ci.status();
  EXPECT_NEAR(ci->lower, 2 * lam.lower - 0.5, 1e-14);
  EXPECT_NEAR(ci->upper, 2 * lam.upper - 0.5, 1e-14);
  EXPECT_FALSE(ci->clipped);
}

// With a < b the map (lambda - b) / (a - b) is decreasing, so the ends swap.
TEST(IntervalTest, PrevalenceIntervalSwapsEndsWhenAIsBelowB) {
  absl::StatusOr<Design> d = Design::MirroredQuestion(0.25);  // a = 0.25, b = 0.75
  ASSERT_TRUE(d.ok());
  const Interval lam = Lambda(IntervalMethod::kWilson, 80, 200);
  absl::StatusOr<PrevalenceInterval> ci =
      MakePrevalenceInterval(d->channel(), 80, 200, 0.95, IntervalMethod::kWilson);
  ASSERT_TRUE(ci.ok()) << ci.status();
  EXPECT_NEAR(ci->lower, 1.5 - 2 * lam.upper, 1e-14);  // pi = (lambda - 0.75) / (-0.5)
  EXPECT_NEAR(ci->upper, 1.5 - 2 * lam.lower, 1e-14);
  EXPECT_LT(ci->lower, ci->upper);
  EXPECT_FALSE(ci->clipped);
}

// y = 0 with two coins: lambda's lower end 0 maps to -1/2, clipped to 0 and flagged.
TEST(IntervalTest, PrevalenceIntervalClipsToUnitIntervalAndSaysSo) {
  for (IntervalMethod m :
       {IntervalMethod::kWald, IntervalMethod::kWilson, IntervalMethod::kAgrestiCoull,
        IntervalMethod::kJeffreys, IntervalMethod::kClopperPearson}) {
    absl::StatusOr<PrevalenceInterval> ci =
        MakePrevalenceInterval(Design::TwoCoin().channel(), 0, 50, 0.95, m);
    ASSERT_TRUE(ci.ok()) << ci.status();
    EXPECT_EQ(ci->lower, 0.0) << IntervalMethodName(m);
    EXPECT_GE(ci->upper, 0.0) << IntervalMethodName(m);
    EXPECT_TRUE(ci->clipped) << IntervalMethodName(m);
  }
}

TEST(IntervalTest, IntervalFailsOnBadArgumentsNamingThem) {
  auto expect = [](absl::StatusOr<Interval> r, const char* name) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(name));
  };
  expect(YesShareInterval(IntervalMethod::kWilson, 0, 0, 0.95), "n must");
  expect(YesShareInterval(IntervalMethod::kWilson, 11, 10, 0.95), "yes_count");
  expect(YesShareInterval(IntervalMethod::kWilson, -1, 10, 0.95), "yes_count");
  expect(YesShareInterval(IntervalMethod::kWilson, 5, 10, 1.0), "confidence_level");
  expect(YesShareInterval(IntervalMethod::kWilson, 5, 10, 0.0), "confidence_level");
  expect(YesShareInterval(IntervalMethod::kWilson, 5, 10, std::nan("")), "confidence_level");
  absl::StatusOr<PrevalenceInterval> bad_channel =
      MakePrevalenceInterval(Channel{0.3, 0.3}, 5, 10, 0.95, IntervalMethod::kWilson);
  EXPECT_EQ(bad_channel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad_channel.status().message()), HasSubstr("a must differ from b"));
}

}  // namespace interval_test
}  // namespace
}  // namespace deniable
