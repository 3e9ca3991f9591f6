#include "deniable/common/shuffle.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "boost/math/distributions/binomial.hpp"
#include "boost/math/special_functions/beta.hpp"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

using NoThrow = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>>;

constexpr int kBlocks = 200;         // evaluations of the divergence over the range of C
constexpr double kTailSds = 12.0;    // C beyond mean +- 12 sd is bounded, not summed
constexpr int kBisectionSteps = 40;  // eps to 2^-40 eps0 ... rounded up
constexpr double kRelativePrecision = 1e-6;
constexpr double kMinGain = 0.99;  // claim (eps, delta) only if eps <= 0.99 eps0

absl::Status CheckEps0(double eps0) {
  if (!(eps0 > 0.0) || std::isinf(eps0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("eps0 must be finite and > 0 (nats), but is ", eps0));
  }
  return absl::OkStatus();
}

absl::Status CheckN(int64_t n) {
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("n must be >= 1, but is ", n));
  return absl::OkStatus();
}

absl::Status CheckDelta(double delta) {
  if (!(delta > 0.0 && delta < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("delta must be in (0, 1), but is ", delta));
  }
  return absl::OkStatus();
}

absl::Status CheckClone(double gamma) {
  if (!(gamma > 0.0 && gamma <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("clone_probability must be in (0, 1], but is ", gamma));
  }
  return absl::OkStatus();
}

// P(Binomial(c, 1/2) >= m).
double UpperTailHalf(int64_t c, int64_t m) {
  if (m <= 0) return 1.0;
  if (m > c) return 0.0;
  return boost::math::ibeta(static_cast<double>(m), static_cast<double>(c - m + 1), 0.5, NoThrow());
}

// The hockey-stick divergence sum over x of max(0, P(x | c) - e^eps Q(x | c)) for C = c, where
// P(x | c) = alpha b(x - 1) + (1 - alpha) b(x), Q(x | c) = (1 - alpha) b(x - 1) + alpha b(x),
// b the Binomial(c, 1/2) pmf, x the first coordinate in [0, c + 1] (the second is c + 1 - x).
// P / Q grows with r = b(x - 1) / b(x) = x / (c + 1 - x), so the positive terms are those with
// x > beta (c + 1), beta = r* / (1 + r*), r* the ratio where P = e^eps Q.
double DivergenceGivenClones(int64_t c, double alpha, double eps) {
  const double e = std::exp(eps);
  const double denominator = alpha - e * (1.0 - alpha);
  if (denominator <= 0.0) return 0.0;  // eps >= eps0: P <= e^eps Q everywhere
  const double r_star = (e * alpha - (1.0 - alpha)) / denominator;
  const double beta = r_star / (1.0 + r_star);
  const int64_t t = static_cast<int64_t>(std::floor(beta * static_cast<double>(c + 1))) + 1;
  if (t > c + 1) return 0.0;
  const double s_prev = UpperTailHalf(c, t - 1), s = UpperTailHalf(c, t);
  const double p_mass = alpha * s_prev + (1.0 - alpha) * s;
  const double q_mass = (1.0 - alpha) * s_prev + alpha * s;
  return std::max(0.0, p_mass - e * q_mass);
}

}  // namespace

double GenericCloneProbability(double eps0) { return std::exp(-eps0); }

double BinaryCloneProbability(const Channel& c) {
  const double yes = c.a + c.b, no = 2.0 - c.a - c.b;
  const double g_yes = yes > 0.0 ? 2.0 * std::min(c.a, c.b) / yes : 1.0;
  const double g_no = no > 0.0 ? 2.0 * std::min(1.0 - c.a, 1.0 - c.b) / no : 1.0;
  return std::clamp(std::min(g_yes, g_no), 0.0, 1.0);
}

absl::StatusOr<double> ClosedFormShuffleEpsilon(double eps0, int64_t n, double delta) {
  DENIABLE_RETURN_IF_ERROR(CheckEps0(eps0));
  DENIABLE_RETURN_IF_ERROR(CheckN(n));
  DENIABLE_RETURN_IF_ERROR(CheckDelta(delta));
  const double nd = static_cast<double>(n);
  const double limit = std::log(nd / (16.0 * std::log(2.0 / delta)));
  if (!(eps0 <= limit)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the closed-form shuffle bound holds only for eps0 <= log(n / (16 log(2 / delta))) = %.4g "
        "at n = %d, delta = %g, but eps0 is %.4g",
        limit, n, delta, eps0));
  }
  const double e = std::exp(eps0);
  const double inner = 8.0 * std::sqrt(e * std::log(4.0 / delta)) / std::sqrt(nd) + 8.0 * e / nd;
  return std::log1p((e - 1.0) / (e + 1.0) * inner);
}

