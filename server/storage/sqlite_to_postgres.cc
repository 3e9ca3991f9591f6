#include "server/storage/sqlite_to_postgres.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/postgres_storage.h"
#include "server/storage/postgres_token_store.h"
#include "server/storage/sqlite_statement.h"
#include "server/storage/sqlite_storage.h"
#include "server/storage/sqlite_token_store.h"

namespace deniable::server {
namespace {

constexpr size_t kChunkReports = 50'000;

using CountKey = std::tuple<uint32_t, int64_t, std::string>;  // version, event time, labels
using CountMap = std::map<CountKey, std::pair<int64_t, int64_t>>;

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

absl::StatusOr<CountMap> SqliteCounts(sqlite3* db, int64_t metric_id) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db,
                               "SELECT c.version, c.event_time, l.canonical, c.n, c.yes FROM "
                               "counts c JOIN labelsets l ON l.id = c.labelset_id "
                               "WHERE c.metric_id = ?"));
  st.BindInt64(1, metric_id);
  CountMap out;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    auto& [n, yes] =
        out[{static_cast<uint32_t>(st.ColumnInt64(0)), st.ColumnInt64(1), st.ColumnText(2)}];
    n += st.ColumnInt64(3);
    yes += st.ColumnInt64(4);
  }
  return out;
}

using SupportMap = std::map<CountKey, std::vector<int64_t>>;
// (version, event time, labels, window, category: -2 n, -1 yes, v support) -> first reports
// (sqlite_schema.h version 5), without zeros.
using FirstsMap = std::map<std::tuple<uint32_t, int64_t, std::string, int64_t, int64_t>, int64_t>;

absl::StatusOr<FirstsMap> SqliteFirsts(sqlite3* db, int64_t metric_id) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db,
                               "SELECT c.version, c.event_time, l.canonical, c.win, c.category, "
                               "c.count FROM first_counts c JOIN labelsets l ON l.id = "
                               "c.labelset_id WHERE c.metric_id = ? AND c.count <> 0"));
  st.BindInt64(1, metric_id);
  FirstsMap out;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out[{static_cast<uint32_t>(st.ColumnInt64(0)), st.ColumnInt64(1), st.ColumnText(2),
         st.ColumnInt64(3), st.ColumnInt64(4)}] += st.ColumnInt64(5);
  }
  return out;
}

// The same map from the target's count rows.
FirstsMap FirstsOf(const std::vector<CountRow>& rows) {
  FirstsMap out;
  for (const CountRow& c : rows) {
    for (size_t w = 0; w < c.firsts.size(); ++w) {
      const CountRow::Firsts& f = c.firsts[w];
      const auto key = [&](int64_t category) {
        return std::make_tuple(c.design_version, c.event_time_seconds, c.labels,
                               static_cast<int64_t>(w), category);
      };
      if (f.n != 0) out[key(-2)] = f.n;
      if (f.yes != 0) out[key(-1)] = f.yes;
      for (size_t v = 0; v < f.support.size(); ++v) {
        if (f.support[v] != 0) out[key(static_cast<int64_t>(v))] = f.support[v];
      }
    }
  }
  return out;
}

