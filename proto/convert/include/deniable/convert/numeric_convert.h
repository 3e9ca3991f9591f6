// Conversions between the wire's numeric designs (deniable/v1/design.proto: Numeric,
// NumericMechanism; metric.proto: NumericRange) and common's NumericDesign (numeric.h).
//
// Example:
//   v1::NumericRange range;  // from CreateMetricRequest.range
//   range.set_lo(0); range.set_hi(100);
//   absl::StatusOr<deniable::NumericDesign> d =
//       deniable::NumericDesignFromProto(request.design(), "design", &range);
//   deniable::v1::Design wire;
//   deniable::NumericDesignToProto(*d, /*version=*/1, range.unit(), &wire);
//
// Pure functions; thread-safe.
#ifndef DENIABLE_CONVERT_NUMERIC_CONVERT_H_
#define DENIABLE_CONVERT_NUMERIC_CONVERT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/numeric.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"

namespace deniable {

// The wire mechanism, and back. NumericMechanismFromProto errors: INVALID_ARGUMENT naming
// `field` for UNSPECIFIED or an unknown value.
v1::NumericMechanism NumericMechanismToProto(NumericMechanism mechanism);
absl::StatusOr<NumericMechanism> NumericMechanismFromProto(v1::NumericMechanism mechanism,
                                                           absl::string_view field);

// Builds a numeric design from `parameters` (which must hold the `numeric` kind).
// With `range` (a request: the metric's range), the request is resolved:
//   - mechanism UNSPECIFIED: D_BIT_FLIP when buckets > 1 or bucket_edges are given, else
//     ONE_BIT_MEAN (the least variance for the question: a histogram or a mean);
//   - bucket_edges empty: `buckets` equal-width buckets over [range.lo, range.hi]
//     (NumericDesign::EqualWidth; 0: 1 for ONE_BIT_MEAN, 10 for D_BIT_FLIP); given: their first
//     must be range.lo and their last range.hi, and `buckets`, when not 0, must be their count;
//   - sampled_buckets 0: k for D_BIT_FLIP.
// Without `range` (a stored design), the mechanism and bucket_edges must be given.
// Errors: INVALID_ARGUMENT naming "<field>" (another kind), "<field>.numeric.mechanism",
// "<field>.numeric.epsilon", "<field>.numeric.bucket_edges", "<field>.numeric.buckets",
// "<field>.numeric.sampled_buckets", "<field>.numeric.unit" (over 32 characters) or "range".
absl::StatusOr<NumericDesign> NumericDesignFromProto(const v1::DesignParameters& parameters,
                                                     absl::string_view field,
                                                     const v1::NumericRange* range = nullptr);

// The parameters that name `design` exactly (what is stored): mechanism, epsilon, all k + 1
// bucket_edges, buckets = k, sampled_buckets = d (0 for ONE_BIT_MEAN), unit.
v1::DesignParameters NumericParameters(const NumericDesign& design, absl::string_view unit);

// Writes the wire design: parameters (NumericParameters), version, a and b of the channel
// (ONE_BIT_MEAN: e^eps/(e^eps+1) and 1/(e^eps+1), the bit at the range's ends; D_BIT_FLIP: a
// bucket's a/(a+1) and 1/(a+1)), epsilon = the mechanism's local epsilon (numeric_mechanism.h
// Epsilon: the design's, or half of it for d = 1), categories = hash_buckets = 0.
void NumericDesignToProto(const NumericDesign& design, uint32_t version, absl::string_view unit,
                          v1::Design* out);

// Rebuilds a design received from a server and checks its a and b against its parameters.
// Errors: those of NumericDesignFromProto (field "design.parameters"), and INVALID_ARGUMENT
// naming "design" for a mismatch.
absl::StatusOr<NumericDesign> NumericDesignFromWire(const v1::Design& wire);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_NUMERIC_CONVERT_H_
