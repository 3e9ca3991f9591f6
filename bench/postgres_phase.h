// deniable-bench --storage=postgresql[://...]: the collector on PostgreSQL beside PostgreSQL's own
// limits, measured in one run (docs/benchmarks.md).
//
// Phases (collectors run in this process on 127.0.0.1:0, each a CollectorServer on its own
// PostgresStorage under group commit, as deniable-server runs them; clients share the cores):
//   raw       COPY into an unindexed table (rows/s); INSERT ... SELECT FROM unnest ... ON
//             CONFLICT DO NOTHING into the same partitioned reports table without the collector
//             (1000 rows per statement from 2 connections); the raw gRPC service (load.h)
//   empty     1 and 2 collectors on a fresh database: unary, batched, streaming
//   prefill   --stored_reports rows over --hours hours, generated inside PostgreSQL
//             (INSERT ... SELECT FROM generate_series, one statement per day), counts by GROUP BY
//   large     1 and 2 collectors on the prefilled database: the same loads
//   query     prevalence over the whole range and the --hours-bucket hourly series, p50/p99,
//             while batched ingestion runs through one collector
// With --storage=postgresql the bench starts its own PostgreSQL 15 (test_postgres.h: fsync=off,
// full_page_writes=off, in a temporary directory); with a URI it creates its databases
// (<db>_bench_N) on that server, which needs CREATEDB.
#ifndef DENIABLE_BENCH_POSTGRES_PHASE_H_
#define DENIABLE_BENCH_POSTGRES_PHASE_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"

namespace deniable::bench {

struct PostgresBenchConfig {
  std::string storage;  // "postgresql" (own server) or a libpq URI
  int64_t stored_reports = 50'000'000;
  int hours = 720;
  absl::Duration seconds = absl::Seconds(5);  // each throughput measurement
  absl::Duration query_seconds = absl::Seconds(10);
  int channels = 4;
  int unary_in_flight = 256;
  int batched_in_flight = 8;
  int batch_reports = 1000;
  int streams = 8;
  int stream_message_reports = 1;
  // Where to write the figures as JSON (the SQLite run's shape: {"figures": [{name, unit, value,
  // limit_name, limit, ratio}]}); empty: not written.
  std::string json_path;
  // The collectors' access log (ServerOptions::access_log; deniable-server's default is on).
  bool access_log = true;
  // Group commit's committers per collector (GroupCommitOptions::committers); 0: as
  // deniable-server runs PostgreSQL (PostgresStorage::kWriteConnections, one per writing session).
  int committers = 0;
};

// Runs every phase, prints the figures and the table of ratios. Returns the process exit code.
int RunPostgresBench(const PostgresBenchConfig& config);

}  // namespace deniable::bench

#endif  // DENIABLE_BENCH_POSTGRES_PHASE_H_
