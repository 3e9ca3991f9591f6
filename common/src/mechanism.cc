// The registry (MechanismFor) and what every mechanism shares: counter increments and the
// combination of design versions.
#include "deniable/common/mechanism.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/categorical_mechanism.h"
#include "deniable/common/estimator.h"
#include "deniable/common/status_macros.h"
#include "deniable/common/yes_no_mechanism.h"

namespace deniable {

const char* ReportKindName(ReportKind kind) {
  switch (kind) {
    case ReportKind::kYesNo:
      return "yes_no";
    case ReportKind::kCategorical:
      return "categorical";
  }
  return "unknown";
}

void CounterIncrements::AddTo(std::span<int64_t> counters) const {
  counters[0] += 1;
  for (uint16_t j : ones) counters[1 + j] += 1;
}

std::shared_ptr<const Mechanism> MechanismFor(const Design& design) {
  return std::make_shared<YesNoMechanism>(design);
}

std::shared_ptr<const Mechanism> MechanismFor(const CategoricalDesign& design) {
  return std::make_shared<CategoricalReportMechanism>(design);
}

absl::StatusOr<MechanismEstimate> EstimateVersions(std::span<const VersionCounters> parts,
                                                   const MechanismEstimateOptions& options,
                                                   VersionCombination combination) {
  if (parts.empty()) return absl::InvalidArgumentError("parts: no design version to estimate");
  for (const VersionCounters& part : parts) {
    if (part.mechanism == nullptr) return absl::InvalidArgumentError("parts: a part has no design");
  }
  const int k = parts[0].mechanism->Layout().coordinates;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].mechanism->Layout().coordinates != k) {
      return absl::InvalidArgumentError(
          absl::StrCat("parts[", i, "]: has ", parts[i].mechanism->Layout().coordinates,
                       " coordinates, parts[0] has ", k, "; only versions of one layout combine"));
    }
  }
  if (parts.size() == 1) return parts[0].mechanism->Estimate(parts[0].counters, options);
  std::vector<MechanismEstimate> each;
  for (const VersionCounters& part : parts) {
    DENIABLE_ASSIGN_OR_RETURN(MechanismEstimate e,
                              part.mechanism->Estimate(part.counters, options));
    each.push_back(std::move(e));
  }
  MechanismEstimate out;
  out.confidence_level = options.confidence_level;
  out.method = IntervalMethod::kWald;
  out.per_coordinate_level =
      k == 1 ? options.confidence_level
             : PerCategoryLevel(options.confidence_level, k, options.simultaneous);
  const double z = TwoSidedNormalQuantile(options.confidence_level);
  const double z_joint = TwoSidedNormalQuantile(out.per_coordinate_level);
  for (const MechanismEstimate& e : each) out.n += e.n;
  for (int j = 0; j < k; ++j) {
    std::vector<PrevalenceEstimate> binary;
    CoordinateEstimate c;
    for (const MechanismEstimate& e : each) {
      const CoordinateEstimate& ej = e.coordinates[static_cast<size_t>(j)];
      PrevalenceEstimate p;
      p.n = e.n;
      p.yes_count = ej.successes;
      p.unbiased = ej.unbiased;
      p.variance = ej.variance;
      p.standard_error = ej.standard_error;
      binary.push_back(p);
      c.successes += ej.successes;
    }
    DENIABLE_ASSIGN_OR_RETURN(CombinedEstimate combined, CombineVersions(binary, combination));
    c.success_share = static_cast<double>(c.successes) / static_cast<double>(out.n);
    c.unbiased = combined.unbiased;
    c.clipped = combined.clipped;
    c.variance = combined.variance;
    c.standard_error = combined.standard_error;
    const auto wald = [&](double zz) {
      PrevalenceInterval i;
      const double lower = c.unbiased - zz * c.standard_error;
      const double upper = c.unbiased + zz * c.standard_error;
      i.lower = std::clamp(lower, 0.0, 1.0);
      i.upper = std::clamp(upper, 0.0, 1.0);
      i.clipped = lower < 0.0 || upper > 1.0;
      return i;
    };
    c.interval = wald(z);
    c.simultaneous = wald(z_joint);
    out.coordinates.push_back(c);
  }
  if (k > 1) {
    std::vector<double> unbiased;
    for (const CoordinateEstimate& c : out.coordinates) unbiased.push_back(c.unbiased);
    const std::vector<double> consistent = NormSub(unbiased);
    for (int j = 0; j < k; ++j) out.coordinates[static_cast<size_t>(j)].clipped = consistent[j];
  }
  return out;
}

}  // namespace deniable
