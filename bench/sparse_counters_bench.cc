// Counters of a large layout against yes/no and categorical in one run (issue 37;
// docs/performance.md, "Large counter layouts"): a sketch of 16 384 cells x 2 counters ([trials,
// ones]) of which one report touches one cell's two counters, and a yes/no metric, each ingested
// over `--hours` hours through SqliteStorage (batches of --batch_reports, one transaction each) and
// through GroupCommitStorage (--writers threads of --writer_batch reports). Prints for each kind:
// reports/s, bytes stored per report (the files' growth / reports), and the time and the rows
// read of a ReadCounts over every hour (and, for comparison, the rows the per-counter table of
// schema version 9 would have held: one per (hour, touched counter)).
//
// --postgres: the same through PostgresStorage on a PostgreSQL 15 of its own (TestPostgres;
// batches of --batch_reports), for --postgres_kinds (default yes/no, the sketch and a
// heavy-hitters layout of 1 114 112 counters, 2 touched a report): reports/s, the counter
// tables' bytes per report (pg_total_relation_size of counts, the counter table and
// first_counts), the 720-hour ReadCounts and the rows it reads (counts + counter_chunks, or
// counter_sums on a tree before schema version 8, + first_counts).
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/database_files.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/sqlite/sqlite_storage.h"
#include "server/storage/testing/test_postgres.h"

