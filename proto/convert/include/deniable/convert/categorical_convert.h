// Conversions between the wire's categorical designs (deniable/v1/design.proto: Categorical,
// CategoricalMechanism, Design.categories / hash_buckets; report_service.proto: CategoricalReport)
// and common's CategoricalDesign / CategoricalReport (categorical.h).
//
// Example:
//   absl::StatusOr<deniable::CategoricalDesign> d = deniable::CategoricalDesignFromProto(
//       request.design(), /*k=*/4, "design");
//   deniable::v1::Design wire;
//   deniable::CategoricalDesignToProto(*d, /*version=*/1, &wire);
//
// Pure functions; thread-safe.
#ifndef DENIABLE_CONVERT_CATEGORICAL_CONVERT_H_
#define DENIABLE_CONVERT_CATEGORICAL_CONVERT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/categorical.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable {

// The wire mechanism of a concrete mechanism, and back. MechanismFromProto errors:
// INVALID_ARGUMENT naming `field` for UNSPECIFIED or an unknown value.
v1::CategoricalMechanism MechanismToProto(CategoricalMechanism mechanism);
absl::StatusOr<CategoricalMechanism> MechanismFromProto(v1::CategoricalMechanism mechanism,
                                                        absl::string_view field);

// Builds the design of a metric with `k` categories from `parameters`, which must hold a
// `categorical` kind. Mechanism UNSPECIFIED picks CategoricalDesign::LeastVariance(k, epsilon).
// `field` is the path of `parameters` in the request ("design").
// Errors: INVALID_ARGUMENT naming "<field>.categorical" (not a categorical kind: "<field>: ...",
// unknown mechanism: "<field>.categorical.mechanism", bad epsilon: "<field>.categorical.epsilon",
// k out of range: "categories").
absl::StatusOr<CategoricalDesign> CategoricalDesignFromProto(const v1::DesignParameters& parameters,
                                                             int k, absl::string_view field);

// The parameters that name `design` exactly (its concrete mechanism and epsilon): what is stored,
// so that a stored design never depends on LeastVariance's choice at read time.
v1::DesignParameters CategoricalParameters(const CategoricalDesign& design);

// Writes the wire design: parameters (CategoricalParameters), version, categories = k,
// hash_buckets = g (OLH; 0 otherwise), a = p*, b = q*, epsilon (nats; never infinite).
void CategoricalDesignToProto(const CategoricalDesign& design, uint32_t version, v1::Design* out);

// Rebuilds a design received from a server (GetDesignResponse.design) and checks that its
// categories, hash_buckets, a and b match its parameters, so that a device never randomizes with
// a design it cannot explain. Errors: INVALID_ARGUMENT naming the mismatched field.
absl::StatusOr<CategoricalDesign> CategoricalDesignFromWire(const v1::Design& wire);

// The wire form of a report: k-RR's category, OUE's bits packed (bit v in byte v / 8 under mask
// 1 << (v % 8)), OLH's hash and bucket (common's CategoricalReportFromWire reads it back).
// REQUIRES: the report is of `design`.
v1::CategoricalReport CategoricalReportToProto(const CategoricalDesign& design,
                                               const CategoricalReport& report);

// Checks a metric's category names: kMinCategories (2) to kMaxCategories (256) of them, each
// matching [A-Za-z0-9_.:-]{1,32}, all distinct. Errors: INVALID_ARGUMENT naming "categories"
// (count) or "categories[i]" (name, duplicate).
absl::Status ValidateCategories(const google::protobuf::RepeatedPtrField<std::string>& categories);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_CATEGORICAL_CONVERT_H_
