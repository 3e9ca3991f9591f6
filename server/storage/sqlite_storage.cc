#include "server/storage/sqlite_storage.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS metrics(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  time_precision_seconds INTEGER NOT NULL,
  min_reports INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS designs(
  metric_id INTEGER NOT NULL,
  version INTEGER NOT NULL,
  parameters BLOB NOT NULL,
  a REAL NOT NULL,
  b REAL NOT NULL,
  created_time_seconds INTEGER NOT NULL,
  PRIMARY KEY (metric_id, version)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS labelsets(
  id INTEGER PRIMARY KEY,
  canonical TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, report_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS recent_reports(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  report_id BLOB NOT NULL,
  version INTEGER NOT NULL,
  bit INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, seq)) WITHOUT ROWID;
CREATE VIEW IF NOT EXISTS stored_reports AS
  SELECT metric_id, event_time, report_id, version, bit, labelset_id FROM reports
  UNION ALL
  SELECT metric_id, event_time, report_id, version, bit, labelset_id FROM recent_reports;
CREATE TABLE IF NOT EXISTS counts(
  metric_id INTEGER NOT NULL,
  event_time INTEGER NOT NULL,
  version INTEGER NOT NULL,
  labelset_id INTEGER NOT NULL,
  n INTEGER NOT NULL,
  yes INTEGER NOT NULL,
  PRIMARY KEY (metric_id, event_time, version, labelset_id)) WITHOUT ROWID;
)sql";

absl::StatusOr<sqlite3*> OpenConnection(const SqliteOptions& options) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(options.path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status s = SqliteError(db, rc, absl::StrCat("opening database \"", options.path, "\""));
    sqlite3_close(db);
    return s;
  }
  sqlite3_busy_timeout(db, options.busy_timeout_millis);
  return db;
}

// A row of kMetricColumns (below), without its designs.
StoredMetric MetricFromRow(const SqliteStatement& st) {
  StoredMetric m;
  m.id = st.ColumnInt64(0);
  m.name = st.ColumnText(1);
  m.description = st.ColumnText(2);
  m.created_time_seconds = st.ColumnInt64(3);
  m.time_precision_seconds = static_cast<uint32_t>(st.ColumnInt64(4));
  m.min_reports = static_cast<uint32_t>(st.ColumnInt64(5));
  return m;
}

}  // namespace

struct SqliteStorage::WriteStatements {
  SqliteStatement begin, commit, rollback;
  SqliteStatement insert_metric, insert_design, insert_labelset, find_labelset;
  SqliteStatement insert_recent, find_report, hour_has_reports, upsert_count;
  SqliteStatement move_hour, delete_recent_hour;
};

struct SqliteStorage::ReadStatements {
  SqliteStatement get_metric, list_metrics, get_designs, read_counts, count_reports;
};

absl::StatusOr<std::unique_ptr<SqliteStorage>> SqliteStorage::Open(const SqliteOptions& options) {
  if (options.path.empty() || options.path == ":memory:") {
    return absl::InvalidArgumentError("path must name a database file, but is \"" + options.path +
                                      "\"");
  }
  std::unique_ptr<SqliteStorage> storage(new SqliteStorage());
  DENIABLE_RETURN_IF_ERROR(storage->Init(options));
  return storage;
}

