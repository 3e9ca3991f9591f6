#include "server/core/window_first_limit.h"

#include <array>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/civil_time.h"
#include "deniable/common/calendar_windows.h"

namespace deniable::server {
namespace {

constexpr std::array<int, 3> kFlags = {kFirstInDay, kFirstInWeek, kFirstInMonth};
constexpr std::array<const char*, 3> kNames = {"day", "week", "month"};

std::string Day(int64_t seconds) {
  return absl::FormatTime("%Y-%m-%d", absl::FromUnixSeconds(seconds), absl::UTCTimeZone());
}

}  // namespace

absl::Status WindowFirstLimiter::Admit(int64_t token_id, int64_t metric_id, int firsts,
                                       int64_t event_time_seconds, int64_t now_seconds,
                                       absl::string_view field, absl::string_view metric) {
  if (!enabled() || firsts <= 0) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  if (now_seconds - pruned_at_ >= 3600) PruneLocked(now_seconds);
  std::array<Key, 3> keys;
  for (size_t w = 0; w < kFlags.size(); ++w) {
    if ((firsts & kFlags[w]) == 0) continue;
    const int64_t start = WindowStart(kCalendarWindows[w], event_time_seconds);
    keys[w] = Key{token_id, metric_id, static_cast<int>(w), start};
    auto it = counts_.find(keys[w]);
    const int64_t taken = it == counts_.end() ? 0 : it->second;
    if (taken >= options_.max_per_window) {
      return absl::ResourceExhaustedError(absl::StrCat(
          field, ".window_firsts.", kNames[w], ": this token already sent ",
          options_.max_per_window, " reports of metric \"", metric, "\" flagged first in the ",
          kNames[w], " starting ", Day(start),
          " (deniable-server --max_window_firsts_per_token); the report is not stored"));
    }
    if (it == counts_.end() && counts_.size() >= options_.max_entries) {
      return absl::ResourceExhaustedError(
          absl::StrCat(field, ".window_firsts.", kNames[w],
                       ": the collector's table of first-in-window counts "
                       "is full (",
                       options_.max_entries, " windows); the report is not stored"));
    }
  }
  for (size_t w = 0; w < kFlags.size(); ++w) {
    if ((firsts & kFlags[w]) != 0) ++counts_[keys[w]];
  }
  return absl::OkStatus();
}

void WindowFirstLimiter::PruneLocked(int64_t now_seconds) {
  pruned_at_ = now_seconds;
  const int64_t keep = absl::ToInt64Seconds(options_.keep_after_end);
  absl::erase_if(counts_, [&](const auto& entry) {
    const auto& [token, metric, kind, start] = entry.first;
    return NextWindowStart(kCalendarWindows[static_cast<size_t>(kind)], start) + keep < now_seconds;
  });
}

size_t WindowFirstLimiter::entries() const {
  absl::MutexLock lock(&mu_);
  return counts_.size();
}

}  // namespace deniable::server
