#include "server/storage/storage_error.h"

#include <optional>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

absl::Status StorageFailure(absl::StatusCode code, absl::string_view summary,
                            absl::string_view detail) {
  absl::Status status(code, absl::StrCat(summary, " (", detail, ")"));
  status.SetPayload(kStorageFailureUrl, absl::Cord(summary));
  return status;
}

bool IsStorageFailure(const absl::Status& status) {
  return status.GetPayload(kStorageFailureUrl).has_value();
}

bool IsDiskFull(const absl::Status& status) {
  const auto summary = status.GetPayload(kStorageFailureUrl);
  return summary.has_value() && *summary == kDiskFullSummary;
}

absl::Status ClientVisibleStatus(const absl::Status& status) {
  const auto summary = status.GetPayload(kStorageFailureUrl);
  if (!summary.has_value()) return status;
  if (status.code() == absl::StatusCode::kAlreadyExists) {
    return absl::InternalError(
        "storage: a server fault stopped the write (a database constraint failed); nothing of it "
        "was stored; the server log has the detail");
  }
  return absl::Status(status.code(), std::string(*summary));
}

}  // namespace deniable::server
