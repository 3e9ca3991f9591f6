#include "server/storage/storage.h"

#include <utility>

#include "absl/status/status.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::StatusOr<std::vector<AppendResult>> Storage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  if (batches.empty()) return std::vector<AppendResult>();
  if (batches.size() > 1) {
    return absl::UnimplementedError("this storage commits one batch per transaction");
  }
  DENIABLE_ASSIGN_OR_RETURN(AppendResult result, AppendReports(batches.front()));
  return std::vector<AppendResult>{result};
}

void Storage::AppendReportsAsync(absl::Span<const ReportRow> rows, AppendCallback done) {
  std::move(done)(AppendReports(rows));
}

}  // namespace deniable::server
