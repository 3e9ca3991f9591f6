#include "tools/cli/categorical_output.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/output.h"

namespace deniable::tools {
namespace {

std::string Interval(double lower, double upper) {
  return absl::StrFormat("[%s, %s]", Percent(lower), Percent(upper));
}

const char* MechanismName(v1::CategoricalMechanism mechanism) {
  switch (mechanism) {
    case v1::K_RR:
      return "k_rr";
    case v1::OUE:
      return "oue";
    case v1::OLH:
      return "olh";
    default:
      return "categorical";
  }
}

// The rows of one prevalence's shares, under a header naming the two interval kinds.
std::string ShareTable(const v1::Prevalence& p) {
  const std::string level = LevelLabel(p.confidence_level());
  std::string out = absl::StrFormat(
      "%-12s %8s %10s %10s %9s  %-22s %s\n", "CATEGORY", "SUPPORT", "UNBIASED", "CONSISTENT", "SE",
      absl::StrCat(level, " % INTERVAL"), absl::StrCat("SIMULTANEOUS ", level, " %"));
  for (const v1::CategoryShare& s : p.shares()) {
    absl::StrAppend(
        &out,
        absl::StrFormat("%-12s %8d %10s %10s %9s  %-22s %s\n", s.category(), s.support_count(),
                        Percent(s.estimate_unbiased()), Percent(s.estimate_consistent()),
                        Percent(s.standard_error()), Interval(s.ci_lower(), s.ci_upper()),
                        Interval(s.simultaneous_lower(), s.simultaneous_upper())));
  }
  return out;
}

}  // namespace

bool IsCategorical(const v1::Prevalence& prevalence) {
  return prevalence.shares_size() > 0 || prevalence.design().categories() > 0 ||
         prevalence.design().parameters().has_categorical();
}

std::string FormatCategoricalDesign(const v1::Design& design) {
  std::string out = MechanismName(design.parameters().categorical().mechanism());
  if (design.version() > 0) absl::StrAppend(&out, " v", design.version());
  absl::StrAppend(&out, absl::StrFormat(" (k = %d, p* = %g, q* = %g", design.categories(),
                                        design.a(), design.b()));
  if (design.hash_buckets() > 0) {
    absl::StrAppend(&out, absl::StrFormat(", g = %d buckets", design.hash_buckets()));
  }
  absl::StrAppend(&out, absl::StrFormat("), epsilon = %.4f nats", design.epsilon()));
  return out;
}

std::string FormatCategoricalDescription(const v1::DesignDescription& d) {
  const int k = d.categories_size();
  std::vector<std::string> prior;
  for (int j = 0; j < k && j < d.category_prior_size(); ++j) {
    prior.push_back(absl::StrCat(d.categories(j), " ", Percent(d.category_prior(j))));
  }
  const bool report = d.channel() == "report";
  std::string out = absl::StrFormat(
      "design                      %s\n"
      "categories                  %d: %s\n"
      "prior                       %s\n"
      "channel                     %s\n"
      "H(x)                        %.4f bits (uncertainty about the category before a report)\n",
      FormatCategoricalDesign(d.design()), k, absl::StrJoin(d.categories(), ", "),
      absl::StrJoin(prior, ", "), d.channel_note(), d.categorical_entropy_bits());
  if (report) {
    absl::StrAppend(
        &out, absl::StrFormat("H(x | r)                    %.4f bits (uncertainty left after a "
                              "report)\n"
                              "I(x; r)                     %.4f bits (what one report reveals)\n",
                              d.categorical_conditional_entropy_bits(),
                              d.categorical_mutual_information_bits()));
  }
  const char* event = report ? "r REPORTED" : "r SUPPORTED";
  constexpr int kMaxColumns = 8;
  absl::StrAppend(&out, "\n", absl::StrFormat("%-12s %9s", event, "P(r)"));
  if (k <= kMaxColumns) {
    for (const std::string& name : d.categories()) {
      absl::StrAppend(&out, absl::StrFormat(" %10s", absl::StrCat("P(", name.substr(0, 6), "|r)")));
    }
  } else {
    absl::StrAppend(&out, absl::StrFormat(" %12s %16s", "P(TRUE=r|r)", "MAX P(TRUE=j|r)"));
  }
  absl::StrAppend(&out, absl::StrFormat(" %12s\n", "I BITS"));
  for (int r = 0; r < d.reported_size(); ++r) {
    const v1::ReportedCategory& c = d.reported(r);
    absl::StrAppend(&out, absl::StrFormat("%-12s %9s", c.category(), Percent(c.probability())));
    if (k <= kMaxColumns) {
      for (double p : c.posterior()) absl::StrAppend(&out, absl::StrFormat(" %10s", Percent(p)));
    } else {
      double other = 0;
      for (int j = 0; j < c.posterior_size(); ++j) {
        if (j != r) other = std::max(other, c.posterior(j));
      }
      absl::StrAppend(&out, absl::StrFormat(" %12s %16s", Percent(c.posterior(r)), Percent(other)));
    }
    absl::StrAppend(&out, absl::StrFormat(" %12.4f\n", c.mutual_information_bits()));
  }
  absl::StrAppend(&out, report
                            ? "(P(j|r): the posterior P(true = j | report = r) at the prior; I: "
                              "I(x; [report = r]))\n"
                            : "(P(j|r): the posterior P(true = j | the report supports r) at the "
                              "prior; I: I(x; [report supports r]))\n");
  absl::StrAppend(&out, CentralPrivacyLine(d));
  return out;
}

std::string FormatCategoricalPlan(const v1::SurveyPlan& p) {
  const std::string level = LevelLabel(p.confidence_level());
  const char* method = p.simultaneous_method() == v1::BONFERRONI ? "bonferroni" : "sidak";
  std::string out = absl::StrFormat(
      "design                      %s\n"
      "categories                  %d: %s\n"
      "target                      +/- %.2f percentage points on every share at %s %%\n"
      "one share alone             %d reports (worst case %d)\n"
      "all %d shares together      %d reports (worst case %d; %s, each share at %s %%)\n"
      "assumption                  %s\n",
      FormatCategoricalDesign(p.design()), p.categories_size(), absl::StrJoin(p.categories(), ", "),
      100.0 * p.half_width(), level, p.reports_needed(), p.reports_needed_worst_case(),
      p.categories_size(), p.reports_needed_simultaneous(),
      p.reports_needed_simultaneous_worst_case(), method, LevelLabel(p.per_category_level()),
      p.assumption());
  if (p.category_plans_size() > 0) {
    absl::StrAppend(&out, absl::StrFormat("\n%-12s %10s %12s %14s\n", "CATEGORY", "SHARE", "ALONE",
                                          "SIMULTANEOUS"));
    for (const v1::CategoryPlan& c : p.category_plans()) {
      absl::StrAppend(
          &out, absl::StrFormat("%-12s %10s %12d %14d\n", c.category(), Percent(c.assumed_share()),
                                c.reports_needed(), c.reports_needed_simultaneous()));
    }
  }
  return out;
}

std::string CategoryList(const v1::Metric& metric) {
  return absl::StrJoin(metric.categories(), ", ");
}

std::string FormatCategoricalPrevalence(const v1::Prevalence& p) {
  std::vector<std::string> names;
  for (const v1::CategoryShare& s : p.shares()) names.push_back(s.category());
  std::string out = absl::StrFormat(
      "metric               %s\n"
      "%s"
      "design               %s\n"
      "reports (n)          %d\n",
      p.metric(), TimeRangeLine("time range", p), FormatCategoricalDesign(p.design()), p.n());
  if (!names.empty()) {
    absl::StrAppend(&out, absl::StrFormat("categories           %d: %s\n", names.size(),
                                          absl::StrJoin(names, ", ")));
  }
  if (p.central_n() > 0) absl::StrAppend(&out, CentralText(p));
  absl::StrAppend(&out, absl::StrFormat("estimate of          %s\n", EstimandText(p)));
  absl::StrAppend(
      &out, absl::StrFormat("shares               unbiased (c/n - q*) / (p* - q*) with its "
                            "standard error; consistent: %s (the unbiased shares projected onto "
                            "the simplex: each >= 0, summing to 1)\n",
                            p.consistent_method().empty() ? "norm_sub" : p.consistent_method()));
  absl::StrAppend(
      &out, absl::StrFormat(
                "intervals            %s %% per category alone; simultaneous %s %% over all "
                "%d categories together by %s (each at %s %%)\n",
                LevelLabel(p.confidence_level()), LevelLabel(p.confidence_level()), p.shares_size(),
                p.simultaneous_method().empty() ? "sidak" : p.simultaneous_method(),
                LevelLabel(p.per_category_level())));
  if (p.versions_size() > 1) {
    absl::StrAppend(&out, absl::StrFormat("design versions      %d combined by report counts\n",
                                          p.versions_size()));
  }
  if (p.suppressed()) {
    absl::StrAppend(&out, "\nsuppressed (too few reports: the shares are not served)\n");
  } else if (p.shares_size() > 0) {
    absl::StrAppend(&out, "\n", ShareTable(p));
    // The share fake reports could move most (each share's bound: Prevalence.shares).
    const v1::CategoryShare* most = nullptr;
    for (const v1::CategoryShare& s : p.shares()) {
      if (most == nullptr || s.manipulation().bound() > most->manipulation().bound()) most = &s;
    }
    if (most != nullptr && most->manipulation().fake_reports() > 0) {
      absl::StrAppend(&out, "share \"", most->category(), "\" (the most movable):\n",
                      ManipulationText(most->manipulation(), Percent));
    }
  }
  for (const v1::Prevalence& g : p.groups()) {
    const std::string value = g.group_value().empty() ? "(none)" : g.group_value();
    absl::StrAppend(&out, absl::StrFormat("\ngroup %s (n = %d)\n", value, g.n()));
    if (g.suppressed() || g.shares_size() == 0) {
      absl::StrAppend(&out, "  suppressed (too few reports)\n");
    } else {
      absl::StrAppend(&out, ShareTable(g));
    }
  }
  return out;
}

std::string FormatCategoricalSeries(const v1::Series& series) {
  double level = 0.95;
  std::string method = "sidak";
  for (const v1::Prevalence& b : series.buckets()) {
    if (b.confidence_level() > 0) level = b.confidence_level();
    if (!b.simultaneous_method().empty()) method = b.simultaneous_method();
  }
  std::string out = absl::StrFormat(
      "metric %s, %s buckets, simultaneous %s %% intervals (%s)\n%-18s %8s  %-12s %10s  %s\n",
      series.metric(), v1::BucketWidth_Name(series.bucket()), LevelLabel(level), method,
      "START (UTC)", "N", "CATEGORY", "ESTIMATE", "SIMULTANEOUS INTERVAL");
  for (const v1::Prevalence& b : series.buckets()) {
    const std::string start = absl::FormatTime(
        "%Y-%m-%d %H:%M", absl::FromUnixSeconds(b.start_time_seconds()), absl::UTCTimeZone());
    if (b.suppressed() || b.shares_size() == 0) {
      absl::StrAppend(
          &out, absl::StrFormat("%-18s %8d  %s\n", start, b.n(), "suppressed (too few reports)"));
      continue;
    }
    for (int i = 0; i < b.shares_size(); ++i) {
      const v1::CategoryShare& s = b.shares(i);
      absl::StrAppend(&out,
                      absl::StrFormat("%-18s %8s  %-12s %10s  %s\n", i == 0 ? start : "",
                                      i == 0 ? absl::StrCat(b.n()) : "", s.category(),
                                      Percent(s.estimate_unbiased()),
                                      Interval(s.simultaneous_lower(), s.simultaneous_upper())));
    }
  }
  return out;
}

std::string FormatCategoricalDifference(const v1::Difference& d) {
  std::string out = absl::StrFormat(
      "first                %s (n = %d)\n"
      "second               %s (n = %d)\n"
      "%s%s"
      "change               second minus first, in percentage points\n"
      "%-12s %10s %10s %9s %9s  %-16s  %s\n",
      d.first().metric(), d.first().n(), d.second().metric(), d.second().n(),
      TimeRangeLine("first window", d.first()), TimeRangeLine("second window", d.second()),
      "CATEGORY", "FIRST", "SECOND", "CHANGE", "SE",
      absl::StrCat(LevelLabel(d.confidence_level()), " % INTERVAL"),
      "IN WORDS (Wald interval of each category alone)");
  for (int i = 0; i < d.shares_size(); ++i) {
    const v1::CategoryDifference& c = d.shares(i);
    const double first =
        i < d.first().shares_size() ? d.first().shares(i).estimate_unbiased() : NAN;
    const double second =
        i < d.second().shares_size() ? d.second().shares(i).estimate_unbiased() : NAN;
    const double change = -c.difference();  // the wire's is first - second
    absl::StrAppend(
        &out, absl::StrFormat(
                  "%-12s %10s %10s %+9.2f %9.2f  %-16s  %s\n", c.category(), Percent(first),
                  Percent(second), 100.0 * change, 100.0 * c.standard_error(),
                  absl::StrFormat("[%+.2f, %+.2f]", -100.0 * c.ci_upper(), -100.0 * c.ci_lower()),
                  ChangeWords(change, -c.ci_upper(), -c.ci_lower())));
  }
  return out;
}

std::string FormatCategoricalReplay(const ReplayResult& result, const SurveySpec& spec,
                                    const v1::Prevalence& p) {
  const int64_t respondents = result.devices + static_cast<int64_t>(result.rejections.size());
  std::string out = absl::StrFormat(
      "replayed %d respondents of %s (column %s, %d categories) as %d devices, one randomized "
      "report each\n",
      respondents, spec.csv_path, spec.column, spec.categories.size(), respondents);
  if (!result.rejections.empty()) {
    absl::StrAppend(&out,
                    absl::StrFormat("%d reports stored, %d rejected by the collector (listed "
                                    "on stderr); the true shares below are of the stored ones\n",
                                    result.devices, result.rejections.size()));
  }
  v1::Prevalence overall = p;
  overall.clear_groups();
  absl::StrAppend(&out, "\n", FormatCategoricalPrevalence(overall), "\n");
  absl::StrAppend(
      &out, absl::StrFormat("%-12s %10s  %-24s %s\n", "CATEGORY", "ESTIMATE",
                            absl::StrCat("SIMULTANEOUS ", LevelLabel(p.confidence_level()), " %"),
                            "TRUE SHARE (known only to this demo)"));
  int covered = 0;
  for (const v1::CategoryShare& s : p.shares()) {
    auto it = result.true_categories.find(s.category());
    const int64_t count = it == result.true_categories.end() ? 0 : it->second;
    const double share = result.devices > 0 ? static_cast<double>(count) / result.devices : 0.0;
    if (s.simultaneous_lower() <= share && share <= s.simultaneous_upper()) ++covered;
    absl::StrAppend(&out, absl::StrFormat("%-12s %10s  %-24s %s (%d / %d)\n", s.category(),
                                          Percent(s.estimate_unbiased()),
                                          Interval(s.simultaneous_lower(), s.simultaneous_upper()),
                                          Percent(share), count, result.devices));
  }
  absl::StrAppend(
      &out, absl::StrFormat("the simultaneous intervals cover %d of the %d true shares\n", covered,
                            p.shares_size()));
  return out;
}

}  // namespace deniable::tools