ABSL_FLAG(int64_t, hours, 720, "hours the reports spread over (the read covers all of them)");
ABSL_FLAG(int64_t, reports, 720'000, "reports per kind and path");
ABSL_FLAG(int, batch_reports, 1000, "reports per AppendReports call through SqliteStorage");
ABSL_FLAG(int, writers, 8, "threads appending through GroupCommitStorage");
ABSL_FLAG(int, writer_batch, 100, "reports per GroupCommitStorage call");
ABSL_FLAG(int, reads, 5, "ReadCounts runs over every hour (the median is printed)");
ABSL_FLAG(std::string, dir, "", "directory for the databases (default: a new temporary one)");
ABSL_FLAG(bool, postgres, false, "run through PostgresStorage on a PostgreSQL of its own");
ABSL_FLAG(std::string, postgres_kinds, "yes_no,sketch,hh",
          "kinds of the --postgres run (yes_no, categ8, sketch, hh), comma-separated");

namespace deniable::bench {
namespace {

using server::ReportRow;

constexpr uint32_t kCells = 16384;
// Heavy hitters at the defaults (common/heavy_hitters.h): 34 groups x 16 rows x 1 024
// coefficients, 2 counters a cell (reports, ones): 1 114 112 counters.
constexpr uint32_t kHeavyHittersCells = 34 * 16 * 1024;

// `count` reports of `metric` spread evenly over `hours` hours, ids from a seeded generator; a
// sketch report touches counters 2c and 2c + 1 of a random cell c, a categorical one (k = 8) each
// counter with probability 1/4, a yes/no report counter 0 half of the time.
enum class Kind { kYesNo, kCategorical, kSketch, kHeavyHitters };
const char* KindName(Kind kind) {
  return kind == Kind::kYesNo         ? "yes_no"
         : kind == Kind::kCategorical ? "categ8"
         : kind == Kind::kSketch      ? "sketch"
                                      : "hh";
}

std::vector<ReportRow> MakeReports(int64_t metric, Kind kind, int64_t count, int64_t hours,
                                   uint64_t seed) {
  // The index type of ReportRow::counters (so that this bench also builds against older trees).
  using Index = std::decay_t<decltype(ReportRow().counters)>::value_type;
  std::mt19937_64 rng(seed);
  std::vector<ReportRow> rows(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    ReportRow& r = rows[static_cast<size_t>(i)];
    r.metric_id = metric;
    r.design_version = 1;
    const uint64_t a = rng(), b = rng();
    for (int k = 0; k < 8; ++k) {
      r.report_id[static_cast<size_t>(k)] = static_cast<uint8_t>(a >> (8 * k));
      r.report_id[static_cast<size_t>(8 + k)] = static_cast<uint8_t>(b >> (8 * k));
    }
    r.event_time_seconds = 1'700'000'000 / 3600 * 3600 + (i % hours) * 3600;
    if (kind == Kind::kSketch || kind == Kind::kHeavyHitters) {
      const auto cell =
          static_cast<uint32_t>(rng() % (kind == Kind::kSketch ? kCells : kHeavyHittersCells));
      r.counters.push_back(static_cast<Index>(2 * cell));
      r.counters.push_back(static_cast<Index>(2 * cell + 1));
    } else if (kind == Kind::kCategorical) {  // each of 8 categories supported with p = 1/4
      const uint64_t bits = rng();
      for (uint32_t v = 0; v < 8; ++v) {
        if (((bits >> (2 * v)) & 3) == 0) r.counters.push_back(static_cast<Index>(v));
      }
    } else if ((rng() & 1) != 0) {
      r.counters.push_back(0);
    }
  }
  return rows;
}

int64_t ScalarQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t v = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return v;
}

// The rows a table of one row per (hour, counter >= 1) holds for `rows` (schema version 9's
// counter_sums), from the reports themselves.
int64_t PerCounterRows(const std::vector<ReportRow>& rows) {
  std::set<std::pair<int64_t, uint32_t>> cells;
  for (const ReportRow& r : rows) {
    for (auto j : r.counters) {
      if (j != 0) cells.emplace(r.event_time_seconds, static_cast<uint32_t>(j));
    }
  }
  return static_cast<int64_t>(cells.size());
}

struct Figures {
  double reports_per_second = 0;
  double bytes_per_report = 0;
  double read_ms = 0;
  int64_t count_rows = 0;     // CountRows returned
  int64_t rows_read = 0;      // counts + counter_chunks + first_counts rows of the metric
  int64_t v9_rows = 0;        // counts + one row per (hour, touched counter >= 1)
  int64_t counters_read = 0;  // non-zero counters returned
};

absl::StatusOr<Figures> Run(const std::string& path, Kind kind, bool group_commit) {
  RemoveDatabase(path);
  Figures f;
  const int64_t count = absl::GetFlag(FLAGS_reports);
  const int64_t hours = absl::GetFlag(FLAGS_hours);
  int64_t metric_id = 0;
  {
    server::SqliteOptions options;
    options.path = path;
    auto opened = server::SqliteStorage::Open(options);
    if (!opened.ok()) return opened.status();
    std::unique_ptr<server::Storage> storage = *std::move(opened);
    if (group_commit) {
      storage = std::make_unique<server::GroupCommitStorage>(std::move(storage));
    }
    server::StoredMetric m;
    m.name = KindName(kind);
    m.description = "bench";
    m.designs.push_back(server::StoredDesign{1, "p", 0.75, 0.25, 0});
    absl::StatusOr<server::StoredMetric> created = storage->CreateMetric(m);
    if (!created.ok()) return created.status();
    metric_id = created->id;
    const std::vector<ReportRow> rows = MakeReports(metric_id, kind, count, hours, 37);
    f.v9_rows = PerCounterRows(rows);
    const int64_t before = DatabaseBytes(path);
    const absl::Time start = absl::Now();
    if (!group_commit) {
      const auto batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch_reports));
      for (size_t i = 0; i < rows.size(); i += batch) {
        const size_t n = std::min(batch, rows.size() - i);
        absl::StatusOr<server::AppendResult> r =
            storage->AppendReports(absl::MakeConstSpan(rows).subspan(i, n));
        if (!r.ok()) return r.status();
      }
    } else {
      const int writers = absl::GetFlag(FLAGS_writers);
      const auto batch = static_cast<size_t>(absl::GetFlag(FLAGS_writer_batch));
      std::vector<std::thread> threads;
      std::vector<absl::Status> failures(static_cast<size_t>(writers));
      for (int w = 0; w < writers; ++w) {
        threads.emplace_back([&, w] {
          for (size_t i = static_cast<size_t>(w) * batch; i < rows.size();
               i += static_cast<size_t>(writers) * batch) {
            const size_t n = std::min(batch, rows.size() - i);
            absl::StatusOr<server::AppendResult> r =
                storage->AppendReports(absl::MakeConstSpan(rows).subspan(i, n));
            if (!r.ok()) failures[static_cast<size_t>(w)] = r.status();
          }
        });
      }
      for (std::thread& t : threads) t.join();
      for (const absl::Status& s : failures) {
        if (!s.ok()) return s;
      }
    }
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    f.reports_per_second = static_cast<double>(count) / seconds;
    std::vector<double> reads;
    for (int i = 0; i < absl::GetFlag(FLAGS_reads); ++i) {
      const absl::Time t = absl::Now();
      absl::StatusOr<std::vector<server::CountRow>> counts =
          storage->ReadCounts(metric_id, 0, INT64_MAX);
      reads.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
      if (!counts.ok()) return counts.status();
      f.count_rows = static_cast<int64_t>(counts->size());
      f.counters_read = 0;
      for (const server::CountRow& c : *counts) {
        f.counters_read += static_cast<int64_t>(c.counters.size());
      }
    }
    std::sort(reads.begin(), reads.end());
    f.read_ms = reads[reads.size() / 2];
    storage.reset();  // closes (checkpoints) both files
    f.bytes_per_report =
        static_cast<double>(DatabaseBytes(path) - before) / static_cast<double>(count);
  }
  const std::string where = absl::StrCat(" WHERE metric_id = ", metric_id);
  const int64_t counts = ScalarQuery(path, "SELECT count(*) FROM counts" + where);
  // counter_chunks (schema version 10) or counter_sums (before): whichever the file has.
  const bool chunks =
      ScalarQuery(path, "SELECT count(*) FROM sqlite_master WHERE name = 'counter_chunks'") == 1;
  f.rows_read = counts +
                ScalarQuery(path, absl::StrCat("SELECT count(*) FROM ",
                                               chunks ? "counter_chunks" : "counter_sums", where)) +
                ScalarQuery(path, "SELECT count(*) FROM first_counts" + where);
  // counter_deltas (schema version 12): the deltas not folded into the chunks yet.
  if (ScalarQuery(path, "SELECT count(*) FROM sqlite_master WHERE name = 'counter_deltas'") == 1) {
    f.rows_read += ScalarQuery(path, "SELECT count(*) FROM counter_deltas" + where);
  }
  f.v9_rows += counts;
  return f;
}

