#include "server/core/prevalence_query.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "deniable/common/calendar_windows.h"
#include "deniable/common/echo.h"
#include "deniable/common/interval.h"
#include "deniable/common/labels.h"
#include "deniable/common/manipulation.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/interval_method_convert.h"
#include "server/core/anytime_estimate.h"
#include "server/core/categorical_query.h"
#include "server/core/numeric_query.h"
#include "server/core/window_selection.h"

namespace deniable::server {
namespace {

// [start, end) of a selection for a person, in RFC 3339 UTC with the Unix seconds: an error then
// says which window held too few reports (end 0: no end).
std::string RangeText(int64_t start, int64_t end) {
  const auto rfc3339 = [](int64_t seconds) {
    return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                            absl::UTCTimeZone());
  };
  return absl::StrCat("[", rfc3339(start), ", ", end == 0 ? "no end" : rfc3339(end),
                      ") (start_time_seconds ", start, ", end_time_seconds ", end, ")");
}

constexpr int64_t kNoEnd = std::numeric_limits<int64_t>::max();
constexpr int64_t kMondayEpochOffset = 4 * 86400;  // 1970-01-05 was the first Monday

absl::StatusOr<double> LevelOrDefault(double level) {
  if (level == 0.0) return 0.95;
  if (!(level > 0.0 && level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level: must be in (0, 1 - 1e-12] or 0 for 0.95, but is ", level));
  }
  return level;
}

// The value of label `key` in a canonical label set "k1=v1,k2=v2" ("" if absent).
std::string LabelValue(const std::string& canonical, const std::string& key) {
  for (absl::string_view kv : absl::StrSplit(canonical, ',', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
    if (p.first == key) return std::string(p.second);
  }
  return "";
}

// The label keys that `rows` carry, as "the labels region, version" or "no labels".
std::string LabelKeysOf(const std::vector<CountRow>& rows) {
  std::set<std::string> keys;
  for (const CountRow& row : rows) {
    for (absl::string_view kv : absl::StrSplit(row.labels, ',', absl::SkipEmpty())) {
      keys.insert(std::string(kv.substr(0, kv.find('='))));
    }
  }
  if (keys.empty()) return "no labels";
  return absl::StrCat("the labels ", absl::StrJoin(keys, ", "));
}

int64_t BucketStart(int64_t t, v1::BucketWidth width) {
  auto floor_to = [](int64_t x, int64_t step, int64_t offset) {
    int64_t r = (x - offset) % step;
    if (r < 0) r += step;
    return x - r;
  };
  switch (width) {
    case v1::HOUR:
      return floor_to(t, 3600, 0);
    case v1::WEEK:
      return floor_to(t, 7 * 86400, kMondayEpochOffset);
    case v1::MONTH:
      return WindowStart(CalendarWindow::kMonth, t);
    default:
      return floor_to(t, 86400, 0);
  }
}

// The start of the bucket after the one that starts at `bucket` (months differ in length).
int64_t BucketEnd(int64_t bucket, v1::BucketWidth width) {
  switch (width) {
    case v1::HOUR:
      return bucket + 3600;
    case v1::WEEK:
      return bucket + 7 * 86400;
    case v1::MONTH:
      return NextWindowStart(CalendarWindow::kMonth, bucket);
    default:
      return bucket + 86400;
  }
}

// Buckets from the one holding `first` to the one holding `last`, both included.
int64_t BucketsBetween(int64_t first, int64_t last, v1::BucketWidth width) {
  const int64_t a = BucketStart(first, width);
  const int64_t b = BucketStart(last, width);
  if (width != v1::MONTH) return (b - a) / (BucketEnd(a, width) - a) + 1;
  const absl::TimeZone utc = absl::UTCTimeZone();
  return (absl::ToCivilMonth(absl::FromUnixSeconds(b), utc) -
          absl::ToCivilMonth(absl::FromUnixSeconds(a), utc)) +
         1;
}

int64_t Total(const PeriodCounts& counts) {
  int64_t n = 0;
  for (const auto& [period, versions] : counts) {
    for (const auto& [version, nyes] : versions) n += nyes.first;
  }
  return n;
}

absl::StatusOr<VersionCombination> CombinationFromProto(v1::VersionCombination c) {
  switch (c) {
    case v1::VERSION_COMBINATION_UNSPECIFIED:
    case v1::BY_REPORTS:
      return VersionCombination::kByReports;
    case v1::INVERSE_VARIANCE:
      return VersionCombination::kInverseVariance;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("combination: unknown version combination ", static_cast<int>(c)));
}

// The central (shuffle-amplified) epsilon of one served estimate (docs/privacy.md): the numerical
// bound of common/shuffle.h on its n reports at delta = kDefaultCentralDelta, with the clone
// probability of its design's mechanism (common/mechanism.h: the binary channel's, or
// CategoricalDesign::CloneProbability) when one
// design version is present, else the generic
// e^-eps0 for the largest local epsilon (FMT21 allow a different eps0-LDP randomizer per
// report). Only for one reporting period: over several, a device may have sent several reports,
// outside the bound's one-report-per-device assumption, so only the local epsilon is claimed.
absl::Status SetCentralPrivacy(const MetricInfo& metric, v1::Prevalence* p) {
  if (p->suppressed() || p->n() <= 0) return absl::OkStatus();
  const double eps0 = p->epsilon();
  p->set_central_n(p->n());
  p->set_central_epsilon(eps0);
  p->set_central_delta(0);
  p->set_central_method("local_only");
  if (p->periods() > 1) {
    p->set_central_note(absl::StrCat(
        "the reports span ", p->periods(),
        " reporting periods, so one device may have sent several of them; the shuffle bound "
        "assumes one report per device, so only the local epsilon is claimed"));
    return absl::OkStatus();
  }
  double gamma = GenericCloneProbability(eps0);
  if (p->versions_size() == 1) {
    const MetricVersion* v = metric.Find(p->versions(0).design_version());
    gamma = v != nullptr && v->mechanism != nullptr
                ? v->mechanism->CloneProbability()
                : BinaryCloneProbability(Channel{p->versions(0).a(), p->versions(0).b()});
  }
  DENIABLE_ASSIGN_OR_RETURN(CentralPrivacy c,
                            AmplifiedEpsilon(eps0, gamma, p->n(), kDefaultCentralDelta));
  p->set_central_epsilon(c.epsilon);
  p->set_central_delta(c.delta);
  p->set_central_method(c.method);
  p->set_central_note(c.note);
  return absl::OkStatus();
}

absl::Status CheckManipulationReports(int64_t m) {
  if (m < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("manipulation_reports: must be >= 0 (0 for 1 % of n), but is ", m));
  }
  return absl::OkStatus();
}

// Fills `out` for an estimate that is the mean of n per-report values in [lo, hi].
absl::Status FillManipulation(double estimate, int64_t n, int64_t m, double lo, double hi,
                              v1::ManipulationBound* out) {
  DENIABLE_ASSIGN_OR_RETURN(ManipulationShift s, MeanManipulation(estimate, n, m, lo, hi));
  out->set_fake_reports(s.fake_reports);
  out->set_shift_up(s.shift_up);
  out->set_shift_down(s.shift_down);
  out->set_bound(s.bound);
  out->set_uniform_bound(s.uniform);
  out->set_honest_lower(s.honest_lower);
  out->set_honest_upper(s.honest_upper);
  return absl::OkStatus();
}

}  // namespace

absl::Status SetManipulationBounds(int64_t fake_reports, v1::Prevalence* p) {
  DENIABLE_RETURN_IF_ERROR(CheckManipulationReports(fake_reports));
  if (p->suppressed() || p->n() <= 0 || p->versions_size() == 0 ||
      p->combination() == "inverse_variance") {
    return absl::OkStatus();
  }
  // One report's debiased value is (bit - b) / (a - b): its range, widest over the versions.
  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const v1::VersionEstimate& v : p->versions()) {
    const double gap = v.a() - v.b();
    if (gap == 0 || !std::isfinite(gap)) return absl::OkStatus();  // nothing is estimated
    lo = std::min({lo, -v.b() / gap, (1 - v.b()) / gap});
    hi = std::max({hi, -v.b() / gap, (1 - v.b()) / gap});
  }
  const int64_t m = fake_reports > 0 ? fake_reports : DefaultManipulationReports(p->n());
  for (v1::CategoryShare& share : *p->mutable_shares()) {
    DENIABLE_RETURN_IF_ERROR(FillManipulation(share.estimate_unbiased(), p->n(), m, lo, hi,
                                              share.mutable_manipulation()));
  }
  if (p->has_numeric() && p->numeric().buckets_size() > 0) {  // D_BIT_FLIP
    for (v1::NumericBucket& b : *p->mutable_numeric()->mutable_buckets()) {
      if (b.sampled() <= 0 || !std::isfinite(b.estimate_unbiased())) continue;
      DENIABLE_RETURN_IF_ERROR(FillManipulation(b.estimate_unbiased(), b.sampled(), m, lo, hi,
                                                b.mutable_manipulation()));
    }
    return absl::OkStatus();
  }
  if (p->shares_size() > 0) return absl::OkStatus();
  DENIABLE_RETURN_IF_ERROR(
      FillManipulation(p->estimate_unbiased(), p->n(), m, lo, hi, p->mutable_manipulation()));
  if (p->has_numeric() && std::isfinite(p->numeric().mean())) {  // ONE_BIT_MEAN
    v1::NumericEstimate* num = p->mutable_numeric();
    const double width = num->hi() - num->lo();
    DENIABLE_RETURN_IF_ERROR(FillManipulation(num->mean(), p->n(), m, num->lo() + width * lo,
                                              num->lo() + width * hi,
                                              num->mutable_mean_manipulation()));
  }
  return absl::OkStatus();
}

