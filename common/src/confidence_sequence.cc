#include "deniable/common/confidence_sequence.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/interval.h"

namespace deniable {
namespace {

absl::Status Prefixed(absl::string_view prefix, const absl::Status& s) {
  return absl::InvalidArgumentError(absl::StrCat(prefix, ".", s.message()));
}

}  // namespace

double NormalMixtureOptimalRatio(double alpha) {
  const double l = 2.0 * std::log(1.0 / alpha);
  // h(x) = log(1 + 1/x) + l - 1/x is increasing (h'(x) = 1/x^2 - 1/(x^2 + x) > 0), -> -inf at 0
  // and -> l > 0 at infinity: one root, bracketed below.
  const auto h = [l](double x) { return std::log1p(1.0 / x) + l - 1.0 / x; };
  double lo = 1e-12;
  double hi = 1.0;
  while (h(hi) < 0.0) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (h(mid) < 0.0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

double NormalMixtureBoundary(double variance_proxy, double rho, double alpha) {
  const double s = variance_proxy + rho;
  return std::sqrt(s * (std::log(s / rho) + 2.0 * std::log(1.0 / alpha)));
}

double DebiasedReportSigma(const Channel& channel) {
  return 1.0 / (2.0 * std::abs(channel.a - channel.b));
}

double BonferroniLevel(double confidence_level, int k) {
  return 1.0 - (1.0 - confidence_level) / static_cast<double>(std::max(k, 1));
}

absl::StatusOr<AnytimeInterval> AnytimePrevalenceInterval(std::span<const AnytimeBlock> blocks,
                                                          const AnytimeOptions& options) {
  if (!(options.confidence_level > 0.0 && options.confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "confidence_level must be in (0, 1 - 1e-12], but is ", options.confidence_level));
  }
  if (options.tuned_reports <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tuned_reports must be > 0, but is ", options.tuned_reports));
  }
  if (absl::Status s = ValidateChannel(options.reference_channel); !s.ok()) {
    return Prefixed("reference_channel", s);
  }
  AnytimeInterval out;
  double sum = 0;  // S_t
  for (size_t i = 0; i < blocks.size(); ++i) {
    const AnytimeBlock& b = blocks[i];
    const std::string field = absl::StrCat("blocks[", i, "]");
    if (b.trials < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".trials must be >= 0, but is ", b.trials));
    }
    if (b.successes < 0 || b.successes > b.trials) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".successes must be in [0, trials = ", b.trials, "], but is ", b.successes));
    }
    if (b.trials == 0) continue;
    if (absl::Status s = ValidateChannel(b.channel); !s.ok()) {
      return Prefixed(absl::StrCat(field, ".channel"), s);
    }
    const double n = static_cast<double>(b.trials);
    const double sigma = DebiasedReportSigma(b.channel);
    sum += (static_cast<double>(b.successes) - n * b.channel.b) / (b.channel.a - b.channel.b);
    out.variance_proxy += n * sigma * sigma;
    out.trials += b.trials;
  }
  if (out.trials == 0) return absl::InvalidArgumentError("blocks hold no reports");
  const double alpha = 1.0 - options.confidence_level;
  const double ref_sigma = DebiasedReportSigma(options.reference_channel);
  out.rho = NormalMixtureOptimalRatio(alpha) * static_cast<double>(options.tuned_reports) *
            ref_sigma * ref_sigma;
  const double t = static_cast<double>(out.trials);
  out.center = sum / t;
  out.half_width = NormalMixtureBoundary(out.variance_proxy, out.rho, alpha) / t;
  const double lower = out.center - out.half_width;
  const double upper = out.center + out.half_width;
  out.clipped = lower < 0.0 || upper > 1.0;
  out.lower = std::clamp(lower, 0.0, 1.0);
  out.upper = std::clamp(upper, 0.0, 1.0);
  return out;
}

absl::StatusOr<AnytimeInterval> AnytimePrevalenceInterval(const Channel& channel, int64_t yes_count,
                                                          int64_t n, double confidence_level,
                                                          int64_t tuned_reports) {
  const AnytimeBlock block{channel, yes_count, n};
  AnytimeOptions options;
  options.confidence_level = confidence_level;
  options.tuned_reports = tuned_reports;
  options.reference_channel = channel;
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  return AnytimePrevalenceInterval(std::span<const AnytimeBlock>(&block, 1), options);
}

}  // namespace deniable
