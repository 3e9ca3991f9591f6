#include "tools/cli/numeric_output.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "deniable/common/interval.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/output.h"

namespace deniable::tools {
namespace {

std::string Unit(const v1::NumericEstimate& e) { return e.unit().empty() ? "" : " " + e.unit(); }

double Width(const v1::NumericEstimate& e) { return e.hi() - e.lo(); }

std::string Value(const v1::NumericEstimate& e, double x) { return NumericValue(x, Width(e)); }

std::string Interval(const v1::NumericEstimate& e, double lower, double upper) {
  return absl::StrCat("[", Value(e, lower), ", ", Value(e, upper), "]");
}

std::string BucketName(const v1::NumericEstimate& e, const v1::NumericBucket& b, bool last) {
  return absl::StrCat("[", Value(e, b.lower()), ", ", Value(e, b.upper()), last ? "]" : ")");
}

std::string Start(const v1::Prevalence& b) {
  return absl::FormatTime("%Y-%m-%d %H:%M", absl::FromUnixSeconds(b.start_time_seconds()),
                          absl::UTCTimeZone());
}

bool IsHistogram(const v1::Prevalence& p) { return p.numeric().mechanism() == "d_bit_flip"; }

// The histogram's rows (with the quantiles'), shared by prevalence and series.
std::string HistogramTable(const v1::Prevalence& p) {
  const v1::NumericEstimate& e = p.numeric();
  const std::string level = LevelLabel(p.confidence_level());
  std::string out = absl::StrFormat(
      "histogram            %d buckets; simultaneous intervals: %s, each at %.4f %%, all %d "
      "together at %s %%; consistent shares: norm_sub\n",
      e.buckets_size(), e.simultaneous_method(), 100.0 * e.per_bucket_level(), e.buckets_size(),
      level);
  absl::StrAppend(
      &out, absl::StrFormat("\n%-24s %8s %8s %10s %11s %9s %-22s %s\n",
                            absl::StrCat("BUCKET", Unit(e).empty() ? "" : " (" + e.unit() + ")"),
                            "SAMPLED", "ONES", "ESTIMATE", "CONSISTENT", "STD ERR",
                            absl::StrCat(level, " % INTERVAL"),
                            absl::StrCat("SIMULTANEOUS ", level, " %")));
  for (int i = 0; i < e.buckets_size(); ++i) {
    const v1::NumericBucket& b = e.buckets(i);
    absl::StrAppend(
        &out,
        absl::StrFormat("%-24s %8d %8d %10s %11s %9s %-22s %s\n",
                        BucketName(e, b, i + 1 == e.buckets_size()), b.sampled(), b.ones(),
                        Percent(b.estimate_unbiased()), Percent(b.estimate_consistent()),
                        Percent(b.standard_error()),
                        absl::StrFormat("[%s, %s]", Percent(b.ci_lower()), Percent(b.ci_upper())),
                        absl::StrFormat("[%s, %s]", Percent(b.simultaneous_lower()),
                                        Percent(b.simultaneous_upper()))));
  }
  if (e.quantiles_size() > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("\n%-24s %12s %s\n", "QUANTILE",
                              absl::StrCat("VALUE", e.unit().empty() ? "" : " (" + e.unit() + ")"),
                              absl::StrCat(level, " % INTERVAL")));
    for (const v1::NumericQuantile& q : e.quantiles()) {
      absl::StrAppend(
          &out, absl::StrFormat("%-24s %12s %s\n", QuantileName(q.level()), Value(e, q.value()),
                                Interval(e, q.ci_lower(), q.ci_upper())));
    }
  }
  return out;
}

std::string MeanLines(const v1::Prevalence& p) {
  const v1::NumericEstimate& e = p.numeric();
  const std::string level = LevelLabel(p.confidence_level());
  return absl::StrFormat(
      "mean                 %s%s (standard error %s)\n"
      "%-20s %s%s (%s)\n"
      "total                %s%s over %d reporting devices (standard error %s)\n"
      "%-20s %s%s\n"
      "\"1\" bits             %d (%s of reports)\n",
      Value(e, e.mean()), Unit(e), Value(e, e.mean_standard_error()),
      absl::StrCat(level, " % interval"), Interval(e, e.mean_ci_lower(), e.mean_ci_upper()),
      Unit(e), p.interval_kind() == v1::ANYTIME ? "ANYTIME" : v1::IntervalMethod_Name(p.method()),
      Value(e, e.total()), Unit(e), e.devices(), Value(e, e.total_standard_error()),
      absl::StrCat(level, " % interval"), Interval(e, e.total_ci_lower(), e.total_ci_upper()),
      Unit(e), p.yes_count(), Percent(p.yes_share()));
}

}  // namespace

