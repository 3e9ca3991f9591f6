// A Storage decorator that times each transaction appending reports and records its size, for
// /metrics. Placed under GroupCommitStorage (GroupCommitStorage(MeteredStorage(SqliteStorage)))
// it sees one AppendBatches call per group transaction, so it measures the group commit:
//
//   deniable_commit_reports       histogram: reports (rows) per committed transaction
//   deniable_commit_batches       histogram: batches (calls) sharing one transaction
//   deniable_commit_seconds       histogram: wall time of the append + commit (fsync included)
//   deniable_commit_failures_total counter: transactions that returned an error
//
// Thread-safe if the target is. Owns the target. Other methods are forwarded unchanged.
#ifndef DENIABLE_SERVER_METRICS_METERED_STORAGE_H_
#define DENIABLE_SERVER_METRICS_METERED_STORAGE_H_

#include <prometheus/counter.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>

#include "server/storage/storage.h"

namespace deniable::server {

class MeteredStorage : public Storage {
 public:
  // REQUIRES: target != nullptr. Registers the metrics above in `registry`.
  MeteredStorage(std::unique_ptr<Storage> target, prometheus::Registry& registry);

  absl::StatusOr<StoredMetric> CreateMetric(StoredMetric metric) override {
    return target_->CreateMetric(std::move(metric));
  }
  absl::StatusOr<StoredMetric> AddDesignVersion(absl::string_view name,
                                                StoredDesign design) override {
    return target_->AddDesignVersion(name, std::move(design));
  }
  absl::StatusOr<StoredMetric> GetMetric(absl::string_view name) override {
    return target_->GetMetric(name);
  }
  absl::StatusOr<std::vector<StoredMetric>> ListMetrics() override {
    return target_->ListMetrics();
  }
  absl::StatusOr<std::vector<CountRow>> ReadCounts(int64_t metric_id, int64_t start_seconds,
                                                   int64_t end_seconds) override {
    return target_->ReadCounts(metric_id, start_seconds, end_seconds);
  }
  absl::Status DeleteMetric(absl::string_view name) override { return target_->DeleteMetric(name); }
  absl::StatusOr<StoredMetric> SetRetention(absl::string_view name, uint32_t days,
                                            int policy) override {
    return target_->SetRetention(name, days, policy);
  }
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionOptions& options) override {
    return target_->ApplyRetention(options);
  }
  absl::StatusOr<AppendResult> AppendReports(absl::Span<const ReportRow> rows) override;
  absl::StatusOr<std::vector<AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const ReportRow>> batches) override;
  // The target's health (a deleted SQLite file, an unreachable PostgreSQL), for the health service.
  absl::Status Health() override { return target_->Health(); }

 private:
  void Observe(int64_t rows, int64_t batches, double seconds, bool ok);

  std::unique_ptr<Storage> target_;
  prometheus::Histogram& rows_;
  prometheus::Histogram& batches_;
  prometheus::Histogram& seconds_;
  prometheus::Counter& failures_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_METRICS_METERED_STORAGE_H_