absl::Status SqliteStorage::Init(const SqliteOptions& options) {
  absl::MutexLock wlock(&write_mu_);
  absl::MutexLock rlock(&read_mu_);
  DENIABLE_ASSIGN_OR_RETURN(write_db_, OpenConnection(options));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(write_db_, "PRAGMA journal_mode=WAL"));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(write_db_, options.durability == Durability::kFull
                                                     ? "PRAGMA synchronous=FULL"
                                                     : "PRAGMA synchronous=NORMAL"));
  DENIABLE_RETURN_IF_ERROR(
      SqliteExec(write_db_, absl::StrCat("PRAGMA cache_size=-", options.write_cache_kib)));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(
      write_db_, absl::StrCat("PRAGMA wal_autocheckpoint=", options.wal_autocheckpoint_pages)));
  DENIABLE_RETURN_IF_ERROR(SqliteExec(write_db_, kSchema));
  DENIABLE_ASSIGN_OR_RETURN(read_db_, OpenConnection(options));

  auto prepare_write = [this](absl::string_view sql) {
    return SqliteStatement::Prepare(write_db_, sql);
  };
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement begin, prepare_write("BEGIN IMMEDIATE"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement commit, prepare_write("COMMIT"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement rollback, prepare_write("ROLLBACK"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_metric,
      prepare_write("INSERT INTO metrics(name, description, created_time_seconds, "
                    "time_precision_seconds, min_reports) VALUES(?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_design,
      prepare_write("INSERT INTO designs(metric_id, version, parameters, a, b, "
                    "created_time_seconds) VALUES(?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement insert_labelset,
                            prepare_write("INSERT INTO labelsets(canonical) VALUES(?)"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement find_labelset,
                            prepare_write("SELECT id FROM labelsets WHERE canonical = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement insert_recent,
      prepare_write("INSERT INTO recent_reports(metric_id, event_time, seq, report_id, version, "
                    "bit, labelset_id) VALUES(?, ?, ?, ?, ?, ?, ?)"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement find_report,
      prepare_write("SELECT 1 FROM reports WHERE metric_id = ? AND event_time = ? AND "
                    "report_id = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement hour_has_reports,
      prepare_write("SELECT 1 FROM reports WHERE metric_id = ? AND event_time = ? LIMIT 1"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement move_hour,
      prepare_write("INSERT INTO reports(metric_id, event_time, report_id, version, bit, "
                    "labelset_id) SELECT metric_id, event_time, report_id, version, bit, "
                    "labelset_id FROM recent_reports WHERE metric_id = ? AND event_time = ? "
                    "ORDER BY report_id"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement delete_recent_hour,
      prepare_write("DELETE FROM recent_reports WHERE metric_id = ? AND event_time = ?"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement upsert_count,
      prepare_write("INSERT INTO counts(metric_id, event_time, version, labelset_id, n, yes) "
                    "VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(metric_id, event_time, version, "
                    "labelset_id) DO UPDATE SET n = n + excluded.n, yes = yes + excluded.yes"));
  write_.reset(new WriteStatements{
      std::move(begin), std::move(commit), std::move(rollback), std::move(insert_metric),
      std::move(insert_design), std::move(insert_labelset), std::move(find_labelset),
      std::move(insert_recent), std::move(find_report), std::move(hour_has_reports),
      std::move(upsert_count), std::move(move_hour), std::move(delete_recent_hour)});

  auto prepare_read = [this](absl::string_view sql) {
    return SqliteStatement::Prepare(read_db_, sql);
  };
  constexpr char kMetricColumns[] =
      "SELECT id, name, description, created_time_seconds, time_precision_seconds, min_reports "
      "FROM metrics";
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement get_metric,
                            prepare_read(absl::StrCat(kMetricColumns, " WHERE name = ?")));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement list_metrics,
                            prepare_read(absl::StrCat(kMetricColumns, " ORDER BY name")));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement get_designs,
      prepare_read("SELECT version, parameters, a, b, created_time_seconds FROM designs "
                   "WHERE metric_id = ? ORDER BY version"));
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement read_counts,
      prepare_read("SELECT c.version, c.event_time, l.canonical, c.n, c.yes FROM counts c "
                   "JOIN labelsets l ON l.id = c.labelset_id WHERE c.metric_id = ? AND "
                   "c.event_time >= ? AND c.event_time < ? ORDER BY c.event_time"));
  DENIABLE_ASSIGN_OR_RETURN(SqliteStatement count_reports,
                            prepare_read("SELECT (SELECT count(*) FROM reports) + "
                                         "(SELECT count(*) FROM recent_reports)"));
  read_.reset(new ReadStatements{std::move(get_metric), std::move(list_metrics),
                                 std::move(get_designs), std::move(read_counts),
                                 std::move(count_reports)});
  max_recent_reports_ = options.max_recent_reports;
  return LoadRecent();
}

absl::Status SqliteStorage::LoadRecent() {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(write_db_,
                               "SELECT metric_id, event_time, report_id, seq FROM recent_reports"));
  recent_.Begin();
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool has_row, st.Step());
    if (!has_row) break;
    const HourKey key{st.ColumnInt64(0), st.ColumnInt64(1)};
    const std::string blob = st.ColumnBlob(2);
    next_seq_ = std::max(next_seq_, st.ColumnInt64(3) + 1);
    ReportId id{};
    if (blob.size() != id.size()) {
      return absl::DataLossError("recent_reports holds a report id that is not 16 bytes");
    }
    std::copy(blob.begin(), blob.end(), id.begin());
    RecentHours::Hour* hour = recent_.Find(key);
    if (hour == nullptr) {
      DENIABLE_ASSIGN_OR_RETURN(bool sorted, HourHasSortedRows(key));
      hour = &recent_.Create(key, sorted);
    }
    recent_.Insert(key, *hour, id);
  }
  recent_.Commit();
  return absl::OkStatus();
}

absl::StatusOr<bool> SqliteStorage::HourHasSortedRows(const HourKey& key) {
  SqliteStatement& st = write_->hour_has_reports;
  st.BindInt64(1, key.metric_id);
  st.BindInt64(2, key.event_time);
  absl::StatusOr<bool> found = st.Step();
  st.Reset();
  return found;
}

absl::StatusOr<bool> SqliteStorage::IsStored(const HourKey& key, const ReportRow& row) {
  SqliteStatement& st = write_->find_report;
  st.BindInt64(1, key.metric_id);
  st.BindInt64(2, key.event_time);
  st.BindBlob(3, row.report_id.data(), static_cast<int>(row.report_id.size()));
  absl::StatusOr<bool> found = st.Step();
  st.Reset();
  return found;
}

SqliteStorage::~SqliteStorage() {
  absl::MutexLock wlock(&write_mu_);
  absl::MutexLock rlock(&read_mu_);
  write_.reset();
  read_.reset();
  sqlite3_close(write_db_);
  sqlite3_close(read_db_);
}

absl::StatusOr<StoredMetric> SqliteStorage::CreateMetric(StoredMetric metric) {
  absl::MutexLock lock(&write_mu_);
  if (metric.designs.size() != 1) {
    return absl::InvalidArgumentError("a new metric must have exactly one design");
  }
  DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
  auto body = [&]() -> absl::Status {
    write_->insert_metric.BindText(1, metric.name);
    write_->insert_metric.BindText(2, metric.description);
    write_->insert_metric.BindInt64(3, metric.created_time_seconds);
    write_->insert_metric.BindInt64(4, metric.time_precision_seconds);
    write_->insert_metric.BindInt64(5, metric.min_reports);
    if (absl::Status s = write_->insert_metric.Run(); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::AlreadyExistsError(
            absl::StrCat("metric \"", metric.name, "\" already exists"));
      }
      return s;
    }
    metric.id = sqlite3_last_insert_rowid(write_db_);
    DENIABLE_RETURN_IF_ERROR(InsertDesign(metric.id, metric.designs.front()));
    return write_->commit.Run();
  };
  if (absl::Status s = body(); !s.ok()) {
    (void)write_->rollback.Run();
    return s;
  }
  return metric;
}

absl::Status SqliteStorage::InsertDesign(int64_t metric_id, const StoredDesign& d) {
  SqliteStatement& st = write_->insert_design;
  st.BindInt64(1, metric_id);
  st.BindInt64(2, d.version);
  st.BindBlob(3, d.parameters.data(), static_cast<int>(d.parameters.size()));
  st.BindDouble(4, d.a);
  st.BindDouble(5, d.b);
  st.BindInt64(6, d.created_time_seconds);
  return st.Run();
}

absl::StatusOr<StoredMetric> SqliteStorage::AddDesignVersion(absl::string_view name,
                                                             StoredDesign design) {
  DENIABLE_ASSIGN_OR_RETURN(StoredMetric metric, GetMetric(name));
  {
    absl::MutexLock lock(&write_mu_);
    const uint32_t next = metric.designs.back().version + 1;
    if (design.version != next) {
      return absl::FailedPreconditionError(
          absl::StrCat("metric \"", name, "\": next version is ", next, ", not ", design.version));
    }
    if (absl::Status s = InsertDesign(metric.id, design); !s.ok()) {
      if (absl::IsAlreadyExists(s)) {
        return absl::FailedPreconditionError(absl::StrCat(
            "metric \"", name, "\": version ", design.version, " was added concurrently"));
      }
      return s;
    }
  }
  metric.designs.push_back(std::move(design));
  return metric;
}

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

absl::StatusOr<int64_t> SqliteStorage::LabelsetId(const std::string& canonical) {
  if (auto it = labelset_ids_.find(canonical); it != labelset_ids_.end()) return it->second;
  SqliteStatement& find = write_->find_labelset;
  find.BindText(1, canonical);
  DENIABLE_ASSIGN_OR_RETURN(bool found, find.Step());
  int64_t id = 0;
  if (found) {
    id = find.ColumnInt64(0);
    find.Reset();
  } else {
    find.Reset();
    write_->insert_labelset.BindText(1, canonical);
    DENIABLE_RETURN_IF_ERROR(write_->insert_labelset.Run());
    id = sqlite3_last_insert_rowid(write_db_);
  }
  // Cached only after the transaction commits (see AppendReports), so a rollback cannot leave a
  // dangling id here.
  return id;
}

absl::StatusOr<std::vector<AppendResult>> SqliteStorage::AppendLocked(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  std::vector<AppendResult> results(batches.size());
  // (metric, event time, version, labelset) -> (n, yes) for this transaction.
  std::map<std::tuple<int64_t, int64_t, uint32_t, int64_t>, std::pair<int64_t, int64_t>> delta;
  absl::flat_hash_map<std::string, int64_t> new_labelsets;
  SqliteStatement& ins = write_->insert_recent;
  // Rows in arrival order: of two equal keys the earlier batch's row is stored. A row is new when
  // its id is neither among its metric-hour's recent ids (this transaction's included) nor, if
  // that metric-hour has moved rows, in the keyed table.
  for (size_t b = 0; b < batches.size(); ++b) {
    AppendResult& result = results[b];
    for (const ReportRow& row : batches[b]) {
      const HourKey key{row.metric_id, row.event_time_seconds};
      RecentHours::Hour* hour = recent_.Find(key);
      if (hour == nullptr) {
        DENIABLE_ASSIGN_OR_RETURN(bool sorted, HourHasSortedRows(key));
        hour = &recent_.Create(key, sorted);
      }
      bool stored = hour->ids.contains(row.report_id);
      if (!stored && hour->may_have_sorted_rows) {
        DENIABLE_ASSIGN_OR_RETURN(stored, IsStored(key, row));
      }
      if (stored) {
        ++result.duplicates;
        continue;
      }
      int64_t labelset_id = 0;
      if (auto it = new_labelsets.find(row.labels); it != new_labelsets.end()) {
        labelset_id = it->second;
      } else {
        DENIABLE_ASSIGN_OR_RETURN(labelset_id, LabelsetId(row.labels));
        new_labelsets.emplace(row.labels, labelset_id);
      }
      ins.BindInt64(1, row.metric_id);
      ins.BindInt64(2, row.event_time_seconds);
      ins.BindInt64(3, next_seq_++);
      ins.BindBlob(4, row.report_id.data(), static_cast<int>(row.report_id.size()));
      ins.BindInt64(5, row.design_version);
      ins.BindInt64(6, row.bit ? 1 : 0);
      ins.BindInt64(7, labelset_id);
      DENIABLE_RETURN_IF_ERROR(ins.Run());
      recent_.Insert(key, *hour, row.report_id);
      ++result.accepted;
      auto& [n, yes] =
          delta[{row.metric_id, row.event_time_seconds, row.design_version, labelset_id}];
      ++n;
      yes += row.bit ? 1 : 0;
    }
  }
  for (const auto& [key, value] : delta) {
    SqliteStatement& up = write_->upsert_count;
    up.BindInt64(1, std::get<0>(key));
    up.BindInt64(2, std::get<1>(key));
    up.BindInt64(3, std::get<2>(key));
    up.BindInt64(4, std::get<3>(key));
    up.BindInt64(5, value.first);
    up.BindInt64(6, value.second);
    DENIABLE_RETURN_IF_ERROR(up.Run());
  }
  DENIABLE_RETURN_IF_ERROR(write_->commit.Run());
  for (const auto& [canonical, id] : new_labelsets) labelset_ids_.emplace(canonical, id);
  return results;
}

absl::StatusOr<AppendResult> SqliteStorage::AppendReports(absl::Span<const ReportRow> rows) {
  const absl::Span<const ReportRow> one[] = {rows};
  DENIABLE_ASSIGN_OR_RETURN(std::vector<AppendResult> results, AppendBatches(one));
  return results.front();
}

absl::StatusOr<std::vector<AppendResult>> SqliteStorage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  absl::MutexLock lock(&write_mu_);
  DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
  recent_.Begin();
  absl::StatusOr<std::vector<AppendResult>> results = AppendLocked(batches);
  if (!results.ok()) {
    if (!sqlite3_get_autocommit(write_db_)) (void)write_->rollback.Run();
    recent_.Undo();
    return results;
  }
  recent_.Commit();
  if (recent_.size() > max_recent_reports_) {
    // The batch is committed whatever happens here; a failed move leaves its metric-hour recent
    // and is tried again after a later append.
    (void)MoveHours(recent_.OldestBeyond(max_recent_reports_ / 2));
  }
  return results;
}

absl::Status SqliteStorage::MoveHours(const std::vector<HourKey>& keys) {
  for (const HourKey& key : keys) {
    DENIABLE_RETURN_IF_ERROR(write_->begin.Run());
    auto body = [&]() -> absl::Status {
      for (SqliteStatement* st : {&write_->move_hour, &write_->delete_recent_hour}) {
        st->BindInt64(1, key.metric_id);
        st->BindInt64(2, key.event_time);
        DENIABLE_RETURN_IF_ERROR(st->Run());
      }
      return write_->commit.Run();
    };
    if (absl::Status s = body(); !s.ok()) {
      if (!sqlite3_get_autocommit(write_db_)) (void)write_->rollback.Run();
      return s;
    }
    recent_.Erase(key);
  }
  return absl::OkStatus();
}

absl::Status SqliteStorage::MoveRecentReports() {
  absl::MutexLock lock(&write_mu_);
  return MoveHours(recent_.All());
}

int64_t SqliteStorage::RecentReportCount() {
  absl::MutexLock lock(&write_mu_);
  return recent_.size();
}

absl::StatusOr<std::vector<CountRow>> SqliteStorage::ReadCounts(int64_t metric_id,
                                                                int64_t start_seconds,
                                                                int64_t end_seconds) {
  absl::MutexLock lock(&read_mu_);
  SqliteStatement& st = read_->read_counts;
  st.BindInt64(1, metric_id);
  st.BindInt64(2, start_seconds);
  st.BindInt64(3, end_seconds);
  std::vector<CountRow> rows;
  while (true) {
    absl::StatusOr<bool> row = st.Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    rows.push_back(CountRow{static_cast<uint32_t>(st.ColumnInt64(0)), st.ColumnInt64(1),
                            st.ColumnText(2), st.ColumnInt64(3), st.ColumnInt64(4)});
  }
  st.Reset();
  return rows;
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
