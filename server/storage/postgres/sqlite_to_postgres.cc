#include "server/storage/postgres/sqlite_to_postgres.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deniable/common/status_macros.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/postgres/postgres_token_store.h"
#include "server/storage/sqlite/sqlite_keyed_file.h"
#include "server/storage/sqlite/sqlite_statement.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/sqlite/sqlite_token_store.h"

namespace deniable::server {
namespace {

constexpr size_t kChunkReports = 50'000;

using CountKey = std::tuple<uint32_t, int64_t, std::string>;  // version, event time, labels

// Makes `to` hold `from`'s designs: creates the metric or appends the versions it lacks.
absl::StatusOr<int64_t> CopyMetric(const StoredMetric& from, PostgresStorage& to,
                                   MigrationSummary& summary) {
  absl::StatusOr<StoredMetric> existing = to.GetMetric(from.name);
  if (absl::IsNotFound(existing.status())) {
    StoredMetric first = from;
    first.designs.resize(1);
    existing = to.CreateMetric(first);
    if (existing.ok()) ++summary.metrics_created;
  }
  if (!existing.ok()) return existing.status();
  for (const StoredDesign& d : from.designs) {
    if (d.version <= existing->designs.size()) {
      const StoredDesign& there = existing->designs[d.version - 1];
      if (there.parameters != d.parameters) {
        return absl::FailedPreconditionError(
            absl::StrCat("metric \"", from.name, "\" version ", d.version,
                         " has a different design in PostgreSQL than in the SQLite database"));
      }
      continue;
    }
    DENIABLE_ASSIGN_OR_RETURN(*existing, to.AddDesignVersion(from.name, d));
    ++summary.versions_added;
  }
  return existing->id;
}

// A metric's count rows by key: n, the counter vector and the window firsts, as read through
// the Storage interface (so both sides are compared in the same, kind-blind form).
using CountMap = std::map<CountKey, const CountRow*>;
CountMap ByKey(const std::vector<CountRow>& rows) {
  CountMap out;
  for (const CountRow& c : rows) out[{c.design_version, c.event_time_seconds, c.labels}] = &c;
  return out;
}

bool SameFirsts(const CountRow& a, const CountRow& b) {
  for (size_t w = 0; w < a.firsts.size(); ++w) {
    if (a.firsts[w].n != b.firsts[w].n || a.firsts[w].counters != b.firsts[w].counters) {
      return false;
    }
  }
  return true;
}

// Copies every metric of `source` into `target`; returns the SQLite id -> PostgreSQL id of each.
absl::StatusOr<absl::flat_hash_map<int64_t, int64_t>> CopyMetrics(
    const std::vector<StoredMetric>& metrics, PostgresStorage& target, MigrationSummary& summary,
    const std::function<void(const std::string&)>& progress) {
  absl::flat_hash_map<int64_t, int64_t> metric_ids;
  for (const StoredMetric& m : metrics) {
    DENIABLE_ASSIGN_OR_RETURN(metric_ids[m.id], CopyMetric(m, target, summary));
  }
  summary.metrics = static_cast<int64_t>(metrics.size());
  progress(absl::StrCat("migrate: metrics ", summary.metrics, " (created ", summary.metrics_created,
                        ", versions added ", summary.versions_added, ")\n"));
  return metric_ids;
}

// Copies the tokens of `sqlite_path` into the PostgreSQL database at `uri` (those there already
// are skipped).
absl::Status CopyTokens(const std::string& sqlite_path, const std::string& uri,
                        MigrationSummary& summary,
                        const std::function<void(const std::string&)>& progress) {
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<SqliteTokenStore> tokens,
                            SqliteTokenStore::Open(sqlite_path));
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PostgresTokenStore> pg_tokens,
                            PostgresTokenStore::Open(uri));
  DENIABLE_ASSIGN_OR_RETURN(std::vector<TokenRecord> records, tokens->List());
  for (const TokenRecord& r : records) {
    DENIABLE_ASSIGN_OR_RETURN(bool copied, pg_tokens->Import(r));
    summary.tokens_copied += copied ? 1 : 0;
  }
  summary.tokens = static_cast<int64_t>(records.size());
  progress(
      absl::StrCat("migrate: tokens ", summary.tokens, " (copied ", summary.tokens_copied, ")\n"));
  return absl::OkStatus();
}