bool IsNumeric(const v1::Prevalence& p) {
  return p.has_numeric() || p.design().parameters().has_numeric();
}

std::string NumericValue(double value, double width) {
  if (std::isnan(value)) return "n/a";
  const int magnitude = width > 0 ? static_cast<int>(std::ceil(std::log10(width))) : 0;
  const int decimals = std::clamp(4 - magnitude, 0, 6);
  std::string out = absl::StrFormat("%.*f", decimals, value);
  if (out == "-0" || out.find_first_not_of("-0.") == std::string::npos) {
    out = absl::StrFormat("%.*f", decimals, 0.0);  // no "-0.00"
  }
  return out;
}

std::string QuantileName(double level) {
  if (level == 0.5) return "median (0.5)";
  return absl::StrFormat("p%g (%g)", 100.0 * level, level);
}

std::string FormatNumericDesign(const v1::Design& design) {
  const v1::Numeric& n = design.parameters().numeric();
  const std::string version = design.version() > 0 ? absl::StrCat(" v", design.version()) : "";
  const int k =
      n.bucket_edges_size() > 1 ? n.bucket_edges_size() - 1 : static_cast<int>(n.buckets());
  const std::string range = n.bucket_edges_size() > 1
                                ? absl::StrFormat(", values in [%g, %g]%s", n.bucket_edges(0),
                                                  n.bucket_edges(n.bucket_edges_size() - 1),
                                                  n.unit().empty() ? "" : " " + n.unit())
                                : "";
  if (n.mechanism() == v1::D_BIT_FLIP) {
    return absl::StrFormat(
        "d_bit_flip%s (k = %d buckets, d = %d sampled per report, epsilon = "
        "%.4f nats%s)",
        version, k, n.sampled_buckets() > 0 ? n.sampled_buckets() : k, n.epsilon(), range);
  }
  const std::string name =
      n.mechanism() == v1::ONE_BIT_MEAN ? "one_bit_mean" : "numeric (the server picks)";
  return absl::StrFormat("%s%s (epsilon = %.4f nats%s%s)", name, version, n.epsilon(), range,
                         k > 1 ? absl::StrFormat(", rounding grid of %d cells", k) : "");
}

