#include "server/core/report_stream.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::Status ReportStream::Add(const v1::SubmitReportsRequest& message) {
  absl::StatusOr<ValidatedBatch> batch = ingestor_->Validate(message);
  if (!batch.ok()) {
    return absl::Status(batch.status().code(),
                        absl::StrCat("message ", messages_, ": ", batch.status().message()));
  }
  for (v1::ReportRejection& r : batch->rejections) {
    r.set_index(static_cast<uint32_t>(reports_ + r.index()));
    r.set_reason(absl::StrCat("message ", messages_, ": ", r.reason()));
    rejections_.push_back(std::move(r));
  }
  reports_ += message.reports_size();
  ++messages_;
  for (std::string& name : batch->stale_metrics) {
    if (std::find(stale_metrics_.begin(), stale_metrics_.end(), name) == stale_metrics_.end()) {
      stale_metrics_.push_back(std::move(name));
    }
  }
  if (pending_.empty()) {
    pending_ = std::move(batch->rows);
  } else {
    pending_.insert(pending_.end(), std::make_move_iterator(batch->rows.begin()),
                    std::make_move_iterator(batch->rows.end()));
  }
  if (static_cast<int64_t>(pending_.size()) >= ingestor_->options().stream_flush_reports) {
    return Flush();
  }
  return absl::OkStatus();
}

absl::Status ReportStream::Flush() {
  if (pending_.empty()) return absl::OkStatus();
  DENIABLE_ASSIGN_OR_RETURN(AppendResult result, ingestor_->storage()->AppendReports(pending_));
  accepted_ += result.accepted;
  duplicates_ += result.duplicates;
  pending_.clear();
  return absl::OkStatus();
}

absl::StatusOr<v1::SubmitReportsResponse> ReportStream::Finish() {
  if (messages_ == 0) return absl::InvalidArgumentError("stream: no messages");
  DENIABLE_RETURN_IF_ERROR(Flush());
  v1::SubmitReportsResponse response;
  response.set_accepted(static_cast<uint32_t>(accepted_));
  response.set_duplicates(static_cast<uint32_t>(duplicates_));
  for (std::string& name : stale_metrics_) response.add_stale_metrics(std::move(name));
  for (v1::ReportRejection& r : rejections_) *response.add_rejections() = std::move(r);
  return response;
}

}  // namespace deniable::server
