// EstimateFromPeriods: one selection's counts (per reporting period and design version) -> a
// Prevalence message.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/combine.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/method_choice.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/interval_method_convert.h"
#include "server/core/prevalence_query.h"

namespace deniable::server {
namespace {

constexpr int64_t kDefaultPeriodSeconds = 86400;

// One reporting period's estimate.
struct PeriodEstimate {
  int64_t n = 0;
  double unbiased = 0;
  double standard_error = 0;
  double lower = 0;  // interval ends, in [0, 1]
  double upper = 0;
  bool clipped = false;
  bool combined = false;               // several versions, Wald interval
  std::map<uint32_t, double> weights;  // version -> weight within the period
};

// The method for the whole selection: the requested one, or the strictest default over the
// versions present (Clopper-Pearson if any version's channel needs it).
MethodChoice ChooseMethod(const std::vector<const MetricVersion*>& versions,
                          const std::optional<IntervalMethod>& requested) {
  if (requested.has_value()) return MethodChoice{*requested, "requested"};
  MethodChoice choice;
  double smallest_edge = 2.0;
  for (const MetricVersion* v : versions) {
    const double edge = ChannelEdge(v->design.channel());
    if (edge < smallest_edge) {
      smallest_edge = edge;
      choice = DefaultIntervalMethod(v->design.channel());
    }
  }
  return choice;
}

absl::StatusOr<PeriodEstimate> EstimatePeriod(const MetricInfo& metric, const VersionCounts& counts,
                                              const EstimateOptions& options,
                                              IntervalMethod method) {
  std::vector<PrevalenceEstimate> parts;
  std::vector<uint32_t> ids;
  PeriodEstimate out;
  const auto present =
      std::count_if(counts.begin(), counts.end(), [](const auto& c) { return c.second.first > 0; });
  for (const auto& [version, nyes] : counts) {
    if (nyes.first == 0) continue;
    const Channel& channel = metric.Find(version)->design.channel();
    DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                              EstimatePrevalence(channel, nyes.second, nyes.first));
    if (present == 1) {
      DENIABLE_ASSIGN_OR_RETURN(
          PrevalenceInterval ci,
          MakePrevalenceInterval(channel, e.yes_count, e.n, options.level, method));
      return PeriodEstimate{e.n,        e.unbiased, e.standard_error, ci.lower, ci.upper,
                            ci.clipped, false,      {{version, 1.0}}};
    }
    if (e.variance == 0.0) {  // all bits equal: weight with the Laplace-smoothed share
      const double lambda = (static_cast<double>(e.yes_count) + 1.0) / (e.n + 2.0);
      const double gap = channel.a - channel.b;
      e.variance = lambda * (1.0 - lambda) / (static_cast<double>(e.n) * gap * gap);
      e.standard_error = std::sqrt(e.variance);
    }
    parts.push_back(e);
    ids.push_back(version);
  }
  if (parts.empty()) return absl::FailedPreconditionError("the period holds no reports");
  DENIABLE_ASSIGN_OR_RETURN(CombinedEstimate c, CombineVersions(parts, options.combination));
  const double z = TwoSidedNormalQuantile(options.level);
  const double lower = c.unbiased - z * c.standard_error;
  const double upper = c.unbiased + z * c.standard_error;
  out.n = c.n;
  out.unbiased = c.unbiased;
  out.standard_error = c.standard_error;
  out.lower = std::clamp(lower, 0.0, 1.0);
  out.upper = std::clamp(upper, 0.0, 1.0);
  out.clipped = lower < 0.0 || upper > 1.0;
  out.combined = parts.size() > 1;
  for (size_t i = 0; i < ids.size(); ++i) out.weights[ids[i]] = c.weights[i];
  return out;
}

}  // namespace

int64_t PeriodStart(int64_t event_time_seconds, int64_t period_seconds) {
  const int64_t p = period_seconds > 0 ? period_seconds : kDefaultPeriodSeconds;
  int64_t r = event_time_seconds % p;
  if (r < 0) r += p;
  return event_time_seconds - r;
}

