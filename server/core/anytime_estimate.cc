#include "server/core/anytime_estimate.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deniable/common/confidence_sequence.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {
namespace {

// Quantity j's channel in a mechanism with `quantities` estimated quantities: the last
// `quantities` coordinates of its layout (D_BIT_FLIP's layout is [s_j] then [y_j]; the other
// kinds have one coordinate per quantity).
Channel QuantityChannel(const Mechanism& m, size_t quantities, size_t j) {
  const size_t offset = static_cast<size_t>(m.Layout().coordinates) - quantities;
  return m.ChannelOf(static_cast<int>(offset + j));
}

// The newest version of `metric` with a mechanism (the reference for rho).
const MetricVersion* Newest(const MetricInfo& metric) {
  for (auto v = metric.versions.rbegin(); v != metric.versions.rend(); ++v) {
    if (v->mechanism != nullptr) return &*v;
  }
  return nullptr;
}

struct Bounds {
  AnytimeInterval alone;
  AnytimeInterval together;
};

}  // namespace

absl::StatusOr<int64_t> AnytimeTunedReportsOrDefault(int64_t requested) {
  if (requested == 0) return kDefaultAnytimeTunedReports;
  if (requested < 0) {
    return absl::InvalidArgumentError(absl::StrCat("anytime_tuned_reports: must be > 0, or 0 for ",
                                                   kDefaultAnytimeTunedReports, ", but is ",
                                                   requested));
  }
  return requested;
}

namespace {

// Why a selection has no anytime interval: it spans periods, or weights versions by variance.
absl::Status CheckAnytimeSelection(const PeriodCounts& counts, const AnytimeRequest& request) {
  if (counts.size() > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "interval: anytime intervals need a selection within one reporting period or one "
        "calendar window, whose reports come from distinct devices; this one spans ",
        counts.size(),
        " (narrow start_time_seconds and end_time_seconds, docs/statistics.md section 10.4)"));
  }
  if (request.combination == VersionCombination::kInverseVariance) {
    return absl::FailedPreconditionError(
        "combination: anytime intervals combine design versions by reports (BY_REPORTS); "
        "INVERSE_VARIANCE weights depend on the data");
  }
  return absl::OkStatus();
}

// The dense counter vector of one version's counts (n, counter 0, and the support of the other
// counters when the layout has them).
std::vector<int64_t> CountersOf(const Mechanism& m, const std::pair<int64_t, int64_t>& nyes,
                                const PeriodSupport* support, int64_t period, uint32_t version) {
  std::vector<int64_t> counters(static_cast<size_t>(m.Layout().length()), 0);
  counters[0] = nyes.first;
  if (m.Layout().coordinates == 1) {
    counters[1] = nyes.second;
  } else if (support != nullptr) {
    if (auto ps = support->find(period); ps != support->end()) {
      if (auto vs = ps->second.find(version); vs != ps->second.end()) {
        for (size_t j = 0; j + 1 < counters.size(); ++j) counters[j + 1] = CounterAt(vs->second, j);
      }
    }
  }
  return counters;
}

// Per quantity, one block per design version present. Errors: DATA_LOSS for counts of a
// version without a mechanism, or versions estimating different numbers of quantities.
absl::StatusOr<std::vector<std::vector<AnytimeBlock>>> BlocksOf(const MetricInfo& metric,
                                                                const PeriodCounts& counts,
                                                                const PeriodSupport* support) {
  std::vector<std::vector<AnytimeBlock>> blocks;
  for (const auto& [period, versions] : counts) {
    for (const auto& [version, nyes] : versions) {
      if (nyes.first == 0) continue;
      const MetricVersion* v = metric.Find(version);
      if (v == nullptr || v->mechanism == nullptr) {
        return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(),
                                                "\": counts refer to missing design version ",
                                                version));
      }
      const Mechanism& m = *v->mechanism;
      DENIABLE_ASSIGN_OR_RETURN(MechanismEstimate e,
                                m.Estimate(CountersOf(m, nyes, support, period, version), {}));
      if (blocks.empty()) blocks.resize(e.coordinates.size());
      if (blocks.size() != e.coordinates.size()) {
        return absl::DataLossError(absl::StrCat("metric \"", metric.proto.name(),
                                                "\": design versions estimate different numbers "
                                                "of quantities"));
      }
      for (size_t j = 0; j < e.coordinates.size(); ++j) {
        blocks[j].push_back(AnytimeBlock{QuantityChannel(m, e.coordinates.size(), j),
                                         e.coordinates[j].successes, e.coordinates[j].trials});
      }
    }
  }
  return blocks;
}

