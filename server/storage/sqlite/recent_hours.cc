#include "server/storage/sqlite/recent_hours.h"

#include <algorithm>

namespace deniable::server {

RecentHours::Hour* RecentHours::Find(const HourKey& key) {
  auto it = hours_.find(key);
  return it == hours_.end() ? nullptr : &it->second;
}

RecentHours::Hour& RecentHours::Create(const HourKey& key, bool may_have_sorted_rows) {
  Hour& hour = hours_[key];
  hour.may_have_sorted_rows = may_have_sorted_rows;
  hour.last_write = tick_;
  undo_hours_.push_back(key);
  return hour;
}

void RecentHours::Insert(const HourKey& key, Hour& hour, const ReportId& id) {
  hour.ids.insert(id);
  hour.last_write = tick_;
  ++size_;
  undo_ids_.emplace_back(key, id);
}

bool RecentHours::TryInsert(const HourKey& key, Hour& hour, const ReportId& id) {
  if (!hour.ids.insert(id).second) return false;
  hour.last_write = tick_;
  ++size_;
  undo_ids_.emplace_back(key, id);
  return true;
}

void RecentHours::TakeBackLast(Hour& hour) {
  hour.ids.erase(undo_ids_.back().second);
  --size_;
  undo_ids_.pop_back();
}

void RecentHours::Begin() {
  Commit();
  ++tick_;
}

void RecentHours::Undo() {
  for (const auto& [key, id] : undo_ids_) {
    if (Hour* hour = Find(key); hour != nullptr && hour->ids.erase(id) == 1) --size_;
  }
  for (const HourKey& key : undo_hours_) {
    if (Hour* hour = Find(key); hour != nullptr && hour->ids.empty()) hours_.erase(key);
  }
  Commit();
}

void RecentHours::Erase(const HourKey& key) {
  auto it = hours_.find(key);
  if (it == hours_.end()) return;
  size_ -= static_cast<int64_t>(it->second.ids.size());
  hours_.erase(it);
}

void RecentHours::MoveOut(Hour& hour, absl::Span<const ReportId> ids) {
  // Far enough ahead to cover a memory access, near enough to stay in the L1 cache.
  constexpr size_t kAhead = 8;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i + kAhead < ids.size()) {
      hour.ids.prefetch(ids[i + kAhead]);
      if (hour.moved != nullptr) hour.moved->Prefetch(ids[i + kAhead], /*for_add=*/true);
    }
    if (hour.moved != nullptr) hour.moved->Add(ids[i]);
    size_ -= static_cast<int64_t>(hour.ids.erase(ids[i]));
  }
}

std::vector<HourKey> RecentHours::OldestBeyond(int64_t keep) const {
  std::vector<std::pair<uint64_t, HourKey>> by_age;
  by_age.reserve(hours_.size());
  for (const auto& [key, hour] : hours_) by_age.emplace_back(hour.last_write, key);
  std::sort(by_age.begin(), by_age.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first
                              : std::pair(x.second.metric_id, x.second.event_time) <
                                    std::pair(y.second.metric_id, y.second.event_time);
  });
  std::vector<HourKey> out;
  int64_t remaining = size_;
  for (const auto& [tick, key] : by_age) {
    if (remaining <= keep) break;
    remaining -= static_cast<int64_t>(hours_.at(key).ids.size());
    out.push_back(key);
  }
  return out;
}

std::vector<HourKey> RecentHours::All() const {
  std::vector<HourKey> out;
  out.reserve(hours_.size());
  for (const auto& [key, hour] : hours_) out.push_back(key);
  // In key order, not the hash map's (seeded per process): moves of every hour run in the same
  // order in every run, so the seeded crash-consistency model is deterministic.
  std::sort(out.begin(), out.end(), [](const HourKey& x, const HourKey& y) {
    return std::pair(x.metric_id, x.event_time) < std::pair(y.metric_id, y.event_time);
  });
  return out;
}

}  // namespace deniable::server
