#include "server/storage/postgres/postgres_storage.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "deniable/common/status_macros.h"
#include "server/storage/postgres/postgres_counter_sums.h"
#include "server/storage/postgres/postgres_schema.h"

namespace deniable::server {
namespace {

constexpr char kMetricColumns[] =
    "id, name, description, created_time_seconds, time_precision_seconds, min_reports, "
    "reporting_period_seconds, randomization, categories, retention_days, retention_policy, "
    "window_firsts_off, reporting_once";

StoredMetric MetricFromRow(const PgResult& r, int row) {
  StoredMetric m;
  m.id = r.Int64(row, 0);
  m.name = r.Text(row, 1);
  m.description = r.Text(row, 2);
  m.created_time_seconds = r.Int64(row, 3);
  m.time_precision_seconds = static_cast<uint32_t>(r.Int64(row, 4));
  m.min_reports = static_cast<uint32_t>(r.Int64(row, 5));
  m.reporting_period_seconds = static_cast<uint32_t>(r.Int64(row, 6));
  m.randomization = static_cast<int>(r.Int64(row, 7));
  m.categories = SplitCategories(r.Text(row, 8));
  m.retention_days = static_cast<uint32_t>(r.Int64(row, 9));
  m.retention_policy = static_cast<int>(r.Int64(row, 10));
  m.window_firsts_off = r.Int64(row, 11) != 0;
  m.reporting_once = r.Int64(row, 12) != 0;
  return m;
}

StoredDesign DesignFromRow(const PgResult& r, int row, int first) {
  return StoredDesign{static_cast<uint32_t>(r.Int64(row, first)), r.Bytes(row, first + 1),
                      r.Double(row, first + 2), r.Double(row, first + 3), r.Int64(row, first + 4)};
}

// "0011...eeff" with dashes: PostgreSQL's text form of a uuid.
std::string UuidText(const ReportId& id) {
  std::string hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(id.data()), id.size()));
  return absl::StrCat(hex.substr(0, 8), "-", hex.substr(8, 4), "-", hex.substr(12, 4), "-",
                      hex.substr(16, 4), "-", hex.substr(20));
}

int64_t DayOf(int64_t seconds) {
  return seconds >= 0 ? seconds / kPartitionSeconds : -((-seconds - 1) / kPartitionSeconds) - 1;
}

// ReadCounts' statement: the count rows (kind 0: n, counter 0), the counter chunks (kind 1:
// win * 2^32 + chunk, offsets and sums as text) and the window-first counts (kind 2) of a
// metric's range, every shard's row as
// stored, in ONE statement, so one round trip and one snapshot (READ COMMITTED takes a snapshot per
// statement: both parts see the same committed appends). Each part is a scan of its primary key's
// range, which begins with (metric_id, event_time). The shards are summed and the rows ordered by
// ReadCounts, not by PostgreSQL: a GROUP BY and ORDER BY over the 720 hours of a month took 0.6
// to 1.0 ms of PostgreSQL's time, the plain rows 0.25 ms (EXPLAIN ANALYZE in docs/benchmarks.md),
// and that time is what a query waits for a core for when ingestion keeps both busy.
constexpr char kReadCountsName[] = "deniable_read_counts";
constexpr char kReadCounts[] =
    "SELECT 0, event_time, version, labels, n, counter0, NULL::text, NULL::text FROM counts "
    "WHERE metric_id = $1 AND event_time >= $2 AND event_time < $3 "
    "UNION ALL "
    "SELECT 1, event_time, version, labels, win::bigint * 4294967296 + chunk, 0, offsets::text, "
    "sums::text FROM counter_chunks WHERE metric_id = $1 AND event_time >= $2 AND event_time < $3 "
    "UNION ALL "
    "SELECT 2, event_time, version, labels, win::bigint * 4294967296 + counter + 1, count, "
    "NULL::text, NULL::text "
    "FROM first_counts WHERE metric_id = $1 AND event_time >= $2 AND event_time < $3";

std::string DoubleText(double v) { return absl::StrFormat("%.17g", v); }

absl::Status InsertDesign(PgConnection& conn, int64_t metric_id, const StoredDesign& d) {
  return conn
      .Exec(
          "INSERT INTO designs(metric_id, version, parameters, a, b, created_time_seconds) "
          "VALUES ($1, $2, $3, $4, $5, $6)",
          {absl::StrCat(metric_id), absl::StrCat(d.version), PgBytea(d.parameters), DoubleText(d.a),
           DoubleText(d.b), absl::StrCat(d.created_time_seconds)})
      .status();
}

}  // namespace

absl::StatusOr<StoredMetric> ReadPostgresMetric(PgConnection& conn, absl::string_view name) {
  DENIABLE_ASSIGN_OR_RETURN(PgResult r, conn.Exec(absl::StrCat("SELECT ", kMetricColumns,
                                                               " FROM metrics WHERE name = $1"),
                                                  {std::string(name)}));
  if (r.rows() == 0) {
    return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
  }
  StoredMetric m = MetricFromRow(r, 0);
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult d, conn.Exec("SELECT version, parameters, a, b, created_time_seconds FROM designs "
                            "WHERE metric_id = $1 ORDER BY version",
                            {absl::StrCat(m.id)}));
  for (int i = 0; i < d.rows(); ++i) m.designs.push_back(DesignFromRow(d, i, 0));
  return m;
}

absl::StatusOr<std::unique_ptr<PostgresStorage>> PostgresStorage::Open(
    const PostgresOptions& options) {
  if (options.uri.empty()) {
    return absl::InvalidArgumentError("uri: the PostgreSQL connection URI is empty");
  }
  auto storage = std::unique_ptr<PostgresStorage>(new PostgresStorage());
  std::vector<std::unique_ptr<Writer>> writers;
  for (int i = 0; i < kWriteConnections; ++i) {
    auto w = std::make_unique<Writer>();
    DENIABLE_ASSIGN_OR_RETURN(w->conn, PgConnection::Connect(options.uri));
    writers.push_back(std::move(w));
  }
  DENIABLE_ASSIGN_OR_RETURN(storage->reads_, PgPool::Open(options.uri, kReadConnections));
  DENIABLE_RETURN_IF_ERROR(EnsurePostgresSchema(*writers[0]->conn));
  for (size_t i = 0; i < writers.size(); ++i) {
    DENIABLE_ASSIGN_OR_RETURN(PgResult shard,
                              writers[0]->conn->Exec("SELECT nextval('collector_shards')"));
    writers[i]->shard = options.shard.has_value()
                            ? *options.shard
                            : static_cast<int>(shard.Int64(0, 0) % kCountShards);
  }
  storage->uri_ = options.uri;
  storage->max_label_values_ = options.max_label_values;
  storage->max_label_keys_ = options.max_label_keys;
  storage->shard_ = writers[0]->shard;
  absl::MutexLock lock(&storage->write_mu_);
  storage->idle_writers_ = std::move(writers);
  return storage;
}

