#include "server/core/report_stream.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

absl::Status ReportStream::Add(const v1::SubmitReportsRequest& message) {
  absl::StatusOr<ValidatedBatch> batch = ingestor_->Validate(message, origin_);
  if (!batch.ok()) {
    return absl::Status(batch.status().code(),
                        absl::StrCat("message ", messages_, ": ", batch.status().message()));
  }
  // Counted as judged (every one, listed or not), so the stream keeps no per-rejection state
  // beyond the listed ones.
  ingestor_->RecordRejected(batch->rejections, batch->rejected_metrics);
  for (v1::ReportRejection& r : batch->rejections) {
    if (static_cast<int64_t>(rejections_.size()) >= max_listed_rejections_) {
      ++rejections_omitted_;
      continue;
    }
    r.set_index(static_cast<uint32_t>(reports_ + r.index()));
    r.set_reason(absl::StrCat("message ", messages_, ": ", r.reason()));
    rejections_.push_back(std::move(r));
  }
  for (auto& named : batch->metric_names) {
    if (std::find(metric_names_.begin(), metric_names_.end(), named) == metric_names_.end()) {
      metric_names_.push_back(std::move(named));
    }
  }
  reports_ += message.reports_size();
  ++messages_;
  for (std::string& name : batch->stale_metrics) {
    if (std::find(stale_metrics_.begin(), stale_metrics_.end(), name) == stale_metrics_.end()) {
      stale_metrics_.push_back(std::move(name));
    }
  }
  for (int index : batch->row_indices) {
    pending_origin_.push_back({messages_ - 1, reports_ - message.reports_size() + index, index});
  }
  if (pending_.empty()) {
    pending_ = std::move(batch->rows);
  } else {
    pending_.insert(pending_.end(), std::make_move_iterator(batch->rows.begin()),
                    std::make_move_iterator(batch->rows.end()));
  }
  return absl::OkStatus();
}

void ReportStream::Flush(FlushCallback done) {
  if (pending_.empty()) {
    std::move(done)(absl::OkStatus());
    return;
  }
  ingestor_->storage()->AppendReportsAsync(
      pending_, [this, done = std::move(done)](absl::StatusOr<AppendResult> result) mutable {
        if (!result.ok()) {
          std::move(done)(result.status());
          return;
        }
        accepted_ += result->accepted;
        duplicates_ += result->duplicates;
        ingestor_->RecordStored(*result, metric_names_, origin_);
        RejectDeleted(*result);
        pending_.clear();
        pending_origin_.clear();
        std::move(done)(absl::OkStatus());
      });
}

void ReportStream::RejectDeleted(const AppendResult& stored) {
  if (stored.missing_metrics.empty()) return;
  std::vector<v1::ReportRejection> deleted;
  for (size_t j = 0; j < pending_.size() && j < pending_origin_.size(); ++j) {
    const int64_t id = pending_[j].metric_id;
    if (!stored.IsMissing(id)) continue;
    std::string name;
    for (const auto& [named_id, named] : metric_names_) {
      if (named_id == id) name = named;
    }
    const Origin& origin = pending_origin_[j];
    v1::ReportRejection r = DeletedMetricRejection(origin.index_in_message, name);
    r.set_index(static_cast<uint32_t>(origin.stream_index));
    r.set_reason(absl::StrCat("message ", origin.message, ": ", r.reason()));
    deleted.push_back(std::move(r));
  }
  ingestor_->RecordRejected(deleted, std::vector<std::string>(deleted.size()));
  ingestor_->ForgetDeleted(stored, metric_names_);
  for (v1::ReportRejection& r : deleted) {
    if (static_cast<int64_t>(rejections_.size()) >= max_listed_rejections_) {
      ++rejections_omitted_;
      continue;
    }
    rejections_.push_back(std::move(r));
  }
  std::stable_sort(rejections_.begin(), rejections_.end(),
                   [](const v1::ReportRejection& x, const v1::ReportRejection& y) {
                     return x.index() < y.index();
                   });
}

absl::StatusOr<v1::SubmitReportsResponse> ReportStream::Totals() {
  if (messages_ == 0) return absl::InvalidArgumentError("stream: no messages");
  v1::SubmitReportsResponse response;
  response.set_accepted(static_cast<uint32_t>(accepted_));
  response.set_duplicates(static_cast<uint32_t>(duplicates_));
  for (std::string& name : stale_metrics_) response.add_stale_metrics(std::move(name));
  for (v1::ReportRejection& r : rejections_) *response.add_rejections() = std::move(r);
  response.set_rejections_omitted(static_cast<uint32_t>(rejections_omitted_));
  return response;
}

}  // namespace deniable::server
