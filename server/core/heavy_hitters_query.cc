#include "server/core/heavy_hitters_query.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/heavy_hitters_estimate.h"
#include "deniable/common/heavy_hitters_mechanism.h"
#include "deniable/common/status_macros.h"
#include "server/core/window_selection.h"

namespace deniable::server {
namespace {

constexpr int64_t kOpenEnd = std::numeric_limits<int64_t>::max();
constexpr int kMaxCandidates = 10000;

// The newest version's summed sketch of a metric over a range.
struct SketchRead {
  std::shared_ptr<const MetricInfo> metric;
  HeavyHittersDesign design;
  uint32_t version = 0;
  std::vector<int64_t> counters;  // the HeavyHittersCounterCount sums (without n)
  int64_t older_reports = 0;
  bool window_firsts = false;  // read from one window's first reports
};

// The error of an answer, naming the metric, and for the window form how reports were counted.
absl::Status AnswerError(const absl::Status& status, const std::string& metric,
                         const SketchRead& read) {
  return absl::Status(
      status.code(),
      absl::StrCat("metric \"", metric, "\": ", status.message(),
                   read.window_firsts
                       ? " (this range is one whole calendar window: only each device's first "
                         "report in it counts, and reports without window flags do not)"
                       : ""));
}

// The window form of a selection (window_selection.h): exactly one whole UTC day, ISO week or
// calendar month of a metric whose devices send window flags is read from the window's first
// reports, each device once; a reporting_once metric's reports are its devices'. nullopt: every
// report in the range (the period form). Several whole windows keep the period form: summing
// windows would count a device once per window, its memoized report repeated.
std::optional<WindowChoice> SketchWindow(const MetricInfo& metric, int64_t start, int64_t end) {
  std::optional<WindowChoice> choice = ChooseWindow(metric, start, end);
  if (choice.has_value() && !choice->once && choice->windows != 1) return std::nullopt;
  return choice;
}

absl::StatusOr<SketchRead> ReadSketch(MetricRegistry& registry, Storage& storage,
                                      const std::string& name, int64_t start, int64_t end) {
  if (start < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("start_time_seconds: must be >= 0, but is ", start));
  }
  if (end != 0 && end <= start) {
    return absl::InvalidArgumentError(absl::StrCat(
        "end_time_seconds: must be after start_time_seconds (", start, ") or 0, but is ", end));
  }
  SketchRead read;
  DENIABLE_ASSIGN_OR_RETURN(read.metric, registry.Find(name));
  if (!read.metric->current().mechanism->TakesStrings()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "metric: \"", name, "\" is a ", ReportKindName(read.metric->current().mechanism->kind()),
        " metric; top values and frequencies are for heavy-hitters metrics (GetPrevalence "
        "answers this one)"));
  }
  const auto& mechanism =
      static_cast<const HeavyHittersMechanism&>(*read.metric->current().mechanism);
  read.design = mechanism.design();
  read.version = read.metric->current().version;
  read.counters.assign(HeavyHittersCounterCount(read.design), 0);
  DENIABLE_ASSIGN_OR_RETURN(std::vector<CountRow> rows,
                            storage.ReadCounts(read.metric->id, start, end == 0 ? kOpenEnd : end));
  const std::optional<WindowChoice> window = SketchWindow(*read.metric, start, end);
  read.window_firsts = window.has_value() && !window->once;
  for (const CountRow& row : rows) {
    const bool firsts = window.has_value() && !window->once;
    const CountRow::Firsts* f = firsts ? &row.firsts[static_cast<size_t>(window->kind)] : nullptr;
    if (row.design_version != read.version) {
      read.older_reports += firsts ? f->n : row.n;
      continue;
    }
    for (const auto& [j, count] : firsts ? f->counters : row.counters) {
      if (j >= read.counters.size()) {
        return absl::DataLossError(absl::StrCat("metric \"", name, "\": a count row holds counter ",
                                                j, " past the design's ", read.counters.size()));
      }
      read.counters[j] += count;
    }
  }
  return read;
}