std::string FormatNumericPrevalence(const v1::Prevalence& p) {
  const v1::NumericEstimate& e = p.numeric();
  // The answer first (issue 38: the mean came after the design and the counts): the mean, or
  // the histogram's median, then what it was estimated from.
  std::string out = absl::StrFormat("metric               %s\n", p.metric());
  if (!IsHistogram(p)) {
    absl::StrAppend(&out, MeanLines(p));
    absl::StrAppend(&out, ManipulationText(e.mean_manipulation(), [&e](double x) {
      return absl::StrCat(Value(e, x), Unit(e));
    }));
  } else {
    for (const v1::NumericQuantile& q : e.quantiles()) {
      if (q.level() != 0.5) continue;
      absl::StrAppend(
          &out, absl::StrFormat("median               %s%s, %s %% interval %s%s "
                                "(from the histogram below)\n",
                                Value(e, q.value()), Unit(e), LevelLabel(p.confidence_level()),
                                Interval(e, q.ci_lower(), q.ci_upper()), Unit(e)));
    }
  }
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "%s"
          "design               %s\n"
          "values               in [%g, %g]%s (the SDK clips a value outside to the nearest end)\n"
          "reports (n)          %d\n",
          TimeRangeLine("time range", p), FormatDesign(p.design()), e.lo(), e.hi(), Unit(e),
          p.n()));
  if (IsHistogram(p)) absl::StrAppend(&out, HistogramTable(p), "\n");
  // The estimand's words are the yes/no ones (EstimandText); numbers have a mean or a
  // distribution, not a prevalence.
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "estimate of          %s\n",
          absl::StrReplaceAll(
              EstimandText(p),
              {{"mean prevalence over", IsHistogram(p) ? "mean distribution over" : "mean over"},
               {"prevalences", IsHistogram(p) ? "distributions" : "means"},
               {"prevalence", IsHistogram(p) ? "distribution" : "mean"},
               {"the share among",
                IsHistogram(p) ? "the distribution of the values of" : "the mean value among"}})));
  if (p.central_n() > 0) absl::StrAppend(&out, CentralText(p));
  if (!p.interval_construction().empty()) {
    absl::StrAppend(&out, absl::StrFormat("interval             %s; %s\n",
                                          p.interval_construction(), p.method_reason()));
  }
  if (p.groups_size() > 0) {
    const bool histogram = IsHistogram(p);
    absl::StrAppend(&out, absl::StrFormat("\n%-12s %8s %14s %s\n", "GROUP", "N",
                                          histogram ? "MEDIAN" : "MEAN", "INTERVAL"));
    for (const v1::Prevalence& g : p.groups()) {
      const std::string value = g.group_value().empty() ? "(none)" : g.group_value();
      const v1::NumericEstimate& ge = g.numeric();
      if (g.suppressed()) {
        absl::StrAppend(&out, absl::StrFormat("%-12s %8d %14s %s\n", value, g.n(), kSuppressed,
                                              "(too few reports)"));
      } else if (histogram) {
        const v1::NumericQuantile* median = nullptr;
        for (const v1::NumericQuantile& q : ge.quantiles()) {
          if (q.level() == 0.5) median = &q;
        }
        absl::StrAppend(&out, absl::StrFormat("%-12s %8d %14s %s\n", value, g.n(),
                                              median == nullptr ? "n/a" : Value(e, median->value()),
                                              median == nullptr ? ""
                                                                : Interval(e, median->ci_lower(),
                                                                           median->ci_upper())));
      } else {
        absl::StrAppend(&out,
                        absl::StrFormat("%-12s %8d %14s %s\n", value, g.n(), Value(e, ge.mean()),
                                        Interval(e, ge.mean_ci_lower(), ge.mean_ci_upper())));
      }
    }
  }
  return out;
}

std::string FormatNumericSeries(const v1::Series& series) {
  bool histogram = false;
  const v1::NumericEstimate* first = nullptr;
  for (const v1::Prevalence& b : series.buckets()) {
    if (!b.suppressed() && b.has_numeric()) {
      histogram = IsHistogram(b);
      first = &b.numeric();
      break;
    }
  }
  std::string out = absl::StrFormat("metric %s, %s buckets\n", series.metric(),
                                    v1::BucketWidth_Name(series.bucket()));
  if (!histogram) {
    const std::string unit =
        first == nullptr || first->unit().empty() ? "" : " (" + first->unit() + ")";
    absl::StrAppend(&out, absl::StrFormat("%-20s %8s %14s %s\n", "START (UTC)", "N",
                                          absl::StrCat("MEAN", unit), "INTERVAL"));
    for (const v1::Prevalence& b : series.buckets()) {
      if (b.suppressed()) {
        absl::StrAppend(&out, absl::StrFormat("%-20s %8d %14s %s\n", Start(b), b.n(), kSuppressed,
                                              "(too few reports)"));
        continue;
      }
      const v1::NumericEstimate& e = b.numeric();
      absl::StrAppend(&out,
                      absl::StrFormat("%-20s %8d %14s %s\n", Start(b), b.n(), Value(e, e.mean()),
                                      Interval(e, e.mean_ci_lower(), e.mean_ci_upper())));
    }
    return out;
  }
  for (const v1::Prevalence& b : series.buckets()) {
    absl::StrAppend(&out, absl::StrFormat("\n%s UTC, n = %d\n", Start(b), b.n()));
    if (b.suppressed()) {
      absl::StrAppend(&out, kSuppressed, " (too few reports)\n");
      continue;
    }
    absl::StrAppend(&out, HistogramTable(b));
  }
  return out;
}