void SetEstimateKind(const MetricInfo& metric, v1::Prevalence* p) {
  if (metric.numeric()) {
    p->mutable_numeric();  // already filled by the numeric estimate (or its header)
  } else if (metric.categorical()) {
    p->mutable_categorical()->set_categories(static_cast<uint32_t>(metric.proto.categories_size()));
  } else {
    p->mutable_yes_no();
  }
}

void AddCounterSums(int64_t n, const SparseCounters& counters, std::pair<int64_t, int64_t>& count,
                    std::vector<int64_t>* sums) {
  count.first += n;
  count.second += CounterAt(counters, 0);
  if (sums == nullptr) return;
  // The one dense vector per period and version that the mechanism's Estimate takes.
  for (const auto& [j, sum] : counters) AddCounter(sums, j, sum);
}

// The counts of one selection (and, for a categorical metric, its support counts).
struct PrevalenceQuery::Tally {
  PeriodCounts counts;
  PeriodSupport support;
  // Set when the selection is counted by devices (window_selection.h): the counts above are then
  // keyed by window and hold each window's first reports.
  std::optional<WindowChoice> window;
  int64_t start = 0;  // the selection's start, for the window's name
};

struct PrevalenceQuery::Selection {
  std::shared_ptr<const MetricInfo> metric;
  std::vector<CountRow> rows;
  int64_t start = 0;
  int64_t end = 0;  // 0: no end
  EstimateOptions options;
  SimultaneousMethod simultaneous = SimultaneousMethod::kSidak;
  int64_t period_seconds = 0;  // the metric's reporting period (0: the default day)
  int64_t min_reports = 1;
  // Whether a version's layout has several coordinates, so that the estimator reads the summed
  // vectors (PeriodSupport); a one-coordinate layout's counter 0 is in PeriodCounts.
  bool sum_vectors = false;
  std::vector<double> quantiles = {0.5, 0.9, 0.99};  // numeric (D_BIT_FLIP) metrics
  std::optional<AnytimeRequest> anytime;             // interval = ANYTIME (anytime_estimate.h)
  int64_t manipulation_reports = 0;                  // 0: 1 % of each estimate's n

