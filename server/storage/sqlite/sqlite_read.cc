// SqliteStorage's reads on its reading connection (read_mu_): metrics and their designs, the
// counts of a metric's hours (counts, counter_chunks, counter_deltas, first_counts in one read
// transaction), the stored reports' count and the integrity check.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_storage_statements.h"

namespace deniable::server {
namespace {

// A row of kMetricColumns (below), without its designs.
StoredMetric MetricFromRow(const SqliteStatement& st) {
  StoredMetric m;
  m.id = st.ColumnInt64(0);
  m.name = st.ColumnText(1);
  m.description = st.ColumnText(2);
  m.created_time_seconds = st.ColumnInt64(3);
  m.time_precision_seconds = static_cast<uint32_t>(st.ColumnInt64(4));
  m.min_reports = static_cast<uint32_t>(st.ColumnInt64(5));
  m.reporting_period_seconds = static_cast<uint32_t>(st.ColumnInt64(6));
  m.randomization = static_cast<int>(st.ColumnInt64(7));
  m.categories = SplitCategories(st.ColumnText(8));
  m.retention_days = static_cast<uint32_t>(st.ColumnInt64(9));
  m.retention_policy = static_cast<int>(st.ColumnInt64(10));
  m.window_firsts_off = st.ColumnInt64(11) != 0;
  m.reporting_once = st.ColumnInt64(12) != 0;
  return m;
}

}  // namespace

absl::StatusOr<std::vector<StoredDesign>> SqliteStorage::ReadDesigns(int64_t metric_id) {
  SqliteStatement& st = read_->get_designs;
  st.BindInt64(1, metric_id);
  std::vector<StoredDesign> designs;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    designs.push_back(StoredDesign{static_cast<uint32_t>(st.ColumnInt64(0)), st.ColumnBlob(1),
                                   st.ColumnDouble(2), st.ColumnDouble(3), st.ColumnInt64(4)});
  }
  st.Reset();
  return designs;
}

absl::StatusOr<StoredMetric> SqliteStorage::GetMetric(absl::string_view name) {
  absl::MutexLock lock(&read_mu_);
  SqliteStatement& st = read_->get_metric;
  st.BindText(1, name);
  DENIABLE_ASSIGN_OR_RETURN(bool found, st.Step());
  if (!found) {
    st.Reset();
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  StoredMetric m = MetricFromRow(st);
  st.Reset();
  DENIABLE_ASSIGN_OR_RETURN(m.designs, ReadDesigns(m.id));
  return m;
}

absl::StatusOr<std::vector<StoredMetric>> SqliteStorage::ListMetrics() {
  absl::MutexLock lock(&read_mu_);
  SqliteStatement& st = read_->list_metrics;
  std::vector<StoredMetric> metrics;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    metrics.push_back(MetricFromRow(st));
  }
  st.Reset();
  for (StoredMetric& m : metrics) {
    DENIABLE_ASSIGN_OR_RETURN(m.designs, ReadDesigns(m.id));
  }
  return metrics;
}

absl::StatusOr<std::vector<CountRow>> SqliteStorage::ReadCounts(int64_t metric_id,
                                                                int64_t start_seconds,
                                                                int64_t end_seconds) {
  absl::MutexLock lock(&read_mu_);
  // One read transaction: n and every counter come from the same snapshot.
  DENIABLE_RETURN_IF_ERROR(SqliteExec(read_db_, "BEGIN"));
  absl::StatusOr<std::vector<CountRow>> rows =
      ReadCountsLocked(metric_id, start_seconds, end_seconds);
  if (!rows.ok()) {
    // A read stopped midway (a damaged row) leaves its statement stepping in the old snapshot.
    for (SqliteStatement* st : {&read_->read_counts, &read_->read_counter_chunks,
                                &read_->read_counter_deltas, &read_->read_first_counts}) {
      st->Reset();
    }
  }
  const absl::Status end = SqliteExec(read_db_, rows.ok() ? "COMMIT" : "ROLLBACK");
  if (!rows.ok()) return rows.status();
  DENIABLE_RETURN_IF_ERROR(end);
  return rows;
}

