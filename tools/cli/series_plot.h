// `deniable series --plot=FILE`: the series chart for people without a browser, drawn with
// PLplot (Debian's libplplot-dev; its svg and pdf drivers are built into libplplot17).
#ifndef DENIABLE_TOOLS_CLI_SERIES_PLOT_H_
#define DENIABLE_TOOLS_CLI_SERIES_PLOT_H_

#include <string>

#include "absl/status/status.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::tools {

// Writes `series` to `path` as the dashboard draws it (docs/dashboard.md): x is time (UTC, each
// bucket at its middle), y the prevalence in [0, 1] (yes/no metrics) or, for a numeric metric,
// the values' range [lo, hi] in its unit with the debiased mean (one_bit_mean) or the median
// from the histogram (d_bit_flip; buckets without a 0.5 quantile are left out); the estimate
// (clipped to the axis) as a line with markers, its confidence interval as a shaded band
// (broken where buckets are missing or suppressed), suppressed buckets as open squares on the x
// axis, and a dashed vertical line where the newest design version present changes (labelled "vN").
// The format follows the file name: ".svg" or ".pdf".
// Not thread-safe: PLplot keeps global state; call from one thread at a time.
// Errors: INVALID_ARGUMENT naming "plot" for another extension or a series with no bucket;
// PERMISSION_DENIED / NOT_FOUND naming "plot" when the file cannot be created.
absl::Status WriteSeriesPlot(const v1::Series& series, const std::string& path);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_SERIES_PLOT_H_
