#include "tools/cli/output.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "deniable/common/calendar_windows.h"
#include "deniable/common/design.h"
#include "deniable/common/shuffle.h"
#include "deniable/convert/design_advice.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/mechanism_convert.h"
#include "tools/cli/categorical_output.h"
#include "tools/cli/cli_kinds.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/numeric_output.h"

namespace deniable::tools {
namespace {

// "forced_response(p=0.5, q=0.5)" and the like (Design::ToString), from the wire design.
std::string DesignKind(const v1::Design& design) {
  if (absl::StatusOr<Design> d = DesignFromWire(design); d.ok()) return d->ToString();
  // The other kinds name themselves through their mechanism (Mechanism::ToString).
  absl::StatusOr<std::shared_ptr<const Mechanism>> m = MechanismForWire(design);
  return m.ok() ? (*m)->ToString() : "invalid design";
}

}  // namespace

const char* StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      break;
  }
  return "UNKNOWN_CODE";
}

std::string FormatDesign(const v1::Design& design) {
  if (design.parameters().has_numeric()) return FormatNumericDesign(design);
  if (design.categories() > 0 || design.parameters().has_categorical()) {
    return FormatCategoricalDesign(design);
  }
  std::string out = DesignKind(design);
  if (design.version() > 0) absl::StrAppend(&out, " v", design.version());
  absl::StrAppend(&out, absl::StrFormat(" (a = %g, b = %g), epsilon = ", design.a(), design.b()));
  if (design.epsilon_infinite()) {
    absl::StrAppend(&out, "infinite (", design.warning(), ")");
  } else {
    absl::StrAppend(&out, absl::StrFormat("%.4f nats", design.epsilon()));
  }
  return out;
}

std::string RetentionText(const v1::Metric& metric) {
  if (metric.retention_days() == 0) return "keep forever";
  return absl::StrFormat("%d days, %s", metric.retention_days(),
                         metric.retention_policy() == v1::DROP_REPORTS_AND_COUNTS
                             ? "then drop reports and counts"
                             : "then drop reports, keep counts");
}

std::string FormatMetric(const v1::Metric& metric) {
  const bool categorical = metric.categories_size() > 0;
  const bool numeric = metric.has_range();
  // A kind of its own files (cli_kinds.h) says how its reports are memoized, and its privacy.
  std::optional<CliMetricLines> kind_lines;
  for (const CliKind& kind : CliKinds()) {
    if (kind.metric_lines) kind_lines = kind.metric_lines(metric);
    if (kind_lines.has_value()) break;
  }
  const bool fresh = metric.randomization() == v1::FRESH_PER_PERIOD;
  const std::string randomization =
      kind_lines.has_value()
          ? (fresh ? kind_lines->fresh : kind_lines->memoized)
          : (fresh ? (categorical || numeric ? "fresh report each period" : "fresh bit each period")
                   : (categorical ? "memoized report per category"
                      : numeric   ? "memoized report per rounded value"
                                  : "memoized bit"));
  return absl::StrFormat(
             "metric          %s\ndescription     %s\ndesign          %s\n%s%s%s"
             "time precision  %d s\nreport period   %s\n",
             metric.name(), metric.description(), FormatDesign(metric.design()),
             kind_lines.has_value() ? kind_lines->privacy : "",
             categorical ? absl::StrFormat("categories      %d: %s\n", metric.categories_size(),
                                           CategoryList(metric))
                         : "",
             numeric ? absl::StrFormat(
                           "range           [%g, %g]%s\n", metric.range().lo(), metric.range().hi(),
                           metric.range().unit().empty() ? "" : " " + metric.range().unit())
                     : "",
             metric.time_precision_seconds(),
             // A survey question keeps the default period in the field (for older readers) but
             // has none, and nothing to randomize across periods: each device reports once.
             metric.reporting_once()
                 ? std::string("once (one report per device ever)")
                 : absl::StrFormat("%d s, %s", metric.reporting_period_seconds(), randomization)) +
         absl::StrFormat("retention       %s\n", RetentionText(metric));
}

