#include "deniable/common/design.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable {
namespace {

absl::Status CheckProbability(const char* name, double value) {
  if (!std::isfinite(value) || value < 0.0 || value > 1.0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " must be a probability in [0, 1], but is ", value));
  }
  return absl::OkStatus();
}

// Refuses a channel whose |a - b| is below kMinChannelGap, naming `name` (= `value`).
absl::Status CheckGap(const char* name, double value, const Channel& channel) {
  const double gap = std::fabs(channel.a - channel.b);
  if (!(gap >= kMinChannelGap)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " gives |a - b| = ", gap, ", below the minimum ", kMinChannelGap,
        " (the estimate's variance grows as 1 / (a - b)^2; nothing useful can be estimated), "
        "but is ",
        absl::StrFormat("%.17g", value)));
  }
  return absl::OkStatus();
}

}  // namespace

const char* DesignKindName(DesignKind kind) {
  switch (kind) {
    case DesignKind::kSymmetricEpsilon:
      return "symmetric_epsilon";
    case DesignKind::kForcedResponse:
      return "forced_response";
    case DesignKind::kTwoCoin:
      return "two_coin";
    case DesignKind::kTailsSaysYes:
      return "tails_says_yes";
    case DesignKind::kUnrelatedQuestion:
      return "unrelated_question";
    case DesignKind::kMirroredQuestion:
      return "mirrored_question";
    case DesignKind::kTruthWithGamma:
      return "truth_with_gamma";
  }
  return "unknown";
}

absl::StatusOr<Design> Design::SymmetricEpsilon(double epsilon) {
  if (!std::isfinite(epsilon) || epsilon <= 0.0) {
    return absl::InvalidArgumentError(
        absl::StrCat("epsilon must be finite and > 0, but is ", epsilon));
  }
  if (epsilon > kMaxSymmetricEpsilon) {
    return absl::InvalidArgumentError(
        absl::StrCat("epsilon must be at most ", kMaxSymmetricEpsilon, " nats, but is ", epsilon));
  }
  // a = e^eps / (1 + e^eps) written as 1 / (1 + e^-eps) to stay finite for large epsilon.
  const double a = 1.0 / (1.0 + std::exp(-epsilon));
  Design d(DesignKind::kSymmetricEpsilon, Channel{a, 1.0 - a});
  if (absl::Status s = CheckGap("epsilon", epsilon, d.channel_); !s.ok()) return s;
  d.epsilon_ = epsilon;
  return d;
}

absl::StatusOr<Design> Design::ForcedResponse(double p, double q) {
  if (absl::Status s = CheckProbability("p", p); !s.ok()) return s;
  if (absl::Status s = CheckProbability("q", q); !s.ok()) return s;
  if (p == 0.0) {
    return absl::InvalidArgumentError(
        "p must be > 0 (with p = 0 a == b and nothing can be "
        "estimated), but is 0");
  }
  Design d(DesignKind::kForcedResponse, Channel{p + (1.0 - p) * q, (1.0 - p) * q});
  if (absl::Status s = CheckGap("p", p, d.channel_); !s.ok()) return s;
  d.p_ = p;
  d.q_ = q;
  return d;
}

Design Design::TwoCoin() {
  Design d(DesignKind::kTwoCoin, Channel{0.75, 0.25});
  d.p_ = 0.5;
  d.q_ = 0.5;
  return d;
}

Design Design::TailsSaysYes() {
  Design d(DesignKind::kTailsSaysYes, Channel{1.0, 0.5});
  d.p_ = 0.5;
  d.q_ = 1.0;
  return d;
}

