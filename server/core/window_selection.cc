#include "server/core/window_selection.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"

namespace deniable::server {
namespace {

// "the week of 2026-11-02", "the day 2026-11-02", "the month of 2026-11".
std::string WindowPhrase(CalendarWindow kind, int64_t start) {
  switch (kind) {
    case CalendarWindow::kDay:
      return absl::StrCat("the day ", UtcDate(start));
    case CalendarWindow::kWeek:
      return absl::StrCat("the week of ", UtcDate(start));
    case CalendarWindow::kMonth:
      return absl::StrCat("the month of ", UtcDate(start).substr(0, 7));
  }
  return UtcDate(start);
}

std::string PeriodPhrase(int64_t seconds) {
  if (seconds % (7 * 86400) == 0) return absl::StrCat(seconds / (7 * 86400), " week(s)");
  if (seconds % 86400 == 0) return absl::StrCat(seconds / 86400, " day(s)");
  return absl::StrCat(seconds / 3600, " hour(s)");
}

}  // namespace

std::optional<WindowChoice> ChooseWindow(const MetricInfo& metric, int64_t start, int64_t end) {
  if (metric.proto.reporting_once()) return WindowChoice{.once = true};
  if (metric.proto.window_firsts_off() || end == 0) return std::nullopt;
  for (CalendarWindow kind :
       {CalendarWindow::kMonth, CalendarWindow::kWeek, CalendarWindow::kDay}) {
    int64_t count = 0;
    if (IsWholeWindows(kind, start, end, &count)) {
      return WindowChoice{.once = false, .kind = kind, .windows = count};
    }
  }
  return std::nullopt;
}

void AddWindowCounts(const CountRow& row, const WindowChoice& choice, PeriodCounts* counts,
                     PeriodSupport* support) {
  const int64_t key = choice.once ? 0 : WindowStart(choice.kind, row.event_time_seconds);
  const CountRow::Firsts& f = row.firsts[static_cast<size_t>(choice.kind)];
  const int64_t n = choice.once ? row.n : f.n;
  if (n == 0) return;
  AddCounterSums(n, choice.once ? row.counters : f.counters, (*counts)[key][row.design_version],
                 support == nullptr ? nullptr : &(*support)[key][row.design_version]);
}

void DescribeWindowEstimate(const WindowChoice& choice, int64_t start, v1::Prevalence* p) {
  const bool several = !choice.once && p->periods() > 1;
  // Several windows: the device-weighted mean of the windows' prevalences, not the share among
  // the devices active in the range (a device active in two weeks is in both).
  p->set_estimand(several ? "mean_window_prevalence" : "active_device_prevalence");
  p->set_window(choice.once ? "once" : CalendarWindowName(choice.kind));
  p->set_windows(choice.once ? 1 : p->periods());
  // The interval was built per window where EstimateFromPeriods says per period.
  std::string construction = p->interval_construction();
  const std::string unit = choice.once ? "reports (one per device)"
                                       : absl::StrCat(CalendarWindowName(choice.kind),
                                                      "'s first reports (one per device)");
  construction = absl::StrReplaceAll(
      construction, {{"the period's reports", absl::StrCat("the ", unit)},
                     {" periods, ends averaged",
                      absl::StrCat(" ", CalendarWindowName(choice.kind), "s, ends averaged")}});
  p->set_interval_construction(construction);
  p->set_variance_bound(several ? "minkowski_across_windows" : "independent_devices");
  if (choice.once) {
    p->set_explanation(absl::StrCat(p->n(),
                                    " devices, each answering once (a question asked once "
                                    "per device): independent devices"));
    return;
  }
  const std::string kind = CalendarWindowName(choice.kind);
  if (!several) {
    p->set_explanation(absl::StrCat(p->n(), " devices active in ", WindowPhrase(choice.kind, start),
                                    ", each counted once"));
    return;
  }
  p->set_explanation(absl::StrCat(
      p->n(), " device-", kind, "s over ", p->periods(), " ", kind, "s from ",
      WindowPhrase(choice.kind, start), ", each device counted once per ", kind, "; the ", kind,
      "s are combined by the bound that holds whatever the overlap of devices "
      "between them (Minkowski)"));
}

void DescribePeriodEstimate(v1::Prevalence* p) {
  const std::string period = PeriodPhrase(p->reporting_period_seconds());
  if (p->periods() <= 1) {
    p->set_explanation(absl::StrCat(p->n(), " reports in one reporting period (", period,
                                    "), one per device: independent devices"));
    return;
  }
  p->set_explanation(absl::StrCat(
      p->n(), " reports over ", p->periods(), " reporting periods of ", period,
      "; a device may report in each, so the interval uses the bound that holds whatever the "
      "overlap of devices between periods (Minkowski), as wide as one period's devices allow"));
}

}  // namespace deniable::server