std::string FormatMetricList(const v1::ListMetricsResponse& response) {
  std::string out = absl::StrFormat("%-32s %s\n", "METRIC", "DESIGN");
  for (const v1::Metric& m : response.metrics()) {
    absl::StrAppend(&out, absl::StrFormat("%-32s %s\n", m.name(), FormatDesign(m.design())));
    if (m.categories_size() > 0) {
      absl::StrAppend(&out, absl::StrFormat("%-32s categories: %s\n", "", CategoryList(m)));
    }
    if (m.has_range()) {
      absl::StrAppend(
          &out, absl::StrFormat("%-32s range: [%g, %g]%s\n", "", m.range().lo(), m.range().hi(),
                                m.range().unit().empty() ? "" : " " + m.range().unit()));
    }
    if (m.retention_days() > 0) {
      absl::StrAppend(&out, absl::StrFormat("%-32s retention: %s\n", "", RetentionText(m)));
    }
  }
  return out;
}

std::string FormatAlerts(const v1::ListAlertsResponse& response) {
  if (response.alerts_size() == 0) return "no alert rules\n";
  const auto time = [](int64_t seconds) -> std::string {
    if (seconds == 0) return "never";
    return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                            absl::UTCTimeZone());
  };
  std::string out;
  for (const v1::AlertState& a : response.alerts()) {
    absl::StrAppend(
        &out,
        absl::StrFormat("%s (%s, %s %s %g, level %g, windows of %d s): %s\n", a.rule(), a.metric(),
                        a.quantity(), a.kind() == v1::AlertState::ABOVE ? "above" : "changed by",
                        a.threshold(), a.level(), a.window_seconds(),
                        a.firing() ? "FIRING" : "not firing"));
    if (a.evaluated()) {
      absl::StrAppend(&out,
                      absl::StrFormat("  %s %.6g, anytime interval [%.6g, %.6g] at level "
                                      "%.9g (window %d, from %s)\n",
                                      a.kind() == v1::AlertState::ABOVE ? "estimate" : "change",
                                      a.estimate(), a.lower(), a.upper(), a.window_level(),
                                      a.window_number(), time(a.window_start_seconds())));
    } else {
      absl::StrAppend(&out, "  no interval\n");
    }
    absl::StrAppend(&out,
                    absl::StrFormat("  status: %s; evaluated %s; changed %s\n", a.status(),
                                    time(a.evaluated_at_seconds()), time(a.changed_at_seconds())));
  }
  return out;
}

// What the estimate is for, in words (Prevalence.estimand and variance_bound).
std::string EstimandText(const v1::Prevalence& p) {
  const std::string period = p.reporting_period_seconds() % 86400 == 0
                                 ? absl::StrFormat("%d-day", p.reporting_period_seconds() / 86400)
                                 : absl::StrFormat("%d-s", p.reporting_period_seconds());
  std::string out;
  if (p.estimand() == "mean_period_prevalence") {
    out = absl::StrFormat(
        "the mean prevalence over %d %s reporting periods (weights: reports per period); "
        "standard error bounded by the Minkowski sum, valid however a device's reports are "
        "correlated across periods",
        p.periods(), period);
  } else if (p.estimand() == "precision_weighted_prevalence") {
    out =
        "a precision-weighted mix of the design versions' prevalences (equal to the prevalence "
        "only if it did not change between versions)";
  } else if (p.estimand() == "mean_window_prevalence") {
    out = absl::StrFormat(
        "the mean over %d %ss of the share among each %s's active devices (weights: devices per "
        "%s; n counts device-%ss, not devices), combined by the Minkowski bound",
        p.windows(), p.window(), p.window(), p.window(), p.window());
  } else if (p.estimand() == "active_device_prevalence") {
    out = p.window() == "once"
              ? "the share among the devices that answered (each device answers once)"
              : absl::StrFormat(
                    "the share among the devices active in the %s, each counted once at its "
                    "first report in it%s",
                    p.window(),
                    p.windows() > 1 ? absl::StrFormat(" (%d %ss combined by the Minkowski bound)",
                                                      p.windows(), p.window())
                                    : "");
  } else {
    out = absl::StrFormat("the prevalence among devices reporting in one %s reporting period",
                          period);
  }
  // The sentence a person reads first (Prevalence.explanation).
  if (!p.explanation().empty()) absl::StrAppend(&out, "\ncounted              ", p.explanation());
  return out;
}