absl::StatusOr<Design> Design::UnrelatedQuestion(double big_p, double pi_b) {
  if (absl::Status s = CheckProbability("P", big_p); !s.ok()) return s;
  if (absl::Status s = CheckProbability("pi_B", pi_b); !s.ok()) return s;
  if (big_p == 0.0) {
    return absl::InvalidArgumentError(
        "P must be > 0 (with P = 0 a == b and nothing can be estimated), but is 0");
  }
  Design d(DesignKind::kUnrelatedQuestion,
           Channel{big_p + (1.0 - big_p) * pi_b, (1.0 - big_p) * pi_b});
  if (absl::Status s = CheckGap("P", big_p, d.channel_); !s.ok()) return s;
  d.big_p_ = big_p;
  d.pi_b_ = pi_b;
  return d;
}

absl::StatusOr<Design> Design::MirroredQuestion(double big_p) {
  if (absl::Status s = CheckProbability("P", big_p); !s.ok()) return s;
  if (big_p == 0.5) {
    return absl::InvalidArgumentError(
        "P must differ from 1/2 (with P = 1/2 a == b and nothing can be estimated), but is 0.5");
  }
  Design d(DesignKind::kMirroredQuestion, Channel{big_p, 1.0 - big_p});
  if (absl::Status s = CheckGap("P", big_p, d.channel_); !s.ok()) return s;
  d.big_p_ = big_p;
  return d;
}

absl::StatusOr<Design> Design::TruthWithGamma(double gamma) {
  if (!std::isfinite(gamma) || gamma < -0.5 || gamma > 0.5) {
    return absl::InvalidArgumentError(absl::StrCat("gamma must be in [-1/2, 1/2], but is ", gamma));
  }
  if (gamma == 0.0) {
    return absl::InvalidArgumentError(
        "gamma must be != 0 (with gamma = 0 a == b and nothing can be estimated), but is 0");
  }
  Design d(DesignKind::kTruthWithGamma, Channel{0.5 + gamma, 0.5 - gamma});
  if (absl::Status s = CheckGap("gamma", gamma, d.channel_); !s.ok()) return s;
  d.gamma_ = gamma;
  return d;
}

std::string Design::ToString() const {
  switch (kind_) {
    case DesignKind::kSymmetricEpsilon:
      return absl::StrFormat("symmetric_epsilon(epsilon=%g)", epsilon_);
    case DesignKind::kForcedResponse:
      return absl::StrFormat("forced_response(p=%g, q=%g)", p_, q_);
    case DesignKind::kUnrelatedQuestion:
      return absl::StrFormat("unrelated_question(P=%g, pi_B=%g)", big_p_, pi_b_);
    case DesignKind::kMirroredQuestion:
      return absl::StrFormat("mirrored_question(P=%g)", big_p_);
    case DesignKind::kTruthWithGamma:
      return absl::StrFormat("truth_with_gamma(gamma=%g)", gamma_);
    case DesignKind::kTwoCoin:
    case DesignKind::kTailsSaysYes:
      break;
  }
  return DesignKindName(kind_);
}

absl::Status ValidateChannel(const Channel& channel) {
  if (absl::Status s = CheckProbability("a", channel.a); !s.ok()) return s;
  if (absl::Status s = CheckProbability("b", channel.b); !s.ok()) return s;
  if (channel.a == channel.b) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a must differ from b (else nothing can be estimated), but both are ", channel.a));
  }
  return absl::OkStatus();
}

bool RevealsEveryAnswer(const Channel& channel) {
  return (channel.a == 1.0 && channel.b == 0.0) || (channel.a == 0.0 && channel.b == 1.0);
}

double Epsilon(const Channel& channel) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // |ln(x / y)| with the conventions ln(0 / 0) = 0 (both impossible) and ln(x / 0) = infinity.
  auto abs_log_ratio = [](double x, double y) {
    if (x == y) return 0.0;
    if (x == 0.0 || y == 0.0) return kInf;
    return std::fabs(std::log(x / y));
  };
  return std::max(abs_log_ratio(channel.a, channel.b),
                  abs_log_ratio(1.0 - channel.a, 1.0 - channel.b));
}

}  // namespace deniable
