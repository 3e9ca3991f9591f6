#include "server/core/report_stream.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable::server {

absl::Status ReportStream::Add(const v1::SubmitReportsRequest& message) {
  absl::StatusOr<ValidatedBatch> batch = ingestor_->Validate(message, origin_, token_id_);
  absl::MutexLock lock(&mu_);
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

int64_t ReportStream::pending_rows() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(pending_.size());
}

int64_t ReportStream::held_rows() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(pending_.size()) + flushing_rows_;
}

void ReportStream::Flush(FlushCallback done) {
  auto rows = std::make_unique<std::vector<ReportRow>>();
  std::vector<Origin> origins;
  std::vector<std::pair<int64_t, std::string>> names;
  {
    absl::MutexLock lock(&mu_);
    rows->swap(pending_);
    origins.swap(pending_origin_);
    flushing_rows_ = static_cast<int64_t>(rows->size());
    names = metric_names_;
  }
  if (rows->empty()) {
    std::move(done)(absl::OkStatus());
    return;
  }
  const absl::Span<const ReportRow> span = *rows;
  ingestor_->storage()->AppendReportsAsync(
      span, [this, rows = std::move(rows), origins = std::move(origins), names = std::move(names),
             done = std::move(done)](absl::StatusOr<AppendResult> result) mutable {
        {
          absl::MutexLock lock(&mu_);
          flushing_rows_ = 0;
          if (result.ok()) {
            accepted_ += result->accepted;
            duplicates_ += result->duplicates;
          }
        }
        if (!result.ok()) {
          std::move(done)(result.status());
          return;
        }
        ingestor_->RecordStored(*result, names, origin_);
        RejectDeleted(*result, *rows, origins, names);
        rows.reset();
        std::move(done)(absl::OkStatus());
      });
}

void ReportStream::RejectDeleted(const AppendResult& stored, const std::vector<ReportRow>& rows,
                                 const std::vector<Origin>& origins,
                                 const std::vector<std::pair<int64_t, std::string>>& names) {
  if (stored.missing_metrics.empty() && stored.label_refusals.empty()) return;
  std::vector<v1::ReportRejection> deleted;
  std::vector<std::string> deleted_metrics;  // parallel: "" for a deleted metric
  for (size_t j = 0; j < rows.size() && j < origins.size(); ++j) {
    const int64_t id = rows[j].metric_id;
    if (!stored.IsMissing(id)) continue;
    std::string name;
    for (const auto& [named_id, named] : names) {
      if (named_id == id) name = named;
    }
    const Origin& origin = origins[j];
    v1::ReportRejection r = DeletedMetricRejection(origin.index_in_message, name);
    r.set_index(static_cast<uint32_t>(origin.stream_index));
    r.set_reason(absl::StrCat("message ", origin.message, ": ", r.reason()));
    deleted.push_back(std::move(r));
    deleted_metrics.emplace_back();
  }
  // Reports refused by the cap on label values: rejected like the deleted ones.
  for (const LabelValueRefusal& refusal : stored.label_refusals) {
    if (refusal.row >= origins.size()) continue;
    std::string name;
    for (const auto& [named_id, named] : names) {
      if (named_id == refusal.metric_id) name = named;
    }
    const Origin& origin = origins[refusal.row];
    v1::ReportRejection r = LabelValueRejection(origin.index_in_message, name, refusal);
    r.set_index(static_cast<uint32_t>(origin.stream_index));
    r.set_reason(absl::StrCat("message ", origin.message, ": ", r.reason()));
    deleted.push_back(std::move(r));
    deleted_metrics.push_back(name);
    ingestor_->RecordLabelValueRefused(name);
  }
  ingestor_->RecordRejected(deleted, deleted_metrics);
  ingestor_->ForgetDeleted(stored, names);
  absl::MutexLock lock(&mu_);
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
  absl::MutexLock lock(&mu_);
  if (messages_ == 0) return absl::InvalidArgumentError("stream: no messages");
  if (!pending_.empty() || flushing_rows_ > 0) {
    return absl::FailedPreconditionError(
        "stream: rows are not stored yet; the totals are answered only after every flush");
  }
  v1::SubmitReportsResponse response;
  response.set_accepted(static_cast<uint32_t>(accepted_));
  response.set_duplicates(static_cast<uint32_t>(duplicates_));
  for (std::string& name : stale_metrics_) response.add_stale_metrics(std::move(name));
  for (v1::ReportRejection& r : rejections_) *response.add_rejections() = std::move(r);
  response.set_rejections_omitted(static_cast<uint32_t>(rejections_omitted_));
  return response;
}

}  // namespace deniable::server
