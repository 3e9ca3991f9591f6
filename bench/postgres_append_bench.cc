// The append path of PostgresStorage, three ways, at several batch sizes, in one run:
//
//   postgres_append_bench [--reports=N] [--batches=100,1000,10000] [--writers=K]
//
// Starts its own PostgreSQL 15 (server/storage/testing/test_postgres.h; fsync off, as every
// figure in docs/benchmarks.md) and, for every batch size and path, a fresh database with the
// storage's schema. K threads (one connection each) send the same N random reports in
// transactions of one batch; each transaction inserts the batch into the partitioned reports
// table with ON CONFLICT DO NOTHING and reads back the keys that were new (what AppendBatches
// needs to count exactly once), then commits:
//   unnest     one INSERT ... SELECT FROM unnest($1::bigint[], ...) ... RETURNING (the path
//              PostgresStorage used before this bench);
//   copy       COPY into a per-connection temporary staging table (ON COMMIT DELETE ROWS), then
//              one INSERT ... SELECT FROM staging ... RETURNING;
//   pipeline   one INSERT ... VALUES ($1..$6) ... RETURNING per report, sent in libpq's pipeline
//              mode (no round trip per statement).
// Half of each batch's ids were already stored by an earlier batch (a device retrying), so the
// conflict path is measured too. Prints reports/s per path and batch size.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/testing/test_postgres.h"

ABSL_FLAG(int, reports, 200000, "reports per path and batch size");
ABSL_FLAG(std::string, batches, "100,1000,10000", "rows per transaction, comma-separated");
ABSL_FLAG(int, writers, 2, "concurrent writers (threads, one connection each)");