using SqliteHandle = std::unique_ptr<sqlite3, int (*)(sqlite3*)>;

// A read connection of our own beside the storage (WAL lets it read while the storage holds the
// writer lock), with the keyed file attached: stored_reports reads both (sqlite_keyed_file.h).
absl::StatusOr<SqliteHandle> OpenSqliteReader(const std::string& sqlite_path) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(sqlite_path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  SqliteHandle db(raw, &sqlite3_close);
  if (rc != SQLITE_OK) {
    return SqliteError(raw, rc, absl::StrCat("opening \"", sqlite_path, "\" for reading"));
  }
  DENIABLE_RETURN_IF_ERROR(AttachKeyedReports(db.get(), sqlite_path));
  return db;
}

// The report at `reports`' current row (metric_id, event_time, report_id, version, bit,
// canonical labels, support, firsts), its metric id mapped through `metric_ids`.
// Errors: DATA_LOSS for a report of a metric that does not exist or an id not 16 bytes long.
absl::StatusOr<ReportRow> ReadStoredReport(
    SqliteStatement& reports, const absl::flat_hash_map<int64_t, int64_t>& metric_ids) {
  ReportRow r;
  auto it = metric_ids.find(reports.ColumnInt64(0));
  if (it == metric_ids.end()) {
    return absl::DataLossError(absl::StrCat("the SQLite database holds reports of metric id ",
                                            reports.ColumnInt64(0), ", which does not exist"));
  }
  r.metric_id = it->second;
  r.event_time_seconds = reports.ColumnInt64(1);
  const std::string id = reports.ColumnBlob(2);
  if (id.size() != r.report_id.size()) {
    return absl::DataLossError("the SQLite database holds a report id that is not 16 bytes");
  }
  std::copy(id.begin(), id.end(), r.report_id.begin());
  r.design_version = static_cast<uint32_t>(reports.ColumnInt64(3));
  r.labels = reports.ColumnText(5);
  // The report's counters (bit and support, storage.h DecodeCounters): PostgreSQL counts them
  // again.
  DENIABLE_ASSIGN_OR_RETURN(
      r.counters,
      DecodeCounters(reports.ColumnInt64(4),
                     reports.ColumnIsNull(6) ? std::nullopt
                                             : std::optional<std::string>(reports.ColumnBlob(6)),
                     "stored_reports"));
  // Its window flags: PostgreSQL counts its firsts again.
  if (!reports.ColumnIsNull(7)) r.window_firsts = static_cast<int>(reports.ColumnInt64(7));
  return r;
}

// Copies every stored report of `db` into `target` through AppendReports, kChunkReports at a
// time (its deduplication counts a report copied before as a duplicate).
absl::Status CopyReports(sqlite3* db, const absl::flat_hash_map<int64_t, int64_t>& metric_ids,
                         PostgresStorage& target, MigrationSummary& summary,
                         const std::function<void(const std::string&)>& progress) {
  int64_t total = 0;
  {
    DENIABLE_ASSIGN_OR_RETURN(SqliteStatement count,
                              SqliteStatement::Prepare(db, "SELECT count(*) FROM stored_reports"));
    DENIABLE_ASSIGN_OR_RETURN(bool row, count.Step());
    total = row ? count.ColumnInt64(0) : 0;
  }
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement reports,
      SqliteStatement::Prepare(db,
                               "SELECT r.metric_id, r.event_time, r.report_id, r.version, r.bit, "
                               "l.canonical, r.support, r.firsts FROM stored_reports r "
                               "JOIN labelsets l ON l.id = r.labelset_id"));
  std::vector<ReportRow> chunk;
  auto flush = [&]() -> absl::Status {
    if (chunk.empty()) return absl::OkStatus();
    DENIABLE_ASSIGN_OR_RETURN(AppendResult r, target.AppendReports(chunk));
    summary.reports += static_cast<int64_t>(chunk.size());
    summary.reports_copied += r.accepted;
    chunk.clear();
    progress(absl::StrCat("migrate: reports ", summary.reports, " / ", total, " (new ",
                          summary.reports_copied, ")\n"));
    return absl::OkStatus();
  };
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, reports.Step());
    if (!row) break;
    DENIABLE_ASSIGN_OR_RETURN(ReportRow r, ReadStoredReport(reports, metric_ids));
    chunk.push_back(std::move(r));
    if (chunk.size() == kChunkReports) DENIABLE_RETURN_IF_ERROR(flush());
  }
  return flush();
}

