#include "server/storage/group_commit_storage.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace deniable::server {

struct GroupCommitStorage::Writer {
  absl::Span<const ReportRow> rows;
  AppendCallback callback;  // empty for a blocking caller
  absl::StatusOr<AppendResult> result = absl::InternalError("not committed");
  bool done = false;
};

GroupCommitStorage::GroupCommitStorage(std::unique_ptr<Storage> target, GroupCommitOptions options)
    : target_(std::move(target)), options_(options) {
  for (int i = 0; i < std::max(1, options_.committers); ++i) {
    committers_.emplace_back([this] { CommitLoop(); });
  }
}

GroupCommitStorage::~GroupCommitStorage() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : committers_) t.join();
}

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
  return static_cast<int>(queue_.size()) + committing_calls_;
}

bool GroupCommitStorage::Stopping() const {
  absl::MutexLock lock(&mu_);
  return stopping_;
}

void GroupCommitStorage::Enqueue(Writer* w) {
  const int64_t size = static_cast<int64_t>(w->rows.size());
  auto has_room = [this, size]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return queued_rows_ == 0 || queued_rows_ + size <= options_.max_queued_rows;
  };
  mu_.Await(absl::Condition(&has_room));
  queue_.push_back(w);
  queued_rows_ += size;
}

absl::StatusOr<AppendResult> GroupCommitStorage::AppendReports(absl::Span<const ReportRow> rows) {
  Writer self{rows, nullptr};
  absl::MutexLock lock(&mu_);
  Enqueue(&self);
  mu_.Await(absl::Condition(&self.done));
  return std::move(self.result);
}

void GroupCommitStorage::AppendReportsAsync(absl::Span<const ReportRow> rows, AppendCallback done) {
  auto* w = new Writer{rows, std::move(done)};
  absl::MutexLock lock(&mu_);
  Enqueue(w);
}

void GroupCommitStorage::CommitLoop() {
  auto has_work = [this]()
                      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty() || stopping_; };
  std::vector<Writer*> group, async;
  while (true) {
    mu_.Lock();
    mu_.Await(absl::Condition(&has_work));
    if (queue_.empty()) {  // stopping, and everything queued has been taken
      mu_.Unlock();
      return;
    }
    group.clear();
    int64_t group_rows = 0;
    while (!queue_.empty()) {
      const int64_t n = static_cast<int64_t>(queue_.front()->rows.size());
      if (!group.empty() && group_rows + n > options_.max_group_rows) break;
      group.push_back(queue_.front());
      queue_.pop_front();
      group_rows += n;
    }
    committing_calls_ += static_cast<int>(group.size());
    mu_.Unlock();
    CommitGroup(group);
    mu_.Lock();
    committing_calls_ -= static_cast<int>(group.size());
    queued_rows_ -= group_rows;
    async.clear();
    for (Writer* w : group) {
      if (w->callback) {
        async.push_back(w);
      } else {
        w->done = true;  // the blocked caller owns `w` again and may return at once
      }
    }
    mu_.Unlock();
    for (Writer* w : async) {
      std::move(w->callback)(std::move(w->result));
      delete w;
    }
  }
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
