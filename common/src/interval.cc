#include "deniable/common/interval.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/math/distributions/beta.hpp"
#include "boost/math/distributions/normal.hpp"
#include "deniable/common/estimator.h"

namespace deniable {
namespace {

// Boost.Math reports errors through return values (NaN, infinity), never exceptions: inputs are
// validated first, and this is the second guard (no handler may end in UNKNOWN).
using NoThrowPolicy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::denorm_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::rounding_error<boost::math::policies::ignore_error>>;

double BetaQuantile(double alpha, double beta, double p) {
  return boost::math::quantile(boost::math::beta_distribution<double, NoThrowPolicy>(alpha, beta),
                               p);
}

Interval Clamp01(double lower, double upper) {
  return Interval{std::clamp(lower, 0.0, 1.0), std::clamp(upper, 0.0, 1.0)};
}

}  // namespace

const char* IntervalMethodName(IntervalMethod method) {
  switch (method) {
    case IntervalMethod::kWald:
      return "wald";
    case IntervalMethod::kWilson:
      return "wilson";
    case IntervalMethod::kAgrestiCoull:
      return "agresti_coull";
    case IntervalMethod::kJeffreys:
      return "jeffreys";
    case IntervalMethod::kClopperPearson:
      return "clopper_pearson";
  }
  return "unknown";
}

absl::StatusOr<IntervalMethod> ParseIntervalMethod(absl::string_view name) {
  for (IntervalMethod m :
       {IntervalMethod::kWald, IntervalMethod::kWilson, IntervalMethod::kAgrestiCoull,
        IntervalMethod::kJeffreys, IntervalMethod::kClopperPearson}) {
    if (name == IntervalMethodName(m)) return m;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("method must be one of wald, wilson, agresti_coull, jeffreys, "
                   "clopper_pearson, but is \"",
                   name, "\""));
}

double TwoSidedNormalQuantile(double confidence_level) {
  return boost::math::quantile(boost::math::normal_distribution<double, NoThrowPolicy>(),
                               1.0 - (1.0 - confidence_level) / 2.0);
}

absl::StatusOr<Interval> YesShareInterval(IntervalMethod method, int64_t yes_count, int64_t n,
                                          double confidence_level) {
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  if (yes_count < 0 || yes_count > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("yes_count must be in [0, n = ", n, "], but is ", yes_count));
  }
  if (!(confidence_level > 0.0 && confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1 - 1e-12], but is ", confidence_level));
  }
  const double y = static_cast<double>(yes_count);
  const double nn = static_cast<double>(n);
  const double alpha = 1.0 - confidence_level;
  const double lambda = y / nn;
  switch (method) {
    case IntervalMethod::kWald: {
      const double half =
          TwoSidedNormalQuantile(confidence_level) * std::sqrt(lambda * (1.0 - lambda) / nn);
      return Clamp01(lambda - half, lambda + half);
    }
    case IntervalMethod::kWilson: {
      const double z = TwoSidedNormalQuantile(confidence_level);
      const double z2 = z * z;
      const double center = (lambda + z2 / (2.0 * nn)) / (1.0 + z2 / nn);
      const double half =
          z / (1.0 + z2 / nn) * std::sqrt(lambda * (1.0 - lambda) / nn + z2 / (4.0 * nn * nn));
      return Clamp01(center - half, center + half);
    }
    case IntervalMethod::kAgrestiCoull: {
      const double z = TwoSidedNormalQuantile(confidence_level);
      const double n_tilde = nn + z * z;
      const double p_tilde = (y + z * z / 2.0) / n_tilde;
      const double half = z * std::sqrt(p_tilde * (1.0 - p_tilde) / n_tilde);
      return Clamp01(p_tilde - half, p_tilde + half);
    }
    case IntervalMethod::kJeffreys: {
      const double lower = yes_count == 0 ? 0.0 : BetaQuantile(y + 0.5, nn - y + 0.5, alpha / 2);
      const double upper =
          yes_count == n ? 1.0 : BetaQuantile(y + 0.5, nn - y + 0.5, 1.0 - alpha / 2);
      return Clamp01(lower, upper);
    }
    case IntervalMethod::kClopperPearson: {
      const double lower = yes_count == 0 ? 0.0 : BetaQuantile(y, nn - y + 1.0, alpha / 2);
      const double upper = yes_count == n ? 1.0 : BetaQuantile(y + 1.0, nn - y, 1.0 - alpha / 2);
      return Clamp01(lower, upper);
    }
  }
  return absl::InvalidArgumentError("method is not a known interval method");
}

absl::StatusOr<PrevalenceInterval> MakePrevalenceInterval(const Channel& channel, int64_t yes_count,
                                                          int64_t n, double confidence_level,
                                                          IntervalMethod method) {
  if (absl::Status s = ValidateChannel(channel); !s.ok()) return s;
  absl::StatusOr<Interval> lambda_ci = YesShareInterval(method, yes_count, n, confidence_level);
  if (!lambda_ci.ok()) return lambda_ci.status();
  double lower = PrevalenceFromYesShare(channel, lambda_ci->lower);
  double upper = PrevalenceFromYesShare(channel, lambda_ci->upper);
  if (lower > upper) std::swap(lower, upper);  // a < b reverses the map
  PrevalenceInterval out;
  out.clipped = lower < 0.0 || upper > 1.0;
  out.lower = std::clamp(lower, 0.0, 1.0);
  out.upper = std::clamp(upper, 0.0, 1.0);
  return out;
}

}  // namespace deniable