namespace {

// Binds (metric, start, end) to parameters 1-3 of a read of a metric's hours.
void BindHours(SqliteStatement& st, int64_t metric_id, int64_t start_seconds, int64_t end_seconds) {
  st.BindInt64(1, metric_id);
  st.BindInt64(2, start_seconds);
  st.BindInt64(3, end_seconds);
}

}  // namespace

// The count row of a statement's key columns (version, event time, labels: 0-2), from an index
// of `rows` built at the first lookup; nullopt for a key without counts. No lock (the caller's
// rows).
class SqliteStorage::CountRowIndex {
 public:
  explicit CountRowIndex(const std::vector<CountRow>& rows) : rows_(rows) {}
  std::optional<size_t> Find(const SqliteStatement& s) {
    if (index_.empty()) {
      for (size_t i = 0; i < rows_.size(); ++i) {
        index_[{rows_[i].design_version, rows_[i].event_time_seconds, rows_[i].labels}] = i;
      }
    }
    auto it =
        index_.find({static_cast<uint32_t>(s.ColumnInt64(0)), s.ColumnInt64(1), s.ColumnText(2)});
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

 private:
  const std::vector<CountRow>& rows_;
  std::map<std::tuple<uint32_t, int64_t, std::string>, size_t> index_;
};

absl::StatusOr<std::vector<CountRow>> SqliteStorage::ReadCountsLocked(int64_t metric_id,
                                                                      int64_t start_seconds,
                                                                      int64_t end_seconds) {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<CountRow> rows,
                            ReadCountRows(metric_id, start_seconds, end_seconds));
  // Counters 1 and up (counter_chunks: every report's, win -1, and the windows' firsts), merged
  // into their count rows.
  CountRowIndex index(rows);
  DENIABLE_RETURN_IF_ERROR(AddCounterChunks(metric_id, start_seconds, end_seconds, index, rows));
  // The deltas not folded yet (counter_deltas: counter indices, not offsets), added the same way.
  DENIABLE_RETURN_IF_ERROR(AddCounterDeltas(metric_id, start_seconds, end_seconds, index, rows));
  // The window-first counts (first_counts), merged the same way.
  DENIABLE_RETURN_IF_ERROR(AddFirstCounts(metric_id, start_seconds, end_seconds, index, rows));
  return rows;
}

absl::StatusOr<std::vector<CountRow>> SqliteStorage::ReadCountRows(int64_t metric_id,
                                                                   int64_t start_seconds,
                                                                   int64_t end_seconds) {
  SqliteStatement& st = read_->read_counts;
  BindHours(st, metric_id, start_seconds, end_seconds);
  std::vector<CountRow> rows;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    CountRow& r = rows.emplace_back();
    r.design_version = static_cast<uint32_t>(st.ColumnInt64(0));
    r.event_time_seconds = st.ColumnInt64(1);
    r.labels = st.ColumnText(2);
    r.n = st.ColumnInt64(3);
    AddCounter(&r.counters, 0, st.ColumnInt64(4));
  }
  st.Reset();
  return rows;
}

absl::Status SqliteStorage::AddCounterChunks(int64_t metric_id, int64_t start_seconds,
                                             int64_t end_seconds, CountRowIndex& index,
                                             std::vector<CountRow>& rows) {
  SqliteStatement& cat = read_->read_counter_chunks;
  BindHours(cat, metric_id, start_seconds, end_seconds);
  while (true) {
    absl::StatusOr<bool> row = cat.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<size_t> it = index.Find(cat);
    const int64_t win = cat.ColumnInt64(3);
    const int64_t chunk = cat.ColumnInt64(4);
    if (!it.has_value()) {
      return absl::DataLossError(
          absl::StrCat("metric ", metric_id, ": counter sums without counts in the database"));
    }
    if (win < -1 || win > 2 || chunk < 0 ||
        chunk >= kMaxCounterLayoutLength / static_cast<int64_t>(kCounterChunkCounters)) {
      return absl::DataLossError(absl::StrCat("counter_chunks: metric ", metric_id,
                                              " has a row of window ", win, " and chunk ", chunk,
                                              ", outside the stored ranges"));
    }
    CountRow& r = rows[*it];
    SparseCounters& counters = win < 0 ? r.counters : r.firsts[static_cast<size_t>(win)].counters;
    const uint32_t base = static_cast<uint32_t>(chunk) * kCounterChunkCounters;
    DENIABLE_RETURN_IF_ERROR(DecodeCounterChunk(
        cat.ColumnBlob(5), "counter_chunks",
        [&](uint32_t offset, int64_t sum) { counters.Add(base + offset, sum); }));
  }
  cat.Reset();
  return absl::OkStatus();
}

