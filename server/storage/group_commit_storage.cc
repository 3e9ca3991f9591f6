#include "server/storage/group_commit_storage.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace deniable::server {

struct GroupCommitStorage::Writer {
  explicit Writer(absl::Span<const ReportRow> r) : rows(r) {}
  absl::Span<const ReportRow> rows;
  absl::StatusOr<AppendResult> result;
  bool done = false;
  absl::CondVar cv;
};

GroupCommitStorage::GroupCommitStorage(std::unique_ptr<Storage> target, GroupCommitOptions options)
    : target_(std::move(target)), options_(options) {}

absl::StatusOr<StoredMetric> GroupCommitStorage::CreateMetric(StoredMetric metric) {
  return target_->CreateMetric(std::move(metric));
}

absl::StatusOr<StoredMetric> GroupCommitStorage::AddDesignVersion(absl::string_view name,
                                                                  StoredDesign design) {
  return target_->AddDesignVersion(name, std::move(design));
}

absl::StatusOr<StoredMetric> GroupCommitStorage::GetMetric(absl::string_view name) {
  return target_->GetMetric(name);
}

absl::StatusOr<std::vector<StoredMetric>> GroupCommitStorage::ListMetrics() {
  return target_->ListMetrics();
}

absl::StatusOr<std::vector<AppendResult>> GroupCommitStorage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  return target_->AppendBatches(batches);
}

absl::StatusOr<std::vector<CountRow>> GroupCommitStorage::ReadCounts(int64_t metric_id,
                                                                     int64_t start_seconds,
                                                                     int64_t end_seconds) {
  return target_->ReadCounts(metric_id, start_seconds, end_seconds);
}

GroupCommitStats GroupCommitStorage::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

int GroupCommitStorage::QueuedCalls() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queue_.size());
}

absl::StatusOr<AppendResult> GroupCommitStorage::AppendReports(absl::Span<const ReportRow> rows) {
  Writer self(rows);
  const int64_t size = static_cast<int64_t>(rows.size());
  mu_.Lock();
  auto has_room = [this, size]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return queue_.empty() || queued_rows_ + size <= options_.max_queued_rows;
  };
  mu_.Await(absl::Condition(&has_room));
  queue_.push_back(&self);
  queued_rows_ += size;
  while (!self.done && queue_.front() != &self) self.cv.Wait(&mu_);
  if (self.done) {
    mu_.Unlock();
    return std::move(self.result);
  }
  // This caller is the committer: take the queue's head, up to max_group_rows rows.
  std::vector<Writer*> group;
  int64_t group_rows = 0;
  for (Writer* w : queue_) {
    const int64_t n = static_cast<int64_t>(w->rows.size());
    if (!group.empty() && group_rows + n > options_.max_group_rows) break;
    group.push_back(w);
    group_rows += n;
  }
  mu_.Unlock();
  CommitGroup(group);
  mu_.Lock();
  for (Writer* w : group) {
    queue_.pop_front();
    w->done = true;
    if (w != &self) w->cv.Signal();
  }
  queued_rows_ -= group_rows;
  if (!queue_.empty()) queue_.front()->cv.Signal();  // the next committer
  mu_.Unlock();
  return std::move(self.result);
}

void GroupCommitStorage::CommitGroup(absl::Span<Writer* const> group) {
  std::vector<absl::Span<const ReportRow>> batches;
  batches.reserve(group.size());
  for (const Writer* w : group) batches.push_back(w->rows);
  absl::StatusOr<std::vector<AppendResult>> results = target_->AppendBatches(batches);
  bool fall_back = false;
  if (results.ok() && results->size() == group.size()) {
    for (size_t i = 0; i < group.size(); ++i) group[i]->result = (*results)[i];
  } else if (group.size() == 1) {
    group.front()->result =
        results.ok() ? absl::InternalError("storage returned no result") : results.status();
  } else {
    // One transaction per batch: only a batch that fails on its own gets an error.
    fall_back = true;
    for (Writer* w : group) w->result = target_->AppendReports(w->rows);
  }
  absl::MutexLock lock(&mu_);
  ++stats_.groups;
  stats_.batches += static_cast<int64_t>(group.size());
  if (fall_back) ++stats_.fallbacks;
}

}  // namespace deniable::server