// Each quantity's interval alone (at the request's level) and together (Bonferroni over the
// quantities), rho from the newest version's channel.
absl::StatusOr<std::vector<Bounds>> BoundsOf(const std::vector<std::vector<AnytimeBlock>>& blocks,
                                             const Mechanism& newest,
                                             const AnytimeRequest& request) {
  const int k = static_cast<int>(blocks.size());
  std::vector<Bounds> bounds;
  for (size_t j = 0; j < blocks.size(); ++j) {
    AnytimeOptions options;
    options.confidence_level = request.level;
    options.tuned_reports = request.tuned_reports;
    options.reference_channel = QuantityChannel(newest, blocks.size(), j);
    Bounds b;
    int64_t trials = 0;
    for (const AnytimeBlock& block : blocks[j]) trials += block.trials;
    if (trials == 0) {  // a bucket nobody sampled: nothing known
      b.alone.lower = b.together.lower = 0.0;
      b.alone.upper = b.together.upper = 1.0;
      bounds.push_back(b);
      continue;
    }
    DENIABLE_ASSIGN_OR_RETURN(b.alone, AnytimePrevalenceInterval(blocks[j], options));
    options.confidence_level = BonferroniLevel(request.level, k);
    DENIABLE_ASSIGN_OR_RETURN(b.together, AnytimePrevalenceInterval(blocks[j], options));
    bounds.push_back(b);
  }
  return bounds;
}

// Writes the bounds into the fields of the metric's kind: category shares, dBitFlip buckets, or
// the one interval of yes/no and ONE_BIT_MEAN (with its mean and total).
void WriteBounds(const MetricInfo& metric, const std::vector<Bounds>& bounds,
                 const AnytimeRequest& request, v1::Prevalence* p) {
  const int k = static_cast<int>(bounds.size());
  if (metric.categorical()) {
    for (int j = 0; j < p->shares_size() && j < k; ++j) {
      v1::CategoryShare* s = p->mutable_shares(j);
      s->set_ci_lower(bounds[static_cast<size_t>(j)].alone.lower);
      s->set_ci_upper(bounds[static_cast<size_t>(j)].alone.upper);
      s->set_simultaneous_lower(bounds[static_cast<size_t>(j)].together.lower);
      s->set_simultaneous_upper(bounds[static_cast<size_t>(j)].together.upper);
    }
    p->set_simultaneous_method("bonferroni");
    p->set_per_category_level(BonferroniLevel(request.level, k));
  } else if (metric.numeric() && p->numeric().mechanism() == "d_bit_flip") {
    v1::NumericEstimate* num = p->mutable_numeric();
    for (int j = 0; j < num->buckets_size() && j < k; ++j) {
      v1::NumericBucket* b = num->mutable_buckets(j);
      b->set_ci_lower(bounds[static_cast<size_t>(j)].alone.lower);
      b->set_ci_upper(bounds[static_cast<size_t>(j)].alone.upper);
      b->set_simultaneous_lower(bounds[static_cast<size_t>(j)].together.lower);
      b->set_simultaneous_upper(bounds[static_cast<size_t>(j)].together.upper);
    }
    num->clear_quantiles();  // their band is fixed-n
    num->set_simultaneous_method("bonferroni");
    num->set_per_bucket_level(BonferroniLevel(request.level, k));
  } else if (k == 1) {
    // Yes/no, or ONE_BIT_MEAN's bit (and so its mean and total).
    const AnytimeInterval& a = bounds[0].alone;
    p->set_ci_lower(a.lower);
    p->set_ci_upper(a.upper);
    p->set_interval_clipped(a.clipped);
    if (metric.numeric()) {
      v1::NumericEstimate* num = p->mutable_numeric();
      const double width = num->hi() - num->lo();
      num->set_mean_ci_lower(num->lo() + width * a.lower);
      num->set_mean_ci_upper(num->lo() + width * a.upper);
      const double devices = static_cast<double>(num->devices());
      num->set_total_ci_lower(devices * num->mean_ci_lower());
      num->set_total_ci_upper(devices * num->mean_ci_upper());
    }
  }
}

}  // namespace

absl::Status ApplyAnytimeIntervals(const MetricInfo& metric, const PeriodCounts& counts,
                                   const PeriodSupport* support, const AnytimeRequest& request,
                                   v1::Prevalence* p) {
  if (p->suppressed() || p->n() <= 0) return absl::OkStatus();
  DENIABLE_RETURN_IF_ERROR(CheckAnytimeSelection(counts, request));
  const MetricVersion* newest = Newest(metric);
  if (newest == nullptr) {
    return absl::DataLossError(
        absl::StrCat("metric \"", metric.proto.name(), "\": no design version has a mechanism"));
  }
  DENIABLE_ASSIGN_OR_RETURN(const std::vector<std::vector<AnytimeBlock>> blocks,
                            BlocksOf(metric, counts, support));
  DENIABLE_ASSIGN_OR_RETURN(const std::vector<Bounds> bounds,
                            BoundsOf(blocks, *newest->mechanism, request));
  WriteBounds(metric, bounds, request, p);
  p->set_interval_kind(v1::ANYTIME);
  p->set_anytime_tuned_reports(request.tuned_reports);
  p->set_interval_construction(
      absl::StrCat("anytime normal-mixture confidence sequence (valid at every look), tuned at ",
                   request.tuned_reports, " reports",
                   bounds.size() > 1 ? ", simultaneous by Bonferroni over the quantities" : "",
                   " (docs/statistics.md section 10)"));
  // `method` keeps the fixed-n method the selection would have had; it was not used.
  p->set_method_reason("interval = ANYTIME requested: the fixed-n method was not used");
  return absl::OkStatus();
}

}  // namespace deniable::server
