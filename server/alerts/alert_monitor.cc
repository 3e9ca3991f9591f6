#include "server/alerts/alert_monitor.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/confidence_sequence.h"
#include "spdlog/spdlog.h"

namespace deniable::server {
namespace {

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\u%04x", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonNumber(double x) { return std::isfinite(x) ? absl::StrFormat("%.17g", x) : "null"; }

std::string JsonTime(absl::Time t) {
  if (t == absl::InfinitePast()) return "null";
  return JsonString(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone()));
}

struct Bounds {
  double estimate = 0, lower = 0, upper = 0;
};

// The rule's quantity from one estimate. Errors: FAILED_PRECONDITION naming "quantity".
absl::StatusOr<Bounds> QuantityOf(const AlertRule& rule, const v1::Prevalence& p) {
  if (rule.quantity == "mean") {
    if (!p.has_numeric() || p.numeric().mechanism() != "one_bit_mean") {
      return absl::FailedPreconditionError(
          absl::StrCat("quantity: \"mean\" needs a numeric metric with a ONE_BIT_MEAN design; \"",
                       rule.metric, "\" is not one"));
    }
    return Bounds{p.numeric().mean(), p.numeric().mean_ci_lower(), p.numeric().mean_ci_upper()};
  }
  if (rule.quantity == "prevalence") {
    if (p.has_categorical() || p.has_numeric()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "quantity: \"prevalence\" needs a yes/no metric; use share:<category> or mean for \"",
          rule.metric, "\""));
    }
    return Bounds{p.estimate_unbiased(), p.ci_lower(), p.ci_upper()};
  }
  const std::string category = rule.quantity.substr(6);  // after "share:"
  for (const v1::CategoryShare& s : p.shares()) {
    if (s.category() == category) return Bounds{s.estimate_unbiased(), s.ci_lower(), s.ci_upper()};
  }
  return absl::FailedPreconditionError(
      absl::StrCat("quantity: metric \"", rule.metric, "\" has no category \"", category, "\""));
}

// The start of the window [k W, (k + 1) W) holding t.
int64_t WindowStart(int64_t t, int64_t w) {
  int64_t start = t - t % w;
  if (t % w < 0) start -= w;
  return start;
}

}  // namespace

double WindowLevel(double level, int64_t window_number) {
  constexpr double kPi = 3.14159265358979323846;
  const double w = static_cast<double>(window_number);
  return 1.0 - (1.0 - level) * 6.0 / (kPi * kPi * w * w);
}

std::string AlertChangeJson(const AlertState& s) {
  return absl::StrCat(
      "{\"rule\":", JsonString(s.rule.name), ",\"metric\":", JsonString(s.rule.metric),
      ",\"quantity\":", JsonString(s.rule.quantity), ",\"firing\":", s.firing ? "true" : "false",
      ",\"estimate\":", JsonNumber(s.estimate), ",\"lower\":", JsonNumber(s.lower),
      ",\"upper\":", JsonNumber(s.upper), ",\"level\":", JsonNumber(s.rule.level),
      ",\"window_start_seconds\":", s.window_start_seconds, ",\"time\":", JsonTime(s.changed_at),
      "}");
}

AlertMonitor::AlertMonitor(std::vector<AlertRule> rules, PrevalenceFn query,
                           prometheus::Registry* registry, WebhookFn webhook)
    : query_(std::move(query)), webhook_(std::move(webhook)) {
  prometheus::Family<prometheus::Gauge>* family = nullptr;
  if (registry != nullptr) {
    family = &prometheus::BuildGauge()
                  .Name("deniable_alert_firing")
                  .Help(
                      "1 while the alert rule fires (its anytime interval clears the rule's "
                      "threshold), else 0 (docs/alerts.md)")
                  .Register(*registry);
  }
  for (AlertRule& rule : rules) {
    gauges_.push_back(
        family != nullptr ? &family->Add({{"metric", rule.metric}, {"rule", rule.name}}) : nullptr);
    origins_.push_back(rule.since_seconds >= 0 ? std::optional<int64_t>(WindowStart(
                                                     rule.since_seconds, rule.window_seconds))
                                               : std::nullopt);
    AlertState s;
    s.rule = std::move(rule);
    s.status = "not evaluated yet";
    states_.push_back(std::move(s));
  }
}

