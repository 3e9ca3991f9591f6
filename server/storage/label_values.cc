#include "server/storage/label_values.h"

#include "absl/strings/str_split.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

std::vector<std::pair<absl::string_view, absl::string_view>> SplitLabels(
    absl::string_view canonical) {
  std::vector<std::pair<absl::string_view, absl::string_view>> pairs;
  if (canonical.empty()) return pairs;
  for (absl::string_view label : absl::StrSplit(canonical, ',')) {
    const size_t eq = label.find('=');
    if (eq == absl::string_view::npos) {
      pairs.emplace_back(label, absl::string_view());
    } else {
      pairs.emplace_back(label.substr(0, eq), label.substr(eq + 1));
    }
  }
  return pairs;
}

absl::StatusOr<bool> LabelValueAdmission::Known(int64_t metric_id, absl::string_view key,
                                                absl::string_view value) {
  Value v{metric_id, std::string(key), std::string(value)};
  if (auto it = known_.find(v); it != known_.end()) return it->second;
  DENIABLE_ASSIGN_OR_RETURN(bool known, lookup_.known(metric_id, key, value));
  known_.emplace(std::move(v), known);
  return known;
}

absl::StatusOr<int64_t> LabelValueAdmission::Count(int64_t metric_id, absl::string_view key) {
  std::pair<int64_t, std::string> k{metric_id, std::string(key)};
  if (auto it = count_.find(k); it != count_.end()) return it->second;
  DENIABLE_ASSIGN_OR_RETURN(int64_t count, lookup_.count(metric_id, key));
  count_.emplace(std::move(k), count);
  return count;
}

absl::StatusOr<int64_t> LabelValueAdmission::Keys(int64_t metric_id) {
  if (auto it = keys_.find(metric_id); it != keys_.end()) return it->second;
  DENIABLE_ASSIGN_OR_RETURN(int64_t keys, lookup_.keys(metric_id));
  keys_.emplace(metric_id, keys);
  return keys;
}

absl::StatusOr<std::optional<LabelCapRefusal>> LabelValueAdmission::Admit(
    int64_t metric_id, absl::string_view labels) {
  std::vector<std::pair<absl::string_view, absl::string_view>> fresh;
  int64_t new_keys = 0;
  for (const auto& [key, value] : SplitLabels(labels)) {
    DENIABLE_ASSIGN_OR_RETURN(bool known, Known(metric_id, key, value));
    if (known) continue;
    DENIABLE_ASSIGN_OR_RETURN(int64_t count, Count(metric_id, key));
    if (max_values_ > 0 && count >= max_values_) {
      return std::optional<LabelCapRefusal>(LabelCapRefusal{std::string(key), false});
    }
    if (count == 0) {
      DENIABLE_ASSIGN_OR_RETURN(int64_t keys, Keys(metric_id));
      if (max_keys_ > 0 && keys + new_keys >= max_keys_) {
        return std::optional<LabelCapRefusal>(LabelCapRefusal{std::string(key), true});
      }
      ++new_keys;
    }
    fresh.emplace_back(key, value);
  }
  for (const auto& [key, value] : fresh) {
    Value v{metric_id, std::string(key), std::string(value)};
    known_[v] = true;
    if (count_[{metric_id, std::string(key)}]++ == 0) ++keys_[metric_id];
    added_.push_back(std::move(v));
  }
  return std::optional<LabelCapRefusal>();
}

bool KnownLabelsets::Contains(int64_t metric_id, const std::string& labels) const {
  absl::MutexLock lock(&mu_);
  return set_.contains(std::make_pair(metric_id, labels));
}

void KnownLabelsets::Add(const std::vector<std::pair<int64_t, std::string>>& labelsets) {
  if (labelsets.empty()) return;
  absl::MutexLock lock(&mu_);
  if (set_.size() + labelsets.size() > kMaxEntries) set_.clear();
  for (const auto& l : labelsets) set_.insert(l);
}

}  // namespace deniable::server
