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

// The counts of each version over all periods.
VersionCounts TotalsOf(const PeriodCounts& counts) {
  VersionCounts totals;
  for (const auto& [period, versions] : counts) {
    for (const auto& [version, nyes] : versions) {
      auto& [n, yes] = totals[version];
      n += nyes.first;
      yes += nyes.second;
    }
  }
  return totals;
}

// The versions with reports, oldest first; adds their n and yes count to `out`, and sets
// `epsilon` to the largest of their epsilons. Errors: DATA_LOSS for counts of a missing version,
// FAILED_PRECONDITION when no version has a report.
absl::StatusOr<std::vector<const MetricVersion*>> PresentVersions(const MetricInfo& metric,
                                                                  const VersionCounts& totals,
                                                                  v1::Prevalence* out,
                                                                  double* epsilon) {
  std::vector<const MetricVersion*> present;
  *epsilon = 0;
  for (const auto& [version, nyes] : totals) {
    const MetricVersion* v = metric.Find(version);
    if (v == nullptr) {
      return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(),
                                              "\": counts refer to missing design version ",
                                              version));
    }
    if (nyes.first == 0) continue;
    present.push_back(v);
    out->set_n(out->n() + nyes.first);
    out->set_yes_count(out->yes_count() + nyes.second);
    *epsilon = std::max(*epsilon, v->wire.epsilon());
  }
  if (present.empty()) return absl::FailedPreconditionError("the selection holds no reports");
  return present;
}

// The periods' estimates combined with w_t = n_t / N (one period gives back its own figures).
struct Combined {
  double unbiased = 0, standard_error = 0, lower = 0, upper = 0;
  bool clipped = false;
  bool any_combined = false;  // some period combined several design versions
  std::map<uint32_t, double> version_weight;
};

Combined CombinePeriods(const std::vector<PeriodEstimate>& periods, double total) {
  Combined c;
  for (const PeriodEstimate& p : periods) {
    const double w = static_cast<double>(p.n) / total;
    c.unbiased += w * p.unbiased;
    c.standard_error += w * p.standard_error;
    c.lower += w * p.lower;
    c.upper += w * p.upper;
    c.clipped = c.clipped || p.clipped;
    c.any_combined = c.any_combined || p.combined;
    for (const auto& [version, vw] : p.weights) c.version_weight[version] += w * vw;
  }
  if (periods.size() == 1) {  // exact figures, free of the rounding of the weighted sums
    c.unbiased = periods[0].unbiased;
    c.standard_error = periods[0].standard_error;
    c.lower = periods[0].lower;
    c.upper = periods[0].upper;
  }
  return c;
}

// One VersionEstimate per version present, over all its periods' reports.
absl::Status AddVersionEstimates(const std::vector<const MetricVersion*>& present,
                                 const VersionCounts& totals, const Combined& combined,
                                 v1::Prevalence* out) {
  for (const MetricVersion* v : present) {
    const auto& [n, yes] = totals.at(v->version);
    DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                              EstimatePrevalence(v->design.channel(), yes, n));
    v1::VersionEstimate* ve = out->add_versions();
    ve->set_design_version(v->version);
    ve->set_n(e.n);
    ve->set_yes_count(e.yes_count);
    ve->set_estimate_unbiased(e.unbiased);
    ve->set_standard_error(e.standard_error);
    ve->set_a(v->design.channel().a);
    ve->set_b(v->design.channel().b);
    auto w = combined.version_weight.find(v->version);
    ve->set_weight(w == combined.version_weight.end() ? 0.0 : w->second);
  }
  return absl::OkStatus();
}

// The estimate's method, reason and construction: what `out` says of how it was made.
void DescribeMethod(const Combined& combined, const MethodChoice& method, size_t periods,
                    const EstimateOptions& options, v1::Prevalence* out) {
  if (combined.any_combined) {
    out->set_method(v1::WALD);
    out->set_method_reason(absl::StrCat(
        "normal interval around the combination of design versions (",
        VersionCombinationName(options.combination),
        "); single-version periods: ", IntervalMethodName(method.method), ", ", method.reason));
  } else {
    out->set_method(MethodToProto(method.method));
    out->set_method_reason(method.reason);
  }
  const std::string per_period =
      combined.any_combined
          ? absl::StrCat(IntervalMethodName(method.method), " (wald where versions were combined)")
          : IntervalMethodName(method.method);
  out->set_interval_construction(periods > 1
                                     ? absl::StrCat(per_period, " in each of ", periods,
                                                    " periods, ends averaged with weights n_t / N")
                                     : absl::StrCat(per_period, " on the period's reports"));
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
  const VersionCounts totals = TotalsOf(counts);
  double epsilon = 0;
  DENIABLE_ASSIGN_OR_RETURN(const std::vector<const MetricVersion*> present,
                            PresentVersions(metric, totals, &out, &epsilon));
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
  const double total = static_cast<double>(out.n());
  const Combined c = CombinePeriods(periods, total);
  DENIABLE_RETURN_IF_ERROR(AddVersionEstimates(present, totals, c, &out));

  const bool several_periods = periods.size() > 1;
  const bool inverse_variance =
      c.any_combined && options.combination == VersionCombination::kInverseVariance;
  out.set_metric(metric.proto.name());
  out.set_yes_share(static_cast<double>(out.yes_count()) / total);
  out.set_estimate_unbiased(c.unbiased);
  out.set_estimate_clipped(std::clamp(c.unbiased, 0.0, 1.0));
  out.set_standard_error(c.standard_error);
  out.set_ci_lower(std::min(c.lower, c.upper));
  out.set_ci_upper(std::max(c.lower, c.upper));
  out.set_interval_clipped(c.clipped);
  out.set_confidence_level(options.level);
  *out.mutable_design() = present.back()->wire;
  out.set_epsilon(epsilon);
  out.set_estimated_yes_count(total * c.unbiased);
  out.set_combination(!c.any_combined ? "single_version"
                                      : VersionCombinationName(options.combination));
  out.set_estimand(inverse_variance  ? "precision_weighted_prevalence"
                   : several_periods ? "mean_period_prevalence"
                                     : "period_prevalence");
  out.set_periods(static_cast<int64_t>(periods.size()));
  out.set_reporting_period_seconds(metric.proto.reporting_period_seconds() > 0
                                       ? metric.proto.reporting_period_seconds()
                                       : kDefaultPeriodSeconds);
  out.set_variance_bound(several_periods ? "minkowski" : "independent_devices");
  DescribeMethod(c, method, periods.size(), options, &out);
  return out;
}

}  // namespace deniable::server
