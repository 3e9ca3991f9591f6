// Conversions between the wire designs (deniable/v1/design.proto) and deniable::Design.
//
// Example:
//   absl::StatusOr<deniable::Design> d = deniable::DesignFromProto(request.design(), "design");
//   deniable::v1::Design wire;
//   deniable::DesignToProto(*d, /*version=*/1, &wire);
//
// Pure functions; thread-safe.
#ifndef DENIABLE_CONVERT_DESIGN_CONVERT_H_
#define DENIABLE_CONVERT_DESIGN_CONVERT_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/design.h"
#include "deniable/v1/design.pb.h"

namespace deniable {

// Builds a Design from its native parameters. `field` is the path of `parameters` in the request,
// used in error messages ("design.forced_response: p must be a probability in [0, 1], but is 2").
// Errors: INVALID_ARGUMENT when no kind is set or a parameter is invalid.
absl::StatusOr<Design> DesignFromProto(const v1::DesignParameters& parameters,
                                       absl::string_view field);

// Writes the native parameters, version, channel (a, b), epsilon (nats; +Infinity with
// epsilon_infinite when unbounded) and any warning.
void DesignToProto(const Design& design, uint32_t version, v1::Design* out);

// Rebuilds a Design received from a server and checks that its (a, b) match its parameters,
// so that a device never randomizes with a channel it cannot explain.
// Errors: INVALID_ARGUMENT for invalid parameters or a mismatched channel.
absl::StatusOr<Design> DesignFromWire(const v1::Design& wire);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_DESIGN_CONVERT_H_
