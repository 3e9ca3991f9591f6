// An in-memory Storage for tests: the same semantics as SqliteStorage, nothing durable.
// Thread-safe (one mutex).
#ifndef DENIABLE_SERVER_STORAGE_MEMORY_MEMORY_STORAGE_H_
#define DENIABLE_SERVER_STORAGE_MEMORY_MEMORY_STORAGE_H_

#include <array>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/storage/label_values.h"
#include "server/storage/storage.h"

namespace deniable::server {

class MemoryStorage : public Storage {
 public:
  // `max_label_values`, `max_label_keys`: the caps on distinct values of each label key and on
  // distinct label keys, per metric (label_values.h; 0: none).
  explicit MemoryStorage(int64_t max_label_values = kDefaultMaxLabelValues,
                         int64_t max_label_keys = kDefaultMaxLabelKeys)
      : max_label_values_(max_label_values), max_label_keys_(max_label_keys) {}

  absl::StatusOr<StoredMetric> CreateMetric(StoredMetric metric) override;
  absl::StatusOr<StoredMetric> AddDesignVersion(absl::string_view name,
                                                StoredDesign design) override;
  absl::StatusOr<StoredMetric> GetMetric(absl::string_view name) override;
  absl::StatusOr<std::vector<StoredMetric>> ListMetrics() override;
  absl::StatusOr<AppendResult> AppendReports(absl::Span<const ReportRow> rows) override;
  absl::StatusOr<std::vector<AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const ReportRow>> batches) override;
  absl::StatusOr<std::vector<CountRow>> ReadCounts(int64_t metric_id, int64_t start_seconds,
                                                   int64_t end_seconds) override;

  absl::Status DeleteMetric(absl::string_view name) override;
  absl::StatusOr<StoredMetric> SetRetention(absl::string_view name, uint32_t days,
                                            int policy) override;
  absl::StatusOr<RetentionResult> ApplyRetention(const RetentionOptions& options) override;

  // Number of stored reports (for tests).
  int64_t ReportCount() const;

 private:
  using ReportKey = std::tuple<int64_t, int64_t, ReportId>;  // metric, event time, id
  using CountKey =
      std::tuple<int64_t, int64_t, uint32_t, std::string>;  // metric, time, version, labels

  mutable absl::Mutex mu_;
  std::map<std::string, StoredMetric> metrics_ ABSL_GUARDED_BY(mu_);
  std::set<ReportKey> reports_ ABSL_GUARDED_BY(mu_);
  // n, the counters and the window firsts; the key fields of the rows are set when read.
  std::map<CountKey, CountRow> counts_ ABSL_GUARDED_BY(mu_);
  AppendResult AppendLocked(absl::Span<const ReportRow> rows) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  const int64_t max_label_values_;
  const int64_t max_label_keys_;
  // metric -> key -> its stored values.
  std::map<int64_t, std::map<std::string, std::set<std::string>, std::less<>>> label_values_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_MEMORY_MEMORY_STORAGE_H_
