#include "tools/cli/series_plot.h"

#include <plplot/plplot.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable::tools {
namespace {

// Color map 0 entries used below (0 is the background).
enum Color { kBackground = 0, kAxes = 1, kBand = 2, kLine = 3, kSuppressedColor = 4, kVersion = 5 };

// PLplot calls exit() on an internal error unless a handler says otherwise; the arguments are
// checked before plinit, so this is a last guard that keeps the CLI from dying silently.
int KeepRunning(const char* message) {
  std::fprintf(stderr, "deniable: series --plot: PLplot: %s\n", message);
  return 1;
}

// What the chart draws for each bucket: the yes/no prevalence, a ONE_BIT_MEAN metric's mean,
// or a D_BIT_FLIP metric's median (the quantile at 0.5 the series carries), with its interval.
enum class Figure { kPrevalence, kMean, kMedian };

struct Point {
  bool drawn = false;  // false: suppressed, or no median in the bucket
  double estimate = 0;
  double lower = 0;
  double upper = 0;
};

Figure FigureOf(const v1::Series& series) {
  for (const v1::Prevalence& b : series.buckets()) {
    if (b.has_numeric()) {
      return b.numeric().mechanism() == "d_bit_flip" ? Figure::kMedian : Figure::kMean;
    }
  }
  return Figure::kPrevalence;
}

Point PointOf(const v1::Prevalence& b, Figure figure) {
  Point p;
  if (b.suppressed()) return p;
  switch (figure) {
    case Figure::kPrevalence:
      return Point{true, b.estimate_clipped(), b.ci_lower(), b.ci_upper()};
    case Figure::kMean: {
      const v1::NumericEstimate& e = b.numeric();
      return Point{true, std::clamp(e.mean(), e.lo(), e.hi()), e.mean_ci_lower(),
                   e.mean_ci_upper()};
    }
    case Figure::kMedian:
      for (const v1::NumericQuantile& q : b.numeric().quantiles()) {
        if (q.level() == 0.5) return Point{true, q.value(), q.ci_lower(), q.ci_upper()};
      }
      return p;
  }
  return p;
}

double Middle(const v1::Prevalence& bucket) {
  return 0.5 * static_cast<double>(bucket.start_time_seconds() + bucket.end_time_seconds());
}

uint32_t NewestVersion(const v1::Prevalence& bucket) {
  uint32_t newest = 0;
  for (const v1::VersionEstimate& v : bucket.versions()) {
    newest = std::max(newest, v.design_version());
  }
  return newest;
}

// Buckets with a point that follow each other without a gap, as index ranges.
std::vector<std::pair<int, int>> ContiguousRuns(const v1::Series& series, Figure figure) {
  std::vector<std::pair<int, int>> runs;
  for (int i = 0; i < series.buckets_size(); ++i) {
    const v1::Prevalence& b = series.buckets(i);
    if (!PointOf(b, figure).drawn) continue;
    const bool continues = !runs.empty() && runs.back().second == i &&
                           series.buckets(i - 1).end_time_seconds() == b.start_time_seconds();
    if (continues) {
      runs.back().second = i + 1;
    } else {
      runs.emplace_back(i, i + 1);
    }
  }
  return runs;
}

void DrawBandAndLine(const v1::Series& series, Figure figure, int from, int to) {
  std::vector<PLFLT> x, lower, upper, estimate;
  for (int i = from; i < to; ++i) {
    const v1::Prevalence& b = series.buckets(i);
    const Point p = PointOf(b, figure);
    x.push_back(Middle(b));
    lower.push_back(p.lower);
    upper.push_back(p.upper);
    estimate.push_back(p.estimate);
  }
  const int n = static_cast<int>(x.size());
  if (n > 1) {  // the band: lower ends left to right, then upper ends right to left
    std::vector<PLFLT> px(x), py(lower);
    px.insert(px.end(), x.rbegin(), x.rend());
    py.insert(py.end(), upper.rbegin(), upper.rend());
    plcol0(kBand);
    plfill(static_cast<PLINT>(px.size()), px.data(), py.data());
  } else {  // one bucket: its interval as a vertical bar
    plcol0(kBand);
    plwidth(6);
    pljoin(x[0], lower[0], x[0], upper[0]);
    plwidth(1);
  }
  plcol0(kLine);
  plwidth(2);
  if (n > 1) plline(n, x.data(), estimate.data());
  plpoin(n, x.data(), estimate.data(), 17);  // filled dots
  plwidth(1);
}

// Suppressed buckets: too few reports for an estimate (min_reports), marked on the x axis as
// open squares. Returns whether there was one.
bool DrawSuppressed(const v1::Series& series, double y_min, double y_span) {
  std::vector<PLFLT> sx, sy;
  for (const v1::Prevalence& b : series.buckets()) {
    if (b.suppressed()) {
      sx.push_back(Middle(b));
      sy.push_back(y_min + 0.02 * y_span);
    }
  }
  if (sx.empty()) return false;
  plcol0(kSuppressedColor);
  plpoin(static_cast<PLINT>(sx.size()), sx.data(), sy.data(), 6);  // open squares
  return true;
}

// Design version changes: a dashed line, labelled with the version, where the newest version
// present changes.
void DrawVersionChanges(const v1::Series& series, double y_min, double y_max) {
  const double y_span = y_max - y_min;
  plcol0(kVersion);
  pllsty(2);
  for (int i = 1; i < series.buckets_size(); ++i) {
    const uint32_t before = NewestVersion(series.buckets(i - 1));
    const uint32_t now = NewestVersion(series.buckets(i));
    if (now == 0 || before == 0 || now == before) continue;
    const double x = static_cast<double>(series.buckets(i).start_time_seconds());
    pljoin(x, y_min, x, y_max);
    plptex(x, y_min + 0.96 * y_span, 1.0, 0.0, -0.1, absl::StrCat("v", now).c_str());
  }
  pllsty(1);
}

}  // namespace

