// Group commit: concurrent AppendReports calls share transactions.
//
// A Storage decorator with committer threads (one by default). Each AppendReports /
// AppendReportsAsync call joins a queue; a free committer takes every batch waiting (up to
// max_group_rows rows), appends them all in one transaction with the target's AppendBatches, and
// when that transaction has committed hands each caller its own AppendResult (waking a blocked
// caller, or running an async caller's callback). Calls arriving during a commit form the next
// group. With k calls in flight a transaction (and its fsync) serves about k calls. With
// `committers` = n > 1 (for a target whose AppendBatches may run concurrently on separate
// connections, PostgresStorage), up to n groups commit at once: the database works on one while
// the collector sends the next, and the database's unique key, not the order of the groups,
// decides which of two concurrent calls stores a repeated report.
//
// Guarantees, per call:
//   - acknowledged (returns, or its callback runs, with OK) only after the transaction holding its
//     rows has committed;
//   - its AppendResult counts its own rows exactly: accepted + duplicates == rows.size(), a row
//     stored by an earlier call or an earlier batch of the same group is a duplicate;
//   - a failing batch does not fail the others: if the group's transaction fails, the committer
//     appends the group's batches one transaction each, so only the batch that fails on its own
//     gets the error (with nothing of it written).
//
// Memory: at most max_queued_rows rows wait in the queue (the rows stay owned by their callers);
// a caller that would exceed it waits before joining (backpressure), except that a caller always
// joins an empty queue so a batch larger than the bound still proceeds.
//
// Example:
//   auto sqlite = SqliteStorage::Open({.path = "deniable.db"});
//   auto storage = std::make_unique<GroupCommitStorage>(*std::move(sqlite));
//
// Thread-safe. Owns the target storage. Other methods are forwarded to the target unchanged.
// The destructor commits what is queued, then stops the committer thread.
#ifndef DENIABLE_SERVER_STORAGE_GROUP_COMMIT_STORAGE_H_
#define DENIABLE_SERVER_STORAGE_GROUP_COMMIT_STORAGE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/storage/storage.h"

namespace deniable::server {

struct GroupCommitOptions {
  // Most rows in one group transaction (a single larger batch is still committed whole).
  int64_t max_group_rows = 64 * 1024;
  // Most rows waiting in the queue or committing before new callers wait to join
  // (backpressure).
  int64_t max_queued_rows = 256 * 1024;
  // Groups committing at once (committer threads). More than 1 only for a target whose
  // AppendBatches is safe to run concurrently (PostgresStorage::kWriteConnections).
  int committers = 1;
};

// Counters since construction, for tests and benchmarks.
struct GroupCommitStats {
  int64_t groups = 0;     // group transactions attempted (AppendBatches calls on the target)
  int64_t batches = 0;    // AppendReports calls served
  int64_t fallbacks = 0;  // groups whose transaction failed and were retried batch by batch
};

class GroupCommitStorage : public Storage {
 public:
  // REQUIRES: target != nullptr, options' limits > 0, options.committers >= 1.
  explicit GroupCommitStorage(std::unique_ptr<Storage> target, GroupCommitOptions options = {});

  absl::StatusOr<StoredMetric> CreateMetric(StoredMetric metric) override;
  absl::StatusOr<StoredMetric> AddDesignVersion(absl::string_view name,
                                                StoredDesign design) override;
  absl::StatusOr<StoredMetric> GetMetric(absl::string_view name) override;
  absl::StatusOr<std::vector<StoredMetric>> ListMetrics() override;
  ~GroupCommitStorage() override;

  // Queues the batch and returns once the transaction holding it has committed (see above).
  // Errors: the target's, for this batch only.
  absl::StatusOr<AppendResult> AppendReports(absl::Span<const ReportRow> rows) override;
  // Queues the batch; `done` runs on the committer thread after the commit. Blocks only for
  // backpressure. `done` must not block.
  void AppendReportsAsync(absl::Span<const ReportRow> rows, AppendCallback done) override;
  // Forwarded to the target (already one transaction).
  absl::StatusOr<std::vector<AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const ReportRow>> batches) override;
  absl::StatusOr<std::vector<CountRow>> ReadCounts(int64_t metric_id, int64_t start_seconds,
                                                   int64_t end_seconds) override;

  absl::Status Health() override { return target_->Health(); }
  // Forwarded to the target. A batch queued before the call may commit after it (with the
  // deleted metric's id); see Storage::DeleteMetric.
  absl::Status DeleteMetric(absl::string_view name) override { return target_->DeleteMetric(name); }
  // Retention runs beside the committer: its transactions are short (RetentionOptions::batch_rows).
  absl::StatusOr<StoredMetric> SetRetention(absl::string_view name, uint32_t days,
                                            int policy) override {
    return target_->SetRetention(name, days, policy);
  }
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionOptions& options) override {
    return target_->ApplyRetention(options);
  }

  Storage* target() { return target_.get(); }
  GroupCommitStats stats() const;
  // Calls queued now, the committing group included (for tests).
  int QueuedCalls() const;
  // True once the destructor has begun (for tests that destroy while calls are queued).
  bool Stopping() const;

 private:
  struct Writer;
  // Waits for room in the queue and appends `w`.
  void Enqueue(Writer* w) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A committer thread's loop.
  void CommitLoop();
  // Appends the group's batches and stores each writer's result. Called without mu_.
  void CommitGroup(absl::Span<Writer* const> group);

  const std::unique_ptr<Storage> target_;
  const GroupCommitOptions options_;
  mutable absl::Mutex mu_;
  std::deque<Writer*> queue_ ABSL_GUARDED_BY(mu_);  // waiting, not yet taken by a committer
  int committing_calls_ ABSL_GUARDED_BY(mu_) = 0;   // in the groups being committed
  int64_t queued_rows_ ABSL_GUARDED_BY(mu_) = 0;    // waiting or committing
  GroupCommitStats stats_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> committers_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_GROUP_COMMIT_STORAGE_H_
