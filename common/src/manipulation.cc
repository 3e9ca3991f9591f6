#include "deniable/common/manipulation.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {
namespace {

absl::Status CheckCounts(int64_t n, int64_t m) {
  if (n < 1) return absl::InvalidArgumentError(absl::StrCat("n: must be >= 1, but is ", n));
  if (m < 0) {
    return absl::InvalidArgumentError(absl::StrCat("fake_reports: must be >= 0, but is ", m));
  }
  return absl::OkStatus();
}

ManipulationShift Finish(double estimate, int64_t m, double up, double down, double uniform) {
  ManipulationShift s;
  s.fake_reports = m;
  s.shift_up = std::max(0.0, up);
  s.shift_down = std::max(0.0, down);
  s.bound = std::max(s.shift_up, s.shift_down);
  s.uniform = uniform;
  s.honest_lower = estimate - s.shift_up;
  s.honest_upper = estimate + s.shift_down;
  return s;
}

}  // namespace

int64_t DefaultManipulationReports(int64_t n) { return std::max<int64_t>(1, (n + 99) / 100); }

absl::StatusOr<ManipulationShift> MeanManipulation(double mean, int64_t n, int64_t m, double lo,
                                                   double hi) {
  if (absl::Status s = CheckCounts(n, m); !s.ok()) return s;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(lo < hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat("lo: must be finite and below hi (", hi, "), but is ", lo));
  }
  const double mu = std::clamp(mean, lo, hi);
  const double nd = static_cast<double>(n);
  const double md = static_cast<double>(std::min(m, n));
  double up = mu - lo;  // m >= n: the honest mean may be anywhere in [lo, hi]
  double down = hi - mu;
  if (m < n) {
    up = std::min(up, md * (hi - mu) / (nd - md));
    down = std::min(down, md * (mu - lo) / (nd - md));
  }
  return Finish(mu, m, up, down, md * (hi - lo) / nd);
}

absl::StatusOr<ManipulationShift> BinaryManipulation(Channel channel, int64_t n, int64_t yes,
                                                     int64_t m) {
  if (absl::Status s = CheckCounts(n, m); !s.ok()) return s;
  if (yes < 0 || yes > n) {
    return absl::InvalidArgumentError(
        absl::StrCat("yes: must be in [0, n = ", n, "], but is ", yes));
  }
  const double ab = channel.a - channel.b;
  if (!(ab > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("channel: needs a > b, but a = ", channel.a, " and b = ", channel.b));
  }
  const double lambda = static_cast<double>(yes) / static_cast<double>(n);
  double honest_min = 0;  // of the honest reports' share of bit 1
  double honest_max = 1;
  if (m < n) {
    const double honest = static_cast<double>(n - m);
    honest_min = static_cast<double>(std::max<int64_t>(0, yes - m)) / honest;
    honest_max = static_cast<double>(std::min(yes, n - m)) / honest;
  }
  const double estimate = (lambda - channel.b) / ab;
  return Finish(estimate, m, (lambda - honest_min) / ab, (honest_max - lambda) / ab,
                static_cast<double>(std::min(m, n)) / (static_cast<double>(n) * ab));
}

}  // namespace deniable