// The shuffle-amplified epsilon of a result beside the local one (docs/privacy.md).
std::string CentralText(const v1::Prevalence& p) {
  if (p.central_method() == "shuffle_numerical") {
    return absl::StrFormat(
        "central epsilon      %.4f nats at delta = %g over these %d reports, against an analyst "
        "who sees only counts (local: %.4f nats per report, against the operator)\n",
        p.central_epsilon(), p.central_delta(), p.central_n(), p.epsilon());
  }
  return absl::StrFormat("central epsilon      = local epsilon %s: %s\n",
                         std::isinf(p.central_epsilon())
                             ? std::string("(infinite)")
                             : absl::StrFormat("%.4f nats", p.central_epsilon()),
                         p.central_note());
}

std::string ManipulationText(const v1::ManipulationBound& m,
                             const std::function<std::string(double)>& format) {
  if (m.fake_reports() <= 0) return "";
  return absl::StrFormat(
      "manipulation bound   %d fake report%s could have raised it by up to %s or lowered it by "
      "up to %s (honest reports' estimate in [%s, %s]; for any reports: %s)\n",
      m.fake_reports(), m.fake_reports() == 1 ? "" : "s", format(m.shift_up()),
      format(m.shift_down()), format(m.honest_lower()), format(m.honest_upper()),
      format(m.uniform_bound()));
}

std::string FormatPrevalence(const v1::Prevalence& p) {
  if (IsNumeric(p)) return FormatNumericPrevalence(p);
  if (IsCategorical(p)) return FormatCategoricalPrevalence(p);
  // An anytime interval is not the fixed-n method's: say which one was served.
  const std::string method =
      p.interval_kind() == v1::ANYTIME ? "ANYTIME" : v1::IntervalMethod_Name(p.method());
  std::string out = absl::StrFormat(
      "metric               %s\n"
      "%s"
      "design               %s\n"
      "reports (n)          %d\n"
      "\"yes\" bits           %d (%s of reports)\n"
      "prevalence           %s unbiased, %s clipped to [0, 1]\n"
      "standard error       %s\n"
      "%-20s [%s, %s] (%s%s)\n"
      "estimated true yes   %.1f of %d\n",
      p.metric(), TimeRangeLine("time range", p), FormatDesign(p.design()), p.n(), p.yes_count(),
      Percent(p.yes_share()), Percent(p.estimate_unbiased()), Percent(p.estimate_clipped()),
      Percent(p.standard_error()),
      absl::StrFormat("%s %% interval", LevelLabel(p.confidence_level())), Percent(p.ci_lower()),
      Percent(p.ci_upper()), method, p.interval_clipped() ? ", clipped to [0, 1]" : "",
      p.estimated_yes_count(), p.n());
  absl::StrAppend(&out, ManipulationText(p.manipulation(), Percent));
  absl::StrAppend(&out, absl::StrFormat("estimate of          %s\n", EstimandText(p)));
  if (p.central_n() > 0) absl::StrAppend(&out, CentralText(p));
  absl::StrAppend(&out, absl::StrFormat("interval             %s; %s\n", p.interval_construction(),
                                        p.method_reason()));
  if (p.versions_size() > 1) {
    absl::StrAppend(&out, absl::StrFormat("design versions      combined %s\n",
                                          p.combination() == "inverse_variance"
                                              ? "by inverse variance (constant prevalence assumed)"
                                              : "by report counts"));
    for (const v1::VersionEstimate& v : p.versions()) {
      absl::StrAppend(&out,
                      absl::StrFormat("  v%-3d n = %-8d estimate %s (se %s), weight %.3f\n",
                                      v.design_version(), v.n(), Percent(v.estimate_unbiased()),
                                      Percent(v.standard_error()), v.weight()));
    }
  }
  if (p.groups_size() > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("\n%-12s %8s %10s %24s\n", "GROUP", "N", "ESTIMATE", "INTERVAL"));
    for (const v1::Prevalence& g : p.groups()) {
      const std::string value = g.group_value().empty() ? "(none)" : g.group_value();
      if (g.suppressed()) {
        absl::StrAppend(&out, absl::StrFormat("%-12s %8d %10s %24s\n", value, g.n(), kSuppressed,
                                              "(too few reports)"));
      } else {
        absl::StrAppend(
            &out, absl::StrFormat(
                      "%-12s %8d %10s %24s\n", value, g.n(), Percent(g.estimate_unbiased()),
                      absl::StrFormat("[%s, %s]", Percent(g.ci_lower()), Percent(g.ci_upper()))));
      }
    }
  }
  return out;
}

