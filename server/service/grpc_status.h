// An absl::Status as the grpc::Status a gRPC client gets (ForClient, server/core/client_status.h).
#ifndef DENIABLE_SERVER_SERVICE_GRPC_STATUS_H_
#define DENIABLE_SERVER_SERVICE_GRPC_STATUS_H_

#include <grpcpp/support/status.h>

#include "absl/status/status.h"
#include "server/core/client_status.h"

namespace deniable::server {

// ForClient(status) as a grpc::Status: same code (the numeric values of absl::StatusCode and
// grpc::StatusCode agree), same message. Thread-safe.
grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_GRPC_STATUS_H_