absl::Status WriteSeriesPlot(const v1::Series& series, const std::string& path) {
  const char* device = nullptr;
  if (absl::EndsWith(path, ".svg")) {
    device = "svg";
  } else if (absl::EndsWith(path, ".pdf")) {
    device = "pdf";
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("plot: \"", path, "\" must end in .svg or .pdf"));
  }
  if (series.buckets_size() == 0) {
    return absl::InvalidArgumentError("plot: the series has no bucket with reports to draw");
  }
  if (std::FILE* probe = std::fopen(path.c_str(), "w"); probe != nullptr) {
    std::fclose(probe);
  } else {
    const int error = errno;
    const std::string message =
        absl::StrCat("plot: cannot create \"", path, "\": ", std::strerror(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::PermissionDeniedError(message);
  }

  double x_min = static_cast<double>(series.buckets(0).start_time_seconds());
  double x_max = static_cast<double>(series.buckets(0).end_time_seconds());
  for (const v1::Prevalence& b : series.buckets()) {
    x_min = std::min(x_min, static_cast<double>(b.start_time_seconds()));
    x_max = std::max(x_max, static_cast<double>(b.end_time_seconds()));
  }

  const Figure figure = FigureOf(series);
  double y_min = 0.0, y_max = 1.0;
  std::string unit;
  for (const v1::Prevalence& b : series.buckets()) {
    if (figure != Figure::kPrevalence && b.has_numeric()) {
      y_min = b.numeric().lo();
      y_max = b.numeric().hi();
      unit = b.numeric().unit();
      break;
    }
  }
  if (!(y_max > y_min)) y_max = y_min + 1.0;
  const double y_span = y_max - y_min;

  plsexit(&KeepRunning);
  plsdev(device);
  plsfnam(path.c_str());
  plspage(0, 0, 960, 540, 0, 0);
  plscol0(kBackground, 255, 255, 255);
  plscol0(kAxes, 40, 40, 40);
  plscol0(kBand, 190, 215, 240);
  plscol0(kLine, 31, 95, 170);
  plscol0(kSuppressedColor, 150, 150, 150);
  plscol0(kVersion, 200, 60, 40);
  plinit();
  pladv(0);
  plvpor(0.09, 0.97, 0.14, 0.88);
  plwind(x_min, x_max, y_min, y_max);
  plschr(0, 0.8);

  for (const auto& [from, to] : ContiguousRuns(series, figure)) {
    DrawBandAndLine(series, figure, from, to);
  }

  const bool any_suppressed = DrawSuppressed(series, y_min, y_span);
  DrawVersionChanges(series, y_min, y_max);

  plcol0(kAxes);
  const bool hourly = series.bucket() == v1::HOUR;
  pltimefmt(hourly ? "%m-%d %H:%M" : "%Y-%m-%d");
  plbox("bcnstd", 0.0, 0, "bcnstv", figure == Figure::kPrevalence ? 0.1 : 0.0,
        figure == Figure::kPrevalence ? 2 : 0);
  const std::string level =
      series.buckets(0).confidence_level() > 0
          ? absl::StrFormat("%g %% interval", 100.0 * series.buckets(0).confidence_level())
          : std::string("interval");
  const std::string in_unit = unit.empty() ? "" : absl::StrCat(" (", unit, ")");
  const std::string y_label = figure == Figure::kPrevalence ? "prevalence"
                              : figure == Figure::kMean     ? "mean" + in_unit
                                                            : "median" + in_unit;
  const char* what = figure == Figure::kPrevalence ? "debiased estimate"
                     : figure == Figure::kMean     ? "debiased mean"
                                                   : "median from the histogram";
  pllab("time (UTC)", y_label.c_str(),
        absl::StrCat(series.metric(), ": ", what, " with its ", level,
                     any_suppressed ? "; squares: suppressed buckets" : "")
            .c_str());
  plend();
  return absl::OkStatus();
}

}  // namespace deniable::tools