  // Adds `row` to `tally` under its reporting period and design version (or, in the window
  // form, its window's first reports under its window).
  void Add(const CountRow& row, Tally& tally) const {
    if (tally.window.has_value()) {
      AddWindowCounts(row, *tally.window, &tally.counts, sum_vectors ? &tally.support : nullptr);
      return;
    }
    const int64_t period = PeriodStart(row.event_time_seconds, period_seconds);
    AddCounterSums(row.n, row.counters, tally.counts[period][row.design_version],
                   sum_vectors ? &tally.support[period][row.design_version] : nullptr);
  }
};

absl::StatusOr<v1::Prevalence> PrevalenceQuery::Estimate(const Selection& s, const Tally& t) {
  absl::StatusOr<v1::Prevalence> p =
      s.metric->categorical()
          ? EstimateSharesFromPeriods(*s.metric, t.counts, t.support, s.options, s.simultaneous)
      : s.metric->numeric() ? EstimateNumericFromPeriods(*s.metric, t.counts, t.support, s.options,
                                                         s.simultaneous, s.quantiles)
                            : EstimateFromPeriods(*s.metric, t.counts, s.options);
  if (!p.ok()) return p;
  if (s.anytime.has_value()) {
    DENIABLE_RETURN_IF_ERROR(ApplyAnytimeIntervals(
        *s.metric, t.counts, s.sum_vectors ? &t.support : nullptr, *s.anytime, &*p));
  } else {
    p->set_interval_kind(v1::FIXED_N);
  }
  DENIABLE_RETURN_IF_ERROR(SetManipulationBounds(s.manipulation_reports, &*p));
  SetEstimateKind(*s.metric, &*p);
  if (t.window.has_value()) {
    DescribeWindowEstimate(*t.window, t.start, &*p);
  } else {
    DescribePeriodEstimate(&*p);
  }
  if (p->has_numeric()) {
    // A number's estimate is a mean or a distribution, not a prevalence (the yes/no name stays
    // in Prevalence.estimand for older readers).
    p->mutable_numeric()->set_estimand(absl::StrReplaceAll(
        p->estimand(),
        {{"prevalence", p->numeric().mechanism() == "d_bit_flip" ? "distribution" : "mean"}}));
  }
  return p;
}

