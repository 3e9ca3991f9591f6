#include "tools/cli/heavy_hitters_output.h"

#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deniable/common/calendar_windows.h"
#include "deniable/common/shuffle.h"
#include "deniable/convert/design_advice.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/output.h"

namespace deniable::tools {
namespace {

// "1.0986 nats per report (e^eps = 3.0000)": the local epsilon and the odds ratio it bounds.
std::string EpsilonPerReport(double epsilon) {
  return absl::StrFormat("%.4f nats per report (e^eps = %.4f)", epsilon, std::exp(epsilon));
}

// A heavy-hitters metric's privacy line (FormatMetric): epsilon per report, the odds ratio and
// the posterior range at an even prior (heavy_hitters_advice.h).
std::string HeavyHittersPrivacyLine(const v1::Metric& metric) {
  v1::DescribeDesignRequest request;
  request.set_prior(0.5);
  absl::StatusOr<v1::DesignDescription> d = DescribeStoredDesign(request, metric.design(), {});
  if (!d.ok()) return absl::StrCat("privacy         (", d.status().message(), ")\n");
  return absl::StrFormat(
      "privacy         %s: one report multiplies the odds that the device holds a given value by "
      "at most e^eps; from a prior of 50 %%, P(holds it | report) is between %s and %s "
      "(deniable design --metric=%s --prior=PI --n=REPORTS: other priors, central epsilon)\n",
      EpsilonPerReport(metric.design().epsilon()), Percent(d->posterior_given_no()),
      Percent(d->posterior_given_yes()), metric.name());
}

}  // namespace

std::string FormatHeavyHittersDescription(const v1::DesignDescription& d) {
  // x = "the device holds the candidate value v" (heavy_hitters_advice.h).
  std::string out = absl::StrFormat(
      "design                      %s\n"
      "epsilon                     %s: the most one report multiplies the odds that the "
      "device holds any given value\n"
      "assumed P(holds v) pi       %s\n"
      "P(holds v | report), max    %s   (the report's bit equals v's Hadamard entry)\n"
      "P(holds v | report), min    %s   (the report's bit differs from it)\n"
      "H(x)                        %.4f bits (uncertainty before a report)\n"
      "H(x | r)                    %.4f bits (uncertainty left after a report, at least)\n"
      "I(x; r)                     %.4f bits (what one report reveals, at most)\n"
      "figures of                  %s\n",
      FormatDesign(d.design()), EpsilonPerReport(d.design().epsilon()), Percent(d.prior()),
      Percent(d.posterior_given_yes()), Percent(d.posterior_given_no()), d.entropy_bits(),
      d.conditional_entropy_bits(), d.mutual_information_bits(), d.channel_note());
  absl::StrAppend(&out, CentralPrivacyLine(d));
  return out;
}

void AddHeavyHittersOutput(CliKind* kind) {
  kind->metric_lines = [](const v1::Metric& metric) -> std::optional<CliMetricLines> {
    if (!metric.design().parameters().has_heavy_hitters()) return std::nullopt;
    // A device memoizes one report per distinct value it reports (docs/privacy.md).
    return CliMetricLines{.memoized = "memoized report per distinct value",
                          .fresh = "fresh report each period",
                          .privacy = HeavyHittersPrivacyLine(metric)};
  };
  kind->describe = [](const v1::DesignDescription& d) -> std::optional<std::string> {
    if (!d.design().parameters().has_heavy_hitters()) return std::nullopt;
    return FormatHeavyHittersDescription(d);
  };
}

std::string HeavyHittersWindowLine(const std::string& window, int64_t start) {
  const std::string date = UtcDate(start);
  const std::string which = window == "month"  ? absl::StrCat("the month of ", date.substr(0, 7))
                            : window == "week" ? absl::StrCat("the week of ", date)
                                               : absl::StrCat("the day ", date);
  return absl::StrCat("counted: the devices active in ", which,
                      " (UTC), each once, at its first report in it (a metric created with "
                      "--nowindow_flags counts every report)\n");
}

std::string HeavyHittersCentralLine(const v1::TopValues& top) {
  if (top.devices() <= 0 || top.devices() > kMaxDescribedReports || !(top.epsilon() > 0)) {
    return "";
  }
  absl::StatusOr<CentralPrivacy> c = AmplifiedEpsilon(
      top.epsilon(), GenericCloneProbability(top.epsilon()), top.devices(), kDefaultCentralDelta);
  if (!c.ok()) return "";
  if (!c->amplified) {
    return absl::StrFormat("central epsilon = local epsilon %.4f nats: %s\n", c->epsilon, c->note);
  }
  return absl::StrFormat(
      "central epsilon %.4f nats at delta = %g over these %d reports (one per device in a "
      "whole-window range), against an analyst who sees only counts (local: %.4f nats per "
      "report, against the operator)\n",
      c->epsilon, c->delta, top.devices(), top.epsilon());
}

std::string FormatHeavyHittersPlan(const HeavyHittersPlan& p) {
  return absl::StrFormat(
      "design                      heavy_hitters (eps = %.4f nats per report, max_length = %d "
      "bytes)\n"
      "target                      a value held by %s of devices, found by `top` with "
      "probability %.2f (simultaneous level %s %%, %d prefixes per level)\n"
      "devices needed              %d, one value each\n"
      "assumption                  %s\n",
      p.epsilon, p.max_length, Percent(p.share), p.probability, LevelLabel(p.confidence_level),
      p.max_prefixes, p.devices_needed, p.assumption);
}

}  // namespace deniable::tools