std::string FormatSeries(const v1::Series& series) {
  for (const v1::Prevalence& b : series.buckets()) {
    if (IsNumeric(b)) return FormatNumericSeries(series);
    if (IsCategorical(b)) return FormatCategoricalSeries(series);
  }
  std::string out = absl::StrFormat("metric %s, %s buckets\n%-20s %8s %10s %24s\n", series.metric(),
                                    v1::BucketWidth_Name(series.bucket()), "START (UTC)", "N",
                                    "ESTIMATE", "INTERVAL");
  for (const v1::Prevalence& b : series.buckets()) {
    const std::string start = absl::FormatTime(
        "%Y-%m-%d %H:%M", absl::FromUnixSeconds(b.start_time_seconds()), absl::UTCTimeZone());
    if (b.suppressed()) {
      absl::StrAppend(&out, absl::StrFormat("%-20s %8d %10s %24s\n", start, b.n(), kSuppressed,
                                            "(too few reports)"));
    } else {
      absl::StrAppend(
          &out, absl::StrFormat(
                    "%-20s %8d %10s %24s\n", start, b.n(), Percent(b.estimate_unbiased()),
                    absl::StrFormat("[%s, %s]", Percent(b.ci_lower()), Percent(b.ci_upper()))));
    }
  }
  return out;
}

std::string TimeRangeLine(const char* label, const v1::Prevalence& p) {
  const auto rfc3339 = [](int64_t seconds) {
    return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                            absl::UTCTimeZone());
  };
  return absl::StrFormat("%-20s %s to %s\n", label,
                         p.start_time_seconds() == 0 ? std::string("the first report (no start)")
                                                     : rfc3339(p.start_time_seconds()),
                         p.end_time_seconds() == 0
                             ? std::string("the latest report (no end)")
                             : absl::StrCat(rfc3339(p.end_time_seconds()), " (UTC)"));
}

std::string NoClearChange(double lower, double upper) {
  return lower <= 0 && upper >= 0 ? " (the interval includes 0: no clear change)" : "";
}

std::string ChangeWords(double second_minus_first, double lower, double upper) {
  const double points = 100.0 * second_minus_first;
  if (std::abs(points) < 0.005) return "unchanged (0.00 points)";
  return absl::StrFormat("%s by %.2f points%s", points > 0 ? "rose" : "fell", std::abs(points),
                         NoClearChange(lower, upper));
}