namespace {

using deniable::server::CopyText;
using deniable::server::PgConnection;
using deniable::server::PgIntArray;
using deniable::server::PgParam;
using deniable::server::PgResult;
using deniable::server::PgTextArray;
using deniable::server::PostgresStorage;
using deniable::server::StoredDesign;
using deniable::server::StoredMetric;

struct Row {
  int64_t metric = 0, time = 0, version = 1, bit = 0;
  std::string id, labels;
};

std::string RandomUuid(std::mt19937_64& rng) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const unsigned b = static_cast<unsigned>(rng() & 0xff);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// n rows; in every slice of `batch`, the second half repeats ids of the previous slice.
std::vector<Row> MakeRows(int n, int batch, int64_t metric) {
  std::mt19937_64 rng(7);
  const int64_t hour = 1'795'000'000 - 1'795'000'000 % 3600;
  std::vector<Row> rows(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Row& r = rows[static_cast<size_t>(i)];
    r.metric = metric;
    r.time = hour + (i % 7) * 3600;
    r.bit = static_cast<int64_t>(rng() & 1);
    r.labels = i % 3 == 0 ? "os=android" : "";
    const int in_batch = i % batch;
    r.id = (i >= batch && in_batch >= batch / 2) ? rows[static_cast<size_t>(i - batch)].id
                                                 : RandomUuid(rng);
    if (i >= batch && in_batch >= batch / 2) r.time = rows[static_cast<size_t>(i - batch)].time;
  }
  return rows;
}

constexpr char kReturning[] = " ON CONFLICT DO NOTHING RETURNING metric_id, event_time, report_id";

absl::StatusOr<int> Unnest(PgConnection& c, const std::vector<Row>& rows, int b, int e) {
  std::vector<int64_t> m, t, v, bit;
  std::vector<std::string> id, l;
  for (int i = b; i < e; ++i) {
    const Row& r = rows[static_cast<size_t>(i)];
    m.push_back(r.metric);
    t.push_back(r.time);
    v.push_back(r.version);
    bit.push_back(r.bit);
    id.push_back(r.id);
    l.push_back(r.labels);
  }
  auto r = c.Exec(absl::StrCat("INSERT INTO reports(metric_id, event_time, report_id, version, "
                               "bit, labels) SELECT m, t, i, v, b::int::boolean, l FROM "
                               "unnest($1::bigint[], $2::bigint[], $3::uuid[], $4::integer[], "
                               "$5::integer[], $6::text[]) AS u(m, t, i, v, b, l)",
                               kReturning),
                  {PgIntArray(m), PgIntArray(t), PgTextArray(id), PgIntArray(v), PgIntArray(bit),
                   PgTextArray(l)});
  if (!r.ok()) return r.status();
  return r->rows();
}

absl::StatusOr<int> Copy(PgConnection& c, const std::vector<Row>& rows, int b, int e) {
  std::string data;
  for (int i = b; i < e; ++i) {
    const Row& r = rows[static_cast<size_t>(i)];
    absl::StrAppend(&data, r.metric, "\t", r.time, "\t", r.id, "\t", r.version, "\t",
                    r.bit ? "t" : "f", "\t", CopyText(r.labels), "\n");
  }
  if (absl::Status s = c.CopyIn("COPY staging FROM STDIN", data); !s.ok()) return s;
  auto r =
      c.Exec(absl::StrCat("INSERT INTO reports(metric_id, event_time, report_id, version, "
                          "bit, labels) SELECT * FROM staging ORDER BY 1, 2, 3",
                          kReturning));
  if (!r.ok()) return r.status();
  return r->rows();
}

absl::StatusOr<int> Pipeline(PgConnection& c, const std::vector<Row>& rows, int b, int e) {
  std::vector<std::vector<PgParam>> sets;
  for (int i = b; i < e; ++i) {
    const Row& r = rows[static_cast<size_t>(i)];
    sets.push_back({absl::StrCat(r.metric), absl::StrCat(r.time), r.id, absl::StrCat(r.version),
                    r.bit ? "t" : "f", r.labels});
  }
  auto r = c.ExecPipelined(absl::StrCat("INSERT INTO reports(metric_id, event_time, report_id, "
                                        "version, bit, labels) VALUES ($1, $2, $3, $4, $5, $6)",
                                        kReturning),
                           sets);
  if (!r.ok()) return r.status();
  int fresh = 0;
  for (const PgResult& one : *r) fresh += one.rows();
  return fresh;
}

using Path = absl::StatusOr<int> (*)(PgConnection&, const std::vector<Row>&, int, int);

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int n = absl::GetFlag(FLAGS_reports), writers = absl::GetFlag(FLAGS_writers);
  auto pg = deniable::server::testing_util::TestPostgres::Start();
  if (!pg.ok()) {
    std::fprintf(stderr, "%s\n", pg.status().ToString().c_str());
    return 1;
  }
  const std::pair<const char*, Path> paths[] = {
      {"unnest", &Unnest}, {"copy", &Copy}, {"pipeline", &Pipeline}};
  std::printf("reports %d per run, writers %d, half of each batch already stored\n", n, writers);
  std::printf("%8s %12s %12s %12s   (reports/s)\n", "batch", "unnest", "copy", "pipeline");
  for (absl::string_view text : absl::StrSplit(absl::GetFlag(FLAGS_batches), ',')) {
    int batch = 0;
    if (!absl::SimpleAtoi(text, &batch) || batch < 2) {
      std::fprintf(stderr, "--batches: \"%s\" is not a batch size >= 2\n",
                   std::string(text).c_str());
      return 2;
    }
    std::printf("%8d", batch);
    for (const auto& [name, path] : paths) {
      const std::string uri = *(*pg)->NewDatabase();
      auto storage = PostgresStorage::Open({.uri = uri});  // the schema
      StoredMetric m;
      m.name = "bench";
      m.designs.push_back(StoredDesign{1, "p", 0.75, 0.25, 0});
      const int64_t metric = (*storage)->CreateMetric(m)->id;
      const std::vector<Row> rows = MakeRows(n, batch, metric);
      // Partitions exist before timing (PostgresStorage creates them outside the transaction).
      deniable::server::ReportRow probe;
      probe.metric_id = metric;
      for (int h = 0; h < 7; ++h) {
        probe.event_time_seconds = rows[static_cast<size_t>(h)].time;
        probe.report_id[0] = static_cast<uint8_t>(h + 1);
        (void)(*storage)->AppendReports({probe});
      }
      std::vector<std::unique_ptr<PgConnection>> conns;
      for (int w = 0; w < writers; ++w) {
        conns.push_back(*PgConnection::Connect(uri));
        (void)conns.back()->Exec(
            "CREATE TEMP TABLE staging(metric_id bigint, event_time bigint, report_id uuid, "
            "version integer, bit boolean, labels text) ON COMMIT DELETE ROWS");
      }
      std::atomic<int> next{0};
      std::atomic<int64_t> fresh{0};
      std::atomic<bool> failed{false};
      const auto start = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      for (int w = 0; w < writers; ++w) {
        pool.emplace_back([&, w, path = path] {
          PgConnection& c = *conns[static_cast<size_t>(w)];
          for (int b; (b = next.fetch_add(batch)) < n;) {
            absl::StatusOr<int> got = 0;
            const absl::Status s = c.Transaction([&]() -> absl::Status {
              got = path(c, rows, b, std::min(n, b + batch));
              return got.status();
            });
            if (!s.ok()) {
              if (!failed.exchange(true)) std::fprintf(stderr, "\n%s\n", s.ToString().c_str());
              return;
            }
            fresh += *got;
          }
        });
      }
      for (auto& t : pool) t.join();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      auto stored = conns[0]->Exec("SELECT count(*) FROM reports");
      if (failed || !stored.ok() || stored->Int64(0, 0) - 7 != fresh.load()) {
        std::fprintf(stderr, "\n%s: stored %lld, returned as new %lld\n", name,
                     stored.ok() ? static_cast<long long>(stored->Int64(0, 0) - 7) : -1LL,
                     static_cast<long long>(fresh.load()));
        return 1;
      }
      std::printf(" %12.0f", n / seconds);
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  return 0;
}
