// The registry (MechanismFor) and what every mechanism shares: counter increments and the
// combination of design versions.
#include "deniable/common/mechanism.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/categorical_mechanism.h"
#include "deniable/common/estimator.h"
#include "deniable/common/heavy_hitters_mechanism.h"
#include "deniable/common/numeric_mechanism.h"
#include "deniable/common/status_macros.h"
#include "deniable/common/yes_no_mechanism.h"

namespace deniable {

const char* ReportKindName(ReportKind kind) {
  switch (kind) {
    case ReportKind::kYesNo:
      return "yes_no";
    case ReportKind::kCategorical:
      return "categorical";
    case ReportKind::kNumeric:
      return "numeric";
    case ReportKind::kHeavyHitters:
      return "heavy_hitters";
  }
  return "unknown";
}

absl::StatusOr<CounterLayout> CounterLayout::Of(int64_t coordinates) {
  if (coordinates < 1 || coordinates + 1 > kMaxCounterLayoutLength) {
    return absl::InvalidArgumentError(absl::StrCat("layout: coordinates must be in [1, ",
                                                   kMaxCounterLayoutLength - 1, "], but is ",
                                                   coordinates));
  }
  return CounterLayout{static_cast<int>(coordinates)};
}

void CounterIncrements::AddTo(std::span<int64_t> counters) const {
  counters[0] += 1;
  for (uint32_t j : ones) counters[1 + j] += 1;
}

std::shared_ptr<const Mechanism> MechanismFor(const Design& design) {
  return std::make_shared<YesNoMechanism>(design);
}

std::shared_ptr<const Mechanism> MechanismFor(const CategoricalDesign& design) {
  return std::make_shared<CategoricalReportMechanism>(design);
}

std::shared_ptr<const Mechanism> MechanismFor(const NumericDesign& design) {
  return std::make_shared<NumericReportMechanism>(design);
}

std::shared_ptr<const Mechanism> MechanismFor(const HeavyHittersDesign& design) {
  return std::make_shared<HeavyHittersMechanism>(design);
}

absl::StatusOr<WireAnswer> Mechanism::RandomizeString(absl::string_view value, uint32_t group,
                                                      Draws& draws) const {
  return absl::FailedPreconditionError(
      absl::StrCat("value: a ", ReportKindName(kind()), " metric takes a number, not a string"));
}

absl::StatusOr<CounterIncrements> Mechanism::Validate(const WireAnswer& answer,
                                                      absl::string_view field,
                                                      absl::string_view metric) const {
  // Only set on a report of a string kind: TakesStrings() is asked on that path alone.
  if (answer.has_heavy_hitters && !TakesStrings()) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".heavy_hitters: metric \"", metric,
                     "\" is not a heavy-hitters metric: its reports carry no heavy_hitters place"));
  }
  return ValidateKind(answer, field, metric);
}

absl::StatusOr<MechanismEstimate> EstimateVersions(std::span<const VersionCounters> parts,
                                                   const MechanismEstimateOptions& options,
                                                   VersionCombination combination) {
  if (parts.empty()) return absl::InvalidArgumentError("parts: no design version to estimate");
  for (const VersionCounters& part : parts) {
    if (part.mechanism == nullptr) return absl::InvalidArgumentError("parts: a part has no design");
  }
  const int layout = parts[0].mechanism->Layout().coordinates;
  const std::string key = parts[0].mechanism->CoordinatesKey();
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].mechanism->Layout().coordinates != layout) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parts[", i, "]: has ", parts[i].mechanism->Layout().coordinates,
          " coordinates, parts[0] has ", layout, "; only versions of one layout combine"));
    }
    if (parts[i].mechanism->CoordinatesKey() != key) {
      return absl::InvalidArgumentError(
          absl::StrCat("parts[", i, "]: estimates other quantities than parts[0] (",
                       parts[i].mechanism->ToString(), " against ", parts[0].mechanism->ToString(),
                       "); only versions with the same bucket edges combine"));
    }
  }
  if (parts.size() == 1) return parts[0].mechanism->Estimate(parts[0].counters, options);
  std::vector<MechanismEstimate> each;
  for (const VersionCounters& part : parts) {
    DENIABLE_ASSIGN_OR_RETURN(MechanismEstimate e,
                              part.mechanism->Estimate(part.counters, options));
    each.push_back(std::move(e));
  }
  // The estimated quantities (Estimate's coordinates): the layout's, but k for D_BIT_FLIP's 2k.
  const int k = static_cast<int>(each[0].coordinates.size());
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
    int64_t trials = 0;
    CoordinateEstimate c;
    for (const MechanismEstimate& e : each) {
      const CoordinateEstimate& ej = e.coordinates[static_cast<size_t>(j)];
      c.successes += ej.successes;
      if (ej.trials == 0) continue;  // a D_BIT_FLIP bucket no report of this version sampled
      PrevalenceEstimate p;
      p.n = ej.trials;
      p.yes_count = ej.successes;
      p.unbiased = ej.unbiased;
      p.variance = ej.variance;
      p.standard_error = ej.standard_error;
      binary.push_back(p);
      trials += p.n;
    }
    c.trials = trials;
    if (binary.empty()) {  // nobody sampled it: no estimate, the trivial interval
      c.unbiased = c.clipped = c.variance = c.standard_error =
          std::numeric_limits<double>::quiet_NaN();
      c.interval = c.simultaneous = PrevalenceInterval{0.0, 1.0, false};
      out.coordinates.push_back(c);
      continue;
    }
    DENIABLE_ASSIGN_OR_RETURN(CombinedEstimate combined, CombineVersions(binary, combination));
    c.success_share =
        trials > 0 ? static_cast<double>(c.successes) / static_cast<double>(trials) : 0.0;
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
    for (const CoordinateEstimate& c : out.coordinates) {
      unbiased.push_back(std::isnan(c.unbiased) ? 0.0 : c.unbiased);
    }
    const std::vector<double> consistent = NormSub(unbiased);
    for (int j = 0; j < k; ++j) out.coordinates[static_cast<size_t>(j)].clipped = consistent[j];
  }
  return out;
}

}  // namespace deniable