std::string FormatDifference(const v1::Difference& d) {
  if (IsNumeric(d.first())) return FormatNumericDifference(d);
  if (d.shares_size() > 0) return FormatCategoricalDifference(d);
  const double change = -d.difference();  // the wire's is first - second
  return absl::StrFormat(
      "first                %s: %s (n = %d)\n"
      "second               %s: %s (n = %d)\n"
      "%s%s"
      "change               %+.2f percentage points, second minus first: %s "
      "(standard error %.2f)\n"
      "%-20s [%+.2f, %+.2f] percentage points (Wald)\n",
      d.first().metric(), Percent(d.first().estimate_unbiased()), d.first().n(),
      d.second().metric(), Percent(d.second().estimate_unbiased()), d.second().n(),
      TimeRangeLine("first window", d.first()), TimeRangeLine("second window", d.second()),
      100.0 * change, ChangeWords(change, -d.ci_upper(), -d.ci_lower()), 100.0 * d.standard_error(),
      absl::StrFormat("%s %% interval", LevelLabel(d.confidence_level())), -100.0 * d.ci_upper(),
      -100.0 * d.ci_lower());
}

std::string CentralPrivacyLine(const v1::DesignDescription& d) {
  if (d.central_n() <= 0) return "";
  if (d.central_delta() == 0) {
    return absl::StrCat("central epsilon             = local epsilon: ", d.central_note(), "\n");
  }
  return absl::StrFormat(
      "central epsilon             %.4f nats at delta = %g for n = %d reports (against an analyst "
      "who sees only counts; local %.4f nats per report, against the operator who sees "
      "connections)\n",
      d.central_epsilon(), d.central_delta(), d.central_n(), d.design().epsilon());
}

std::string FormatDesignDescription(const v1::DesignDescription& d) {
  if (d.categories_size() > 0) return FormatCategoricalDescription(d);
  for (const CliKind& kind : CliKinds()) {
    if (!kind.describe) continue;
    if (std::optional<std::string> text = kind.describe(d); text.has_value()) return *text;
  }
  if (d.design().parameters().numeric().mechanism() == v1::D_BIT_FLIP) {
    // The whole report's figures (issue 38), labelled as such; one bucket's bit in the note.
    std::string out = absl::StrFormat(
        "design                      %s\n"
        "assumed P(in a bucket) pi   %s\n"
        "P(in it | report), at most  %s   (the whole report most telling of \"in it\")\n"
        "P(in it | report), at least %s   (the whole report most telling of \"not in it\")\n"
        "H(x)                        %.4f bits (uncertainty before a report)\n"
        "H(x | r)                    %.4f bits (uncertainty left after the whole report)\n"
        "I(x; r)                     %.4f bits (what one whole report reveals)\n"
        "figures of                  %s\n",
        FormatDesign(d.design()), Percent(d.prior()), Percent(d.posterior_given_yes()),
        Percent(d.posterior_given_no()), d.entropy_bits(), d.conditional_entropy_bits(),
        d.mutual_information_bits(), d.channel_note());
    absl::StrAppend(&out, CentralPrivacyLine(d));
    return out;
  }
  std::string out = absl::StrFormat(
      "design                      %s\n"
      "assumed prevalence pi       %s\n"
      "P(yes | report yes)         %s   (posterior after a \"yes\" report)\n"
      "P(yes | report no)          %s   (posterior after a \"no\" report)\n"
      "H(x)                        %.4f bits (uncertainty before a report)\n"
      "H(x | r)                    %.4f bits (uncertainty left after a report)\n"
      "I(x; r)                     %.4f bits (what one report reveals)\n",
      FormatDesign(d.design()), Percent(d.prior()), Percent(d.posterior_given_yes()),
      Percent(d.posterior_given_no()), d.entropy_bits(), d.conditional_entropy_bits(),
      d.mutual_information_bits());
  if (!d.uninformative_pi_b_note().empty()) {
    absl::StrAppend(&out, "uninformative pi_B          ", d.uninformative_pi_b_note(), "\n");
  }
  absl::StrAppend(&out, CentralPrivacyLine(d));
  return out;
}

namespace {

// The plan in devices (SurveyPlan.window): empty without a window.
std::string DevicesLine(const v1::SurveyPlan& p) {
  if (p.window().empty()) return "";
  if (p.window() == "once") {
    return absl::StrFormat("devices needed              %d, each answering once\n",
                           p.devices_needed());
  }
  return absl::StrFormat(
      "devices needed              %d active in the %s, each counted once (they send %d reports "
      "at %g per device and %s; more reports per device do not narrow the interval)\n",
      p.devices_needed(), p.window(), p.reports_sent(), p.reports_per_device(), p.window());
}

}  // namespace

