#include "server/core/numeric_query.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/interval.h"
#include "deniable/common/numeric.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/interval_method_convert.h"

namespace deniable::server {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The range, mechanism and devices of `metric`'s estimate; the figures NaN until set.
v1::NumericEstimate NumericHeader(const MetricInfo& metric, int64_t n) {
  const NumericDesign& design = *metric.current().numeric;
  v1::NumericEstimate out;
  out.set_lo(metric.proto.range().lo());
  out.set_hi(metric.proto.range().hi());
  out.set_unit(metric.proto.range().unit());
  out.set_mechanism(NumericMechanismName(design.mechanism()));
  out.set_mean(kNaN);
  out.set_mean_standard_error(kNaN);
  out.set_mean_ci_lower(kNaN);
  out.set_mean_ci_upper(kNaN);
  out.set_total(kNaN);
  out.set_total_standard_error(kNaN);
  out.set_total_ci_lower(kNaN);
  out.set_total_ci_upper(kNaN);
  out.set_devices(n);
  return out;
}

// ONE_BIT_MEAN: the bit's estimate (yes/no fields of `p`) mapped to the values.
void FillMean(v1::Prevalence* p) {
  v1::NumericEstimate* num = p->mutable_numeric();
  const double lo = num->lo();
  const double m = num->hi() - num->lo();
  const double n = static_cast<double>(p->n());
  num->set_mean(lo + m * p->estimate_unbiased());
  num->set_mean_standard_error(m * p->standard_error());
  num->set_mean_ci_lower(lo + m * p->ci_lower());
  num->set_mean_ci_upper(lo + m * p->ci_upper());
  num->set_total(num->mean() * n);
  num->set_total_standard_error(num->mean_standard_error() * n);
  num->set_total_ci_lower(num->mean_ci_lower() * n);
  num->set_total_ci_upper(num->mean_ci_upper() * n);
}

// The support count at `index` of (period, version), 0 when none is stored.
int64_t SupportAt(const PeriodSupport& support, int64_t period, uint32_t version, size_t index) {
  auto p = support.find(period);
  if (p == support.end()) return 0;
  auto v = p->second.find(version);
  if (v == p->second.end() || index >= v->second.size()) return 0;
  return v->second[index];
}

// Sets the yes/no fields of a Prevalence that has none (D_BIT_FLIP) to 0.
void ClearYesNo(v1::Prevalence* p) {
  p->set_yes_count(0);
  p->set_yes_share(0);
  p->set_estimate_unbiased(0);
  p->set_estimate_clipped(0);
  p->set_standard_error(0);
  p->set_ci_lower(0);
  p->set_ci_upper(0);
  p->set_interval_clipped(false);
  p->set_estimated_yes_count(0);
}

// D_BIT_FLIP: the histogram and quantiles into `out` (whose selection-wide fields are set).
absl::Status FillHistogram(const MetricInfo& metric, const PeriodCounts& counts,
                           const PeriodSupport& support, const EstimateOptions& options,
                           SimultaneousMethod simultaneous, std::span<const double> levels,
                           v1::Prevalence* out) {
  const NumericDesign& design = *metric.current().numeric;
  const int k = design.buckets();
  EstimateOptions joint = options;
  joint.level = PerCategoryLevel(options.level, k, simultaneous);
  HistogramEstimate histogram;
  histogram.n = out->n();
  histogram.confidence_level = options.level;
  histogram.per_bucket_level = joint.level;
  std::vector<double> unbiased;
  std::string construction;
  for (int j = 0; j < k; ++j) {
    // Bucket j as a yes/no question among the reports that sampled it.
    PeriodCounts as_binary;
    BucketEstimate b;
    b.lower = design.edges()[static_cast<size_t>(j)];
    b.upper = design.edges()[static_cast<size_t>(j) + 1];
    for (const auto& [period, versions] : counts) {
      for (const auto& [version, nyes] : versions) {
        const int64_t s = SupportAt(support, period, version, static_cast<size_t>(j));
        const int64_t y = SupportAt(support, period, version, static_cast<size_t>(k + j));
        if (s > nyes.first || y > s) {
          return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(), "\": bucket ",
                                                  j, " has ", y, " ones of ", s,
                                                  " sampled reports in ", nyes.first, " reports"));
        }
        if (s == 0) continue;
        as_binary[period][version] = {s, y};
        b.sampled += s;
        b.ones += y;
      }
    }
    if (b.sampled == 0) {  // nobody sampled the bucket: nothing known of it
      b.unbiased = kNaN;
      b.standard_error = kNaN;
      b.ci_lower = 0;
      b.ci_upper = 1;
      b.simultaneous_lower = 0;
      b.simultaneous_upper = 1;
    } else {
      DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence alone,
                                EstimateFromPeriods(metric, as_binary, options));
      DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence together,
                                EstimateFromPeriods(metric, as_binary, joint));
      b.unbiased = alone.estimate_unbiased();
      b.standard_error = alone.standard_error();
      b.ci_lower = alone.ci_lower();
      b.ci_upper = alone.ci_upper();
      b.simultaneous_lower = together.ci_lower();
      b.simultaneous_upper = together.ci_upper();
      if (construction.empty()) construction = alone.interval_construction();
    }
    unbiased.push_back(std::isnan(b.unbiased) ? 0.0 : b.unbiased);
    histogram.buckets.push_back(b);
  }
  const std::vector<double> consistent = NormSub(unbiased);
  for (int j = 0; j < k; ++j) {
    histogram.buckets[static_cast<size_t>(j)].consistent = consistent[static_cast<size_t>(j)];
  }
  DENIABLE_ASSIGN_OR_RETURN(std::vector<QuantileEstimate> quantiles,
                            EstimateQuantiles(design, histogram, levels));
  v1::NumericEstimate* num = out->mutable_numeric();
  for (const BucketEstimate& b : histogram.buckets) {
    v1::NumericBucket* nb = num->add_buckets();
    nb->set_lower(b.lower);
    nb->set_upper(b.upper);
    nb->set_sampled(b.sampled);
    nb->set_ones(b.ones);
    nb->set_estimate_unbiased(b.unbiased);
    nb->set_estimate_consistent(b.consistent);
    nb->set_standard_error(b.standard_error);
    nb->set_ci_lower(b.ci_lower);
    nb->set_ci_upper(b.ci_upper);
    nb->set_simultaneous_lower(b.simultaneous_lower);
    nb->set_simultaneous_upper(b.simultaneous_upper);
  }
  for (const QuantileEstimate& q : quantiles) {
    v1::NumericQuantile* nq = num->add_quantiles();
    nq->set_level(q.level);
    nq->set_value(q.value);
    nq->set_ci_lower(q.ci_lower);
    nq->set_ci_upper(q.ci_upper);
  }
  num->set_simultaneous_method(SimultaneousMethodName(simultaneous));
  num->set_per_bucket_level(joint.level);
  out->set_interval_construction(
      absl::StrCat("per bucket among the reports that sampled it, through its channel (a/(a+1), "
                   "1/(a+1)): ",
                   construction.empty() ? out->interval_construction() : construction,
                   "; simultaneous: the same at level ", joint.level, " (",
                   SimultaneousMethodName(simultaneous), ", k = ", k, ")"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<double>> QuantileLevels(
    const google::protobuf::RepeatedField<double>& quantiles) {
  if (quantiles.empty()) return std::vector<double>{0.5, 0.9, 0.99};
  std::vector<double> out;
  for (int i = 0; i < quantiles.size(); ++i) {
    const double q = quantiles.Get(i);
    if (!(q > 0.0 && q < 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("quantiles[", i, "]: must be in (0, 1), but is ", q));
    }
    out.push_back(q);
  }
  return out;
}

absl::StatusOr<v1::Prevalence> EstimateNumericFromPeriods(const MetricInfo& metric,
                                                          const PeriodCounts& counts,
                                                          const PeriodSupport& support,
                                                          const EstimateOptions& options,
                                                          SimultaneousMethod simultaneous,
                                                          std::span<const double> quantiles) {
  if (!metric.numeric() || !metric.current().numeric.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric \"", metric.proto.name(), "\" is not numeric"));
  }
  const bool histogram = metric.current().numeric->mechanism() == NumericMechanism::kDBitFlip;
  if (!histogram) {
    DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence out, EstimateFromPeriods(metric, counts, options));
    *out.mutable_numeric() = NumericHeader(metric, out.n());
    FillMean(&out);
    return out;
  }
  // The selection-wide fields (n, versions, design, estimand, ...) from the report counts alone.
  PeriodCounts reports;
  for (const auto& [period, versions] : counts) {
    for (const auto& [version, nyes] : versions) reports[period][version] = {nyes.first, 0};
  }
  DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence out, EstimateFromPeriods(metric, reports, options));
  for (v1::VersionEstimate& ve : *out.mutable_versions()) {
    ve.set_yes_count(0);
    ve.set_estimate_unbiased(0);
    ve.set_standard_error(0);
  }
  ClearYesNo(&out);
  *out.mutable_numeric() = NumericHeader(metric, out.n());
  DENIABLE_RETURN_IF_ERROR(
      FillHistogram(metric, counts, support, options, simultaneous, quantiles, &out));
  return out;
}