std::string FormatNumericDifference(const v1::Difference& d) {
  const v1::Prevalence& a = d.first();
  const v1::Prevalence& b = d.second();
  const v1::NumericEstimate& e = a.numeric();
  const double level = d.confidence_level() > 0 ? d.confidence_level() : 0.95;
  const double z = TwoSidedNormalQuantile(level);
  const std::string label = absl::StrCat(LevelLabel(level), " % interval");
  if (!IsHistogram(a)) {
    const double change = b.numeric().mean() - e.mean();
    const double se = std::hypot(e.mean_standard_error(), b.numeric().mean_standard_error());
    const std::string words =
        Value(e, std::abs(change)) == Value(e, 0.0)
            ? "unchanged"
            : absl::StrCat(change > 0 ? "rose" : "fell", " by ", Value(e, std::abs(change)),
                           Unit(e), NoClearChange(change - z * se, change + z * se));
    return absl::StrFormat(
        "first                %s: mean %s%s (n = %d)\n"
        "second               %s: mean %s%s (n = %d)\n"
        "%s%s"
        "change               %s%s%s, second minus first: %s (standard error %s)\n"
        "%-20s [%s%s, %s%s]%s (Wald)\n",
        a.metric(), Value(e, e.mean()), Unit(e), a.n(), b.metric(), Value(e, b.numeric().mean()),
        Unit(e), b.n(), TimeRangeLine("first window", a), TimeRangeLine("second window", b),
        change >= 0 ? "+" : "", Value(e, change), Unit(e), words, Value(e, se), label,
        change - z * se >= 0 ? "+" : "", Value(e, change - z * se), change + z * se >= 0 ? "+" : "",
        Value(e, change + z * se), Unit(e));
  }
  std::string out = absl::StrFormat(
      "first                %s (n = %d)\nsecond               %s (n = %d)\n%s%s"
      "change               per bucket, second minus first, in percentage points; each bucket "
      "alone (Wald)\n\n%-24s %10s %10s %10s %-24s %s\n",
      a.metric(), a.n(), b.metric(), b.n(), TimeRangeLine("first window", a),
      TimeRangeLine("second window", b), "BUCKET", "FIRST", "SECOND", "CHANGE", label, "");
  const int k = std::min(e.buckets_size(), b.numeric().buckets_size());
  for (int i = 0; i < k; ++i) {
    const v1::NumericBucket& x = e.buckets(i);
    const v1::NumericBucket& y = b.numeric().buckets(i);
    const double change = y.estimate_unbiased() - x.estimate_unbiased();
    const double se = std::hypot(x.standard_error(), y.standard_error());
    absl::StrAppend(
        &out, absl::StrFormat(
                  "%-24s %10s %10s %+9.2f  %-24s %s\n", BucketName(e, x, i + 1 == k),
                  Percent(x.estimate_unbiased()), Percent(y.estimate_unbiased()), 100.0 * change,
                  absl::StrFormat("[%+.2f, %+.2f]", 100.0 * std::max(-1.0, change - z * se),
                                  100.0 * std::min(1.0, change + z * se)),
                  ChangeWords(change, change - z * se, change + z * se)));
  }
  return out;
}

NumericTruth ComputeNumericTruth(const std::vector<double>& values, const v1::Prevalence& p) {
  const v1::NumericEstimate& e = p.numeric();
  NumericTruth truth;
  std::vector<double> clipped;
  clipped.reserve(values.size());
  for (double v : values) {
    const double c = std::clamp(v, e.lo(), e.hi());
    if (c != v) ++truth.clipped;
    clipped.push_back(c);
  }
  truth.devices = static_cast<int64_t>(clipped.size());
  if (clipped.empty()) return truth;
  double sum = 0;
  for (double c : clipped) sum += c;
  truth.mean = sum / static_cast<double>(clipped.size());
  const int k = e.buckets_size();
  truth.bucket_shares.assign(static_cast<size_t>(k), 0.0);
  for (double c : clipped) {
    for (int j = 0; j < k; ++j) {
      const v1::NumericBucket& b = e.buckets(j);
      if (c >= b.lower() && (c < b.upper() || (j + 1 == k && c <= b.upper()))) {
        truth.bucket_shares[static_cast<size_t>(j)] += 1.0 / static_cast<double>(clipped.size());
        break;
      }
    }
  }
  std::sort(clipped.begin(), clipped.end());
  for (const v1::NumericQuantile& q : e.quantiles()) {
    const double rank = std::ceil(q.level() * static_cast<double>(clipped.size()));
    const size_t index = static_cast<size_t>(std::max(1.0, rank)) - 1;
    truth.quantiles.push_back(clipped[std::min(index, clipped.size() - 1)]);
  }
  return truth;
}