// The tally of a selection [start, end): in the window form when ChooseWindow gives one and its
// devices sent window flags (some first reports counted), else in the period form.
PrevalenceQuery::Tally PrevalenceQuery::NewTally(const Selection& s, int64_t start, int64_t end,
                                                 const std::vector<const CountRow*>& rows) {
  Tally t;
  t.start = start;
  t.window = ChooseWindow(*s.metric, start, end);
  if (t.window.has_value() && !t.window->once) {
    int64_t firsts = 0;
    for (const CountRow* row : rows) firsts += row->firsts[static_cast<size_t>(t.window->kind)].n;
    if (firsts == 0) t.window.reset();  // no device sent flags: the period form
  }
  return t;
}

absl::StatusOr<v1::Prevalence> PrevalenceQuery::EstimateOrSuppress(const Selection& s,
                                                                   const Tally& t) {
  const int64_t n = Total(t.counts);
  if (n >= s.min_reports) return Estimate(s, t);
  v1::Prevalence suppressed;  // a small group: its size only, never an estimate
  suppressed.set_metric(s.metric->proto.name());
  suppressed.set_n(n);
  suppressed.set_suppressed(true);
  SetSuppressedNumeric(*s.metric, &suppressed);
  SetEstimateKind(*s.metric, &suppressed);
  return suppressed;
}

