#include "deniable/common/combine.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {

const char* VersionCombinationName(VersionCombination combination) {
  switch (combination) {
    case VersionCombination::kByReports:
      return "by_reports";
    case VersionCombination::kInverseVariance:
      return "inverse_variance";
  }
  return "unknown";
}

absl::StatusOr<CombinedEstimate> CombineByReports(std::span<const PrevalenceEstimate> parts) {
  if (parts.empty()) return absl::InvalidArgumentError("parts must not be empty");
  CombinedEstimate out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].n <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("parts[", i, "].n must be > 0, but is ", parts[i].n));
    }
    const double v = parts[i].variance;
    if (!(v >= 0.0 && std::isfinite(v))) {
      return absl::InvalidArgumentError(
          absl::StrCat("parts[", i, "].variance must be finite and >= 0, but is ", v));
    }
    out.n += parts[i].n;
  }
  const double total = static_cast<double>(out.n);
  double sum = 0.0, variance = 0.0;
  for (const PrevalenceEstimate& p : parts) {
    const double w = static_cast<double>(p.n) / total;
    out.weights.push_back(w);
    sum += w * p.unbiased;
    variance += w * w * p.variance;
  }
  out.unbiased = sum;
  out.clipped = std::clamp(out.unbiased, 0.0, 1.0);
  out.variance = variance;
  out.standard_error = std::sqrt(variance);
  return out;
}

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
  for (const PrevalenceEstimate& p : parts) out.weights.push_back(out.variance / p.variance);
  return out;
}

absl::StatusOr<CombinedEstimate> CombineVersions(std::span<const PrevalenceEstimate> parts,
                                                 VersionCombination combination) {
  return combination == VersionCombination::kInverseVariance ? CombineByInverseVariance(parts)
                                                             : CombineByReports(parts);
}

}  // namespace deniable
