#include "server/core/categorical_query.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/interval.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::StatusOr<SimultaneousMethod> SimultaneousFromProto(v1::SimultaneousMethod method) {
  switch (method) {
    case v1::SIMULTANEOUS_METHOD_UNSPECIFIED:
    case v1::SIDAK:
      return SimultaneousMethod::kSidak;
    case v1::BONFERRONI:
      return SimultaneousMethod::kBonferroni;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("simultaneous: unknown simultaneous method ", static_cast<int>(method)));
}

absl::StatusOr<v1::Prevalence> EstimateSharesFromPeriods(const MetricInfo& metric,
                                                         const PeriodCounts& counts,
                                                         const PeriodSupport& support,
                                                         const EstimateOptions& options,
                                                         SimultaneousMethod simultaneous) {
  const int k = metric.proto.categories_size();
  if (k == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric \"", metric.proto.name(), "\" has no categories"));
  }
  if (!(options.level > 0.0 && options.level < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1), but is ", options.level));
  }
  EstimateOptions joint = options;
  // No adjustment where the shares cover or miss together (k-RR with k = 2) in every design
  // version of the metric; any other version in the mix takes the adjustment for all.
  bool cover_together = true;
  for (const MetricVersion& version : metric.versions) {
    cover_together = cover_together && version.categorical.has_value() &&
                     SharesCoverTogether(*version.categorical);
  }
  joint.level = cover_together ? options.level : PerCategoryLevel(options.level, k, simultaneous);
  v1::Prevalence out;
  std::vector<double> unbiased;
  for (int v = 0; v < k; ++v) {
    // Category v as a yes/no question: "yes" = the report supports v.
    PeriodCounts as_binary;
    int64_t supported = 0;
    for (const auto& [period, versions] : counts) {
      for (const auto& [version, nyes] : versions) {
        int64_t c = 0;
        if (auto p = support.find(period); p != support.end()) {
          if (auto s = p->second.find(version);
              s != p->second.end() && static_cast<size_t>(v) < s->second.size()) {
            c = s->second[static_cast<size_t>(v)];
          }
        }
        if (c > nyes.first) {
          return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(), "\": category ",
                                                  v, " has support ", c, " above its ", nyes.first,
                                                  " reports"));
        }
        as_binary[period][version] = {nyes.first, c};
        supported += c;
      }
    }
    DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence alone,
                              EstimateFromPeriods(metric, as_binary, options));
    DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence together,
                              EstimateFromPeriods(metric, as_binary, joint));
    if (v == 0) {
      out = alone;  // the selection-wide fields; the yes/no ones are cleared below
      out.clear_versions();
      for (const v1::VersionEstimate& ve : alone.versions()) {
        v1::VersionEstimate* kept = out.add_versions();
        kept->set_design_version(ve.design_version());
        kept->set_n(ve.n());
        kept->set_a(ve.a());
        kept->set_b(ve.b());
        kept->set_weight(ve.weight());
      }
    }
    v1::CategoryShare* share = out.add_shares();
    share->set_category(metric.proto.categories(v));
    share->set_support_count(supported);
    share->set_support_share(static_cast<double>(supported) / static_cast<double>(alone.n()));
    share->set_estimate_unbiased(alone.estimate_unbiased());
    share->set_standard_error(alone.standard_error());
    share->set_ci_lower(alone.ci_lower());
    share->set_ci_upper(alone.ci_upper());
    share->set_simultaneous_lower(together.ci_lower());
    share->set_simultaneous_upper(together.ci_upper());
    unbiased.push_back(alone.estimate_unbiased());
  }
  const std::vector<double> consistent = NormSub(unbiased);
  for (int v = 0; v < k; ++v) out.mutable_shares(v)->set_estimate_consistent(consistent[v]);
  out.set_yes_count(0);
  out.set_yes_share(0);
  out.set_estimate_unbiased(0);
  out.set_estimate_clipped(0);
  out.set_standard_error(0);
  out.set_ci_lower(0);
  out.set_ci_upper(0);
  out.set_interval_clipped(false);
  out.set_estimated_yes_count(0);
  out.set_simultaneous_method(SimultaneousMethodName(simultaneous));
  out.set_per_category_level(joint.level);
  out.set_consistent_method("norm_sub");
  out.set_interval_construction(absl::StrCat(
      "per category through the support channel (p*, q*): ", out.interval_construction(),
      "; simultaneous: the same at level ", joint.level, " (", SimultaneousMethodName(simultaneous),
      ", k = ", k, ")"));
  return out;
}

absl::Status FillShareDifferences(const v1::Prevalence& first, const v1::Prevalence& second,
                                  v1::Difference* out) {
  if (first.shares_size() != second.shares_size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("second.metric: has ", second.shares_size(), " categories, first has ",
                     first.shares_size(), "; a difference of shares needs the same categories"));
  }
  for (int v = 0; v < first.shares_size(); ++v) {
    if (first.shares(v).category() != second.shares(v).category()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "second.metric: category ", v, " is \"", second.shares(v).category(), "\", first's is \"",
          first.shares(v).category(), "\"; a difference of shares needs the same categories"));
    }
  }
  const double z = TwoSidedNormalQuantile(out->confidence_level());
  for (int v = 0; v < first.shares_size(); ++v) {
    const v1::CategoryShare& a = first.shares(v);
    const v1::CategoryShare& b = second.shares(v);
    v1::CategoryDifference* d = out->add_shares();
    const double diff = a.estimate_unbiased() - b.estimate_unbiased();
    const double se = std::hypot(a.standard_error(), b.standard_error());
    d->set_category(a.category());
    d->set_difference(diff);
    d->set_standard_error(se);
    d->set_ci_lower(std::clamp(diff - z * se, -1.0, 1.0));
    d->set_ci_upper(std::clamp(diff + z * se, -1.0, 1.0));
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
