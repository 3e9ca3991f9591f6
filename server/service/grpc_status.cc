#include "server/service/grpc_status.h"

#include <string>

namespace deniable::server {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const absl::Status client = ForClient(status);
  return grpc::Status(static_cast<grpc::StatusCode>(client.code()), std::string(client.message()));
}

}  // namespace deniable::server
