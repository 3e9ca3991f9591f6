// Quantiles from a D_BIT_FLIP histogram (numeric.h EstimateQuantiles; docs/statistics.md 6.4).
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/numeric.h"

namespace deniable {

absl::StatusOr<std::vector<QuantileEstimate>> EstimateQuantiles(const NumericDesign& design,
                                                                const HistogramEstimate& histogram,
                                                                std::span<const double> levels) {
  (void)design;
  (void)histogram;
  (void)levels;
  return absl::UnimplementedError("EstimateQuantiles: not yet implemented");
}

}  // namespace deniable
