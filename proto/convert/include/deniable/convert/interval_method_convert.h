// Conversions between the wire IntervalMethod and common's IntervalMethod (server and CLI).
// Pure functions; thread-safe.
#ifndef DENIABLE_CONVERT_INTERVAL_METHOD_CONVERT_H_
#define DENIABLE_CONVERT_INTERVAL_METHOD_CONVERT_H_

#include "absl/status/statusor.h"
#include "deniable/common/interval.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable {

// UNSPECIFIED means Wilson. Errors: INVALID_ARGUMENT "method: unknown interval method N".
absl::StatusOr<IntervalMethod> MethodFromProto(v1::IntervalMethod method);
v1::IntervalMethod MethodToProto(IntervalMethod method);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_INTERVAL_METHOD_CONVERT_H_
