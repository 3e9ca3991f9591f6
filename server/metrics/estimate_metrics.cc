#include "server/metrics/estimate_metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace deniable::server {
namespace {

// A sample value as Prometheus reads it, exactly (17 significant digits).
std::string Value(double x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x > 0 ? "+Inf" : "-Inf";
  return absl::StrFormat("%.17g", x);
}

std::string Escape(const std::string& label_value) {
  return absl::StrReplaceAll(label_value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

// One gauge family: its samples as "{labels} value" lines.
struct Family {
  Family(const char* family_name, const char* family_help) : name(family_name), help(family_help) {}
  const char* name;
  const char* help;
  std::vector<std::string> samples;

  void Add(const std::string& labels, double value) {
    samples.push_back(absl::StrCat(name, labels.empty() ? "" : "{", labels,
                                   labels.empty() ? "" : "}", " ", Value(value)));
  }
  void AppendTo(std::string* out) const {
    absl::StrAppend(out, "# HELP ", name, " ", help, "\n# TYPE ", name, " gauge\n");
    for (const std::string& s : samples) absl::StrAppend(out, s, "\n");
  }
};

struct Families {
  Family estimate{"deniable_estimate",
                  "Each metric's debiased estimate over the export window, by quantity "
                  "(prevalence, a category, mean, p50/p90/p99); shares as fractions, means in "
                  "the metric's unit"};
  Family lower{"deniable_estimate_lower", "Lower end of the estimate's 95 % interval"};
  Family upper{"deniable_estimate_upper", "Upper end of the estimate's 95 % interval"};
  Family manipulation{"deniable_estimate_manipulation_bound",
                      "How far 1 % of n fake reports could have moved the estimate "
                      "(docs/security.md, Manipulation bound)"};
  Family reports{"deniable_estimate_reports", "Reports counted in the metric's estimate"};

  void Quantity(const std::string& metric, const std::string& quantity, double value, double lo,
                double hi, const v1::ManipulationBound* bound) {
    const std::string labels =
        absl::StrCat("metric=\"", Escape(metric), "\",quantity=\"", Escape(quantity), "\"");
    estimate.Add(labels, value);
    lower.Add(labels, lo);
    upper.Add(labels, hi);
    if (bound != nullptr && bound->fake_reports() > 0) manipulation.Add(labels, bound->bound());
  }
};

std::string QuantileName(double level) {
  return absl::StrCat("p", absl::StrFormat("%g", level * 100));
}

}  // namespace

EstimateMetrics::EstimateMetrics(ListMetrics list, GetPrevalence get, const Clock* clock,
                                 EstimateMetricsOptions options)
    : list_(std::move(list)), get_(std::move(get)), clock_(clock), options_(options) {}

EstimateMetrics::~EstimateMetrics() { Stop(); }

void EstimateMetrics::Start() {
  (void)Refresh();  // a failed list keeps "" until the next refresh
  if (options_.refresh <= absl::ZeroDuration()) return;
  thread_ = std::thread([this] {
    while (true) {
      {
        // Wakes at once when Stop sets stopping_; else after one refresh interval.
        absl::MutexLock lock(&mu_);
        if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.refresh)) return;
      }
      (void)Refresh();
    }
  });
}

void EstimateMetrics::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status EstimateMetrics::Refresh() {
  absl::MutexLock one(&refresh_mu_);
  absl::StatusOr<v1::ListMetricsResponse> listed = list_();
  if (!listed.ok()) return listed.status();
  std::vector<std::string> names;
  for (const v1::Metric& m : listed->metrics()) names.push_back(m.name());
  std::sort(names.begin(), names.end());
  const size_t kept =
      std::min(names.size(), static_cast<size_t>(std::max(0, options_.max_metrics)));
  const int64_t end = absl::ToUnixSeconds(clock_->Now());
  const int64_t start = std::max<int64_t>(0, end - absl::ToInt64Seconds(options_.window));
  Families f;
  for (size_t i = 0; i < kept; ++i) {
    v1::GetPrevalenceRequest request;
    request.set_metric(names[i]);
    request.set_start_time_seconds(start);
    request.set_end_time_seconds(end);
    absl::StatusOr<v1::Prevalence> p = get_(request);
    if (!p.ok() || p->suppressed()) continue;  // too few reports, or the metric went away
    const std::string& metric = names[i];
    f.reports.Add(absl::StrCat("metric=\"", Escape(metric), "\""), static_cast<double>(p->n()));
    if (p->has_numeric()) {
      const v1::NumericEstimate& e = p->numeric();
      if (e.buckets_size() == 0) {
        f.Quantity(metric, "mean", e.mean(), e.mean_ci_lower(), e.mean_ci_upper(),
                   &e.mean_manipulation());
      }
      for (const v1::NumericQuantile& q : e.quantiles()) {
        f.Quantity(metric, QuantileName(q.level()), q.value(), q.ci_lower(), q.ci_upper(), nullptr);
      }
    } else if (p->shares_size() > 0) {
      for (const v1::CategoryShare& s : p->shares()) {
        f.Quantity(metric, s.category(), s.estimate_unbiased(), s.ci_lower(), s.ci_upper(),
                   &s.manipulation());
      }
    } else {
      f.Quantity(metric, "prevalence", p->estimate_unbiased(), p->ci_lower(), p->ci_upper(),
                 &p->manipulation());
    }
  }
  std::string text;
  for (const Family* family : {&f.estimate, &f.lower, &f.upper, &f.manipulation, &f.reports}) {
    family->AppendTo(&text);
  }
  Family window_start{"deniable_estimate_window_start_timestamp_seconds",
                      "Start of the selection [start, end) every deniable_estimate is of"};
  Family window_end{"deniable_estimate_window_end_timestamp_seconds",
                    "End of the selection every deniable_estimate is of (the last refresh)"};
  Family omitted{"deniable_estimate_metrics_omitted",
                 "Metrics without estimate series because of --max_estimate_metrics"};
  window_start.Add("", static_cast<double>(start));
  window_end.Add("", static_cast<double>(end));
  omitted.Add("", static_cast<double>(names.size() - kept));
  for (const Family* family : {&window_start, &window_end, &omitted}) family->AppendTo(&text);
  absl::MutexLock lock(&mu_);
  text_ = std::move(text);
  return absl::OkStatus();
}

std::string EstimateMetrics::Text() const {
  absl::MutexLock lock(&mu_);
  return text_;
}

}  // namespace deniable::server