// The --postgres run of `kind` on a new database of `pg`.
absl::StatusOr<Figures> RunPostgres(server::testing_util::TestPostgres& pg, Kind kind) {
  Figures f;
  const int64_t count = absl::GetFlag(FLAGS_reports);
  const int64_t hours = absl::GetFlag(FLAGS_hours);
  absl::StatusOr<std::string> uri = pg.NewDatabase();
  if (!uri.ok()) return uri.status();
  auto opened = server::PostgresStorage::Open({.uri = *uri});
  if (!opened.ok()) return opened.status();
  std::unique_ptr<server::PostgresStorage> storage = *std::move(opened);
  server::StoredMetric m;
  m.name = KindName(kind);
  m.description = "bench";
  m.designs.push_back(server::StoredDesign{1, "p", 0.75, 0.25, 0});
  absl::StatusOr<server::StoredMetric> created = storage->CreateMetric(m);
  if (!created.ok()) return created.status();
  const int64_t metric_id = created->id;
  const std::vector<ReportRow> rows = MakeReports(metric_id, kind, count, hours, 37);
  f.v9_rows = PerCounterRows(rows);
  auto conn = server::PgConnection::Connect(*uri);
  if (!conn.ok()) return conn.status();
  // counter_chunks (schema version 8) or counter_sums (before): whichever the database has.
  absl::StatusOr<server::PgResult> has =
      (*conn)->Exec("SELECT to_regclass('counter_chunks') IS NOT NULL");
  if (!has.ok()) return has.status();
  const std::string counters = has->Bool(0, 0) ? "counter_chunks" : "counter_sums";
  const std::string size_sql =
      absl::StrCat("SELECT pg_total_relation_size('counts') + pg_total_relation_size('", counters,
                   "') + pg_total_relation_size('first_counts')");
  absl::StatusOr<server::PgResult> size_before = (*conn)->Exec(size_sql);
  if (!size_before.ok()) return size_before.status();
  const absl::Time start = absl::Now();
  const auto batch = static_cast<size_t>(absl::GetFlag(FLAGS_batch_reports));
  for (size_t i = 0; i < rows.size(); i += batch) {
    const size_t n = std::min(batch, rows.size() - i);
    absl::StatusOr<server::AppendResult> r =
        storage->AppendReports(absl::MakeConstSpan(rows).subspan(i, n));
    if (!r.ok()) return r.status();
  }
  f.reports_per_second = static_cast<double>(count) / absl::ToDoubleSeconds(absl::Now() - start);
  (void)(*conn)->Exec("VACUUM ANALYZE");
  std::vector<double> reads;
  for (int i = 0; i < absl::GetFlag(FLAGS_reads); ++i) {
    const absl::Time t = absl::Now();
    absl::StatusOr<std::vector<server::CountRow>> got =
        storage->ReadCounts(metric_id, 0, INT64_MAX);
    reads.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
    if (!got.ok()) return got.status();
    f.count_rows = static_cast<int64_t>(got->size());
    f.counters_read = 0;
    for (const server::CountRow& c : *got) {
      f.counters_read += static_cast<int64_t>(c.counters.size());
    }
  }
  std::sort(reads.begin(), reads.end());
  f.read_ms = reads[reads.size() / 2];
  absl::StatusOr<server::PgResult> size_after = (*conn)->Exec(size_sql);
  if (!size_after.ok()) return size_after.status();
  f.bytes_per_report = static_cast<double>(size_after->Int64(0, 0) - size_before->Int64(0, 0)) /
                       static_cast<double>(count);
  const std::string where = absl::StrCat(" WHERE metric_id = ", metric_id);
  absl::StatusOr<server::PgResult> read_rows = (*conn)->Exec(
      absl::StrCat("SELECT (SELECT count(*) FROM counts", where, "), (SELECT count(*) FROM ",
                   counters, where, "), (SELECT count(*) FROM first_counts", where, ")"));
  if (!read_rows.ok()) return read_rows.status();
  f.rows_read = read_rows->Int64(0, 0) + read_rows->Int64(0, 1) + read_rows->Int64(0, 2);
  f.v9_rows += read_rows->Int64(0, 0);
  return f;
}

