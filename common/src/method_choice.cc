#include "deniable/common/method_choice.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace deniable {

const char kDefaultMethodRule[] =
    "Wilson when P(report yes) stays at least 0.04 away from 0 and 1 (min(a, b, 1 - a, 1 - b) >= "
    "0.04), else Agresti-Coull; an explicitly requested method is always used.";

double ChannelEdge(const Channel& channel) {
  return std::min({channel.a, channel.b, 1.0 - channel.a, 1.0 - channel.b});
}

MethodChoice DefaultIntervalMethod(const Channel& channel) {
  const double edge = ChannelEdge(channel);
  const double lo = std::min(channel.a, channel.b), hi = std::max(channel.a, channel.b);
  MethodChoice c;
  if (edge >= kWilsonMinEdge) {
    c.method = IntervalMethod::kWilson;
    c.reason = absl::StrFormat(
        "default for this design: P(report yes) stays in [%.4g, %.4g], at least %.2g from 0 and "
        "1, where Wilson covers as well as in the middle of the range (docs/coverage.md)",
        lo, hi, kWilsonMinEdge);
  } else {
    c.method = IntervalMethod::kAgrestiCoull;
    c.reason = absl::StrFormat(
        "default for this design: P(report yes) can come within %.4g of %s (a = %.4g, b = %.4g), "
        "where Wilson's worst coverage falls to 86 %% and Agresti-Coull's stays above 92.9 %% "
        "(docs/coverage.md)",
        edge, lo <= 1.0 - hi ? "0" : "1", channel.a, channel.b);
  }
  return c;
}

}  // namespace deniable