absl::StatusOr<HeavyHittersQueryOptions> OptionsOf(double level, uint32_t max_prefixes) {
  HeavyHittersQueryOptions options;
  if (level != 0) options.confidence_level = level;
  if (max_prefixes != 0)
    options.max_prefixes = static_cast<int>(std::min<uint32_t>(max_prefixes, 1u << 20));
  DENIABLE_RETURN_IF_ERROR(ValidateHeavyHittersQueryOptions(options));
  return options;
}

v1::TopValues ToProto(const SketchRead& read, const HeavyHittersAnswer& answer) {
  v1::TopValues out;
  out.set_metric(read.metric->proto.name());
  out.set_design_version(read.version);
  out.set_devices(answer.devices);
  out.set_estimation_reports(answer.estimation_reports);
  out.set_confidence_level(answer.confidence_level);
  out.set_per_value_level(answer.per_value_level);
  out.set_tested(answer.tested);
  out.set_detection_threshold(answer.detection_threshold);
  out.set_epsilon(read.design.epsilon);
  out.set_reports_of_older_versions(read.older_reports);
  for (int64_t p : answer.prefixes_per_level) out.add_prefixes_per_level(p);
  for (const HeavyHitterEstimate& e : answer.values) {
    v1::ValueShare* v = out.add_values();
    v->set_value(e.value);
    v->set_share(e.share);
    v->set_count(e.count);
    v->set_standard_error(e.standard_error);
    v->set_collision_sd(e.collision_sd);
    v->set_lower(e.interval.lower);
    v->set_upper(e.interval.upper);
    v->set_simultaneous_lower(e.simultaneous.lower);
    v->set_simultaneous_upper(e.simultaneous.upper);
    v->set_above_threshold(e.above_threshold);
    v->set_reports(e.reports);
  }
  return out;
}

}  // namespace

absl::StatusOr<v1::TopValues> HeavyHittersQuery::Top(const v1::GetTopValuesRequest& request) {
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersQueryOptions options,
                            OptionsOf(request.confidence_level(), request.max_prefixes()));
  DENIABLE_ASSIGN_OR_RETURN(SketchRead read,
                            ReadSketch(*registry_, *storage_, request.metric(),
                                       request.start_time_seconds(), request.end_time_seconds()));
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersSketch sketch,
                            HeavyHittersSketch::FromCounters(read.design, read.counters));
  absl::StatusOr<HeavyHittersAnswer> answer = DiscoverHeavyHitters(sketch, options);
  if (!answer.ok()) return AnswerError(answer.status(), request.metric(), read);
  return ToProto(read, *answer);
}

absl::StatusOr<v1::TopValues> HeavyHittersQuery::Frequencies(
    const v1::GetFrequenciesRequest& request) {
  if (request.values_size() == 0 || request.values_size() > kMaxCandidates) {
    return absl::InvalidArgumentError(absl::StrCat(
        "values: give 1 to ", kMaxCandidates, " candidate values, got ", request.values_size()));
  }
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersQueryOptions options,
                            OptionsOf(request.confidence_level(), 0));
  options.pooled = !request.estimation_group_only();
  DENIABLE_ASSIGN_OR_RETURN(SketchRead read,
                            ReadSketch(*registry_, *storage_, request.metric(),
                                       request.start_time_seconds(), request.end_time_seconds()));
  std::vector<std::string> candidates(request.values().begin(), request.values().end());
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (absl::Status s = ValidateHeavyHitterValue(read.design, candidates[i]); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("values[", i, "]: ", s.message()));
    }
  }
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersSketch sketch,
                            HeavyHittersSketch::FromCounters(read.design, read.counters));
  absl::StatusOr<HeavyHittersAnswer> answer = EstimateFrequencies(sketch, candidates, options);
  if (!answer.ok()) return AnswerError(answer.status(), request.metric(), read);
  return ToProto(read, *answer);
}

}  // namespace deniable::server
