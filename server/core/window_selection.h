// Selections estimated from devices counted once per calendar window (docs/statistics.md section
// 4.4): a selection that is exactly whole UTC days, ISO weeks or calendar months of a metric whose
// devices send window flags (Report.window_firsts) is estimated from each window's first reports,
// n = the devices active in the window, each counted once, independent (section 3 holds exactly);
// several windows are combined by section 4's bound across windows. A metric reported once per
// device (Metric.reporting_once) is estimated as independent devices over any selection. Every
// other selection keeps the reporting-period form (prevalence_query.h). Pure functions,
// thread-safe.
#ifndef DENIABLE_SERVER_CORE_WINDOW_SELECTION_H_
#define DENIABLE_SERVER_CORE_WINDOW_SELECTION_H_

#include <cstdint>
#include <optional>

#include "deniable/common/calendar_windows.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/storage.h"

namespace deniable::server {

// How a selection is counted when it is counted by devices.
struct WindowChoice {
  bool once = false;  // a reporting_once metric: every report is its device's only one
  CalendarWindow kind = CalendarWindow::kDay;
  int64_t windows = 1;  // whole windows of `kind` in the selection (1 when `once`)
};

// The window form for [start, end) (end 0: no end) of `metric`, or nullopt for the period form:
// reporting_once metrics always; otherwise, unless the metric turned the flags off, the largest
// kind (month, week, day) of which the selection is a whole number of windows.
std::optional<WindowChoice> ChooseWindow(const MetricInfo& metric, int64_t start, int64_t end);

// Adds the counts of `row` that the window form counts to `counts` and, unless null, the summed
// counter vectors to `support` (AddCounterSums), keyed by the window's start in place of the
// period's: its first reports of the window kind, or (once) all of its reports.
void AddWindowCounts(const CountRow& row, const WindowChoice& choice, PeriodCounts* counts,
                     PeriodSupport* support);

// Marks an estimate made from window counts: estimand "active_device_prevalence" (one window,
// or a reporting_once metric) or "mean_window_prevalence" (several windows: the mean of the
// windows' prevalences weighted by their devices, n counting device-windows), window,
// windows, variance_bound ("independent_devices" for one window, "minkowski_across_windows")
// and the explanation sentence; `start` is the selection's start (the first window's).
void DescribeWindowEstimate(const WindowChoice& choice, int64_t start, v1::Prevalence* p);

// The explanation sentence of an estimate in the reporting-period form (its n, periods and
// variance_bound set).
void DescribePeriodEstimate(v1::Prevalence* p);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_WINDOW_SELECTION_H_