// The category support counts of a categorical metric (empty for a yes/no metric).
absl::StatusOr<SupportMap> SqliteSupport(sqlite3* db, int64_t metric_id) {
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement st,
      SqliteStatement::Prepare(db,
                               "SELECT c.version, c.event_time, l.canonical, c.category, "
                               "c.support FROM category_counts c JOIN labelsets l ON l.id = "
                               "c.labelset_id WHERE c.metric_id = ?"));
  st.BindInt64(1, metric_id);
  SupportMap out;
  while (true) {
    DENIABLE_ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    AddCategorySupport(
        &out[{static_cast<uint32_t>(st.ColumnInt64(0)), st.ColumnInt64(1), st.ColumnText(2)}],
        static_cast<size_t>(st.ColumnInt64(3)), st.ColumnInt64(4));
  }
  for (auto& [key, support] : out) {
    while (!support.empty() && support.back() == 0) support.pop_back();
  }
  return out;
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
  absl::flat_hash_map<int64_t, int64_t> metric_ids;  // SQLite id -> PostgreSQL id
  for (const StoredMetric& m : metrics) {
    DENIABLE_ASSIGN_OR_RETURN(metric_ids[m.id], CopyMetric(m, *target, summary));
  }
  summary.metrics = static_cast<int64_t>(metrics.size());
  progress(absl::StrCat("migrate: metrics ", summary.metrics, " (created ", summary.metrics_created,
                        ", versions added ", summary.versions_added, ")\n"));

  {
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
    progress(absl::StrCat("migrate: tokens ", summary.tokens, " (copied ", summary.tokens_copied,
                          ")\n"));
  }

  // A read connection of our own beside the storage (WAL lets it read while the storage holds
  // the writer lock).
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(sqlite_path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, &sqlite3_close);
  if (rc != SQLITE_OK) {
    return SqliteError(raw, rc, absl::StrCat("opening \"", sqlite_path, "\" for reading"));
  }
  int64_t total = 0;
  {
    DENIABLE_ASSIGN_OR_RETURN(
        SqliteStatement count,
        SqliteStatement::Prepare(db.get(), "SELECT count(*) FROM stored_reports"));
    DENIABLE_ASSIGN_OR_RETURN(bool row, count.Step());
    total = row ? count.ColumnInt64(0) : 0;
  }
  DENIABLE_ASSIGN_OR_RETURN(
      SqliteStatement reports,
      SqliteStatement::Prepare(db.get(),
                               "SELECT r.metric_id, r.event_time, r.report_id, r.version, r.bit, "
                               "l.canonical, r.support, r.firsts FROM stored_reports r "
                               "JOIN labelsets l ON l.id = r.labelset_id"));
  std::vector<ReportRow> chunk;
  auto flush = [&]() -> absl::Status {
    if (chunk.empty()) return absl::OkStatus();
    DENIABLE_ASSIGN_OR_RETURN(AppendResult r, target->AppendReports(chunk));
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
    r.bit = reports.ColumnInt64(4) != 0;
    r.labels = reports.ColumnText(5);
    // A categorical report carries its supported categories: PostgreSQL counts them again.
    if (!reports.ColumnIsNull(6)) {
      r.categorical = true;
      r.supported = DecodeSupport(reports.ColumnBlob(6));
    }
    // Its window flags: PostgreSQL counts its firsts again.
    if (!reports.ColumnIsNull(7)) r.window_firsts = static_cast<int>(reports.ColumnInt64(7));
    chunk.push_back(std::move(r));
    if (chunk.size() == kChunkReports) DENIABLE_RETURN_IF_ERROR(flush());
  }
  DENIABLE_RETURN_IF_ERROR(flush());

  // Verification: every count row of every metric equal on both sides.
  for (const StoredMetric& m : metrics) {
    DENIABLE_ASSIGN_OR_RETURN(CountMap want, SqliteCounts(db.get(), m.id));
    DENIABLE_ASSIGN_OR_RETURN(std::vector<CountRow> rows,
                              target->ReadCounts(metric_ids[m.id], INT64_MIN, INT64_MAX));
    CountMap got;
    SupportMap got_support;
    for (const CountRow& c : rows) {
      got[{c.design_version, c.event_time_seconds, c.labels}] = {c.n, c.yes};
      if (!c.support.empty())
        got_support[{c.design_version, c.event_time_seconds, c.labels}] = c.support;
    }
    DENIABLE_ASSIGN_OR_RETURN(SupportMap want_support, SqliteSupport(db.get(), m.id));
    DENIABLE_ASSIGN_OR_RETURN(FirstsMap want_firsts, SqliteFirsts(db.get(), m.id));
    if (FirstsOf(rows) != want_firsts) {
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed: metric \"", m.name,
          "\" has window-first counts in PostgreSQL that differ from the SQLite database"));
    }
    if (got_support != want_support) {
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed: metric \"", m.name,
          "\" has category support counts in PostgreSQL that differ from the SQLite database"));
    }
    if (got != want) {
      for (const auto& [key, value] : want) {
        auto it = got.find(key);
        const std::pair<int64_t, int64_t> there = it == got.end() ? std::pair{0L, 0L} : it->second;
        if (there != value) {
          return absl::FailedPreconditionError(
              absl::StrCat("verification failed: metric \"", m.name, "\" version ",
                           std::get<0>(key), " event time ", std::get<1>(key), " labels \"",
                           std::get<2>(key), "\": SQLite n=", value.first, " yes=", value.second,
                           ", PostgreSQL n=", there.first, " yes=", there.second));
        }
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "verification failed: metric \"", m.name,
          "\" has counts in PostgreSQL that the SQLite database lacks (collectors already "
          "write there?)"));
    }
    summary.count_rows_verified += static_cast<int64_t>(want.size());
  }
  progress(absl::StrCat("migrate: verified ", summary.count_rows_verified,
                        " count rows: PostgreSQL equals the SQLite database\n"));
  return summary;
}

}  // namespace deniable::server
