#include "server/storage/storage.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

void RetentionResult::Count(const StoredMetric& metric, int64_t reports) {
  if (reports == 0) return;
  reports_dropped += reports;
  for (MetricDropCount& m : per_metric) {
    if (m.metric_id == metric.id) {
      m.reports += reports;
      return;
    }
  }
  per_metric.push_back({metric.id, metric.name, reports});
}

void ForEachWindowFirst(int window_firsts, absl::Span<const uint16_t> counters,
                        absl::FunctionRef<void(int window, int counter)> add) {
  if (window_firsts <= 0) return;
  for (int w = 0; w < static_cast<int>(std::tuple_size_v<decltype(CountRow::firsts)>); ++w) {
    if ((window_firsts & (1 << w)) == 0) continue;
    add(w, -1);
    for (uint16_t j : counters) add(w, j);
  }
}

void AddWindowFirsts(CountRow* row, int window_firsts, absl::Span<const uint16_t> counters) {
  ForEachWindowFirst(window_firsts, counters, [row](int window, int counter) {
    CountRow::Firsts& f = row->firsts[static_cast<size_t>(window)];
    if (counter < 0) {
      ++f.n;
    } else {
      AddCounter(&f.counters, static_cast<size_t>(counter), 1);
    }
  });
}

absl::Status CheckRetention(uint32_t days, int policy) {
  if (days > kMaxRetentionDays) {
    return absl::InvalidArgumentError(
        absl::StrCat("retention_days: must be at most ", kMaxRetentionDays, ", but is ", days));
  }
  if (policy != kRetentionKeepCounts && policy != kRetentionDropCounts) {
    return absl::InvalidArgumentError(absl::StrCat(
        "retention_policy: must be DROP_REPORTS_KEEP_COUNTS (1) or DROP_REPORTS_AND_COUNTS (2), "
        "but is ",
        policy));
  }
  return absl::OkStatus();
}

int64_t RetentionCutoff(const StoredMetric& metric, const RetentionOptions& options) {
  if (metric.retention_days == 0) return std::numeric_limits<int64_t>::min();
  const int64_t by_days = options.now_seconds - static_cast<int64_t>(metric.retention_days) * 86400;
  const int64_t cutoff = std::min(by_days, options.now_seconds - options.dedup_window_seconds);
  const int64_t period = std::max<int64_t>(1, metric.reporting_period_seconds);
  // Floor division: the start of the period holding `cutoff`.
  const int64_t q = cutoff / period - ((cutoff % period != 0 && cutoff < 0) ? 1 : 0);
  return q * period;
}

int64_t CounterAt(const std::vector<int64_t>& counters, size_t j) {
  return j < counters.size() ? counters[j] : 0;
}

void AddCounter(std::vector<int64_t>* counters, size_t j, int64_t count) {
  if (counters->size() <= j) {
    if (count == 0) return;
    counters->resize(j + 1, 0);
  }
  (*counters)[j] += count;
}

std::optional<std::string> EncodeCounters(absl::Span<const uint16_t> counters) {
  if (counters.size() == (AddsToCounter0(counters) ? 1u : 0u)) return std::nullopt;  // the bit
  std::string bitmap(1, '\0');
  for (uint16_t j : counters) {
    const size_t byte = j / 8;
    if (bitmap.size() <= byte) bitmap.resize(byte + 1, '\0');
    bitmap[byte] = static_cast<char>(static_cast<uint8_t>(bitmap[byte]) | (1u << (j % 8)));
  }
  return bitmap;
}

absl::InlinedVector<uint16_t, 8> DecodeCounters(bool bit,
                                                const std::optional<std::string>& bitmap) {
  absl::InlinedVector<uint16_t, 8> counters;
  if (bitmap.has_value()) {
    for (uint16_t j : DecodeSupport(*bitmap)) counters.push_back(j);
  } else if (bit) {
    counters.push_back(0);
  }
  return counters;
}

std::vector<uint16_t> DecodeSupport(absl::string_view bitmap) {
  std::vector<uint16_t> supported;
  for (size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      if ((static_cast<uint8_t>(bitmap[byte]) >> bit) & 1) {
        supported.push_back(static_cast<uint16_t>(byte * 8 + static_cast<size_t>(bit)));
      }
    }
  }
  return supported;
}

std::string JoinCategories(const std::vector<std::string>& categories) {
  return absl::StrJoin(categories, ",");
}

std::vector<std::string> SplitCategories(absl::string_view joined) {
  if (joined.empty()) return {};
  return absl::StrSplit(joined, ',');
}

absl::StatusOr<std::vector<AppendResult>> Storage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  if (batches.empty()) return std::vector<AppendResult>();
  if (batches.size() > 1) {
    return absl::UnimplementedError("this storage commits one batch per transaction");
  }
  DENIABLE_ASSIGN_OR_RETURN(AppendResult result, AppendReports(batches.front()));
  return std::vector<AppendResult>{result};
}

void Storage::AppendReportsAsync(absl::Span<const ReportRow> rows, AppendCallback done) {
  std::move(done)(AppendReports(rows));
}

}  // namespace deniable::server