absl::Status PostgresStorage::WithWriter(const std::function<absl::Status(Writer&)>& body) {
  std::unique_ptr<Writer> w;
  {
    absl::MutexLock lock(&write_mu_);
    auto idle = [this]()
                    ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_) { return !idle_writers_.empty(); };
    write_mu_.Await(absl::Condition(&idle));
    w = std::move(idle_writers_.back());
    idle_writers_.pop_back();
  }
  absl::Status s = body(*w);
  absl::MutexLock lock(&write_mu_);
  idle_writers_.push_back(std::move(w));
  return s;
}

absl::StatusOr<StoredMetric> PostgresStorage::CreateMetric(StoredMetric metric) {
  if (metric.designs.size() != 1 || metric.designs[0].version != 1) {
    return absl::InvalidArgumentError("designs: a new metric has exactly one design, version 1");
  }
  absl::Status s = WithWriter([&](Writer& w) {
    return w.conn->Transaction([&]() -> absl::Status {
      DENIABLE_ASSIGN_OR_RETURN(
          PgResult r,
          w.conn->Exec(
              "INSERT INTO metrics(name, description, created_time_seconds, "
              "time_precision_seconds, min_reports, reporting_period_seconds, "
              "randomization, categories, retention_days, retention_policy, window_firsts_off, "
              "reporting_once) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
              "RETURNING id",
              {metric.name, metric.description, absl::StrCat(metric.created_time_seconds),
               absl::StrCat(metric.time_precision_seconds), absl::StrCat(metric.min_reports),
               absl::StrCat(metric.reporting_period_seconds), absl::StrCat(metric.randomization),
               JoinCategories(metric.categories), absl::StrCat(metric.retention_days),
               absl::StrCat(metric.retention_policy), metric.window_firsts_off ? "1" : "0",
               metric.reporting_once ? "1" : "0"}));
      metric.id = r.Int64(0, 0);
      return InsertDesign(*w.conn, metric.id, metric.designs[0]);
    });
  });
  if (absl::IsAlreadyExists(s)) {
    return absl::AlreadyExistsError(absl::StrCat("metric \"", metric.name, "\" already exists"));
  }
  if (!s.ok()) return s;
  return metric;
}

absl::StatusOr<StoredMetric> PostgresStorage::AddDesignVersion(absl::string_view name,
                                                               StoredDesign design) {
  StoredMetric metric;
  absl::Status s = WithWriter([&](Writer& w) {
    return w.conn->Transaction([&]() -> absl::Status {
      // FOR NO KEY UPDATE: two collectors adding a version to one metric take turns, and a
      // delete (FOR UPDATE) waits or is waited for; the appends in flight, which hold KEY SHARE
      // locks on the row (LockMetrics), are not waited for, so a new version reaches the
      // database at once under any load.
      DENIABLE_ASSIGN_OR_RETURN(PgResult locked,
                                w.conn->Exec("SELECT id FROM metrics WHERE name = $1 FOR NO KEY "
                                             "UPDATE",
                                             {std::string(name)}));
      if (locked.rows() == 0) {
        return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
      }
      DENIABLE_ASSIGN_OR_RETURN(metric, ReadPostgresMetric(*w.conn, name));
      const uint32_t next = metric.designs.empty() ? 1 : metric.designs.back().version + 1;
      if (design.version != next) {
        return absl::FailedPreconditionError(absl::StrCat("metric \"", name, "\": next version is ",
                                                          next, ", not ", design.version));
      }
      return InsertDesign(*w.conn, metric.id, design);
    });
  });
  if (absl::IsAlreadyExists(s)) {
    return absl::FailedPreconditionError(
        absl::StrCat("metric \"", name, "\": version ", design.version, " was added concurrently"));
  }
  if (!s.ok()) return s;
  metric.designs.push_back(std::move(design));
  return metric;
}

absl::Status PostgresStorage::DeleteMetric(absl::string_view name) {
  return WithWriter([&](Writer& w) {
    return w.conn->Transaction([&]() -> absl::Status {
      // FOR UPDATE: a concurrent AddDesignVersion on another collector waits for the delete.
      DENIABLE_ASSIGN_OR_RETURN(
          PgResult locked,
          w.conn->Exec("SELECT id FROM metrics WHERE name = $1 FOR UPDATE", {std::string(name)}));
      if (locked.rows() == 0) {
        return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
      }
      const std::string id = absl::StrCat(locked.Int64(0, 0));
      for (const char* sql :
           {"DELETE FROM reports WHERE metric_id = $1", "DELETE FROM counts WHERE metric_id = $1",
            "DELETE FROM counter_chunks WHERE metric_id = $1",
            "DELETE FROM first_counts WHERE metric_id = $1",
            "DELETE FROM label_values WHERE metric_id = $1",
            "DELETE FROM designs WHERE metric_id = $1", "DELETE FROM metrics WHERE id = $1"}) {
        DENIABLE_RETURN_IF_ERROR(w.conn->Exec(sql, {id}).status());
      }
      return absl::OkStatus();
    });
  });
}

absl::StatusOr<StoredMetric> PostgresStorage::SetRetention(absl::string_view name, uint32_t days,
                                                           int policy) {
  DENIABLE_RETURN_IF_ERROR(CheckRetention(days, policy));
  StoredMetric metric;
  DENIABLE_RETURN_IF_ERROR(WithWriter([&](Writer& w) -> absl::Status {
    // An UPDATE of non-key columns: it does not wait for appends (their FOR KEY SHARE locks).
    DENIABLE_ASSIGN_OR_RETURN(
        PgResult r, w.conn->Exec("UPDATE metrics SET retention_days = $2, retention_policy = $3 "
                                 "WHERE name = $1 RETURNING id",
                                 {std::string(name), absl::StrCat(days), absl::StrCat(policy)}));
    if (r.rows() == 0) {
      return absl::NotFoundError(absl::StrCat("metric \"", name, "\" does not exist"));
    }
    DENIABLE_ASSIGN_OR_RETURN(metric, ReadPostgresMetric(*w.conn, name));
    return absl::OkStatus();
  }));
  return metric;
}

