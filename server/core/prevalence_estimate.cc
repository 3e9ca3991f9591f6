// EstimateFromCounts: one selection's counts -> a Prevalence message.
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/combine.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/interval_method_convert.h"
#include "server/core/prevalence_query.h"

namespace deniable::server {
namespace {}  // namespace

absl::StatusOr<v1::Prevalence> EstimateFromCounts(const MetricInfo& metric,
                                                  const VersionCounts& counts, double level,
                                                  IntervalMethod method) {
  v1::Prevalence out;
  std::vector<PrevalenceEstimate> parts;
  const MetricVersion* newest = nullptr;
  double epsilon = 0;
  for (const auto& [version, nyes] : counts) {
    const MetricVersion* v = metric.Find(version);
    if (v == nullptr) {
      return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(),
                                              "\": counts refer to missing design version ",
                                              version));
    }
    DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                              EstimatePrevalence(v->design.channel(), nyes.second, nyes.first));
    v1::VersionEstimate* ve = out.add_versions();
    ve->set_design_version(version);
    ve->set_n(e.n);
    ve->set_yes_count(e.yes_count);
    ve->set_estimate_unbiased(e.unbiased);
    ve->set_standard_error(e.standard_error);
    ve->set_a(v->design.channel().a);
    ve->set_b(v->design.channel().b);
    if (e.variance == 0.0) {  // all bits equal: weight with the Laplace-smoothed share
      const double lambda = (static_cast<double>(e.yes_count) + 1.0) / (e.n + 2.0);
      const double gap = v->design.channel().a - v->design.channel().b;
      e.variance = lambda * (1.0 - lambda) / (static_cast<double>(e.n) * gap * gap);
    }
    parts.push_back(e);
    out.set_n(out.n() + e.n);
    out.set_yes_count(out.yes_count() + e.yes_count);
    newest = v;
    epsilon = std::max(epsilon, v->wire.epsilon());
  }
  if (parts.empty() || out.n() == 0) {
    return absl::FailedPreconditionError("the selection holds no reports");
  }
  out.set_metric(metric.proto.name());
  out.set_yes_share(static_cast<double>(out.yes_count()) / static_cast<double>(out.n()));
  out.set_confidence_level(level);
  *out.mutable_design() = newest->wire;
  out.set_epsilon(epsilon);
  if (parts.size() == 1) {
    const auto& [version, nyes] = *counts.begin();
    const Channel& channel = newest->design.channel();
    DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                              EstimatePrevalence(channel, nyes.second, nyes.first));
    DENIABLE_ASSIGN_OR_RETURN(
        PrevalenceInterval ci,
        MakePrevalenceInterval(channel, nyes.second, nyes.first, level, method));
    out.set_estimate_unbiased(e.unbiased);
    out.set_estimate_clipped(e.clipped);
    out.set_standard_error(e.standard_error);
    out.set_ci_lower(ci.lower);
    out.set_ci_upper(ci.upper);
    out.set_interval_clipped(ci.clipped);
    out.set_method(MethodToProto(method));
    out.set_combination("single_version");
    out.mutable_versions(0)->set_weight(1.0);
  } else {
    DENIABLE_ASSIGN_OR_RETURN(CombinedEstimate c, CombineByInverseVariance(parts));
    const double z = TwoSidedNormalQuantile(level);
    const double lower = c.unbiased - z * c.standard_error;
    const double upper = c.unbiased + z * c.standard_error;
    out.set_estimate_unbiased(c.unbiased);
    out.set_estimate_clipped(c.clipped);
    out.set_standard_error(c.standard_error);
    out.set_ci_lower(std::clamp(lower, 0.0, 1.0));
    out.set_ci_upper(std::clamp(upper, 0.0, 1.0));
    out.set_interval_clipped(lower < 0.0 || upper > 1.0);
    out.set_method(v1::WALD);
    out.set_combination("inverse_variance");
    for (size_t i = 0; i < parts.size(); ++i) {
      out.mutable_versions(static_cast<int>(i))->set_weight(c.variance / parts[i].variance);
    }
  }
  out.set_estimated_yes_count(static_cast<double>(out.n()) * out.estimate_unbiased());
  return out;
}

}  // namespace deniable::server
