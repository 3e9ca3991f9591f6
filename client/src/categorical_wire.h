// The SDK's conversions between categorical designs and reports and their wire form (private to
// the SDK; report_service.proto and design.proto define the format).
#ifndef DENIABLE_CLIENT_SRC_CATEGORICAL_WIRE_H_
#define DENIABLE_CLIENT_SRC_CATEGORICAL_WIRE_H_

#include "absl/status/statusor.h"
#include "deniable/common/categorical.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable::client {

// The design a collector sent for a metric with `k` categories: parameters.categorical with a
// named mechanism, and the channel (a, b) = (p*, q*) and Design.categories it states must agree
// with the design the SDK computes (within 1e-9), so that the device never randomizes with a
// design it cannot verify. Errors: INVALID_ARGUMENT naming "design.parameters.categorical",
// "design.categories" or "design" (the channel), or the categorical design's own error.
absl::StatusOr<CategoricalDesign> CategoricalDesignFromWire(const v1::Design& wire, int k);

// The wire form of a report drawn with `design`: only the fields of its mechanism are set; OUE
// bits packed LSB-first into ceil(k / 8) bytes (report_service.proto, CategoricalReport).
// REQUIRES: ValidateCategoricalReport(design, report) is OK.
v1::CategoricalReport CategoricalReportToWire(const CategoricalDesign& design,
                                              const CategoricalReport& report);

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_SRC_CATEGORICAL_WIRE_H_
