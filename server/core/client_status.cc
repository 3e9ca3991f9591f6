#include "server/core/client_status.h"

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

}  // namespace deniable::server