PrevalenceQuery::PrevalenceQuery(MetricRegistry* registry, Storage* storage, QueryOptions options)
    : registry_(registry), storage_(storage), options_(options) {}

absl::StatusOr<PrevalenceQuery::Selection> PrevalenceQuery::Select(
    const std::string& metric, int64_t start, int64_t end, double level, v1::IntervalMethod method,
    v1::VersionCombination c, v1::SimultaneousMethod sm, v1::IntervalKind kind,
    int64_t tuned_reports) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(metric, "metric"));
  if (start < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("start_time_seconds: must be >= 0, but is ", start));
  }
  if (end != 0 && end <= start) {
    return absl::InvalidArgumentError(absl::StrCat("end_time_seconds: must be > start (", start,
                                                   ") or 0 for no end, but is ", end));
  }
  Selection s;
  s.start = start;
  s.end = end;
  DENIABLE_ASSIGN_OR_RETURN(s.options.level, LevelOrDefault(level));
  if (method != v1::INTERVAL_METHOD_UNSPECIFIED) {  // unspecified: the design's default
    DENIABLE_ASSIGN_OR_RETURN(s.options.method, MethodFromProto(method));
  }
  DENIABLE_ASSIGN_OR_RETURN(s.options.combination, CombinationFromProto(c));
  DENIABLE_ASSIGN_OR_RETURN(s.simultaneous, SimultaneousFromProto(sm));
  if (kind == v1::ANYTIME) {
    AnytimeRequest anytime;
    anytime.level = s.options.level;
    anytime.combination = s.options.combination;
    DENIABLE_ASSIGN_OR_RETURN(anytime.tuned_reports, AnytimeTunedReportsOrDefault(tuned_reports));
    s.anytime = anytime;
  } else if (kind != v1::INTERVAL_KIND_UNSPECIFIED && kind != v1::FIXED_N) {
    return absl::InvalidArgumentError(
        absl::StrCat("interval: unknown interval kind ", static_cast<int>(kind)));
  }
  DENIABLE_ASSIGN_OR_RETURN(s.metric, registry_->Find(metric));
  DENIABLE_RETURN_IF_ERROR(
      s.metric->current().mechanism->AnsweredByPrevalence(s.metric->proto.name()));
  s.period_seconds = s.metric->proto.reporting_period_seconds();
  for (const MetricVersion& v : s.metric->versions) {
    if (v.mechanism != nullptr && v.mechanism->Layout().coordinates > 1) s.sum_vectors = true;
  }
  DENIABLE_ASSIGN_OR_RETURN(s.rows,
                            storage_->ReadCounts(s.metric->id, start, end == 0 ? kNoEnd : end));
  s.min_reports = s.metric->proto.min_reports() > 0 ? s.metric->proto.min_reports()
                                                    : options_.default_min_reports;
  s.min_reports = std::max<int64_t>(1, s.min_reports);
  return s;
}