// Verification of one metric: every count row equal on both sides; returns how many.
// Errors: FAILED_PRECONDITION naming the metric (and the row) that differs.
absl::StatusOr<int64_t> VerifyCounts(const StoredMetric& m, int64_t target_id,
                                     SqliteStorage& source, PostgresStorage& target) {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<CountRow> source_rows,
                            source.ReadCounts(m.id, INT64_MIN, INT64_MAX));
  DENIABLE_ASSIGN_OR_RETURN(std::vector<CountRow> rows,
                            target.ReadCounts(target_id, INT64_MIN, INT64_MAX));
  const CountMap want = ByKey(source_rows);
  const CountMap got = ByKey(rows);
  for (const auto& [key, row] : want) {
    auto it = got.find(key);
    const CountRow none;
    const CountRow& there = it == got.end() ? none : *it->second;
    if (there.n != row->n || there.counters != row->counters) {
      return absl::FailedPreconditionError(
          absl::StrCat("verification failed: metric \"", m.name, "\" version ", std::get<0>(key),
                       " event time ", std::get<1>(key), " labels \"", std::get<2>(key),
                       "\": SQLite n=", row->n, " counters=[", row->counters.ToString(),
                       "], PostgreSQL n=", there.n, " counters=[", there.counters.ToString(), "]"));
    }
    if (!SameFirsts(there, *row)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed: metric \"", m.name,
          "\" has window-first counts in PostgreSQL that differ from the SQLite database"));
    }
  }
  if (got.size() != want.size()) {
    return absl::FailedPreconditionError(
        absl::StrCat("verification failed: metric \"", m.name,
                     "\" has counts in PostgreSQL that the SQLite database lacks (collectors "
                     "already write there?)"));
  }
  return static_cast<int64_t>(want.size());
}

}  // namespace

absl::StatusOr<MigrationSummary> MigrateSqliteToPostgres(
    const std::string& sqlite_path, const std::string& uri,
    const std::function<void(const std::string&)>& progress) {
  struct stat st {};
  if (sqlite_path.empty() || stat(sqlite_path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrCat("from: the SQLite database \"", sqlite_path, "\" does not exist"));
  }
  MigrationSummary summary;
  // Opening the SqliteStorage takes the writer lock: no collector writes while we copy. The
  // target has no cap on label values: it takes every report the source stored (a source whose
  // keys have more values than --max_label_values stored them before the cap or under a larger
  // one, or in more keys than --max_label_keys), and rebuilds its label_values from them.
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<SqliteStorage> source,
                            SqliteStorage::Open({.path = sqlite_path}));
  DENIABLE_ASSIGN_OR_RETURN(
      std::unique_ptr<PostgresStorage> target,
      PostgresStorage::Open({.uri = uri, .max_label_values = 0, .max_label_keys = 0}));
  progress(absl::StrCat("migrate: from ", sqlite_path, " to ", RedactedConninfo(uri), "\n"));

  DENIABLE_ASSIGN_OR_RETURN(std::vector<StoredMetric> metrics, source->ListMetrics());
  DENIABLE_ASSIGN_OR_RETURN(const auto metric_ids,
                            CopyMetrics(metrics, *target, summary, progress));
  DENIABLE_RETURN_IF_ERROR(CopyTokens(sqlite_path, uri, summary, progress));
  DENIABLE_ASSIGN_OR_RETURN(SqliteHandle db, OpenSqliteReader(sqlite_path));
  DENIABLE_RETURN_IF_ERROR(CopyReports(db.get(), metric_ids, *target, summary, progress));

  // Verification: every count row of every metric equal on both sides.
  for (const StoredMetric& m : metrics) {
    DENIABLE_ASSIGN_OR_RETURN(int64_t verified,
                              VerifyCounts(m, metric_ids.at(m.id), *source, *target));
    summary.count_rows_verified += verified;
  }
  progress(absl::StrCat("migrate: verified ", summary.count_rows_verified,
                        " count rows: PostgreSQL equals the SQLite database\n"));
  return summary;
}

}  // namespace deniable::server
