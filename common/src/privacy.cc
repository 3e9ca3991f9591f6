#include "deniable/common/privacy.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

absl::Status CheckArguments(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(ValidateChannel(channel));
  if (!(pi >= 0.0 && pi <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("pi must be in [0, 1], but is ", pi));
  }
  return absl::OkStatus();
}

// P(x = 1 | r) from the joint weights P(x = 1, r) and P(x = 0, r); a report of probability 0
// leaves the prior unchanged.
double Posterior(double pi, double joint_x1, double joint_x0) {
  const double total = joint_x1 + joint_x0;
  if (total == 0.0) return pi;
  return std::clamp(joint_x1 / total, 0.0, 1.0);
}

double YesPosterior(const Channel& c, double pi) {
  return Posterior(pi, pi * c.a, (1.0 - pi) * c.b);
}

double NoPosterior(const Channel& c, double pi) {
  return Posterior(pi, pi * (1.0 - c.a), (1.0 - pi) * (1.0 - c.b));
}

double ConditionalEntropy(const Channel& c, double pi) {
  const double p_yes = pi * c.a + (1.0 - pi) * c.b;
  return p_yes * BinaryEntropyBits(YesPosterior(c, pi)) +
         (1.0 - p_yes) * BinaryEntropyBits(NoPosterior(c, pi));
}

}  // namespace

double BinaryEntropyBits(double p) {
  auto term = [](double x) { return x > 0.0 ? -x * std::log2(x) : 0.0; };
  return term(p) + term(1.0 - p);
}

absl::StatusOr<double> PosteriorGivenYes(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(channel, pi));
  return YesPosterior(channel, pi);
}

absl::StatusOr<double> PosteriorGivenNo(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(channel, pi));
  return NoPosterior(channel, pi);
}

absl::StatusOr<double> PriorEntropyBits(double pi) {
  if (!(pi >= 0.0 && pi <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("pi must be in [0, 1], but is ", pi));
  }
  return BinaryEntropyBits(pi);
}

absl::StatusOr<double> ConditionalEntropyBits(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(channel, pi));
  return std::min(ConditionalEntropy(channel, pi), BinaryEntropyBits(pi));
}

absl::StatusOr<double> MutualInformationBits(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(channel, pi));
  return std::max(0.0, BinaryEntropyBits(pi) - ConditionalEntropy(channel, pi));
}

absl::StatusOr<PrivacyFigures> ComputePrivacyFigures(const Channel& channel, double pi) {
  DENIABLE_RETURN_IF_ERROR(CheckArguments(channel, pi));
  PrivacyFigures f;
  f.epsilon = Epsilon(channel);
  f.posterior_given_yes = YesPosterior(channel, pi);
  f.posterior_given_no = NoPosterior(channel, pi);
  f.prior_entropy_bits = BinaryEntropyBits(pi);
  f.conditional_entropy_bits = std::min(ConditionalEntropy(channel, pi), f.prior_entropy_bits);
  f.mutual_information_bits = f.prior_entropy_bits - f.conditional_entropy_bits;
  return f;
}

absl::StatusOr<double> UninformativeInnocuousShare(double big_p, double pi_a) {
  if (!(big_p > 0.0 && big_p < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "P must be in (0, 1) (at P = 1 no innocuous question is asked), but is ", big_p));
  }
  if (!(pi_a >= 0.0 && pi_a <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("pi_A must be in [0, 1], but is ", pi_a));
  }
  if (!(pi_a > 0.0 && pi_a < 0.5)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no pi_B makes a \"yes\" uninformative unless 0 < pi_A < 1/2, but pi_A is ", pi_a));
  }
  const double pi_b = big_p * pi_a / ((1.0 - big_p) * (1.0 - 2.0 * pi_a));
  if (pi_b > 1.0) {
    return absl::FailedPreconditionError(
        absl::StrCat("no pi_B makes a \"yes\" uninformative at P = ", big_p, ", pi_A = ", pi_a,
                     ": P pi_A / ((1 - P)(1 - 2 pi_A)) = ", pi_b, " > 1; choose a smaller P"));
  }
  return pi_b;
}

}  // namespace deniable