absl::StatusOr<int64_t> PostgresStorage::DeleteExpired(const char* table, int64_t metric_id,
                                                       int64_t cutoff, int64_t batch_rows) {
  // Rows by ctid within one table (counts, counter_chunks) or by key (reports: a partitioned
  // table, whose ctids repeat across partitions).
  const std::string sql =
      absl::string_view(table) == "reports"
          ? std::string(
                "DELETE FROM reports WHERE metric_id = $1 AND (event_time, report_id) IN (SELECT "
                "event_time, report_id FROM reports WHERE metric_id = $1 AND event_time < $2 "
                "LIMIT $3)")
          : absl::StrCat("DELETE FROM ", table, " WHERE ctid = ANY(ARRAY(SELECT ctid FROM ", table,
                         " WHERE metric_id = $1 AND event_time < $2 LIMIT $3))");
  int64_t total = 0;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(PgResult r,
                              retention_->Exec(sql, {absl::StrCat(metric_id), absl::StrCat(cutoff),
                                                     absl::StrCat(batch_rows)}));
    const int64_t deleted = r.AffectedRows();
    total += deleted;
    if (deleted < batch_rows) return total;
  }
}

absl::StatusOr<int64_t> PostgresStorage::FoldShards(const char* table, int64_t cutoff,
                                                    int64_t batch_rows) {
  const bool chunks = absl::string_view(table) == "counter_chunks";
  const std::string key = chunks ? "metric_id, event_time, version, labels, win, chunk"
                                 : "metric_id, event_time, version, labels";
  const std::string conflict = chunks ? "metric_id, event_time, version, labels, shard, win, chunk"
                                      : "metric_id, event_time, version, labels, shard";
  const std::string moved_cte = absl::StrCat("WITH moved AS (DELETE FROM ", table,
                                             " WHERE ctid = ANY(ARRAY(SELECT ctid FROM ", table,
                                             " WHERE event_time < $1 AND shard <> $2 ORDER BY ",
                                             conflict, " LIMIT $3 FOR UPDATE)) RETURNING ", key,
                                             ", ", chunks ? "offsets, sums" : "n, counter0", ")");
  // counter_chunks: the moved chunks' cells summed per key and offset, then one chunk per key.
  const std::string sql =
      chunks ? absl::StrCat(moved_cte, ", cells AS (SELECT ", key,
                            ", o, sum(s)::bigint AS s FROM moved, unnest(moved.offsets, "
                            "moved.sums) AS u(o, s) GROUP BY ",
                            key, ", o), added AS (INSERT INTO counter_chunks AS t(", key,
                            ", shard, offsets, sums) SELECT ", key,
                            ", $2, array_agg(o ORDER BY o), array_agg(s ORDER BY o) FROM cells "
                            "GROUP BY ",
                            key, " ORDER BY ", key, " ON CONFLICT (", conflict, ") DO UPDATE SET ",
                            kMergeCounterChunk, ") SELECT count(*) FROM moved")
             : absl::StrCat(moved_cte, ", added AS (INSERT INTO counts AS t(", key,
                            ", shard, n, counter0) SELECT ", key,
                            ", $2, sum(n)::bigint, sum(counter0)::bigint FROM moved GROUP BY ", key,
                            " ORDER BY ", key, " ON CONFLICT (", conflict,
                            ") DO UPDATE SET n = t.n + EXCLUDED.n, counter0 = t.counter0 + "
                            "EXCLUDED.counter0) SELECT count(*) FROM moved");
  int64_t total = 0;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(
        PgResult r, retention_->Exec(sql, {absl::StrCat(cutoff), absl::StrCat(kFoldedShard),
                                           absl::StrCat(batch_rows)}));
    const int64_t moved = r.Int64(0, 0);
    total += moved;
    if (moved < batch_rows) return total;
  }
}

