#include "server/storage/storage.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/status_macros.h"
#include "server/storage/varint.h"

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

SparseCounters SparseCounters::FromDense(absl::Span<const int64_t> dense) {
  SparseCounters out;
  for (size_t j = 0; j < dense.size(); ++j) out.Add(static_cast<uint32_t>(j), dense[j]);
  return out;
}

int64_t SparseCounters::At(uint32_t j) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), j,
                             [](const Entry& e, uint32_t k) { return e.first < k; });
  return it != entries_.end() && it->first == j ? it->second : 0;
}

void SparseCounters::Add(uint32_t j, int64_t count) {
  if (count == 0) return;
  if (entries_.empty() || entries_.back().first < j) {
    entries_.emplace_back(j, count);
    return;
  }
  auto it = std::lower_bound(entries_.begin(), entries_.end(), j,
                             [](const Entry& e, uint32_t k) { return e.first < k; });
  if (it != entries_.end() && it->first == j) {
    it->second += count;
    if (it->second == 0) entries_.erase(it);
  } else {
    entries_.insert(it, Entry{j, count});
  }
}

void SparseCounters::AddAll(const SparseCounters& other) {
  if (other.empty()) return;
  if (empty() || entries_.back().first < other.entries_.front().first) {
    entries_.insert(entries_.end(), other.entries_.begin(), other.entries_.end());
    return;
  }
  absl::InlinedVector<Entry, 2> merged;
  merged.reserve(entries_.size() + other.entries_.size());
  auto a = entries_.begin();
  auto b = other.entries_.begin();
  while (a != entries_.end() || b != other.entries_.end()) {
    if (b == other.entries_.end() || (a != entries_.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == entries_.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      const int64_t sum = a->second + b->second;
      if (sum != 0) merged.emplace_back(a->first, sum);
      ++a;
      ++b;
    }
  }
  entries_ = std::move(merged);
}

std::vector<int64_t> SparseCounters::Dense() const {
  std::vector<int64_t> dense(DenseLength(), 0);
  for (const Entry& e : entries_) dense[e.first] = e.second;
  return dense;
}

std::string SparseCounters::ToString() const {
  return absl::StrJoin(entries_, ",", [](std::string* out, const Entry& e) {
    absl::StrAppend(out, e.first, ":", e.second);
  });
}

void ForEachWindowFirst(int window_firsts, absl::Span<const uint32_t> counters,
                        absl::FunctionRef<void(int window, int counter)> add) {
  if (window_firsts <= 0) return;
  for (int w = 0; w < static_cast<int>(std::tuple_size_v<decltype(CountRow::firsts)>); ++w) {
    if ((window_firsts & (1 << w)) == 0) continue;
    add(w, -1);
    for (uint32_t j : counters) add(w, static_cast<int>(j));
  }
}

void AddWindowFirsts(CountRow* row, int window_firsts, absl::Span<const uint32_t> counters) {
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

namespace {}  // namespace

StoredCounters EncodeCounters(absl::Span<const uint32_t> counters) {
  StoredCounters out;
  const bool counter0 = AddsToCounter0(counters);
  out.bit = counter0 ? kStoredBitCounter0 : 0;
  if (counters.size() == (counter0 ? 1u : 0u)) return out;  // the bit holds it all
  out.bit |= kStoredBitSparse;
  std::string sparse;
  uint32_t previous = 0;
  for (size_t i = 0; i < counters.size(); ++i) {
    AppendVarint(i == 0 ? counters[i] : counters[i] - previous, &sparse);
    previous = counters[i];
  }
  out.support = std::move(sparse);
  return out;
}

absl::StatusOr<absl::InlinedVector<uint32_t, 8>> DecodeCounters(
    int64_t bit, const std::optional<std::string>& support, absl::string_view table) {
  absl::InlinedVector<uint32_t, 8> counters;
  auto bad = [&](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat(table, ": a stored report's counters (support) are malformed: ", what));
  };
  if ((bit & kStoredBitSparse) != 0) {
    if (!support.has_value() || support->empty()) return bad("no sparse counters");
    size_t pos = 0;
    uint64_t j = 0;
    for (bool first = true; pos < support->size(); first = false) {
      uint64_t step = 0;
      if (!ReadVarint(*support, &pos, &step)) return bad("a truncated varint");
      if (!first && step == 0) return bad("an index repeated");
      j += step;
      if (step >= static_cast<uint64_t>(deniable::kMaxCounterLayoutLength) ||
          j >= static_cast<uint64_t>(deniable::kMaxCounterLayoutLength)) {
        return bad(absl::StrCat("an index past the largest layout (",
                                deniable::kMaxCounterLayoutLength, " counters)"));
      }
      counters.push_back(static_cast<uint32_t>(j));
    }
    return counters;
  }
  if (support.has_value()) {
    if (support->size() * 8 > static_cast<size_t>(deniable::kMaxCounterLayoutLength)) {
      return bad("a bitmap longer than the largest layout");
    }
    for (uint32_t j : DecodeSupport(*support)) counters.push_back(j);
  } else if ((bit & kStoredBitCounter0) != 0) {
    counters.push_back(0);
  }
  return counters;
}

std::vector<uint32_t> DecodeSupport(absl::string_view bitmap) {
  std::vector<uint32_t> supported;
  for (size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      if ((static_cast<uint8_t>(bitmap[byte]) >> bit) & 1) {
        supported.push_back(static_cast<uint32_t>(byte * 8 + static_cast<size_t>(bit)));
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