AlertMonitor::~AlertMonitor() { Stop(); }

AlertMonitor::Evaluation AlertMonitor::Evaluate(const AlertRule& rule, int64_t origin,
                                                absl::Time now) const {
  Evaluation e;
  const int64_t w = rule.window_seconds;
  const int64_t start = WindowStart(absl::ToUnixSeconds(now), w);
  e.window_start = start;
  if (start < origin) {
    e.status =
        absl::StrCat("not started: the rule's window 1 starts at ", origin, " (since_seconds)");
    return e;
  }
  e.window_number = (start - origin) / w + 1;
  e.window_level = WindowLevel(rule.level, e.window_number);
  const bool change = rule.kind == AlertRule::Kind::kChangedBy;
  const double level = change ? BonferroniLevel(e.window_level, 2) : e.window_level;
  auto window = [&](int64_t from, int64_t to) -> absl::StatusOr<Bounds> {
    v1::GetPrevalenceRequest r;
    r.set_metric(rule.metric);
    r.set_start_time_seconds(from);
    r.set_end_time_seconds(to);
    r.set_confidence_level(level);
    r.set_interval(v1::ANYTIME);
    r.set_anytime_tuned_reports(rule.tuned_reports);
    absl::StatusOr<v1::Prevalence> p = query_(r);
    if (!p.ok()) return p.status();
    return QuantityOf(rule, *p);
  };
  absl::StatusOr<Bounds> current = window(start, start + w);
  if (!current.ok()) {
    e.status = current.status().ToString();
    return e;
  }
  if (!change) {
    e.ok = true;
    e.status = "ok";
    e.estimate = current->estimate;
    e.lower = current->lower;
    e.upper = current->upper;
    return e;
  }
  absl::StatusOr<Bounds> previous = window(start - w, start);
  if (!previous.ok()) {
    e.status = absl::StrCat("previous window: ", previous.status().ToString());
    return e;
  }
  e.ok = true;
  e.status = "ok";
  e.estimate = current->estimate - previous->estimate;
  e.lower = current->lower - previous->upper;
  e.upper = current->upper - previous->lower;
  return e;
}

int AlertMonitor::EvaluateAll(absl::Time now) {
  absl::MutexLock one_at_a_time(&evaluate_mu_);
  std::vector<AlertRule> rules;
  {
    absl::MutexLock lock(&mu_);
    for (const AlertState& s : states_) rules.push_back(s.rule);
  }
  std::vector<AlertState> changed;
  for (size_t i = 0; i < rules.size(); ++i) {
    const AlertRule& rule = rules[i];
    if (!origins_[i].has_value()) {
      origins_[i] = WindowStart(absl::ToUnixSeconds(now), rule.window_seconds);
    }
    const Evaluation e = Evaluate(rule, *origins_[i], now);
    bool firing = false;
    if (e.ok) {
      firing = rule.kind == AlertRule::Kind::kAbove
                   ? e.lower > rule.threshold
                   : (e.lower >= rule.threshold || e.upper <= -rule.threshold);
    }
    absl::MutexLock lock(&mu_);
    AlertState& s = states_[i];
    s.evaluated = e.ok;
    s.status = e.status;
    s.estimate = e.estimate;
    s.lower = e.lower;
    s.upper = e.upper;
    s.window_start_seconds = e.window_start;
    s.window_number = e.window_number;
    s.window_level = e.window_level;
    s.evaluated_at = now;
    if (firing != s.firing) {
      s.firing = firing;
      s.changed_at = now;
      changed.push_back(s);
    }
    if (gauges_[i] != nullptr) gauges_[i]->Set(firing ? 1.0 : 0.0);
  }
  for (const AlertState& s : changed) {
    spdlog::warn("event=alert_{} rule={} metric={} estimate={} lower={} upper={}",
                 s.firing ? "firing" : "resolved", s.rule.name, s.rule.metric, s.estimate, s.lower,
                 s.upper);
    if (webhook_ != nullptr) webhook_(AlertChangeJson(s));
  }
  return static_cast<int>(changed.size());
}