absl::Status PostgresStorage::DropExpiredPartitions(const std::vector<StoredMetric>& metrics,
                                                    const RetentionOptions& options,
                                                    RetentionResult* result) {
  int64_t latest_cutoff = std::numeric_limits<int64_t>::min();
  for (const StoredMetric& m : metrics) {
    latest_cutoff = std::max(latest_cutoff, RetentionCutoff(m, options));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult parts,
      retention_->Exec("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                       "JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'reports' "
                       "ORDER BY c.relname"));
  for (int i = 0; i < parts.rows(); ++i) {
    const std::string relname = parts.Text(i, 0);
    absl::Time day_start;
    std::string error;
    // %E4Y: exactly four digits (%Y would take all eight).
    if (!absl::ParseTime("reports_%E4Y%m%d", relname, absl::UTCTimeZone(), &day_start, &error)) {
      continue;  // not one of ours
    }
    const int64_t day = absl::ToUnixSeconds(day_start) / kPartitionSeconds;
    if (PartitionName(day) != relname) continue;
    const int64_t day_end = (day + 1) * kPartitionSeconds;
    if (day_end > latest_cutoff) continue;
    // Every metric whose cutoff does not cover the whole day must have no row in it (one index
    // probe each; metric_id leads the key).
    bool droppable = true;
    for (const StoredMetric& m : metrics) {
      if (day_end <= RetentionCutoff(m, options)) continue;
      DENIABLE_ASSIGN_OR_RETURN(
          PgResult any,
          retention_->Exec(absl::StrCat("SELECT 1 FROM ", relname, " WHERE metric_id = $1 LIMIT 1"),
                           {absl::StrCat(m.id)}));
      if (any.rows() > 0) {
        droppable = false;
        break;
      }
    }
    if (!droppable) continue;
    std::vector<std::pair<int64_t, int64_t>> dropped;  // metric id, reports
    const absl::Status dropped_ok = retention_->Transaction([&]() -> absl::Status {
      retention_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
      dropped.clear();
      DENIABLE_ASSIGN_OR_RETURN(PgResult counted,
                                retention_->Exec(absl::StrCat("SELECT metric_id, count(*) FROM ",
                                                              relname, " GROUP BY metric_id")));
      for (int j = 0; j < counted.rows(); ++j) {
        dropped.emplace_back(counted.Int64(j, 0), counted.Int64(j, 1));
      }
      return retention_->Exec(absl::StrCat("DROP TABLE ", relname)).status();
    });
    if (!dropped_ok.ok()) return dropped_ok;
    {
      absl::MutexLock plock(&partition_mu_);  // this collector creates the day again if it needs it
      partition_days_.erase(day);
    }
    ++result->partitions_dropped;
    for (const auto& [id, n] : dropped) {
      for (const StoredMetric& m : metrics) {
        if (m.id == id) result->Count(m, n);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RetentionResult> PostgresStorage::ApplyRetention(const RetentionOptions& options) {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<StoredMetric> metrics, ListMetrics());
  const int64_t batch = std::max<int64_t>(1, options.batch_rows);
  RetentionResult result;
  // A connection of its own: appends never wait for a retention statement (only PostgreSQL's row
  // and partition locks order them).
  absl::MutexLock lock(&retention_mu_);
  if (retention_ == nullptr) {
    DENIABLE_ASSIGN_OR_RETURN(retention_, PgConnection::Connect(uri_));
  }
  DENIABLE_ASSIGN_OR_RETURN(PgResult locked, retention_->Exec("SELECT pg_try_advisory_lock($1)",
                                                              {absl::StrCat(kRetentionLockKey)}));
  if (!locked.Bool(0, 0)) return result;  // another collector is applying retention
  absl::Status s = [&]() -> absl::Status {
    retention_mu_.AssertHeld();  // run with it held (-Wthread-safety cannot see it)
    DENIABLE_RETURN_IF_ERROR(DropExpiredPartitions(metrics, options, &result));
    for (const StoredMetric& m : metrics) {
      if (m.retention_days == 0) continue;
      const int64_t cutoff = RetentionCutoff(m, options);
      DENIABLE_ASSIGN_OR_RETURN(int64_t reports, DeleteExpired("reports", m.id, cutoff, batch));
      result.Count(m, reports);
      if (m.retention_policy != kRetentionDropCounts) continue;
      DENIABLE_ASSIGN_OR_RETURN(int64_t counts, DeleteExpired("counts", m.id, cutoff, batch));
      result.count_rows_dropped += counts;
      DENIABLE_RETURN_IF_ERROR(DeleteExpired("counter_chunks", m.id, cutoff, batch).status());
      DENIABLE_RETURN_IF_ERROR(DeleteExpired("first_counts", m.id, cutoff, batch).status());
    }
    // The hours that ended kFoldAfterSeconds ago: [.., fold) with fold on an hour boundary.
    const int64_t fold = (options.now_seconds - kFoldAfterSeconds) / 3600 * 3600;
    DENIABLE_ASSIGN_OR_RETURN(result.count_rows_folded, FoldShards("counts", fold, batch));
    DENIABLE_ASSIGN_OR_RETURN(int64_t counter_rows, FoldShards("counter_chunks", fold, batch));
    result.count_rows_folded += counter_rows;
    return absl::OkStatus();
  }();
  (void)retention_->Exec("SELECT pg_advisory_unlock($1)", {absl::StrCat(kRetentionLockKey)});
  if (!s.ok()) return s;
  return result;
}

absl::StatusOr<StoredMetric> PostgresStorage::GetMetric(absl::string_view name) {
  StoredMetric metric;
  DENIABLE_RETURN_IF_ERROR(reads_->Run([&](PgConnection& conn) -> absl::Status {
    DENIABLE_ASSIGN_OR_RETURN(metric, ReadPostgresMetric(conn, name));
    return absl::OkStatus();
  }));
  return metric;
}

absl::StatusOr<std::vector<StoredMetric>> PostgresStorage::ListMetrics() {
  std::vector<StoredMetric> metrics;
  absl::Status s = reads_->Run([&](PgConnection& conn) {
    metrics.clear();
    return conn.Transaction([&]() -> absl::Status {
      DENIABLE_ASSIGN_OR_RETURN(
          PgResult r, conn.Exec(absl::StrCat("SELECT ", kMetricColumns,
                                             " FROM metrics ORDER BY name COLLATE \"C\"")));
      absl::flat_hash_map<int64_t, size_t> index;
      for (int i = 0; i < r.rows(); ++i) {
        metrics.push_back(MetricFromRow(r, i));
        index[metrics.back().id] = metrics.size() - 1;
      }
      DENIABLE_ASSIGN_OR_RETURN(
          PgResult d, conn.Exec("SELECT metric_id, version, parameters, a, b, created_time_seconds "
                                "FROM designs ORDER BY metric_id, version"));
      for (int i = 0; i < d.rows(); ++i) {
        if (auto it = index.find(d.Int64(i, 0)); it != index.end()) {
          metrics[it->second].designs.push_back(DesignFromRow(d, i, 1));
        }
      }
      return absl::OkStatus();
    });
  });
  if (!s.ok()) return s;
  return metrics;
}

absl::StatusOr<AppendResult> PostgresStorage::AppendReports(absl::Span<const ReportRow> rows) {
  const absl::Span<const ReportRow> one[] = {rows};
  DENIABLE_ASSIGN_OR_RETURN(std::vector<AppendResult> results, AppendBatches(one));
  return results.front();
}

absl::StatusOr<std::vector<AppendResult>> PostgresStorage::AppendBatches(
    absl::Span<const absl::Span<const ReportRow>> batches) {
  std::vector<AppendResult> results;
  std::vector<std::pair<int64_t, std::string>> checked;
  const absl::Status appended = WithWriter([&](Writer& w) -> absl::Status {
    DENIABLE_RETURN_IF_ERROR(EnsurePartitions(w, batches));
    absl::Status s = w.conn->Transaction([&]() -> absl::Status {
      checked.clear();
      DENIABLE_ASSIGN_OR_RETURN(results, AppendLocked(w, batches, &checked));
      return absl::OkStatus();
    });
    if (!s.ok()) {
      // A partition dropped by an operator meanwhile is created again on the next call, and the
      // staging table, if this transaction made it, was rolled back with it.
      absl::MutexLock lock(&partition_mu_);
      partition_days_.clear();
      w.staging_session = -1;
    }
    return s;
  });
  if (!appended.ok()) return appended;
  known_labelsets_.Add(checked);
  std::vector<std::pair<int64_t, std::string>> full;
  for (const AppendResult& r : results) {
    for (const LabelValueRefusal& refusal : r.label_refusals) {
      if (!refusal.new_key) full.emplace_back(refusal.metric_id, refusal.key);
    }
  }
  full_keys_.Add(full);
  return results;
}

absl::Status PostgresStorage::EnsurePartitions(
    Writer& w, absl::Span<const absl::Span<const ReportRow>> batches) {
  absl::MutexLock lock(&partition_mu_);
  for (absl::Span<const ReportRow> batch : batches) {
    for (const ReportRow& row : batch) {
      const int64_t day = DayOf(row.event_time_seconds);
      if (partition_days_.contains(day)) continue;
      DENIABLE_RETURN_IF_ERROR(EnsurePartition(*w.conn, day));
      partition_days_.insert(day);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PgResult> PostgresStorage::InsertReports(Writer& w,
                                                        absl::Span<const ReportRow* const> rows,
                                                        absl::Span<const std::string* const> ids) {
  constexpr char kInsert[] =
      "INSERT INTO reports(metric_id, event_time, report_id, version, bit, labels) ";
  constexpr char kReturning[] =
      " ON CONFLICT DO NOTHING RETURNING metric_id, event_time, report_id";
  if (rows.size() >= kCopyRows) {
    // The staging table lives as long as the session: made again after a reconnect.
    if (w.staging_session != w.conn->reconnects()) {
      DENIABLE_RETURN_IF_ERROR(
          w.conn
              ->Exec("CREATE TEMP TABLE IF NOT EXISTS report_staging(metric_id bigint, "
                     "event_time bigint, report_id uuid, version integer, bit boolean, "
                     "labels text) ON COMMIT DELETE ROWS")
              .status());
      w.staging_session = w.conn->reconnects();
    }
    std::string data;
    data.reserve(rows.size() * 72);
    for (size_t i = 0; i < rows.size(); ++i) {
      const ReportRow& r = *rows[i];
      absl::StrAppend(&data, r.metric_id, "\t", r.event_time_seconds, "\t", *ids[i], "\t",
                      r.design_version, AddsToCounter0(r.counters) ? "\tt\t" : "\tf\t",
                      CopyText(r.labels), "\n");
    }
    absl::Status copied = w.conn->CopyIn("COPY report_staging FROM STDIN", data);
    if (!copied.ok()) {
      w.staging_session = -1;  // a failed COPY may leave the session without it
      return copied;
    }
    // Key order, as below: concurrent transactions lock conflicting keys in the same order.
    return w.conn->Exec(absl::StrCat(kInsert,
                                     "SELECT * FROM report_staging ORDER BY metric_id, "
                                     "event_time, report_id",
                                     kReturning));
  }
  std::vector<int64_t> metric, time, version, bit;
  std::vector<std::string> id, labels;
  for (size_t i = 0; i < rows.size(); ++i) {
    const ReportRow& row = *rows[i];
    metric.push_back(row.metric_id);
    time.push_back(row.event_time_seconds);
    id.push_back(*ids[i]);
    version.push_back(row.design_version);
    bit.push_back(AddsToCounter0(row.counters) ? 1 : 0);
    labels.push_back(row.labels);
  }
  return w.conn->ExecPrepared(
      "deniable_insert_reports",
      absl::StrCat(kInsert,
                   "SELECT m, t, i, v, b::int::boolean, l FROM unnest($1::bigint[], "
                   "$2::bigint[], $3::uuid[], $4::integer[], $5::integer[], $6::text[]) "
                   "AS u(m, t, i, v, b, l)",
                   kReturning),
      {PgIntArray(metric), PgIntArray(time), PgTextArray(id), PgIntArray(version), PgIntArray(bit),
       PgTextArray(labels)});
}

absl::StatusOr<absl::flat_hash_set<int64_t>> PostgresStorage::LockMetrics(
    Writer& w, absl::Span<const absl::Span<const ReportRow>> batches) {
  std::vector<int64_t> ids;
  for (absl::Span<const ReportRow> batch : batches) {
    for (const ReportRow& row : batch) ids.push_back(row.metric_id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  // FOR KEY SHARE: DeleteMetric's FOR UPDATE of the row waits for this transaction (and then
  // deletes the rows it stored), or this one waits for the delete and finds no row. Appends do
  // not block each other (KEY SHARE locks are compatible) nor an UPDATE of non-key columns.
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r, w.conn->ExecPrepared("deniable_lock_metrics",
                                       "SELECT id FROM metrics WHERE id = ANY($1::bigint[]) "
                                       "ORDER BY id FOR KEY SHARE",
                                       {PgIntArray(ids)}));
  absl::flat_hash_set<int64_t> existing;
  for (int i = 0; i < r.rows(); ++i) existing.insert(r.Int64(i, 0));
  return existing;
}

namespace {

using LabelValue = LabelValueAdmission::Value;

// The (metric, key, value) of `batches`' rows whose labels `known_labelsets` does not hold
// (each once), for rows of an `existing` metric; check[b][i] tells whether row i of batch b has
// such labels (then it goes through the admission).
std::vector<LabelValue> LabelValuesToCheck(absl::Span<const absl::Span<const ReportRow>> batches,
                                           const absl::flat_hash_set<int64_t>& existing,
                                           const KnownLabelsets& known_labelsets,
                                           std::vector<std::vector<bool>>& check) {
  std::vector<LabelValue> values;
  absl::flat_hash_set<LabelValue> seen;
  check.resize(batches.size());
  for (size_t b = 0; b < batches.size(); ++b) {
    check[b].assign(batches[b].size(), false);
    for (size_t i = 0; i < batches[b].size(); ++i) {
      const ReportRow& row = batches[b][i];
      if (row.labels.empty() || !existing.contains(row.metric_id) ||
          known_labelsets.Contains(row.metric_id, row.labels)) {
        continue;
      }
      check[b][i] = true;
      for (const auto& [key, value] : SplitLabels(row.labels)) {
        LabelValue v{row.metric_id, std::string(key), std::string(value)};
        if (seen.insert(v).second) values.push_back(std::move(v));
      }
    }
  }
  return values;
}

// Adds to `known` which of `values` table label_values holds (one statement).
absl::Status ReadKnownLabelValues(PgConnection& conn, const std::vector<LabelValue>& values,
                                  absl::flat_hash_set<LabelValue>& known) {
  std::vector<int64_t> m;
  std::vector<std::string> k, v;
  for (const auto& [metric, key, value] : values) {
    m.push_back(metric);
    k.push_back(key);
    v.push_back(value);
  }
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r, conn.ExecPrepared("deniable_label_values_known",
                                    "SELECT l.metric_id, l.key, l.value FROM label_values l JOIN "
                                    "unnest($1::bigint[], $2::text[], $3::text[]) AS u(m, k, v) ON "
                                    "l.metric_id = u.m AND l.key = u.k AND l.value = u.v",
                                    {PgIntArray(m), PgTextArray(k), PgTextArray(v)}));
  for (int i = 0; i < r.rows(); ++i) known.insert({r.Int64(i, 0), r.Text(i, 1), r.Text(i, 2)});
  return absl::OkStatus();
}

// Takes turns with other collectors admitting values of the same metrics: each metric's
// advisory lock until the end of the transaction, in ascending id order (`metrics` is sorted),
// so that two appends never wait on each other in a cycle.
absl::Status LockLabelValueMetrics(PgConnection& conn, const std::vector<int64_t>& metrics) {
  for (int64_t metric : metrics) {
    DENIABLE_RETURN_IF_ERROR(
        conn.ExecPrepared("deniable_lock_label_values",
                          "SELECT pg_advisory_xact_lock($1::integer, $2::integer)",
                          {absl::StrCat(kLabelValuesLockClass),
                           absl::StrCat(static_cast<int32_t>(metric % 2147483647))})
            .status());
  }
  return absl::OkStatus();
}

// The stored values of each (metric, key) of `unknown` into `counts`, and the distinct keys of
// each of `metrics` into `keys` (two statements).
absl::Status CountLabelValues(PgConnection& conn, const std::vector<LabelValue>& unknown,
                              const std::vector<int64_t>& metrics,
                              absl::flat_hash_map<std::pair<int64_t, std::string>, int64_t>& counts,
                              absl::flat_hash_map<int64_t, int64_t>& keys) {
  std::vector<int64_t> cm;
  std::vector<std::string> ck;
  absl::flat_hash_set<std::pair<int64_t, std::string>> seen;
  for (const auto& [metric, key, value] : unknown) {
    if (seen.insert({metric, key}).second) {
      cm.push_back(metric);
      ck.push_back(key);
    }
  }
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult counted,
      conn.ExecPrepared("deniable_label_values_count",
                        "SELECT l.metric_id, l.key, count(*) FROM label_values l JOIN "
                        "unnest($1::bigint[], $2::text[]) AS u(m, k) ON l.metric_id = u.m AND "
                        "l.key = u.k GROUP BY l.metric_id, l.key",
                        {PgIntArray(cm), PgTextArray(ck)}));
  for (int i = 0; i < counted.rows(); ++i) {
    counts[{counted.Int64(i, 0), counted.Text(i, 1)}] = counted.Int64(i, 2);
  }
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult per_metric,
      conn.ExecPrepared("deniable_label_keys_count",
                        "SELECT metric_id, count(DISTINCT key) FROM label_values "
                        "WHERE metric_id = ANY($1::bigint[]) GROUP BY metric_id",
                        {PgIntArray(metrics)}));
  for (int i = 0; i < per_metric.rows(); ++i) {
    keys[per_metric.Int64(i, 0)] = per_metric.Int64(i, 1);
  }
  return absl::OkStatus();
}

using ReportKey = std::tuple<int64_t, int64_t, std::string>;  // metric, event time, uuid text

// A row of an append to insert: the first occurrence of its key in the call.
struct AppendCandidate {
  ReportKey key;
  const ReportRow* row;
  size_t batch;
};

// The rows of `batches` to insert, in call order. A row of a metric not `existing` (deleted
// since the batch was validated) goes to its result's missing_metrics; a row with check[b][i]
// goes through `labels` (refused: its result's label_refusals; admitted: its (metric, labels)
// into `checked`); a later occurrence of a key is its batch's duplicate.
// Errors: those of the admission's lookups.
absl::StatusOr<std::vector<AppendCandidate>> SelectAppendCandidates(
    absl::Span<const absl::Span<const ReportRow>> batches,
    const absl::flat_hash_set<int64_t>& existing, const std::vector<std::vector<bool>>& check,
    LabelValueAdmission& labels, std::vector<AppendResult>& results,
    std::vector<std::pair<int64_t, std::string>>& checked) {
  std::vector<AppendCandidate> candidates;
  absl::flat_hash_set<ReportKey> seen;
  for (size_t b = 0; b < batches.size(); ++b) {
    for (size_t i = 0; i < batches[b].size(); ++i) {
      const ReportRow& row = batches[b][i];
      if (!existing.contains(row.metric_id)) {
        if (!results[b].IsMissing(row.metric_id))
          results[b].missing_metrics.push_back(row.metric_id);
        continue;
      }
      if (check[b][i]) {
        DENIABLE_ASSIGN_OR_RETURN(std::optional<LabelCapRefusal> refused,
                                  labels.Admit(row.metric_id, row.labels));
        if (refused.has_value()) {
          results[b].label_refusals.push_back({i, row.metric_id, refused->key, labels.max_values(),
                                               labels.max_keys(), refused->new_key});
          continue;
        }
        checked.emplace_back(row.metric_id, row.labels);
      }
      ReportKey key{row.metric_id, row.event_time_seconds, UuidText(row.report_id)};
      if (!seen.insert(key).second) {
        results[b].Count(row.metric_id, /*duplicate=*/true);
        continue;
      }
      candidates.push_back(AppendCandidate{std::move(key), &row, b});
    }
  }
  return candidates;
}

// Stores the values the admission added (one statement; ON CONFLICT DO NOTHING).
absl::Status StoreLabelValues(PgConnection& conn, const std::vector<LabelValue>& added) {
  if (added.empty()) return absl::OkStatus();
  std::vector<int64_t> lm;
  std::vector<std::string> lk, lv;
  for (const auto& [metric, key, value] : added) {
    lm.push_back(metric);
    lk.push_back(key);
    lv.push_back(value);
  }
  return conn
      .ExecPrepared("deniable_add_label_values",
                    "INSERT INTO label_values(metric_id, key, value) SELECT * FROM "
                    "unnest($1::bigint[], $2::text[], $3::text[]) ON CONFLICT DO NOTHING",
                    {PgIntArray(lm), PgTextArray(lk), PgTextArray(lv)})
      .status();
}

// What an append's stored rows add: (metric, event time, version, labels) -> (n, counter 0),
// in key order (concurrent transactions update conflicting rows in the same order); the rows
// adding to counters >= 1 (postgres_counter_sums.h) and the rows first in some window.
struct AppendTally {
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string>, std::pair<int64_t, int64_t>> delta;
  std::vector<const ReportRow*> with_sums;
  std::vector<const ReportRow*> with_firsts;
};

// Counts each candidate in its batch's result (stored when its key is `fresh`, else a duplicate)
// and tallies the stored ones.
AppendTally TallyStored(const std::vector<AppendCandidate>& candidates,
                        const absl::flat_hash_set<ReportKey>& fresh,
                        std::vector<AppendResult>& results) {
  AppendTally tally;
  for (const AppendCandidate& c : candidates) {
    if (!fresh.contains(c.key)) {
      results[c.batch].Count(c.row->metric_id, /*duplicate=*/true);
      continue;
    }
    results[c.batch].Count(c.row->metric_id, /*duplicate=*/false);
    const bool counter0 = AddsToCounter0(c.row->counters);
    if (c.row->counters.size() > (counter0 ? 1u : 0u)) tally.with_sums.push_back(c.row);
    if (c.row->window_firsts > 0) tally.with_firsts.push_back(c.row);
    auto& [n, sum0] = tally.delta[{c.row->metric_id, c.row->event_time_seconds,
                                   c.row->design_version, c.row->labels}];
    ++n;
    sum0 += counter0 ? 1 : 0;
  }
  return tally;
}

// Adds `delta` to table counts under collector shard `shard` (one upsert).
absl::Status AddCountsDelta(PgConnection& conn, const AppendTally& tally, int shard) {
  std::vector<int64_t> cm, ct, cv, cn, cy;
  std::vector<std::string> cl;
  for (const auto& [key, value] : tally.delta) {
    cm.push_back(std::get<0>(key));
    ct.push_back(std::get<1>(key));
    cv.push_back(std::get<2>(key));
    cl.push_back(std::get<3>(key));
    cn.push_back(value.first);
    cy.push_back(value.second);
  }
  return conn
      .ExecPrepared(
          "deniable_add_counts",
          "INSERT INTO counts(metric_id, event_time, version, labels, shard, n, counter0) "
          "SELECT m, t, v, l, $7, n, y FROM unnest($1::bigint[], $2::bigint[], "
          "$3::integer[], $4::text[], $5::bigint[], $6::bigint[]) AS u(m, t, v, l, n, y) "
          "ON CONFLICT (metric_id, event_time, version, labels, shard) DO UPDATE "
          "SET n = counts.n + EXCLUDED.n, counter0 = counts.counter0 + EXCLUDED.counter0",
          {PgIntArray(cm), PgIntArray(ct), PgIntArray(cv), PgTextArray(cl), PgIntArray(cn),
           PgIntArray(cy), absl::StrCat(shard)})
      .status();
}

}  // namespace

absl::StatusOr<PostgresStorage::LabelValueState> PostgresStorage::ReadLabelValues(
    Writer& w, absl::Span<const absl::Span<const ReportRow>> batches,
    const absl::flat_hash_set<int64_t>& existing) {
  LabelValueState state;
  std::vector<LabelValue> values =
      LabelValuesToCheck(batches, existing, known_labelsets_, state.check);
  if (values.empty()) return state;
  DENIABLE_RETURN_IF_ERROR(ReadKnownLabelValues(*w.conn, values, state.known));
  // A new value of a key known to be full is refused without the lock: a key's values only grow
  // (they leave with their metric, whose id never comes back).
  std::vector<LabelValue> unknown;
  for (LabelValue& v : values) {
    if (state.known.contains(v)) continue;
    if (max_label_values_ > 0 && full_keys_.Contains(std::get<0>(v), std::get<1>(v))) {
      state.counts[{std::get<0>(v), std::get<1>(v)}] = max_label_values_;
      continue;
    }
    unknown.push_back(std::move(v));
  }
  if (unknown.empty()) return state;
  // New values: take turns with other collectors admitting values of the same metrics, then read
  // again what they committed meanwhile, and count.
  std::vector<int64_t> metrics;
  for (const LabelValue& v : unknown) metrics.push_back(std::get<0>(v));
  std::sort(metrics.begin(), metrics.end());
  metrics.erase(std::unique(metrics.begin(), metrics.end()), metrics.end());
  DENIABLE_RETURN_IF_ERROR(LockLabelValueMetrics(*w.conn, metrics));
  DENIABLE_RETURN_IF_ERROR(ReadKnownLabelValues(*w.conn, unknown, state.known));
  DENIABLE_RETURN_IF_ERROR(CountLabelValues(*w.conn, unknown, metrics, state.counts, state.keys));
  return state;
}

absl::StatusOr<std::vector<AppendResult>> PostgresStorage::AppendLocked(
    Writer& w, absl::Span<const absl::Span<const ReportRow>> batches,
    std::vector<std::pair<int64_t, std::string>>* checked) {
  std::vector<AppendResult> results(batches.size());
  DENIABLE_ASSIGN_OR_RETURN(const absl::flat_hash_set<int64_t> existing, LockMetrics(w, batches));
  DENIABLE_ASSIGN_OR_RETURN(const LabelValueState label_state,
                            ReadLabelValues(w, batches, existing));
  LabelValueAdmission labels(
      max_label_values_, max_label_keys_,
      {.known = [&](int64_t metric, absl::string_view key,
                    absl::string_view value) -> absl::StatusOr<bool> {
         return label_state.known.contains(
             LabelValueAdmission::Value{metric, std::string(key), std::string(value)});
       },
       .count = [&](int64_t metric, absl::string_view key) -> absl::StatusOr<int64_t> {
         auto it = label_state.counts.find(std::make_pair(metric, std::string(key)));
         return it == label_state.counts.end() ? 0 : it->second;
       },
       .keys = [&](int64_t metric) -> absl::StatusOr<int64_t> {
         auto it = label_state.keys.find(metric);
         return it == label_state.keys.end() ? 0 : it->second;
       }});
  DENIABLE_ASSIGN_OR_RETURN(
      const std::vector<AppendCandidate> candidates,
      SelectAppendCandidates(batches, existing, label_state.check, labels, results, *checked));
  DENIABLE_RETURN_IF_ERROR(StoreLabelValues(*w.conn, labels.added()));
  if (candidates.empty()) return results;
  // Key order: concurrent transactions lock conflicting keys in the same order (no deadlock).
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return candidates[x].key < candidates[y].key; });
  std::vector<const ReportRow*> sorted;
  std::vector<const std::string*> ids;
  sorted.reserve(order.size());
  ids.reserve(order.size());
  for (size_t i : order) {
    sorted.push_back(candidates[i].row);
    ids.push_back(&std::get<2>(candidates[i].key));
  }
  DENIABLE_ASSIGN_OR_RETURN(PgResult inserted, InsertReports(w, sorted, ids));
  absl::flat_hash_set<ReportKey> fresh;
  fresh.reserve(static_cast<size_t>(inserted.rows()));
  for (int i = 0; i < inserted.rows(); ++i) {
    fresh.insert(ReportKey{inserted.Int64(i, 0), inserted.Int64(i, 1), inserted.Text(i, 2)});
  }
  const AppendTally tally = TallyStored(candidates, fresh, results);
  if (tally.delta.empty()) return results;
  DENIABLE_RETURN_IF_ERROR(AddCountsDelta(*w.conn, tally, w.shard));
  DENIABLE_RETURN_IF_ERROR(AddPostgresCounterSums(*w.conn, tally.with_sums, w.shard));
  DENIABLE_RETURN_IF_ERROR(AddPostgresFirstCounts(*w.conn, tally.with_firsts, w.shard));
  return results;
}

absl::StatusOr<std::vector<CountRow>> PostgresStorage::ReadCounts(int64_t metric_id,
                                                                  int64_t start_seconds,
                                                                  int64_t end_seconds) {
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r, reads_->ReadPrepared(kReadCountsName, kReadCounts,
                                       {absl::StrCat(metric_id), absl::StrCat(start_seconds),
                                        absl::StrCat(end_seconds)}));
  // (event time, version, labels) -> the row, summed over shards; the map's order is the
  // interface's (event time first).
  std::map<std::tuple<int64_t, uint32_t, std::string>, CountRow> summed;
  // Each row's counters >= 1 (cells[0]) and window firsts' counters (cells[1 + window]) as read.
  struct Pending {
    std::array<std::vector<std::pair<uint32_t, int64_t>>, 4> cells;
  };
  absl::flat_hash_map<CountRow*, Pending> pending;
  for (int i = 0; i < r.rows(); ++i) {
    if (r.Int64(i, 0) != 0) continue;
    const auto version = static_cast<uint32_t>(r.Int64(i, 2));
    const int64_t time = r.Int64(i, 1);
    CountRow& row = summed[{time, version, r.Text(i, 3)}];
    row.design_version = version;
    row.event_time_seconds = time;
    row.n += r.Int64(i, 4);
    AddCounter(&row.counters, 0, r.Int64(i, 5));
  }
  for (int i = 0; i < r.rows(); ++i) {
    if (r.Int64(i, 0) == 0) continue;
    auto it = summed.find({r.Int64(i, 1), static_cast<uint32_t>(r.Int64(i, 2)), r.Text(i, 3)});
    if (it == summed.end()) {
      return absl::DataLossError(absl::StrCat(
          "metric ", metric_id, ": counter sums without counts in the PostgreSQL database"));
    }
    // Cells arrive in no order (no ORDER BY: sorting 470 000 chunk rows of a heavy-hitters
    // month took PostgreSQL 0.6 s); each row's are sorted below, so its SparseCounters grow at
    // their end.
    Pending& p = pending[&it->second];
    if (r.Int64(i, 0) == 2) {  // first_counts: win * 2^32 + counter + 1
      const int64_t code = r.Int64(i, 4);
      const int64_t w = code >> 32;
      const int64_t counter = (code & 0xffffffff) - 1;
      if (w < 0 || w > 2) return absl::DataLossError("first_counts: window out of range");
      if (counter >= deniable::kMaxCounterLayoutLength) {
        return absl::DataLossError(absl::StrCat("first_counts: metric ", metric_id, " has counter ",
                                                counter,
                                                ", past the largest "
                                                "layout"));
      }
      if (counter < 0) {
        it->second.firsts[static_cast<size_t>(w)].n += r.Int64(i, 5);
      } else {
        p.cells[static_cast<size_t>(w) + 1].emplace_back(static_cast<uint32_t>(counter),
                                                         r.Int64(i, 5));
      }
      continue;
    }
    // counter_chunks: win * 2^32 + chunk (win -1: every report's counters).
    const int64_t code = r.Int64(i, 4);
    const int64_t w = code >> 32;  // arithmetic: -1 stays -1
    const int64_t chunk = code & 0xffffffff;
    DENIABLE_RETURN_IF_ERROR(DecodePostgresChunk(
        metric_id, w, chunk, r.Text(i, 6), r.Text(i, 7), [&](uint32_t counter, int64_t sum) {
          p.cells[static_cast<size_t>(w + 1)].emplace_back(counter, sum);
        }));
  }
  for (auto& [row, cells] : pending) {
    for (size_t list = 0; list < cells.cells.size(); ++list) {
      std::vector<std::pair<uint32_t, int64_t>>& c = cells.cells[list];
      std::sort(c.begin(), c.end());
      SparseCounters& to = list == 0 ? row->counters : row->firsts[list - 1].counters;
      for (const auto& [counter, sum] : c) AddCounter(&to, counter, sum);
    }
  }
  std::vector<CountRow> rows;
  rows.reserve(summed.size());
  for (auto& [key, row] : summed) {
    row.labels = std::get<2>(key);
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::Status PostgresStorage::Health() { return reads_->Read("SELECT 1").status(); }

absl::StatusOr<int64_t> PostgresStorage::ReportCount() {
  DENIABLE_ASSIGN_OR_RETURN(PgResult r, reads_->Read("SELECT count(*) FROM reports"));
  return r.Int64(0, 0);
}

}  // namespace deniable::server