absl::StatusOr<v1::Prevalence> EstimateFromPeriods(const MetricInfo& metric,
                                                   const PeriodCounts& counts,
                                                   const EstimateOptions& options) {
  if (!(options.level > 0.0 && options.level < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1), but is ", options.level));
  }
  v1::Prevalence out;
  VersionCounts totals;  // over all periods
  for (const auto& [period, versions] : counts) {
    for (const auto& [version, nyes] : versions) {
      auto& [n, yes] = totals[version];
      n += nyes.first;
      yes += nyes.second;
    }
  }
  std::vector<const MetricVersion*> present;
  double epsilon = 0;
  for (const auto& [version, nyes] : totals) {
    const MetricVersion* v = metric.Find(version);
    if (v == nullptr) {
      return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(),
                                              "\": counts refer to missing design version ",
                                              version));
    }
    if (nyes.first == 0) continue;
    present.push_back(v);
    out.set_n(out.n() + nyes.first);
    out.set_yes_count(out.yes_count() + nyes.second);
    epsilon = std::max(epsilon, v->wire.epsilon());
  }
  if (present.empty()) return absl::FailedPreconditionError("the selection holds no reports");
  const MethodChoice method = ChooseMethod(present, options.method);

  std::vector<PeriodEstimate> periods;
  for (const auto& [period, versions] : counts) {
    int64_t n = 0;
    for (const auto& [version, nyes] : versions) n += nyes.first;
    if (n == 0) continue;
    DENIABLE_ASSIGN_OR_RETURN(PeriodEstimate e,
                              EstimatePeriod(metric, versions, options, method.method));
    periods.push_back(std::move(e));
  }

  // Periods combined with w_t = n_t / N; one period gives back its own figures.
  const double total = static_cast<double>(out.n());
  double unbiased = 0, se = 0, lower = 0, upper = 0;
  bool clipped = false, any_combined = false;
  std::map<uint32_t, double> version_weight;
  for (const PeriodEstimate& p : periods) {
    const double w = static_cast<double>(p.n) / total;
    unbiased += w * p.unbiased;
    se += w * p.standard_error;
    lower += w * p.lower;
    upper += w * p.upper;
    clipped = clipped || p.clipped;
    any_combined = any_combined || p.combined;
    for (const auto& [version, vw] : p.weights) version_weight[version] += w * vw;
  }
  if (periods.size() == 1) {  // exact figures, free of the rounding of the weighted sums
    unbiased = periods[0].unbiased;
    se = periods[0].standard_error;
    lower = periods[0].lower;
    upper = periods[0].upper;
  }

  for (const MetricVersion* v : present) {
    const auto& [n, yes] = totals.at(v->version);
    DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                              EstimatePrevalence(v->design.channel(), yes, n));
    v1::VersionEstimate* ve = out.add_versions();
    ve->set_design_version(v->version);
    ve->set_n(e.n);
    ve->set_yes_count(e.yes_count);
    ve->set_estimate_unbiased(e.unbiased);
    ve->set_standard_error(e.standard_error);
    ve->set_a(v->design.channel().a);
    ve->set_b(v->design.channel().b);
    ve->set_weight(version_weight[v->version]);
  }

  const bool several_periods = periods.size() > 1;
  const bool inverse_variance =
      any_combined && options.combination == VersionCombination::kInverseVariance;
  out.set_metric(metric.proto.name());
  out.set_yes_share(static_cast<double>(out.yes_count()) / total);
  out.set_estimate_unbiased(unbiased);
  out.set_estimate_clipped(std::clamp(unbiased, 0.0, 1.0));
  out.set_standard_error(se);
  out.set_ci_lower(std::min(lower, upper));
  out.set_ci_upper(std::max(lower, upper));
  out.set_interval_clipped(clipped);
  out.set_confidence_level(options.level);
  *out.mutable_design() = present.back()->wire;
  out.set_epsilon(epsilon);
  out.set_estimated_yes_count(total * unbiased);
  out.set_combination(!any_combined ? "single_version"
                                    : VersionCombinationName(options.combination));
  out.set_estimand(inverse_variance  ? "precision_weighted_prevalence"
                   : several_periods ? "mean_period_prevalence"
                                     : "period_prevalence");
  out.set_periods(static_cast<int64_t>(periods.size()));
  out.set_reporting_period_seconds(metric.proto.reporting_period_seconds() > 0
                                       ? metric.proto.reporting_period_seconds()
                                       : kDefaultPeriodSeconds);
  out.set_variance_bound(several_periods ? "minkowski" : "independent_devices");
  if (any_combined) {
    out.set_method(v1::WALD);
    out.set_method_reason(absl::StrCat(
        "normal interval around the combination of design versions (",
        VersionCombinationName(options.combination),
        "); single-version periods: ", IntervalMethodName(method.method), ", ", method.reason));
  } else {
    out.set_method(MethodToProto(method.method));
    out.set_method_reason(method.reason);
  }
  const std::string per_period = any_combined ? absl::StrCat(IntervalMethodName(method.method),
                                                             " (wald where versions were combined)")
                                              : IntervalMethodName(method.method);
  out.set_interval_construction(several_periods
                                    ? absl::StrCat(per_period, " in each of ", periods.size(),
                                                   " periods, ends averaged with weights n_t / N")
                                    : absl::StrCat(per_period, " on the period's reports"));
  return out;
}

}  // namespace deniable::server
