#include "deniable/common/estimator.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {

double PrevalenceFromYesShare(const Channel& channel, double lambda) {
  return (lambda - channel.b) / (channel.a - channel.b);
}

double YesShareFromPrevalence(const Channel& channel, double pi) {
  return pi * channel.a + (1.0 - pi) * channel.b;
}

absl::StatusOr<PrevalenceEstimate> EstimatePrevalence(const Channel& channel, int64_t yes_count,
                                                      int64_t n) {
  if (absl::Status s = ValidateChannel(channel); !s.ok()) return s;
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  if (yes_count < 0 || yes_count > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("yes_count must be in [0, n = ", n, "], but is ", yes_count));
  }
  PrevalenceEstimate e;
  e.n = n;
  e.yes_count = yes_count;
  e.yes_share = static_cast<double>(yes_count) / static_cast<double>(n);
  e.unbiased = PrevalenceFromYesShare(channel, e.yes_share);
  e.clipped = std::clamp(e.unbiased, 0.0, 1.0);
  const double gap = channel.a - channel.b;
  e.variance = e.yes_share * (1.0 - e.yes_share) / (static_cast<double>(n) * gap * gap);
  e.standard_error = std::sqrt(e.variance);
  e.estimated_yes_count = static_cast<double>(n) * e.unbiased;
  return e;
}

}  // namespace deniable