void AlertMonitor::Start(absl::Duration period, const Clock* clock) {
  thread_ = std::thread([this, period, clock] {
    while (true) {
      EvaluateAll(clock->Now());
      absl::MutexLock lock(&mu_);
      // Wakes at the deadline, or at once on Stop() (never a sleep that Stop cannot cut).
      mu_.AwaitWithDeadline(absl::Condition(&stopping_), absl::Now() + period);
      if (stopping_) return;
    }
  });
}

void AlertMonitor::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

std::vector<AlertState> AlertMonitor::States() const {
  absl::MutexLock lock(&mu_);
  return states_;
}

std::string AlertMonitor::StatesJson() const {
  std::string out = "{\"alerts\":[";
  const std::vector<AlertState> states = States();
  for (size_t i = 0; i < states.size(); ++i) {
    const AlertState& s = states[i];
    if (i > 0) out += ",";
    absl::StrAppend(
        &out, "{\"rule\":", JsonString(s.rule.name), ",\"metric\":", JsonString(s.rule.metric),
        ",\"quantity\":", JsonString(s.rule.quantity),
        ",\"kind\":", s.rule.kind == AlertRule::Kind::kAbove ? "\"above\"" : "\"changed_by\"",
        ",\"threshold\":", JsonNumber(s.rule.threshold),
        ",\"window_seconds\":", s.rule.window_seconds, ",\"level\":", JsonNumber(s.rule.level),
        ",\"firing\":", s.firing ? "true" : "false", ",\"status\":", JsonString(s.status),
        ",\"estimate\":", s.evaluated ? JsonNumber(s.estimate) : "null",
        ",\"lower\":", s.evaluated ? JsonNumber(s.lower) : "null",
        ",\"upper\":", s.evaluated ? JsonNumber(s.upper) : "null",
        ",\"window_start_seconds\":", s.window_start_seconds,
        ",\"window_number\":", s.window_number,
        ",\"window_level\":", s.window_number > 0 ? JsonNumber(s.window_level) : "null",
        ",\"evaluated_at\":", JsonTime(s.evaluated_at), ",\"changed_at\":", JsonTime(s.changed_at),
        "}");
  }
  return out + "]}\n";
}

v1::ListAlertsResponse AlertMonitor::StatesProto() const {
  const auto seconds = [](absl::Time t) -> int64_t {
    return t == absl::InfinitePast() ? 0 : absl::ToUnixSeconds(t);
  };
  v1::ListAlertsResponse out;
  for (const AlertState& s : States()) {
    v1::AlertState* a = out.add_alerts();
    a->set_rule(s.rule.name);
    a->set_metric(s.rule.metric);
    a->set_quantity(s.rule.quantity);
    a->set_kind(s.rule.kind == AlertRule::Kind::kAbove ? v1::AlertState::ABOVE
                                                       : v1::AlertState::CHANGED_BY);
    a->set_threshold(s.rule.threshold);
    a->set_window_seconds(s.rule.window_seconds);
    a->set_level(s.rule.level);
    a->set_firing(s.firing);
    a->set_evaluated(s.evaluated);
    a->set_status(s.status);
    if (s.evaluated) {
      a->set_estimate(s.estimate);
      a->set_lower(s.lower);
      a->set_upper(s.upper);
    }
    a->set_window_start_seconds(s.window_start_seconds);
    a->set_window_number(s.window_number);
    if (s.window_number > 0) a->set_window_level(s.window_level);
    a->set_evaluated_at_seconds(seconds(s.evaluated_at));
    a->set_changed_at_seconds(seconds(s.changed_at));
  }
  return out;
}

}  // namespace deniable::server
