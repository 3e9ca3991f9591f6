#include "deniable/common/shuffle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

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

constexpr int kBlocks = 128;       // evaluations of the divergence over the range of C
constexpr double kTailSds = 12.0;  // C beyond mean +- 12 sd is bounded, not summed
constexpr int kBisectionSteps = 40;
constexpr double kRelativePrecision = 1e-4;  // of the result, rounded up
constexpr double kMinGain = 0.99;            // claim (eps, delta) only if eps <= 0.99 eps0

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
  // S(t - 1) = S(t) + P(Binomial(c, 1/2) = t - 1), the pmf from the beta density (as Boost's
  // binomial pdf computes it), cheaper than a second incomplete beta.
  const double s = UpperTailHalf(c, t);
  const double pmf = t - 1 < 0 || t - 1 > c ? 0.0
                                            : boost::math::ibeta_derivative(
                                                  static_cast<double>(t),
                                                  static_cast<double>(c - t + 2), 0.5, NoThrow()) /
                                                  static_cast<double>(c + 1);
  const double s_prev = std::min(1.0, s + pmf);
  const double p_mass = alpha * s_prev + (1.0 - alpha) * s;
  const double q_mass = (1.0 - alpha) * s_prev + alpha * s;
  return std::max(0.0, p_mass - e * q_mass);
}

// The number of clones C ~ Binomial(n - 1, gamma), cut into at most kBlocks blocks of
// neighbouring values over mean +- kTailSds sd, with the mass of each block and of both tails.
// The divergence falls as c grows (one more clone is a post-processing of the pair), so a block
// [s, e] is bounded by its value at s, C below the range by its value at 0, C above the range by
// its value at the range's end: Delta is an upper bound on the exact sum.
class CloneBlocks {
 public:
  CloneBlocks(double gamma, int64_t n) : m_(n - 1) {
    if (m_ == 0) {
      starts_ = {0};
      masses_ = {1.0};
      return;
    }
    const boost::math::binomial_distribution<double, NoThrow> clones(static_cast<double>(m_),
                                                                     gamma);
    auto cdf = [&](int64_t c) {
      if (c < 0) return 0.0;
      if (c >= m_) return 1.0;
      return boost::math::cdf(clones, static_cast<double>(c));
    };
    const double mean = static_cast<double>(m_) * gamma;
    const double sd = std::sqrt(static_cast<double>(m_) * gamma * (1.0 - gamma));
    const int64_t lo =
        std::max<int64_t>(0, static_cast<int64_t>(std::floor(mean - kTailSds * sd)) - 10);
    const int64_t hi =
        std::min<int64_t>(m_, static_cast<int64_t>(std::ceil(mean + kTailSds * sd)) + 10);
    below_ = cdf(lo - 1);
    const int64_t step = std::max<int64_t>(1, (hi - lo + kBlocks) / kBlocks);
    double previous = below_;
    for (int64_t s = lo; s <= hi; s += step) {
      const double upto = cdf(std::min(hi, s + step - 1));
      if (upto > previous) {
        starts_.push_back(s);
        masses_.push_back(upto - previous);
      }
      previous = upto;
    }
    above_ = 1.0 - previous;
    last_ = hi;
  }

  // The upper bound on delta(eps) for alpha = e^eps0 / (e^eps0 + 1).
  double Delta(double alpha, double eps) const {
    double delta = 0.0;
    if (below_ > 0.0) delta += below_ * DivergenceGivenClones(0, alpha, eps);
    for (size_t i = 0; i < starts_.size(); ++i) {
      delta += masses_[i] * DivergenceGivenClones(starts_[i], alpha, eps);
    }
    if (above_ > 0.0) delta += above_ * DivergenceGivenClones(last_, alpha, eps);
    return std::clamp(delta, 0.0, 1.0);
  }

 private:
  int64_t m_;
  std::vector<int64_t> starts_;
  std::vector<double> masses_;
  double below_ = 0, above_ = 0;
  int64_t last_ = 0;
};

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
  return CloneBlocks(clone_probability, n).Delta(1.0 / (1.0 + std::exp(-eps0)), eps);
}

absl::StatusOr<double> NumericalShuffleEpsilon(double eps0, double clone_probability, int64_t n,
                                               double delta) {
  DENIABLE_RETURN_IF_ERROR(CheckEps0(eps0));
  DENIABLE_RETURN_IF_ERROR(CheckClone(clone_probability));
  DENIABLE_RETURN_IF_ERROR(CheckN(n));
  DENIABLE_RETURN_IF_ERROR(CheckDelta(delta));
  const CloneBlocks blocks(clone_probability, n);
  const double alpha = 1.0 / (1.0 + std::exp(-eps0));
  double lo = 0.0, hi = eps0;  // delta(eps0) = 0 <= delta
  // Start from the closed form when it applies and is met here (as Apple's code does).
  absl::StatusOr<double> closed = ClosedFormShuffleEpsilon(eps0, n, delta);
  if (closed.ok() && *closed < hi && blocks.Delta(alpha, *closed) <= delta) hi = *closed;
  for (int i = 0; i < kBisectionSteps && hi - lo > kRelativePrecision * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (blocks.Delta(alpha, mid) <= delta) {
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
