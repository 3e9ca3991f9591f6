#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "client/src/ledger_update.h"
#include "deniable/client/device_store.h"

namespace deniable::client {
namespace {

class MemoryDeviceStore : public DeviceStore {
 public:
  absl::StatusOr<std::optional<bool>> LookupMemo(const std::string& metric, uint32_t design_version,
                                                 bool true_value) override {
    absl::MutexLock lock(&mu_);
    auto it = memo_.find(std::make_tuple(metric, design_version, true_value));
    if (it == memo_.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::optional<v1::CategoricalReport>> LookupCategoryMemo(
      const std::string& metric, uint32_t design_version, int32_t category) override {
    absl::MutexLock lock(&mu_);
    auto it = category_memo_.find(std::make_tuple(metric, design_version, category));
    if (it == category_memo_.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::optional<v1::Report>> LookupNumericMemo(const std::string& metric,
                                                              uint32_t design_version,
                                                              int32_t level) override {
    absl::MutexLock lock(&mu_);
    auto it = numeric_memo_.find(std::make_tuple(metric, design_version, level));
    if (it == numeric_memo_.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::optional<double>> LoadNumericAlpha(const std::string& metric) override {
    absl::MutexLock lock(&mu_);
    auto it = numeric_alpha_.find(metric);
    if (it == numeric_alpha_.end()) return std::nullopt;
    return it->second;
  }

  absl::Status SaveNumericAlpha(const std::string& metric, double alpha) override {
    absl::MutexLock lock(&mu_);
    numeric_alpha_.emplace(metric, alpha);  // an alpha kept already stays
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<v1::Report>> LookupStringMemo(
      const std::string& metric, uint32_t design_version, const std::string& value_key) override {
    absl::MutexLock lock(&mu_);
    auto it = string_memo_.find(std::make_tuple(metric, design_version, value_key));
    if (it == string_memo_.end()) return std::nullopt;
    return it->second;
  }

  absl::StatusOr<std::optional<uint32_t>> LoadHeavyHittersGroup(const std::string& metric,
                                                                uint32_t design_version,
                                                                uint64_t salt) override {
    absl::MutexLock lock(&mu_);
    auto it = groups_.find(std::make_tuple(metric, design_version, salt));
    if (it == groups_.end()) return std::nullopt;
    return it->second;
  }

  absl::Status SaveHeavyHittersGroup(const std::string& metric, uint32_t design_version,
                                     uint64_t salt, uint32_t group) override {
    absl::MutexLock lock(&mu_);
    groups_.emplace(std::make_tuple(metric, design_version, salt), group);  // a kept one stays
    return absl::OkStatus();
  }

  absl::Status CommitReport(const ReportCommit& commit) override {
    absl::MutexLock lock(&mu_);
    const std::string& metric = commit.report.metric();
    if (commit.memo.has_value()) {
      memo_[std::make_tuple(metric, commit.memo->design_version, commit.memo->true_value)] =
          commit.memo->bit;
    }
    if (commit.category_memo.has_value()) {
      category_memo_[std::make_tuple(metric, commit.category_memo->design_version,
                                     commit.category_memo->category)] =
          commit.category_memo->report;
    }
    if (commit.numeric_memo.has_value()) {
      numeric_memo_[std::make_tuple(metric, commit.numeric_memo->design_version,
                                    commit.numeric_memo->level)] = commit.numeric_memo->answer;
    }
    if (commit.string_memo.has_value()) {
      string_memo_[std::make_tuple(metric, commit.string_memo->design_version,
                                   commit.string_memo->value_key)] = commit.string_memo->answer;
    }
    ApplyCommitToLedger(commit, &ledger_[metric]);
    queue_.push_back({next_sequence_++, commit.report});
    while (static_cast<int64_t>(queue_.size()) > commit.max_queued_reports) {
      queue_.pop_front();
      ++counters_.dropped_queue_full;
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<QueuedReport>> PeekOldest(int64_t limit) override {
    absl::MutexLock lock(&mu_);
    std::vector<QueuedReport> out;
    for (const QueuedReport& q : queue_) {
      if (static_cast<int64_t>(out.size()) >= limit) break;
      out.push_back(q);
    }
    return out;
  }

  absl::Status RemoveReports(const std::vector<int64_t>& sequences, bool acknowledged,
                             const DeliveryCounters& increments) override {
    absl::MutexLock lock(&mu_);
    for (int64_t sequence : sequences) {
      for (auto it = queue_.begin(); it != queue_.end(); ++it) {
        if (it->sequence != sequence) continue;
        if (acknowledged) ++ledger_[it->report.metric()].reports_acknowledged;
        queue_.erase(it);
        break;
      }
    }
    AddCounters(increments, &counters_);
    return absl::OkStatus();
  }

  absl::Status CountRepeatedReport(const std::string& metric) override {
    absl::MutexLock lock(&mu_);
    ++ledger_[metric].reports_repeated_in_period;
    return absl::OkStatus();
  }

  absl::StatusOr<int64_t> QueueSize() override {
    absl::MutexLock lock(&mu_);
    return static_cast<int64_t>(queue_.size());
  }
  absl::StatusOr<std::map<std::string, MetricLedger>> ReadLedger() override {
    absl::MutexLock lock(&mu_);
    return ledger_;
  }
  absl::StatusOr<DeliveryCounters> ReadCounters() override {
    absl::MutexLock lock(&mu_);
    return counters_;
  }
  absl::Status ForgetMemo(const std::string& metric, uint32_t design_version) override {
    absl::MutexLock lock(&mu_);
    memo_.erase(std::make_tuple(metric, design_version, false));
    memo_.erase(std::make_tuple(metric, design_version, true));
    auto of_version = [&](const auto& entry) {
      return std::get<0>(entry.first) == metric && std::get<1>(entry.first) == design_version;
    };
    std::erase_if(category_memo_, of_version);
    std::erase_if(numeric_memo_, of_version);
    std::erase_if(string_memo_, of_version);
    return absl::OkStatus();
  }

  absl::StatusOr<std::optional<std::string>> LoadDesign(const std::string& metric) override {
    absl::MutexLock lock(&mu_);
    auto it = designs_.find(metric);
    if (it == designs_.end()) return std::nullopt;
    return it->second;
  }
  absl::Status SaveDesign(const std::string& metric, const std::string& serialized) override {
    absl::MutexLock lock(&mu_);
    designs_[metric] = serialized;
    return absl::OkStatus();
  }

 private:
  absl::Mutex mu_;
  std::map<std::tuple<std::string, uint32_t, bool>, bool> memo_ ABSL_GUARDED_BY(mu_);
  std::map<std::tuple<std::string, uint32_t, int32_t>, v1::CategoricalReport> category_memo_
      ABSL_GUARDED_BY(mu_);
  std::map<std::tuple<std::string, uint32_t, int32_t>, v1::Report> numeric_memo_
      ABSL_GUARDED_BY(mu_);
  std::map<std::string, double> numeric_alpha_ ABSL_GUARDED_BY(mu_);
  // (metric, design version, HeavyHittersValueKey) -> answer; (metric, version, salt) -> group.
  std::map<std::tuple<std::string, uint32_t, std::string>, v1::Report> string_memo_
      ABSL_GUARDED_BY(mu_);
  std::map<std::tuple<std::string, uint32_t, uint64_t>, uint32_t> groups_ ABSL_GUARDED_BY(mu_);
  std::deque<QueuedReport> queue_ ABSL_GUARDED_BY(mu_);  // sequences ascending
  int64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<std::string, MetricLedger> ledger_ ABSL_GUARDED_BY(mu_);
  DeliveryCounters counters_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> designs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<DeviceStore> MakeMemoryDeviceStore() {
  return std::make_unique<MemoryDeviceStore>();
}

}  // namespace deniable::client
