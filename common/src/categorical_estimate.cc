#include "deniable/common/categorical_estimate.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/method_choice.h"
#include "deniable/common/status_macros.h"

namespace deniable {

const char* SimultaneousMethodName(SimultaneousMethod method) {
  return method == SimultaneousMethod::kBonferroni ? "bonferroni" : "sidak";
}

absl::StatusOr<SimultaneousMethod> ParseSimultaneousMethod(absl::string_view name) {
  if (name == "bonferroni") return SimultaneousMethod::kBonferroni;
  if (name == "sidak") return SimultaneousMethod::kSidak;
  return absl::InvalidArgumentError(
      absl::StrCat("simultaneous method must be bonferroni or sidak, but is \"", name, "\""));
}

double PerCategoryLevel(double level, int k, SimultaneousMethod method) {
  const double per = method == SimultaneousMethod::kBonferroni
                         ? 1.0 - (1.0 - level) / k
                         : std::exp(std::log(level) / static_cast<double>(k));
  return std::min(per, kMaxConfidenceLevel);
}

bool SharesCoverTogether(const CategoricalDesign& design) {
  return design.mechanism() == CategoricalMechanism::kDirectEncoding && design.k() == 2;
}

double PerCategoryLevel(const CategoricalDesign& design, double level, SimultaneousMethod method) {
  return SharesCoverTogether(design) ? level : PerCategoryLevel(level, design.k(), method);
}

std::vector<double> NormSub(std::span<const double> estimates) {
  std::vector<double> sorted(estimates.begin(), estimates.end());
  if (sorted.empty()) return sorted;
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  // The largest rho with sorted[rho - 1] - (sum of the first rho - 1) / rho > 0 fixes the shift.
  double prefix = 0, shift = 0;
  for (size_t j = 0; j < sorted.size(); ++j) {
    prefix += sorted[j];
    const double t = (prefix - 1.0) / static_cast<double>(j + 1);
    if (sorted[j] - t > 0.0) shift = t;
  }
  std::vector<double> out(estimates.size());
  for (size_t v = 0; v < out.size(); ++v) out[v] = std::max(0.0, estimates[v] - shift);
  return out;
}

absl::StatusOr<CategoricalEstimate> EstimateCategories(const CategoricalDesign& design,
                                                       std::span<const int64_t> support_counts,
                                                       int64_t n, double confidence_level,
                                                       std::optional<IntervalMethod> method,
                                                       SimultaneousMethod simultaneous) {
  const int k = design.k();
  if (n <= 0) return absl::InvalidArgumentError(absl::StrCat("n must be > 0, but is ", n));
  if (support_counts.size() != static_cast<size_t>(k)) {
    return absl::InvalidArgumentError(absl::StrCat("support_counts must hold k = ", k,
                                                   " counts, but holds ", support_counts.size()));
  }
  if (!(confidence_level > 0.0 && confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1 - 1e-12], but is ", confidence_level));
  }
  int64_t total = 0;
  for (int v = 0; v < k; ++v) {
    if (support_counts[v] < 0 || support_counts[v] > n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "support_counts[", v, "] must be in [0, n = ", n, "], but is ", support_counts[v]));
    }
    total += support_counts[v];
  }
  if (design.mechanism() == CategoricalMechanism::kDirectEncoding && total != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "support_counts: k-RR reports support one category each, so the counts must sum to n = ", n,
        ", but sum to ", total));
  }
  const Channel channel = design.SupportChannel();
  CategoricalEstimate out;
  out.n = n;
  out.confidence_level = confidence_level;
  out.method = method.has_value() ? *method : DefaultIntervalMethod(channel).method;
  out.simultaneous_method = simultaneous;
  out.per_category_level = PerCategoryLevel(design, confidence_level, simultaneous);
  const double gap = channel.a - channel.b;
  std::vector<double> unbiased(k);
  for (int v = 0; v < k; ++v) {
    CategoryEstimate& c = out.categories.emplace_back();
    c.support_count = support_counts[v];
    c.support_share = static_cast<double>(c.support_count) / static_cast<double>(n);
    c.unbiased = (c.support_share - channel.b) / gap;
    c.variance = c.support_share * (1.0 - c.support_share) / (static_cast<double>(n) * gap * gap);
    c.standard_error = std::sqrt(c.variance);
    unbiased[v] = c.unbiased;
    DENIABLE_ASSIGN_OR_RETURN(c.interval, MakePrevalenceInterval(channel, c.support_count, n,
                                                                 confidence_level, out.method));
    DENIABLE_ASSIGN_OR_RETURN(
        c.simultaneous,
        MakePrevalenceInterval(channel, c.support_count, n, out.per_category_level, out.method));
  }
  const std::vector<double> consistent = NormSub(unbiased);
  for (int v = 0; v < k; ++v) out.categories[v].consistent = consistent[v];
  return out;
}

}  // namespace deniable