absl::StatusOr<double> NumericalShuffleDelta(double eps0, double clone_probability, int64_t n,
                                             double eps) {
  DENIABLE_RETURN_IF_ERROR(CheckEps0(eps0));
  DENIABLE_RETURN_IF_ERROR(CheckClone(clone_probability));
  DENIABLE_RETURN_IF_ERROR(CheckN(n));
  if (!(eps >= 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat("eps must be >= 0, but is ", eps));
  }
  if (eps >= eps0) return 0.0;
  const double alpha = 1.0 / (1.0 + std::exp(-eps0));
  const int64_t m = n - 1;  // the other reports; C ~ Binomial(m, gamma)
  if (m == 0) return DivergenceGivenClones(0, alpha, eps);
  const double gamma = clone_probability;
  const boost::math::binomial_distribution<double, NoThrow> clones(static_cast<double>(m), gamma);
  const double mean = static_cast<double>(m) * gamma;
  const double sd = std::sqrt(static_cast<double>(m) * gamma * (1.0 - gamma));
  const int64_t lo =
      std::max<int64_t>(0, static_cast<int64_t>(std::floor(mean - kTailSds * sd)) - 10);
  const int64_t hi =
      std::min<int64_t>(m, static_cast<int64_t>(std::ceil(mean + kTailSds * sd)) + 10);
  auto cdf = [&](int64_t c) {
    if (c < 0) return 0.0;
    if (c >= m) return 1.0;
    return boost::math::cdf(clones, static_cast<double>(c));
  };
  // The divergence falls as c grows, so each block [s, e] is bounded by its value at s; C < lo is
  // bounded by its value at 0, C > hi by its value at hi.
  double delta = cdf(lo - 1) * DivergenceGivenClones(0, alpha, eps);
  const int64_t span = hi - lo + 1;
  const int64_t step = std::max<int64_t>(1, (span + kBlocks - 1) / kBlocks);
  for (int64_t s = lo; s <= hi; s += step) {
    const int64_t e = std::min(hi, s + step - 1);
    const double mass = cdf(e) - cdf(s - 1);
    if (mass > 0.0) delta += mass * DivergenceGivenClones(s, alpha, eps);
  }
  delta += (1.0 - cdf(hi)) * DivergenceGivenClones(hi, alpha, eps);
  return std::clamp(delta, 0.0, 1.0);
}

absl::StatusOr<double> NumericalShuffleEpsilon(double eps0, double clone_probability, int64_t n,
                                               double delta) {
  DENIABLE_RETURN_IF_ERROR(CheckEps0(eps0));
  DENIABLE_RETURN_IF_ERROR(CheckClone(clone_probability));
  DENIABLE_RETURN_IF_ERROR(CheckN(n));
  DENIABLE_RETURN_IF_ERROR(CheckDelta(delta));
  double lo = 0.0, hi = eps0;  // delta(hi) = 0 <= delta
  for (int i = 0; i < kBisectionSteps && hi - lo > kRelativePrecision * eps0; ++i) {
    const double mid = 0.5 * (lo + hi);
    DENIABLE_ASSIGN_OR_RETURN(double d, NumericalShuffleDelta(eps0, clone_probability, n, mid));
    if (d <= delta) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

absl::StatusOr<CentralPrivacy> AmplifiedEpsilon(double eps0, double clone_probability, int64_t n,
                                                double delta) {
  if (std::isnan(eps0) || !(eps0 > 0.0)) {
    return absl::InvalidArgumentError(absl::StrCat("eps0 must be > 0 (nats), but is ", eps0));
  }
  DENIABLE_RETURN_IF_ERROR(CheckN(n));
  DENIABLE_RETURN_IF_ERROR(CheckDelta(delta));
  CentralPrivacy out;
  out.n = n;
  out.local_epsilon = eps0;
  out.epsilon = eps0;
  out.method = "local_only";
  if (std::isinf(eps0)) {
    out.note =
        "the local epsilon is infinite (some report reveals its answer): shuffling hides "
        "nothing for that report";
    return out;
  }
  DENIABLE_RETURN_IF_ERROR(CheckClone(clone_probability));
  DENIABLE_ASSIGN_OR_RETURN(double eps, NumericalShuffleEpsilon(eps0, clone_probability, n, delta));
  if (eps > kMinGain * eps0) {
    out.note = absl::StrFormat(
        "no amplification worth a delta at n = %d and local epsilon %.4g (the shuffle bound "
        "gives %.4g at delta = %g): too few reports for this epsilon",
        n, eps0, eps, delta);
    return out;
  }
  out.epsilon = eps;
  out.delta = delta;
  out.amplified = true;
  out.method = "shuffle_numerical";
  return out;
}

}  // namespace deniable