int MainPostgres() {
  auto pg = server::testing_util::TestPostgres::Start();
  if (!pg.ok()) {
    std::fprintf(stderr, "%s\n", pg.status().ToString().c_str());
    return 1;
  }
  std::printf("%-8s %-13s %12s %10s %10s %10s %12s %12s %12s\n", "kind", "path", "reports/s",
              "bytes/rep", "read_ms", "count_rows", "rows_read", "v9_rows", "counters");
  int failures = 0;
  for (absl::string_view name : absl::StrSplit(absl::GetFlag(FLAGS_postgres_kinds), ',')) {
    Kind kind = Kind::kYesNo;
    bool known = false;
    for (Kind k : {Kind::kYesNo, Kind::kCategorical, Kind::kSketch, Kind::kHeavyHitters}) {
      if (name == KindName(k)) {
        kind = k;
        known = true;
      }
    }
    if (!known) {
      std::fprintf(stderr, "--postgres_kinds: unknown kind \"%s\"\n", std::string(name).c_str());
      return 2;
    }
    absl::StatusOr<Figures> f = RunPostgres(**pg, kind);
    if (!f.ok()) {
      std::fprintf(stderr, "%s: %s\n", KindName(kind), f.status().ToString().c_str());
      ++failures;
      continue;
    }
    std::printf("%-8s %-13s %12.0f %10.1f %10.2f %10lld %12lld %12lld %12lld\n", KindName(kind),
                "postgres", f->reports_per_second, f->bytes_per_report, f->read_ms,
                static_cast<long long>(f->count_rows), static_cast<long long>(f->rows_read),
                static_cast<long long>(f->v9_rows), static_cast<long long>(f->counters_read));
    std::fflush(stdout);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace deniable::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_postgres)) return deniable::bench::MainPostgres();
  using deniable::bench::Figures;
  std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) {
    dir =
        (std::filesystem::temp_directory_path() / absl::StrCat("sparse-bench-", getpid())).string();
  }
  std::filesystem::create_directories(dir);
  std::printf("%-8s %-13s %12s %10s %10s %10s %12s %12s\n", "kind", "path", "reports/s",
              "bytes/rep", "read_ms", "count_rows", "rows_read", "v9_rows");
  int failures = 0;
  using deniable::bench::Kind;
  for (bool group_commit : {false, true}) {
    for (Kind kind : {Kind::kYesNo, Kind::kCategorical, Kind::kSketch}) {
      const std::string path =
          absl::StrCat(dir, "/", deniable::bench::KindName(kind), group_commit ? "_gc" : "", ".db");
      absl::StatusOr<Figures> f = deniable::bench::Run(path, kind, group_commit);
      if (!f.ok()) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), f.status().ToString().c_str());
        ++failures;
        continue;
      }
      std::printf("%-8s %-13s %12.0f %10.1f %10.2f %10lld %12lld %12lld\n",
                  deniable::bench::KindName(kind), group_commit ? "group_commit" : "sqlite",
                  f->reports_per_second, f->bytes_per_report, f->read_ms,
                  static_cast<long long>(f->count_rows), static_cast<long long>(f->rows_read),
                  static_cast<long long>(f->v9_rows));
      std::fflush(stdout);
      deniable::bench::RemoveDatabase(path);
    }
  }
  return failures == 0 ? 0 : 1;
}
