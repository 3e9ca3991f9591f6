// Conversions between v1::HeavyHitters (design.proto) and HeavyHittersDesign (heavy_hitters.h),
// and of the wire design (v1::Design). Pure functions; thread-safe.
#ifndef DENIABLE_CONVERT_HEAVY_HITTERS_CONVERT_H_
#define DENIABLE_CONVERT_HEAVY_HITTERS_CONVERT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/v1/design.pb.h"

namespace deniable {

// The design of `parameters.heavy_hitters()`, its 0 fields replaced by the defaults
// (design.proto). `field` prefixes the messages ("design").
// Errors: INVALID_ARGUMENT naming "<field>.heavy_hitters" (another kind) or
// "<field>.heavy_hitters.<name>" (ValidateHeavyHittersDesign's fields).
absl::StatusOr<HeavyHittersDesign> HeavyHittersDesignFromProto(
    const v1::DesignParameters& parameters, absl::string_view field);

// The parameters of `design`, every field set.
v1::DesignParameters HeavyHittersParameters(const HeavyHittersDesign& design);

// The wire design: parameters, version, the bit's channel (a, 1 - a) and epsilon.
void HeavyHittersDesignToProto(const HeavyHittersDesign& design, uint32_t version, v1::Design* out);

// Errors: those of HeavyHittersDesignFromProto (field "design.parameters").
absl::StatusOr<HeavyHittersDesign> HeavyHittersDesignFromWire(const v1::Design& wire);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_HEAVY_HITTERS_CONVERT_H_