absl::StatusOr<v1::Prevalence> PrevalenceQuery::Get(const v1::GetPrevalenceRequest& request) {
  if (!request.group_by().empty() && !ValidLabelKey(request.group_by())) {
    return absl::InvalidArgumentError(
        absl::StrCat("group_by: must be a label key ([a-z][a-z0-9_]{0,31}), but is ",
                     EchoValue(request.group_by())));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      Selection s,
      Select(request.metric(), request.start_time_seconds(), request.end_time_seconds(),
             request.confidence_level(), request.method(), request.combination(),
             request.simultaneous(), request.interval(), request.anytime_tuned_reports()));
  if (s.anytime.has_value() && !request.quantiles().empty()) {
    return absl::FailedPreconditionError(
        "quantiles: not served with interval = ANYTIME (their band is fixed-n); ask without "
        "quantiles, or without interval = ANYTIME");
  }
  DENIABLE_ASSIGN_OR_RETURN(s.quantiles, QuantileLevels(request.quantiles()));
  DENIABLE_RETURN_IF_ERROR(CheckManipulationReports(request.manipulation_reports()));
  s.manipulation_reports = request.manipulation_reports();
  std::vector<const CountRow*> all_rows;
  for (const CountRow& row : s.rows) all_rows.push_back(&row);
  Tally all = NewTally(s, s.start, s.end, all_rows);
  std::map<std::string, Tally> groups;
  for (const CountRow& row : s.rows) {
    s.Add(row, all);
    if (!request.group_by().empty()) {
      auto [g, added] = groups.try_emplace(LabelValue(row.labels, request.group_by()));
      if (added) {  // a group is counted in the form of the whole selection
        g->second.window = all.window;
        g->second.start = all.start;
      }
      s.Add(row, g->second);
    }
  }
  if (!request.group_by().empty() && groups.size() == 1 && groups.begin()->first.empty()) {
    // No report of the selection carries the label: one blank group holding everything would
    // read as an answer. Name the label keys the reports do carry instead.
    return absl::InvalidArgumentError(
        absl::StrCat("group_by: no report of metric \"", request.metric(),
                     "\" in the selection carries label \"", request.group_by(),
                     "\"; its reports carry ", LabelKeysOf(s.rows)));
  }
  const int64_t n = Total(all.counts);
  if (n < s.min_reports) {
    return absl::FailedPreconditionError(
        absl::StrCat("metric \"", request.metric(), "\" has ", n,
                     " reports in the requested time range ", RangeText(s.start, s.end),
                     "; at least ", s.min_reports, " are needed before a prevalence is served"));
  }
  DENIABLE_ASSIGN_OR_RETURN(v1::Prevalence out, Estimate(s, all));
  DENIABLE_RETURN_IF_ERROR(SetCentralPrivacy(*s.metric, &out));
  out.set_start_time_seconds(s.start);
  out.set_end_time_seconds(s.end);
  for (const auto& [value, counts] : groups) {
    v1::Prevalence* g = out.add_groups();
    DENIABLE_ASSIGN_OR_RETURN(*g, EstimateOrSuppress(s, counts));
    DENIABLE_RETURN_IF_ERROR(SetCentralPrivacy(*s.metric, g));
    g->set_group_value(value);
    g->set_start_time_seconds(s.start);
    g->set_end_time_seconds(s.end);
  }
  return out;
}

absl::StatusOr<v1::Series> PrevalenceQuery::Series(const v1::GetSeriesRequest& request) {
  if (request.start_time_seconds() <= 0 || request.end_time_seconds() <= 0) {
    return absl::InvalidArgumentError(
        "start_time_seconds, end_time_seconds: a series needs both, > 0");
  }
  const v1::BucketWidth width =
      request.bucket() == v1::BUCKET_WIDTH_UNSPECIFIED ? v1::DAY : request.bucket();
  if (!v1::BucketWidth_IsValid(width)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bucket: unknown bucket width ", static_cast<int>(width)));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      Selection s,
      Select(request.metric(), request.start_time_seconds(), request.end_time_seconds(),
             request.confidence_level(), request.method(), request.combination(),
             request.simultaneous(), request.interval(), request.anytime_tuned_reports()));
  DENIABLE_RETURN_IF_ERROR(CheckManipulationReports(request.manipulation_reports()));
  s.manipulation_reports = request.manipulation_reports();
  const int64_t buckets = BucketsBetween(s.start, s.end - 1, width);
  if (buckets > options_.max_series_buckets) {
    return absl::InvalidArgumentError(absl::StrCat("end_time_seconds: the range spans ", buckets,
                                                   " buckets, more than the limit of ",
                                                   options_.max_series_buckets));
  }
  // Rows by bucket; a bucket wholly inside the range that is a day, an ISO week or a calendar month
  // is counted by devices when the metric's devices send window flags (window_selection.h).
  std::map<int64_t, std::vector<const CountRow*>> rows_by_bucket;
  for (const CountRow& row : s.rows) {
    rows_by_bucket[BucketStart(row.event_time_seconds, width)].push_back(&row);
  }
  std::map<int64_t, Tally> by_bucket;
  for (const auto& [bucket, rows] : rows_by_bucket) {
    const int64_t bucket_end = BucketEnd(bucket, width);
    const bool whole = width != v1::HOUR && bucket >= s.start && bucket_end <= s.end;
    Tally& t = by_bucket[bucket];
    if (whole) t = NewTally(s, bucket, bucket_end, rows);
    for (const CountRow* row : rows) s.Add(*row, t);
  }
  v1::Series out;
  out.set_metric(request.metric());
  out.set_bucket(width);
  for (const auto& [bucket, counts] : by_bucket) {
    v1::Prevalence* p = out.add_buckets();
    DENIABLE_ASSIGN_OR_RETURN(*p, EstimateOrSuppress(s, counts));
    // The bucket's bounds, cut to the requested range.
    p->set_start_time_seconds(std::max(bucket, s.start));
    p->set_end_time_seconds(std::min(BucketEnd(bucket, width), s.end));
  }
  return out;
}