std::string FormatNumericReplay(const ReplayResult& result, const SurveySpec& spec,
                                const v1::Prevalence& p, const NumericTruth& truth) {
  const v1::NumericEstimate& e = p.numeric();
  const int64_t sent = result.devices + static_cast<int64_t>(result.rejections.size());
  std::string out = absl::StrFormat(
      "replayed %d respondents of %s (the number in column %s) as %d devices, each randomizing "
      "its own value and sending one report\n",
      sent, spec.csv_path, spec.value_column, sent);
  if (!result.rejections.empty()) {
    absl::StrAppend(&out, absl::StrFormat("%d reports stored, %d rejected by the collector (listed "
                                          "on stderr); the truth below is of the stored ones\n",
                                          result.devices, result.rejections.size()));
  }
  absl::StrAppend(&out, "\n", FormatNumericPrevalence(p), "\n");
  const std::string level = LevelLabel(p.confidence_level());
  const std::string clipped =
      truth.clipped > 0 ? absl::StrFormat(", %d values clipped to the range", truth.clipped) : "";
  if (!IsHistogram(p)) {
    const bool covered = e.mean_ci_lower() <= truth.mean && truth.mean <= e.mean_ci_upper();
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "server mean          %s%s  %s %% interval %s%s\n"
            "true mean            %s%s  (of the %d replayed values%s; known only to this demo)\n"
            "the interval %s the true mean; the estimate is off by %s%s (%.2f standard errors)\n",
            Value(e, e.mean()), Unit(e), level, Interval(e, e.mean_ci_lower(), e.mean_ci_upper()),
            Unit(e), Value(e, truth.mean), Unit(e), truth.devices, clipped,
            covered ? "covers" : "misses", Value(e, e.mean() - truth.mean), Unit(e),
            e.mean_standard_error() > 0 ? (e.mean() - truth.mean) / e.mean_standard_error() : 0.0));
    return out;
  }
  absl::StrAppend(&out, absl::StrFormat("%-24s %10s  %-24s %s\n", "BUCKET", "ESTIMATE",
                                        absl::StrCat("SIMULTANEOUS ", level, " %"),
                                        "TRUE SHARE (known only to this demo)"));
  int covered = 0;
  for (int i = 0; i < e.buckets_size(); ++i) {
    const v1::NumericBucket& b = e.buckets(i);
    const double t = truth.bucket_shares[static_cast<size_t>(i)];
    covered += b.simultaneous_lower() <= t && t <= b.simultaneous_upper() ? 1 : 0;
    absl::StrAppend(
        &out, absl::StrFormat("%-24s %10s  %-24s %s\n", BucketName(e, b, i + 1 == e.buckets_size()),
                              Percent(b.estimate_unbiased()),
                              absl::StrFormat("[%s, %s]", Percent(b.simultaneous_lower()),
                                              Percent(b.simultaneous_upper())),
                              Percent(t)));
  }
  absl::StrAppend(&out, absl::StrFormat("the simultaneous intervals cover %d of the %d true "
                                        "shares (of the %d replayed values%s)\n",
                                        covered, e.buckets_size(), truth.devices, clipped));
  if (e.quantiles_size() > 0) {
    absl::StrAppend(&out, absl::StrFormat("\n%-24s %12s  %-24s %s\n", "QUANTILE", "ESTIMATE",
                                          absl::StrCat(level, " % INTERVAL"), "TRUE VALUE"));
    for (int i = 0; i < e.quantiles_size(); ++i) {
      const v1::NumericQuantile& q = e.quantiles(i);
      const double t = truth.quantiles[static_cast<size_t>(i)];
      absl::StrAppend(
          &out,
          absl::StrFormat("%-24s %12s  %-24s %s%s (%s)\n", QuantileName(q.level()),
                          Value(e, q.value()), Interval(e, q.ci_lower(), q.ci_upper()), Value(e, t),
                          Unit(e), q.ci_lower() <= t && t <= q.ci_upper() ? "covered" : "missed"));
    }
  }
  return out;
}

}  // namespace deniable::tools
