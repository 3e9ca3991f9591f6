#include "server/service/grpc_status.h"

#include <spdlog/spdlog.h>

#include <string>

#include "server/storage/storage_error.h"

namespace deniable::server {

absl::Status ForClient(const absl::Status& status) {
  if (!IsStorageFailure(status)) return status;
  absl::Status client = ClientVisibleStatus(status);
  spdlog::error("event=storage_failure code={} client_code={} detail=\"{}\"",
                absl::StatusCodeToString(status.code()), absl::StatusCodeToString(client.code()),
                std::string(status.message()));
  return client;
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  const absl::Status client = ForClient(status);
  return grpc::Status(static_cast<grpc::StatusCode>(client.code()), std::string(client.message()));
}

}  // namespace deniable::server