absl::StatusOr<v1::Difference> PrevalenceQuery::Difference(
    const v1::GetDifferenceRequest& request) {
  const v1::Selection& a = request.first();
  const v1::Selection& b = request.second();
  if (a.metric() == b.metric()) {
    const int64_t a_end = a.end_time_seconds() == 0 ? kNoEnd : a.end_time_seconds();
    const int64_t b_end = b.end_time_seconds() == 0 ? kNoEnd : b.end_time_seconds();
    if (a.start_time_seconds() < b_end && b.start_time_seconds() < a_end) {
      return absl::InvalidArgumentError(
          "second: overlaps first; two windows of one metric must be disjoint so that their "
          "estimates are independent");
    }
  }
  v1::Difference out;
  auto prevalence = [&](const v1::Selection& sel, const char* field,
                        v1::Prevalence* p) -> absl::Status {
    v1::GetPrevalenceRequest r;
    r.set_metric(sel.metric());
    r.set_start_time_seconds(sel.start_time_seconds());
    r.set_end_time_seconds(sel.end_time_seconds());
    r.set_confidence_level(request.confidence_level());
    r.set_combination(sel.combination());
    absl::StatusOr<v1::Prevalence> got = Get(r);
    if (!got.ok()) {
      return absl::Status(got.status().code(), absl::StrCat(field, ".", got.status().message()));
    }
    *p = *std::move(got);
    return absl::OkStatus();
  };
  DENIABLE_RETURN_IF_ERROR(prevalence(a, "first", out.mutable_first()));
  DENIABLE_RETURN_IF_ERROR(prevalence(b, "second", out.mutable_second()));
  const double level = out.first().confidence_level();
  const double diff = out.first().estimate_unbiased() - out.second().estimate_unbiased();
  const double se = std::hypot(out.first().standard_error(), out.second().standard_error());
  const double z = TwoSidedNormalQuantile(level);
  out.set_difference(diff);
  out.set_standard_error(se);
  out.set_ci_lower(std::clamp(diff - z * se, -1.0, 1.0));
  out.set_ci_upper(std::clamp(diff + z * se, -1.0, 1.0));
  out.set_confidence_level(level);
  if (out.first().has_numeric() || out.second().has_numeric()) {
    // Numeric: the difference of the means in the values' unit, or of each bucket's share.
    DENIABLE_RETURN_IF_ERROR(FillNumericDifference(out.first(), out.second(), &out));
  } else if (out.first().shares_size() > 0 || out.second().shares_size() > 0) {
    // Categorical: a difference per category; the yes/no fields stay 0.
    out.set_difference(0);
    out.set_standard_error(0);
    out.set_ci_lower(0);
    out.set_ci_upper(0);
    DENIABLE_RETURN_IF_ERROR(FillShareDifferences(out.first(), out.second(), &out));
  }
  return out;
}

}  // namespace deniable::server
