#include "deniable/common/combine.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {

absl::StatusOr<CombinedEstimate> CombineByInverseVariance(
    std::span<const PrevalenceEstimate> parts) {
  if (parts.empty()) return absl::InvalidArgumentError("parts must not be empty");
  double weight_sum = 0.0;
  double weighted_sum = 0.0;
  CombinedEstimate out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const double v = parts[i].variance;
    if (!(v > 0.0 && std::isfinite(v))) {
      return absl::FailedPreconditionError(
          absl::StrCat("parts[", i, "].variance must be finite and > 0, but is ", v));
    }
    weight_sum += 1.0 / v;
    weighted_sum += parts[i].unbiased / v;
    out.n += parts[i].n;
  }
  out.unbiased = weighted_sum / weight_sum;
  out.clipped = std::clamp(out.unbiased, 0.0, 1.0);
  out.variance = 1.0 / weight_sum;
  out.standard_error = std::sqrt(out.variance);
  return out;
}

}  // namespace deniable
