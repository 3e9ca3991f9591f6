// The mechanism registry on the wire: a design message's `oneof` to its mechanism (mechanism.h),
// and a v1::Report's answer fields to and from common's WireAnswer. The one place that maps the
// oneof case of DesignParameters to a kind of report.
//
// Pure functions, thread-safe.
#ifndef DENIABLE_CONVERT_MECHANISM_CONVERT_H_
#define DENIABLE_CONVERT_MECHANISM_CONVERT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/wire_report.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable {

// The mechanism of native parameters. `k` is the number of categories (used by categorical
// designs only). Numeric parameters must be resolved (mechanism and bucket_edges given: resolve a
// request with NumericDesignFromProto and the metric's range first).
// Errors: those of DesignFromProto / CategoricalDesignFromProto / NumericDesignFromProto, naming
// `field`.
absl::StatusOr<std::shared_ptr<const Mechanism>> MechanismForParameters(
    const v1::DesignParameters& parameters, int k, absl::string_view field);

// The mechanism of a stored design (parameters plus the derived channel, checked against each
// other). Errors: those of DesignFromWire / CategoricalDesignFromWire / NumericDesignFromWire.
absl::StatusOr<std::shared_ptr<const Mechanism>> MechanismForWire(const v1::Design& wire);

// The report's answer fields (`bit`, and `categorical` or `numeric` when present).
WireAnswer WireAnswerFromProto(const v1::Report& report);

// Sets `out`'s answer fields from `answer` (`categorical` only when answer.has_categorical,
// `numeric` only when answer.has_numeric).
void WireAnswerToProto(const WireAnswer& answer, v1::Report* out);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_MECHANISM_CONVERT_H_
