// The one place where an absl::Status becomes a grpc::Status on the server.
#ifndef DENIABLE_SERVER_SERVICE_GRPC_STATUS_H_
#define DENIABLE_SERVER_SERVICE_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace deniable::server {

// Same code (the numeric values of absl::StatusCode and grpc::StatusCode agree), same message.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_GRPC_STATUS_H_
