// Conversions between the wire IntervalMethod and common's IntervalMethod.
#ifndef DENIABLE_SERVER_CORE_INTERVAL_METHOD_PROTO_H_
#define DENIABLE_SERVER_CORE_INTERVAL_METHOD_PROTO_H_

#include "absl/status/statusor.h"
#include "deniable/common/interval.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::server {

// UNSPECIFIED means Wilson. Errors: INVALID_ARGUMENT "method: unknown interval method N".
absl::StatusOr<IntervalMethod> MethodFromProto(v1::IntervalMethod method);
v1::IntervalMethod MethodToProto(IntervalMethod method);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_INTERVAL_METHOD_PROTO_H_
