// Numeric metrics in the registry (issue 28): the range of a CreateMetricRequest, a numeric design
// resolved against it (mechanism, bucket edges, d, unit), its stored parameters and its wire form.
//
// A numeric metric has Metric.range and takes only a `numeric` design (1BitMean or dBitFlip,
// common/numeric.h), resolved against the range and stored by proto/convert/numeric_convert.h.
// The range is not stored apart: it is the design's first and last bucket edge, and its unit is
// Numeric.unit, so the storage schema is that of every other metric, and the design fingerprint
// (design_fingerprint.h: over the stored parameters) covers the mechanism, epsilon, edges, d and
// unit.
//
// Pure functions, thread-safe.
#ifndef DENIABLE_SERVER_CORE_NUMERIC_METRIC_H_
#define DENIABLE_SERVER_CORE_NUMERIC_METRIC_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/design.h"
#include "deniable/common/numeric.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"

namespace deniable::server {

// The longest NumericRange.unit, in bytes.
inline constexpr size_t kMaxUnitBytes = 32;

// Checks a requested range: lo and hi finite, lo < hi, unit at most kMaxUnitBytes.
// Errors: INVALID_ARGUMENT naming "range.lo", "range.hi" or "range.unit".
absl::Status ValidateNumericRange(const v1::NumericRange& range);

// The binary channel of one coordinate: ONE_BIT_MEAN's bit (a = e^eps / (e^eps + 1), b = 1 - a)
// or one dBitFlip bucket's bit (a = e^(eps/2) / (e^(eps/2) + 1), b = 1 - a), as a forced-response
// design (p = a - b, q = 1/2), for the binary estimators and intervals (prevalence_query.h).
Design NumericChannelDesign(const NumericDesign& design);

// The metric's range as served: lo and hi from the design's edges, the unit from its parameters.
v1::NumericRange RangeOf(const NumericDesign& design, absl::string_view unit);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_NUMERIC_METRIC_H_