absl::Status SqliteStorage::AddCounterDeltas(int64_t metric_id, int64_t start_seconds,
                                             int64_t end_seconds, CountRowIndex& index,
                                             std::vector<CountRow>& rows) {
  SqliteStatement& del = read_->read_counter_deltas;
  std::map<std::pair<size_t, int>, std::vector<SparseCounters::Entry>> deltas;  // (row, win)
  BindHours(del, metric_id, start_seconds, end_seconds);
  while (true) {
    absl::StatusOr<bool> row = del.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<size_t> it = index.Find(del);
    const int64_t win = del.ColumnInt64(3);
    if (!it.has_value()) {
      return absl::DataLossError(
          absl::StrCat("metric ", metric_id, ": counter sums without counts in the database"));
    }
    if (win < -1 || win > 2) {
      return absl::DataLossError(absl::StrCat("counter_deltas: metric ", metric_id,
                                              " has a row of window ", win,
                                              ", outside the stored ranges"));
    }
    std::vector<SparseCounters::Entry>& cells = deltas[{*it, static_cast<int>(win)}];
    DENIABLE_RETURN_IF_ERROR(
        DecodeCounterDelta(del.ColumnBlob(4), "counter_deltas",
                           [&](uint32_t j, int64_t sum) { cells.emplace_back(j, sum); }));
  }
  del.Reset();
  // One merge per row and window (a merge per delta row would cost its rows' size each time).
  for (auto& [where, cells] : deltas) {
    std::sort(cells.begin(), cells.end());
    SparseCounters added;
    for (const auto& [j, sum] : cells) added.Add(j, sum);  // ascending: O(1) each
    CountRow& r = rows[where.first];
    (where.second < 0 ? r.counters : r.firsts[static_cast<size_t>(where.second)].counters)
        .AddAll(added);
  }
  return absl::OkStatus();
}

absl::Status SqliteStorage::AddFirstCounts(int64_t metric_id, int64_t start_seconds,
                                           int64_t end_seconds, CountRowIndex& index,
                                           std::vector<CountRow>& rows) {
  SqliteStatement& fc = read_->read_first_counts;
  BindHours(fc, metric_id, start_seconds, end_seconds);
  while (true) {
    absl::StatusOr<bool> row = fc.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    const std::optional<size_t> it = index.Find(fc);
    const int64_t w = fc.ColumnInt64(3);
    if (!it.has_value() || w < 0 || w > 2) {
      return absl::DataLossError(
          absl::StrCat("metric ", metric_id, ": first counts without counts in the database"));
    }
    CountRow::Firsts& f = rows[*it].firsts[static_cast<size_t>(w)];
    const int64_t counter = fc.ColumnInt64(4);
    if (counter < -1 || counter >= kMaxCounterLayoutLength) {
      return absl::DataLossError(absl::StrCat("first_counts: metric ", metric_id, " has counter ",
                                              counter, ", outside the stored ranges"));
    }
    if (counter < 0) {
      f.n += fc.ColumnInt64(5);
    } else {
      AddCounter(&f.counters, static_cast<size_t>(counter), fc.ColumnInt64(5));
    }
  }
  fc.Reset();
  return absl::OkStatus();
}

absl::StatusOr<int64_t> SqliteStorage::ReportCount() {
  absl::MutexLock lock(&read_mu_);
  DENIABLE_ASSIGN_OR_RETURN(bool has_row, read_->count_reports.Step());
  const int64_t n = has_row ? read_->count_reports.ColumnInt64(0) : 0;
  read_->count_reports.Reset();
  return n;
}

absl::StatusOr<std::string> SqliteStorage::IntegrityCheck() {
  absl::MutexLock lock(&read_mu_);
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement st,
                            SqliteStatement::Prepare(read_db_, "PRAGMA integrity_check"));
  std::string out;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    if (!out.empty()) out += "\n";
    out += st.ColumnText(0);
  }
  return out;
}

}  // namespace deniable::server