void SetSuppressedNumeric(const MetricInfo& metric, v1::Prevalence* p) {
  if (!metric.numeric() || !metric.current().numeric.has_value()) return;
  *p->mutable_numeric() = NumericHeader(metric, p->n());
}

absl::Status FillNumericDifference(const v1::Prevalence& first, const v1::Prevalence& second,
                                   v1::Difference* out) {
  if (!first.has_numeric() || !second.has_numeric()) {
    return absl::InvalidArgumentError(
        absl::StrCat("second.metric: ", first.has_numeric() ? "second" : "first",
                     " is not a numeric metric; a difference needs two numeric selections or "
                     "none"));
  }
  const v1::NumericEstimate& a = first.numeric();
  const v1::NumericEstimate& b = second.numeric();
  if (a.mechanism() != b.mechanism()) {
    return absl::InvalidArgumentError(absl::StrCat("second.metric: uses ", b.mechanism(),
                                                   ", first uses ", a.mechanism(),
                                                   "; a difference needs one mechanism"));
  }
  const double z = TwoSidedNormalQuantile(out->confidence_level());
  if (a.buckets_size() == 0) {  // ONE_BIT_MEAN: the means, in the values' unit
    const double diff = a.mean() - b.mean();
    const double se = std::hypot(a.mean_standard_error(), b.mean_standard_error());
    out->set_difference(diff);
    out->set_standard_error(se);
    out->set_ci_lower(diff - z * se);
    out->set_ci_upper(diff + z * se);
    return absl::OkStatus();
  }
  bool same = a.buckets_size() == b.buckets_size();
  for (int j = 0; same && j < a.buckets_size(); ++j) {
    same = a.buckets(j).lower() == b.buckets(j).lower() &&
           a.buckets(j).upper() == b.buckets(j).upper();
  }
  if (!same) {
    return absl::InvalidArgumentError(
        "second.metric: its buckets differ from first's; a difference of bucket shares needs the "
        "same buckets");
  }
  out->set_difference(0);
  out->set_standard_error(0);
  out->set_ci_lower(0);
  out->set_ci_upper(0);
  for (int j = 0; j < a.buckets_size(); ++j) {
    const v1::NumericBucket& x = a.buckets(j);
    const v1::NumericBucket& y = b.buckets(j);
    v1::CategoryDifference* d = out->add_shares();
    const double diff = x.estimate_unbiased() - y.estimate_unbiased();
    const double se = std::hypot(x.standard_error(), y.standard_error());
    d->set_category(absl::StrCat("[", x.lower(), ", ", x.upper(), ")"));
    d->set_difference(diff);
    d->set_standard_error(se);
    d->set_ci_lower(std::clamp(diff - z * se, -1.0, 1.0));
    d->set_ci_upper(std::clamp(diff + z * se, -1.0, 1.0));
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
