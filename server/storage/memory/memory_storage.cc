#include "server/storage/memory/memory_storage.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::StatusOr<StoredMetric> MemoryStorage::CreateMetric(StoredMetric metric) {
  absl::MutexLock lock(&mu_);
  if (metrics_.contains(metric.name)) {
    return absl::AlreadyExistsError(absl::StrCat("metric \"", metric.name, "\" already exists"));
  }
  metric.id = next_id_++;
  metrics_[metric.name] = metric;
  return metric;
}

absl::StatusOr<StoredMetric> MemoryStorage::AddDesignVersion(absl::string_view name,
                                                             StoredDesign design) {
  absl::MutexLock lock(&mu_);
  auto it = metrics_.find(std::string(name));
  if (it == metrics_.end()) {
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  const uint32_t next = it->second.designs.back().version + 1;
  if (design.version != next) {
    return absl::FailedPreconditionError(
        absl::StrCat("metric \"", name, "\": next version is ", next, ", not ", design.version));
  }
  it->second.designs.push_back(std::move(design));
  return it->second;
}

absl::StatusOr<StoredMetric> MemoryStorage::GetMetric(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = metrics_.find(std::string(name));
  if (it == metrics_.end()) {
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  return it->second;
}

absl::Status MemoryStorage::DeleteMetric(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = metrics_.find(std::string(name));
  if (it == metrics_.end()) {
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  const int64_t id = it->second.id;
  metrics_.erase(it);
  std::erase_if(reports_, [id](const ReportKey& k) { return std::get<0>(k) == id; });
  std::erase_if(counts_, [id](const auto& entry) { return std::get<0>(entry.first) == id; });
  label_values_.erase(id);
  return absl::OkStatus();
}

absl::StatusOr<StoredMetric> MemoryStorage::SetRetention(absl::string_view name, uint32_t days,
                                                         int policy) {
  DENIABLE_RETURN_IF_ERROR(CheckRetention(days, policy));
  absl::MutexLock lock(&mu_);
  auto it = metrics_.find(std::string(name));
  if (it == metrics_.end()) {
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  it->second.retention_days = days;
  it->second.retention_policy = policy;
  return it->second;
}

absl::StatusOr<RetentionResult> MemoryStorage::ApplyRetention(const RetentionOptions& options) {
  absl::MutexLock lock(&mu_);
  RetentionResult result;
  for (const auto& [name, metric] : metrics_) {
    const int64_t cutoff = RetentionCutoff(metric, options);
    if (metric.retention_days == 0) continue;
    const int64_t id = metric.id;
    const auto expired = [id, cutoff](int64_t m, int64_t t) { return m == id && t < cutoff; };
    const size_t dropped = std::erase_if(
        reports_, [&](const ReportKey& k) { return expired(std::get<0>(k), std::get<1>(k)); });
    result.Count(metric, static_cast<int64_t>(dropped));
    if (metric.retention_policy != kRetentionDropCounts) continue;
    result.count_rows_dropped += static_cast<int64_t>(std::erase_if(counts_, [&](const auto& e) {
      return expired(std::get<0>(e.first), std::get<1>(e.first));
    }));
  }
  return result;
}

absl::StatusOr<std::vector<StoredMetric>> MemoryStorage::ListMetrics() {
  absl::MutexLock lock(&mu_);
  std::vector<StoredMetric> out;
  for (const auto& [name, metric] : metrics_) out.push_back(metric);
  return out;
}

absl::StatusOr<AppendResult> MemoryStorage::AppendReports(absl::Span<const ReportRow> rows) {
  absl::MutexLock lock(&mu_);
  return AppendLocked(rows);
}

absl::StatusOr<std::vector<AppendResult>> MemoryStorage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  absl::MutexLock lock(&mu_);
  std::vector<AppendResult> results;
  results.reserve(batches.size());
  for (absl::Span<const ReportRow> rows : batches) results.push_back(AppendLocked(rows));
  return results;
}

AppendResult MemoryStorage::AppendLocked(absl::Span<const ReportRow> rows) {
  AppendResult result;
  std::set<int64_t> existing;
  for (const auto& [name, metric] : metrics_) existing.insert(metric.id);
  // The admission remembers what it admitted; its values are stored after the loop.
  LabelValueAdmission labels(
      max_label_values_, max_label_keys_,
      {.known = [this](int64_t metric, absl::string_view key, absl::string_view value)
                    ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::StatusOr<bool> {
         auto m = label_values_.find(metric);
         if (m == label_values_.end()) return false;
         auto k = m->second.find(key);
         return k != m->second.end() && k->second.contains(std::string(value));
       },
       .count = [this](int64_t metric, absl::string_view key)
                    ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::StatusOr<int64_t> {
         auto m = label_values_.find(metric);
         if (m == label_values_.end()) return 0;
         auto k = m->second.find(key);
         return k == m->second.end() ? 0 : static_cast<int64_t>(k->second.size());
       },
       .keys = [this](int64_t metric) ABSL_NO_THREAD_SAFETY_ANALYSIS -> absl::StatusOr<int64_t> {
         auto m = label_values_.find(metric);
         return m == label_values_.end() ? 0 : static_cast<int64_t>(m->second.size());
       }});
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& row = rows[i];
    if (!existing.contains(row.metric_id)) {  // deleted after validation
      if (!result.IsMissing(row.metric_id)) result.missing_metrics.push_back(row.metric_id);
      continue;
    }
    // Admit never fails here: the lookups above always answer.
    const std::optional<LabelCapRefusal> refused = labels.Admit(row.metric_id, row.labels).value();
    if (refused.has_value()) {
      result.label_refusals.push_back(
          {i, row.metric_id, refused->key, max_label_values_, max_label_keys_, refused->new_key});
      continue;
    }
    if (!reports_.insert({row.metric_id, row.event_time_seconds, row.report_id}).second) {
      result.Count(row.metric_id, /*duplicate=*/true);
      continue;
    }
    const CountKey key{row.metric_id, row.event_time_seconds, row.design_version, row.labels};
    CountRow& counts = counts_[key];
    ++counts.n;
    for (uint32_t j : row.counters) counts.counters.Add(j, 1);
    AddWindowFirsts(&counts, row.window_firsts, row.counters);
    result.Count(row.metric_id, /*duplicate=*/false);
  }
  for (const auto& [metric, key, value] : labels.added()) label_values_[metric][key].insert(value);
  return result;
}

absl::StatusOr<std::vector<CountRow>> MemoryStorage::ReadCounts(int64_t metric_id,
                                                                int64_t start_seconds,
                                                                int64_t end_seconds) {
  absl::MutexLock lock(&mu_);
  std::vector<CountRow> out;
  for (auto it = counts_.lower_bound({metric_id, start_seconds, 0, ""});
       it != counts_.end() && std::get<0>(it->first) == metric_id &&
       std::get<1>(it->first) < end_seconds;
       ++it) {
    const auto& [m, time, version, labels] = it->first;
    out.push_back(it->second);
    out.back().design_version = version;
    out.back().event_time_seconds = time;
    out.back().labels = labels;
  }
  return out;
}

int64_t MemoryStorage::ReportCount() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(reports_.size());
}

}  // namespace deniable::server
