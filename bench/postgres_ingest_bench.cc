// PostgreSQL ingestion through PostgresStorage beside PostgreSQL's own limit, in one run:
//
//   postgres_ingest_bench [--uri=postgresql://...] [--reports=N] [--batch=ROWS] [--collectors=K]
//
// Without --uri it starts its own PostgreSQL 15 (server/storage/testing/test_postgres.h) in a
// temporary directory. For each of two fresh databases it sends the same N random reports in
// transactions of ROWS rows from K threads:
//   raw      one `INSERT INTO reports ... SELECT FROM unnest(...) ON CONFLICT DO NOTHING` per
//            transaction into the same partitioned table, without counts or the collector;
//   storage  PostgresStorage::AppendReports, one storage per thread as K collectors would be
//            (dedup with RETURNING + per-collector count shards, same transaction).
//   one row  the same with every storage on count shard 0 (one hot counts row per key).
// Prints reports/s of each, the ratio, and the bytes per stored report (table + indexes).
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
#include "absl/strings/str_cat.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/testing/test_postgres.h"

ABSL_FLAG(std::string, uri, "", "PostgreSQL server URI without database; empty: start one");
ABSL_FLAG(int, reports, 200000, "reports per run");
ABSL_FLAG(int, batch, 1000, "rows per transaction");
ABSL_FLAG(int, collectors, 2, "concurrent writers (threads, one connection each)");

namespace {

using deniable::server::PgConnection;
using deniable::server::PgIntArray;
using deniable::server::PgResult;
using deniable::server::PgTextArray;
using deniable::server::PostgresStorage;
using deniable::server::ReportRow;
using deniable::server::StoredDesign;
using deniable::server::StoredMetric;

std::vector<ReportRow> MakeRows(int n, int64_t metric_id) {
  std::mt19937_64 rng(12);
  std::vector<ReportRow> rows(static_cast<size_t>(n));
  const int64_t hour = 1'795'000'000 - 1'795'000'000 % 3600;
  for (ReportRow& r : rows) {
    r.metric_id = metric_id;
    r.design_version = 1;
    if ((rng() & 1) != 0) r.counters = {0};  // a yes: counter 0
    for (auto& b : r.report_id) b = static_cast<uint8_t>(rng());
    r.event_time_seconds = hour;
  }
  return rows;
}

std::string Uuid(const ReportRow& r) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < r.report_id.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += hex[r.report_id[i] >> 4];
    s += hex[r.report_id[i] & 15];
  }
  return s;
}

// Runs `work(thread, begin, end)` over [0, n) in slices of `batch` from `threads` threads;
// returns reports per second.
template <typename Work>
double Timed(int n, int batch, int threads, Work work) {
  std::atomic<int> next{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int b; (b = next.fetch_add(batch)) < n;) work(t, b, std::min(n, b + batch));
    });
  }
  for (auto& th : pool) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return n / s;
}

