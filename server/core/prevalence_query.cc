#include "server/core/prevalence_query.h"

#include <limits>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/estimator.h"
#include "deniable/common/interval.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {
namespace {

absl::StatusOr<IntervalMethod> MethodFromProto(v1::IntervalMethod method) {
  switch (method) {
    case v1::INTERVAL_METHOD_UNSPECIFIED:
    case v1::WILSON:
      return IntervalMethod::kWilson;
    case v1::WALD:
      return IntervalMethod::kWald;
    case v1::AGRESTI_COULL:
      return IntervalMethod::kAgrestiCoull;
    case v1::JEFFREYS:
      return IntervalMethod::kJeffreys;
    case v1::CLOPPER_PEARSON:
      return IntervalMethod::kClopperPearson;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("method: unknown interval method ", static_cast<int>(method)));
}

v1::IntervalMethod MethodToProto(IntervalMethod method) {
  switch (method) {
    case IntervalMethod::kWald:
      return v1::WALD;
    case IntervalMethod::kWilson:
      return v1::WILSON;
    case IntervalMethod::kAgrestiCoull:
      return v1::AGRESTI_COULL;
    case IntervalMethod::kJeffreys:
      return v1::JEFFREYS;
    case IntervalMethod::kClopperPearson:
      return v1::CLOPPER_PEARSON;
  }
  return v1::WILSON;
}

}  // namespace

PrevalenceQuery::PrevalenceQuery(MetricRegistry* registry, Storage* storage)
    : registry_(registry), storage_(storage) {}

absl::StatusOr<v1::Prevalence> PrevalenceQuery::Get(const v1::GetPrevalenceRequest& request) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(request.metric(), "metric"));
  const int64_t start = request.start_time_seconds();
  const int64_t end = request.end_time_seconds() == 0 ? std::numeric_limits<int64_t>::max()
                                                      : request.end_time_seconds();
  if (start < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("start_time_seconds: must be >= 0, but is ", start));
  }
  if (end <= start) {
    return absl::InvalidArgumentError(absl::StrCat("end_time_seconds: must be > start (", start,
                                                   ") or 0 for no end, but is ", end));
  }
  const double level = request.confidence_level() == 0.0 ? 0.95 : request.confidence_level();
  if (!(level > 0.0 && level < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1) or 0 for 0.95, but is ", level));
  }
  DENIABLE_ASSIGN_OR_RETURN(IntervalMethod method, MethodFromProto(request.method()));
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> metric,
                            registry_->Find(request.metric()));
  DENIABLE_ASSIGN_OR_RETURN(std::vector<CountRow> rows,
                            storage_->ReadCounts(metric->id, start, end));

  std::map<uint32_t, std::pair<int64_t, int64_t>> by_version;  // version -> (n, yes)
  for (const CountRow& row : rows) {
    auto& [n, yes] = by_version[row.design_version];
    n += row.n;
    yes += row.yes;
  }
  if (by_version.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "metric \"", request.metric(), "\" has no reports in the requested time range"));
  }
  if (by_version.size() > 1) {
    return absl::UnimplementedError(
        absl::StrCat("metric \"", request.metric(), "\": the time range mixes ", by_version.size(),
                     " design versions; narrow the range to one version"));
  }
  const auto& [version, counts] = *by_version.begin();
  const MetricVersion* design = metric->Find(version);
  if (design == nullptr) {
    return absl::DataLossError(absl::StrCat(
        "metric \"", request.metric(), "\": counts refer to missing design version ", version));
  }
  const Channel& channel = design->design.channel();
  DENIABLE_ASSIGN_OR_RETURN(PrevalenceEstimate e,
                            EstimatePrevalence(channel, counts.second, counts.first));
  DENIABLE_ASSIGN_OR_RETURN(
      PrevalenceInterval ci,
      MakePrevalenceInterval(channel, counts.second, counts.first, level, method));

  v1::Prevalence out;
  out.set_metric(request.metric());
  out.set_n(e.n);
  out.set_yes_count(e.yes_count);
  out.set_yes_share(e.yes_share);
  out.set_estimate_unbiased(e.unbiased);
  out.set_estimate_clipped(e.clipped);
  out.set_standard_error(e.standard_error);
  out.set_ci_lower(ci.lower);
  out.set_ci_upper(ci.upper);
  out.set_interval_clipped(ci.clipped);
  out.set_method(MethodToProto(method));
  out.set_confidence_level(level);
  *out.mutable_design() = design->wire;
  out.set_epsilon(design->wire.epsilon());
  out.set_estimated_yes_count(e.estimated_yes_count);
  out.set_start_time_seconds(start);
  out.set_end_time_seconds(request.end_time_seconds());
  return out;
}

}  // namespace deniable::server