std::string FormatPlan(const v1::SurveyPlan& p) {
  if (p.categories_size() > 0) return FormatCategoricalPlan(p) + DevicesLine(p);
  std::string out = absl::StrFormat(
      "design                      %s\n"
      "target                      +/- %.2f percentage points at %s %%\n"
      "reports needed              %d\n"
      "reports needed, worst case  %d (lambda = 1/2)\n",
      FormatDesign(p.design()), 100.0 * p.half_width(), LevelLabel(p.confidence_level()),
      p.reports_needed(), p.reports_needed_worst_case());
  if (p.variance_inflation() > 0) {
    absl::StrAppend(&out,
                    absl::StrFormat("variance vs direct question %.2fx\n", p.variance_inflation()));
  }
  absl::StrAppend(&out, DevicesLine(p));
  return out;
}

std::string FormatReplay(const ReplayResult& result, const SurveySpec& spec,
                         const v1::Prevalence& p, const GroupTruth& truth) {
  const double share =
      result.devices > 0 ? static_cast<double>(result.true_yes) / result.devices : 0.0;
  const bool covered = p.ci_lower() <= share && share <= p.ci_upper();
  std::string out = absl::StrFormat(
      "replayed %d respondents of %s (%s == %s) as %d devices, one randomized report each\n",
      result.devices + static_cast<int64_t>(result.rejections.size()), spec.csv_path, spec.column,
      spec.yes_value, result.devices + static_cast<int64_t>(result.rejections.size()));
  if (!result.rejections.empty()) {
    absl::StrAppend(&out,
                    absl::StrFormat("%d reports stored, %d rejected by the collector (listed "
                                    "on stderr); the true share below is of the stored ones\n",
                                    result.devices, result.rejections.size()));
  }
  absl::StrAppend(&out, "\n");
  v1::Prevalence overall = p;
  overall.clear_groups();  // printed below, beside the true shares
  absl::StrAppend(&out, FormatPrevalence(overall), "\n");
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "server estimate      %s  %s %% interval [%s, %s]\n"
          "true share           %s  (%d / %d, known only to this demo)\n"
          "the interval %s the true share; the estimate is off by %.2f "
          "percentage points (%.2f standard errors)\n",
          Percent(p.estimate_unbiased()), LevelLabel(p.confidence_level()), Percent(p.ci_lower()),
          Percent(p.ci_upper()), Percent(share), result.true_yes, result.devices,
          covered ? "covers" : "misses", 100.0 * (p.estimate_unbiased() - share),
          p.standard_error() > 0 ? (p.estimate_unbiased() - share) / p.standard_error() : 0.0));
  if (p.groups_size() > 0) {
    absl::StrAppend(&out, absl::StrFormat("\n%-8s %6s %10s %24s %12s\n", "GROUP", "N", "ESTIMATE",
                                          "INTERVAL", "TRUE SHARE"));
    for (const v1::Prevalence& g : p.groups()) {
      auto it = truth.find(g.group_value());
      const std::string true_share =
          it == truth.end() || it->second.first == 0
              ? "?"
              : Percent(static_cast<double>(it->second.second) / it->second.first);
      const std::string value = g.group_value().empty() ? "(none)" : g.group_value();
      if (g.suppressed()) {
        absl::StrAppend(&out, absl::StrFormat("%-8s %6d %10s %24s %12s\n", value, g.n(),
                                              kSuppressed, "(too few reports)", true_share));
        continue;
      }
      absl::StrAppend(
          &out,
          absl::StrFormat("%-8s %6d %10s %24s %12s\n", value, g.n(), Percent(g.estimate_unbiased()),
                          absl::StrFormat("[%s, %s]", Percent(g.ci_lower()), Percent(g.ci_upper())),
                          true_share));
    }
  }
  return out;
}

}  // namespace deniable::tools