int64_t BytesPerReport(PgConnection& c) {
  auto r = c.Exec(
      "SELECT sum(pg_total_relation_size(inhrelid))::bigint / greatest((SELECT count(*) FROM "
      "reports), 1) FROM pg_inherits WHERE inhparent = 'reports'::regclass");
  return r.ok() ? r->Int64(0, 0) : -1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int n = absl::GetFlag(FLAGS_reports), batch = absl::GetFlag(FLAGS_batch),
            threads = absl::GetFlag(FLAGS_collectors);
  std::unique_ptr<deniable::server::testing_util::TestPostgres> own;
  std::string raw_uri, storage_uri, one_row_uri;
  if (absl::GetFlag(FLAGS_uri).empty()) {
    auto pg = deniable::server::testing_util::TestPostgres::Start();
    if (!pg.ok()) {
      std::fprintf(stderr, "%s\n", pg.status().ToString().c_str());
      return 1;
    }
    own = *std::move(pg);
    raw_uri = *own->NewDatabase();
    storage_uri = *own->NewDatabase();
    one_row_uri = *own->NewDatabase();
  } else {
    std::fprintf(stderr, "--uri: give two empty databases as <uri>_raw and <uri>_storage\n");
    raw_uri = absl::GetFlag(FLAGS_uri) + "_raw";
    storage_uri = absl::GetFlag(FLAGS_uri) + "_storage";
    one_row_uri = absl::GetFlag(FLAGS_uri) + "_onerow";
  }
  std::vector<std::unique_ptr<PostgresStorage>> storages;
  for (int t = 0; t < threads; ++t) {
    auto s = PostgresStorage::Open({.uri = storage_uri});
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().ToString().c_str());
      return 1;
    }
    storages.push_back(*std::move(s));
  }
  StoredMetric m;
  m.name = "bench";
  m.designs.push_back(StoredDesign{1, "p", 0.75, 0.25, 0});
  const int64_t metric_id = storages[0]->CreateMetric(m)->id;
  const std::vector<ReportRow> rows = MakeRows(n, metric_id);
  // Warm-up creates the partition in both databases.
  (void)storages[0]->AppendReports({rows[0]});
  auto setup = PostgresStorage::Open({.uri = raw_uri});  // creates the same schema
  std::vector<std::unique_ptr<PgConnection>> raw;
  for (int t = 0; t < threads; ++t) raw.push_back(*PgConnection::Connect(raw_uri));
  (void)(*setup)->AppendReports({rows[0]});

  const double raw_rate = Timed(n, batch, threads, [&](int t, int b, int e) {
    std::vector<int64_t> mid, time, version, bit;
    std::vector<std::string> id, labels;
    for (int i = b; i < e; ++i) {
      mid.push_back(rows[i].metric_id);
      time.push_back(rows[i].event_time_seconds);
      id.push_back(Uuid(rows[i]));
      version.push_back(1);
      bit.push_back(rows[i].counters.empty() ? 0 : 1);
      labels.push_back("");
    }
    auto r = raw[t]->Exec(
        "INSERT INTO reports(metric_id, event_time, report_id, version, bit, labels) "
        "SELECT m, t, i, v, b::boolean, l FROM unnest($1::bigint[], $2::bigint[], $3::uuid[], "
        "$4::integer[], $5::integer[], $6::text[]) AS u(m, t, i, v, b, l) ON CONFLICT DO NOTHING",
        {PgIntArray(mid), PgIntArray(time), PgTextArray(id), PgIntArray(version), PgIntArray(bit),
         PgTextArray(labels)});
    if (!r.ok()) std::fprintf(stderr, "raw: %s\n", r.status().ToString().c_str());
  });
  const double storage_rate = Timed(n, batch, threads, [&](int t, int b, int e) {
    auto r = storages[t]->AppendReports(absl::MakeConstSpan(rows).subspan(b, e - b));
    if (!r.ok()) std::fprintf(stderr, "storage: %s\n", r.status().ToString().c_str());
  });
  // The same through storages that all add to shard 0: one counts row per key, shared by all.
  std::vector<std::unique_ptr<PostgresStorage>> one_row;
  for (int t = 0; t < threads; ++t) {
    one_row.push_back(*PostgresStorage::Open({.uri = one_row_uri, .shard = 0}));
  }
  (void)one_row[0]->CreateMetric(m);
  (void)one_row[0]->AppendReports({rows[0]});
  const double one_row_rate = Timed(n, batch, threads, [&](int t, int b, int e) {
    auto r = one_row[t]->AppendReports(absl::MakeConstSpan(rows).subspan(b, e - b));
    if (!r.ok()) std::fprintf(stderr, "one row: %s\n", r.status().ToString().c_str());
  });
  auto check = PgConnection::Connect(storage_uri);
  std::printf("reports %d, rows per transaction %d, collectors %d\n", n, batch, threads);
  std::printf("raw INSERT ... ON CONFLICT (no counts)   %10.0f reports/s\n", raw_rate);
  std::printf("PostgresStorage (dedup + counts)        %10.0f reports/s  (%.0f %% of raw)\n",
              storage_rate, 100.0 * storage_rate / raw_rate);
  std::printf("same, one counts row per key (no shards)  %10.0f reports/s  (%.0f %% of raw)\n",
              one_row_rate, 100.0 * one_row_rate / raw_rate);
  std::printf("stored reports %lld, bytes per report (table + key) %lld\n",
              static_cast<long long>(*storages[0]->ReportCount()),
              static_cast<long long>(BytesPerReport(**check)));
  return 0;
}
