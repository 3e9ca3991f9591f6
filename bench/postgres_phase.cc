#include "bench/postgres_phase.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/figures_json.h"
#include "bench/load.h"
#include "deniable/common/clock.h"
#include "deniable/common/status_macros.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/postgres_schema.h"
#include "server/storage/postgres/postgres_storage.h"
#include "server/storage/testing/test_postgres.h"

namespace deniable::bench {
namespace {

using server::PgConnection;
using server::PgIntArray;
using server::PgTextArray;
using server::PostgresStorage;

// Fresh databases: on the bench's own server, or CREATE DATABASE on the given one.
class Databases {
 public:
  static absl::StatusOr<Databases> Open(const std::string& storage) {
    Databases d;
    if (storage == "postgresql" || storage == "postgres") {
      DENIABLE_ASSIGN_OR_RETURN(d.own_, server::testing_util::TestPostgres::Start());
    } else {
      d.base_ = storage;
      DENIABLE_ASSIGN_OR_RETURN(d.admin_, PgConnection::Connect(storage));
    }
    return d;
  }
  absl::StatusOr<std::string> New() {
    if (own_ != nullptr) return own_->NewDatabase();
    DENIABLE_ASSIGN_OR_RETURN(server::PgResult r, admin_->Exec("SELECT current_database()"));
    const std::string name = absl::StrCat(r.Text(0, 0), "_bench_", next_++);
    (void)admin_->Exec(absl::StrCat("DROP DATABASE IF EXISTS ", name));
    DENIABLE_RETURN_IF_ERROR(admin_->Exec(absl::StrCat("CREATE DATABASE ", name)).status());
    const size_t slash = base_.rfind('/');
    const size_t query = base_.find('?', slash);
    return absl::StrCat(base_.substr(0, slash + 1), name,
                        query == std::string::npos ? "" : base_.substr(query));
  }

 private:
  std::unique_ptr<server::testing_util::TestPostgres> own_;
  std::unique_ptr<PgConnection> admin_;
  std::string base_;
  int next_ = 0;
};

// Collectors as deniable-server runs them: PostgresStorage under group commit, on 127.0.0.1:0.
struct Collectors {
  std::vector<std::unique_ptr<server::CollectorServer>> servers;
  std::vector<std::string> targets;
  std::vector<server::GroupCommitStorage*> storages;
};

absl::StatusOr<Collectors> StartCollectors(const std::string& uri, int n,
                                           const PostgresBenchConfig& config) {
  Collectors c;
  for (int i = 0; i < n; ++i) {
    DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStorage> pg,
                              PostgresStorage::Open({.uri = uri}));
    auto group = std::make_unique<server::GroupCommitStorage>(
        std::move(pg),
        server::GroupCommitOptions{.committers = config.committers > 0
                                                     ? config.committers
                                                     : PostgresStorage::kWriteConnections});
    c.storages.push_back(group.get());
    server::ServerOptions options;
    options.listen_address = "127.0.0.1:0";
    options.max_receive_message_bytes = 8 * 1024 * 1024;
    options.ingest.max_report_age = absl::Hours(24 * 365 * 20);
    options.metric_cache_age = absl::Seconds(5);
    options.access_log = config.access_log;
    DENIABLE_ASSIGN_OR_RETURN(
        std::unique_ptr<server::CollectorServer> s,
        server::CollectorServer::Start(std::move(group), SystemClock::Default(), options));
    c.targets.push_back(absl::StrCat("127.0.0.1:", s->port()));
    c.servers.push_back(std::move(s));
  }
  return c;
}

// `per_target` connections to each target, interleaved (RunUnary/RunStreaming use them round
// robin, so the load is spread evenly over the collectors).
std::vector<std::shared_ptr<grpc::Channel>> Spread(const std::vector<std::string>& targets,
                                                   int per_target) {
  std::vector<std::vector<std::shared_ptr<grpc::Channel>>> each;
  for (const std::string& t : targets) each.push_back(MakeChannels(t, per_target));
  std::vector<std::shared_ptr<grpc::Channel>> out;
  for (int i = 0; i < per_target; ++i) {
    for (auto& e : each) out.push_back(e[static_cast<size_t>(i)]);
  }
  return out;
}

struct Loads {
  LoadSpec unary, batched, streaming;
};

Loads MakeLoads(const PostgresBenchConfig& c, int64_t hour) {
  return {{kBenchMetric, hour, 1, c.unary_in_flight, c.seconds},
          {kBenchMetric, hour, c.batch_reports, c.batched_in_flight, c.seconds},
          {kBenchMetric, hour, c.stream_message_reports, c.streams, c.seconds}};
}

std::map<std::string, double> figures;  // name -> reports (or rows) per second, or ms
int errors = 0;

void Record(const std::string& name, const LoadResult& r) {
  figures[name] = r.reports_per_second();
  absl::PrintF("  %-30s %12.0f reports/s  %10.0f calls/s  (%.1f s%s)\n", name,
               r.reports_per_second(), r.calls_per_second(), r.seconds,
               r.errors ? absl::StrCat(", ", r.errors, " errors: ", r.first_error) : "");
  if (r.errors > 0 || r.reports == 0) ++errors;
}

void RunLoads(const std::string& prefix, const std::vector<std::shared_ptr<grpc::Channel>>& ch,
              const Loads& loads, IdSource* ids) {
  Record(prefix + "_unary", RunUnary(ch, loads.unary, ids));
  Record(prefix + "_batched", RunUnary(ch, loads.batched, ids));
  Record(prefix + "_streaming", RunStreaming(ch, loads.streaming, ids));
}

std::string Uuid(std::string_view id) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < id.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    const auto b = static_cast<unsigned char>(id[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

// rows/s of COPY into an unindexed table (same columns as reports), `seconds` of 10000-row COPYs.
absl::StatusOr<double> RawCopyRate(const std::string& uri, absl::Duration seconds, IdSource* ids,
                                   int64_t hour) {
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> c, PgConnection::Connect(uri));
  DENIABLE_RETURN_IF_ERROR(c->Exec("CREATE TABLE raw_copy(metric_id bigint, event_time bigint, "
                                   "report_id uuid, version integer, bit boolean, labels text)")
                               .status());
  int64_t rows = 0;
  const absl::Time start = absl::Now();
  std::string id;
  while (absl::Now() - start < seconds) {
    std::string data;
    for (int i = 0; i < 10000; ++i) {
      ids->Next(&id);
      absl::StrAppend(&data, "1\t", hour, "\t", Uuid(id), "\t1\t", (i & 1) ? "t" : "f", "\t\n");
    }
    DENIABLE_RETURN_IF_ERROR(c->CopyIn("COPY raw_copy FROM STDIN", data));
    rows += 10000;
  }
  return static_cast<double>(rows) / absl::ToDoubleSeconds(absl::Now() - start);
}

// rows/s of INSERT ... SELECT FROM unnest ... ON CONFLICT DO NOTHING into the partitioned
// reports table (no counts, no collector), 1000 rows per statement from 2 connections.
absl::StatusOr<double> RawInsertRate(const std::string& uri, absl::Duration seconds, IdSource* ids,
                                     int64_t hour) {
  {
    DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PostgresStorage> s,
                              PostgresStorage::Open({.uri = uri}));  // the schema
    DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> c, PgConnection::Connect(uri));
    DENIABLE_RETURN_IF_ERROR(server::EnsurePartition(*c, hour / server::kPartitionSeconds));
  }
  std::atomic<int64_t> rows{0};
  std::atomic<bool> failed{false};
  const absl::Time start = absl::Now();
  std::vector<std::thread> pool;
  for (int t = 0; t < 2; ++t) {
    pool.emplace_back([&] {
      auto c = PgConnection::Connect(uri);
      if (!c.ok()) {
        failed = true;
        return;
      }
      std::string id;
      while (absl::Now() - start < seconds && !failed) {
        std::vector<int64_t> m(1000, 1), time(1000, hour), v(1000, 1), bit;
        std::vector<std::string> uuid, labels(1000);
        for (int i = 0; i < 1000; ++i) {
          ids->Next(&id);
          uuid.push_back(Uuid(id));
          bit.push_back(i & 1);
        }
        auto r = (*c)->Exec(
            "INSERT INTO reports(metric_id, event_time, report_id, version, bit, labels) "
            "SELECT m, t, i, v, b::int::boolean, l FROM unnest($1::bigint[], $2::bigint[], "
            "$3::uuid[], $4::integer[], $5::integer[], $6::text[]) AS u(m, t, i, v, b, l) "
            "ON CONFLICT DO NOTHING",
            {PgIntArray(m), PgIntArray(time), PgTextArray(uuid), PgIntArray(v), PgIntArray(bit),
             PgTextArray(labels)});
        if (!r.ok()) {
          absl::FPrintF(stderr, "raw insert: %s\n", r.status().ToString());
          failed = true;
          return;
        }
        rows += 1000;
      }
    });
  }
  for (auto& t : pool) t.join();
  if (failed) return absl::InternalError("raw insert failed");
  return static_cast<double>(rows) / absl::ToDoubleSeconds(absl::Now() - start);
}

// Fills `uri` (schema and metric made) with `n` reports over `hours` hours ending at `end`,
// inside PostgreSQL, one UTC day at a time on two connections: the day's rows go into a plain
// table without an index (INSERT ... SELECT FROM generate_series: random uuids, 30 % yes), which
// then gets its primary key (one sorted index build instead of 1.7 M random-order insertions at
// 50 M), a CHECK of its range (so ATTACH need not scan it) and is attached as the day's
// partition, named as EnsurePartition names it; then that day's counts by GROUP BY, and a VACUUM
// (ANALYZE) of the day. The rows and indexes are what the collector's own appends would leave.
absl::Status Prefill(const std::string& uri, int64_t metric, int64_t n, int hours, int64_t end) {
  const int64_t first = end - int64_t{hours} * 3600;
  const int64_t per_hour = n / hours;
  const absl::Time start = absl::Now();
  std::vector<int64_t> days;
  for (int64_t day = first / server::kPartitionSeconds; day * server::kPartitionSeconds < end;
       ++day) {
    days.push_back(day);
  }
  absl::Mutex mu;
  size_t next = 0;
  int64_t done = 0;
  absl::Status failure;
  auto fill = [&]() -> absl::Status {
    DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> c, PgConnection::Connect(uri));
    for (;;) {
      int64_t day = 0;
      {
        absl::MutexLock lock(&mu);
        if (next == days.size() || !failure.ok()) return absl::OkStatus();
        day = days[next++];
      }
      const int64_t lo = std::max(first, day * server::kPartitionSeconds);
      const int64_t hi = std::min(end, (day + 1) * server::kPartitionSeconds);
      const std::string name = server::PartitionName(day);
      DENIABLE_RETURN_IF_ERROR(
          c->Exec(absl::StrCat("CREATE TABLE ", name, " (LIKE reports INCLUDING DEFAULTS)"))
              .status());
      DENIABLE_RETURN_IF_ERROR(
          c->Exec(absl::StrCat("INSERT INTO ", name,
                               "(metric_id, event_time, report_id, version, bit, labels) SELECT ",
                               metric,
                               ", h, gen_random_uuid(), 1, random() < 0.3, '' FROM "
                               "generate_series(",
                               lo, ", ", hi - 1, ", 3600) h, generate_series(1, ", per_hour, ") i"))
              .status());
      const int64_t from = day * server::kPartitionSeconds, to = from + server::kPartitionSeconds;
      DENIABLE_RETURN_IF_ERROR(
          c->Exec(absl::StrCat("ALTER TABLE ", name,
                               " ADD PRIMARY KEY (metric_id, event_time, report_id), ADD CHECK "
                               "(event_time >= ",
                               from, " AND event_time < ", to, ")"))
              .status());
      // No collector runs yet, so no EnsurePartition races the attach.
      DENIABLE_RETURN_IF_ERROR(c->Exec(absl::StrCat("ALTER TABLE reports ATTACH PARTITION ", name,
                                                    " FOR VALUES FROM (", from, ") TO (", to, ")"))
                                   .status());
      DENIABLE_RETURN_IF_ERROR(
          c->Exec(absl::StrCat("INSERT INTO counts(metric_id, event_time, version, labels, shard, "
                               "n, counter0) SELECT metric_id, event_time, version, labels, 0, "
                               "count(*), count(*) FILTER (WHERE bit) FROM ",
                               name, " GROUP BY 1, 2, 3, 4"))
              .status());
      // A database that has held these reports for weeks has long been vacuumed; without this,
      // autovacuum's first pass over every freshly loaded day (insert-triggered, PostgreSQL 13+)
      // runs during the loads at stored and is measured as their cost.
      DENIABLE_RETURN_IF_ERROR(c->Exec(absl::StrCat("VACUUM (ANALYZE) ", name)).status());
      absl::MutexLock lock(&mu);
      done += per_hour * ((hi - lo) / 3600);
      absl::PrintF("  prefill: %d reports after %.0f s\n", done,
                   absl::ToDoubleSeconds(absl::Now() - start));
    }
  };
  std::vector<std::thread> workers;
  for (int i = 0; i < 2; ++i) {
    workers.emplace_back([&] {
      absl::Status s = fill();
      absl::MutexLock lock(&mu);
      if (failure.ok()) failure = s;
    });
  }
  for (std::thread& t : workers) t.join();
  DENIABLE_RETURN_IF_ERROR(failure);
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<PgConnection> c, PgConnection::Connect(uri));
  return c->Exec("VACUUM (ANALYZE) counts").status();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// Query latencies beside one load (milliseconds).
struct QueryTimes {
  std::string load;
  std::vector<double> prevalence, series, read;
  size_t buckets = 0;
  double ingest_rate = 0;  // reports/s acknowledged meanwhile
  std::string Line() const {
    return absl::StrFormat(
        "%s: prevalence p50 %.2f p99 %.2f ms; %d-bucket series p50 %.2f p99 %.2f ms; read alone "
        "p50 %.2f p99 %.2f ms; %d samples each; ingestion %.0f reports/s",
        load, Percentile(prevalence, 0.5), Percentile(prevalence, 0.99), buckets,
        Percentile(series, 0.5), Percentile(series, 0.99), Percentile(read, 0.5),
        Percentile(read, 0.99), prevalence.size(), ingest_rate);
  }
};

// Times prevalence over the whole range, the hourly series and ReadCounts alone, in turn, for
// --query_seconds.
absl::Status TimeQueries(server::PrevalenceQuery& query, server::Storage* storage,
                         int64_t metric_id, int64_t now_hour, const PostgresBenchConfig& config,
                         QueryTimes* t) {
  v1::GetPrevalenceRequest prevalence;
  prevalence.set_metric(kBenchMetric);
  v1::GetSeriesRequest series;
  series.set_metric(kBenchMetric);
  series.set_start_time_seconds(now_hour - int64_t{config.hours} * 3600);
  series.set_end_time_seconds(now_hour);
  series.set_bucket(v1::HOUR);
  const absl::Time deadline = absl::Now() + config.query_seconds;
  while (absl::Now() < deadline) {
    absl::Time t0 = absl::Now();
    absl::StatusOr<v1::Prevalence> p = query.Get(prevalence);
    t->prevalence.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    t0 = absl::Now();
    absl::StatusOr<v1::Series> s = query.Series(series);
    t->series.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    t0 = absl::Now();
    absl::Status r = storage->ReadCounts(metric_id, 0, int64_t{1} << 40).status();
    t->read.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
    DENIABLE_RETURN_IF_ERROR(p.status());
    DENIABLE_RETURN_IF_ERROR(s.status());
    DENIABLE_RETURN_IF_ERROR(r);
    t->buckets = static_cast<size_t>(s->buckets_size());
  }
  return absl::OkStatus();
}

}  // namespace

int RunPostgresBench(const PostgresBenchConfig& config) {
  absl::StatusOr<Databases> dbs = Databases::Open(config.storage);
  if (!dbs.ok()) {
    absl::FPrintF(stderr, "--storage: %s\n", dbs.status().ToString());
    return 1;
  }
  IdSource ids(static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) << 20);
  const int64_t now_hour = absl::ToUnixSeconds(absl::Now()) / 3600 * 3600;
  // Loads write hours before the prefilled range (a fresh hour per load).
  int64_t next_hour = now_hour - (int64_t{config.hours} + 24) * 3600;
  auto fresh_loads = [&] {
    next_hour -= 3600;
    return MakeLoads(config, next_hour);
  };
  // Loads at stored write into a full prefilled day (yesterday, UTC), hour by hour from its
  // last: a partition whose unique index already holds a day of the stored reports, as the
  // current day's does in a deployment that stores --stored_reports over --hours.
  int64_t stored_hour = (now_hour / server::kPartitionSeconds) * server::kPartitionSeconds;
  auto stored_loads = [&] {
    stored_hour -= 3600;
    return MakeLoads(config, stored_hour);
  };
  auto fail = [](const absl::Status& s) {
    absl::FPrintF(stderr, "%s\n", s.ToString());
    return 1;
  };

  absl::PrintF("== raw limits\n");
  {
    absl::StatusOr<std::string> a = dbs->New(), b = dbs->New();
    if (!a.ok() || !b.ok()) return fail(a.ok() ? b.status() : a.status());
    absl::StatusOr<double> copy = RawCopyRate(*a, config.seconds, &ids, next_hour);
    if (!copy.ok()) return fail(copy.status());
    absl::StatusOr<double> insert = RawInsertRate(*b, config.seconds, &ids, next_hour);
    if (!insert.ok()) return fail(insert.status());
    figures["raw_copy"] = *copy;
    figures["raw_insert"] = *insert;
    absl::PrintF("  %-30s %12.0f rows/s\n  %-30s %12.0f rows/s\n", "COPY, unindexed table", *copy,
                 "INSERT ON CONFLICT, partitioned", *insert);
    std::unique_ptr<NullServer> null = StartNullServer();
    RunLoads("raw_grpc", MakeChannels(absl::StrCat("127.0.0.1:", null->port), config.channels),
             fresh_loads(), &ids);
    null->server->Shutdown();
  }

  for (int k : {1, 2}) {
    absl::PrintF("== %d collector(s), empty database\n", k);
    absl::StatusOr<std::string> uri = dbs->New();
    if (!uri.ok()) return fail(uri.status());
    absl::StatusOr<Collectors> c = StartCollectors(*uri, k, config);
    if (!c.ok()) return fail(c.status());
    if (absl::Status s = EnsureBenchMetric(c->storages[0]).status(); !s.ok()) return fail(s);
    RunLoads(absl::StrCat("empty", k), Spread(c->targets, config.channels), fresh_loads(), &ids);
    int64_t groups = 0, batches = 0;
    for (auto* s : c->storages) {
      groups += s->stats().groups;
      batches += s->stats().batches;
    }
    absl::PrintF("  group commit: %.1f calls per transaction\n",
                 groups ? static_cast<double>(batches) / static_cast<double>(groups) : 0.0);
  }

  absl::PrintF("== prefill: %d reports over %d hours, inside PostgreSQL\n", config.stored_reports,
               config.hours);
  absl::StatusOr<std::string> large = dbs->New();
  if (!large.ok()) return fail(large.status());
  int64_t metric_id = 0;
  {
    absl::StatusOr<std::unique_ptr<PostgresStorage>> s = PostgresStorage::Open({.uri = *large});
    if (!s.ok()) return fail(s.status());
    absl::StatusOr<int64_t> id = EnsureBenchMetric(s->get());
    if (!id.ok()) return fail(id.status());
    metric_id = *id;
  }
  const absl::Time prefill_start = absl::Now();
  if (absl::Status s = Prefill(*large, metric_id, config.stored_reports, config.hours, now_hour);
      !s.ok()) {
    return fail(s);
  }
  const double prefill_seconds = absl::ToDoubleSeconds(absl::Now() - prefill_start);

  for (int k : {1, 2}) {
    absl::PrintF("== %d collector(s), %d reports stored\n", k, config.stored_reports);
    absl::StatusOr<Collectors> c = StartCollectors(*large, k, config);
    if (!c.ok()) return fail(c.status());
    RunLoads(absl::StrCat("large", k), Spread(c->targets, config.channels), stored_loads(), &ids);
  }

  // Queries beside three loads: none, batched ingestion at half the rate one collector reached
  // at stored (open loop: a server run below its limit, as an operator sizes it), and batched
  // ingestion at the limit (closed loop: every core busy, so the tail is mostly waiting for a
  // core). "read" is the storage's ReadCounts alone (one statement on the reader pool).
  absl::PrintF("== queries at %d stored reports\n", config.stored_reports);
  std::vector<QueryTimes> query_times;
  {
    absl::StatusOr<Collectors> c = StartCollectors(*large, 1, config);
    if (!c.ok()) return fail(c.status());
    server::MetricRegistry registry(c->storages[0], SystemClock::Default());
    server::PrevalenceQuery query(&registry, c->storages[0]);
    const double half_calls = 0.5 * figures["large1_batched"] / std::max(1, config.batch_reports);
    for (const double rate : {-1.0, half_calls, 0.0}) {
      QueryTimes t;
      t.load = rate < 0   ? "no ingestion"
               : rate > 0 ? absl::StrFormat("ingestion at %.0f reports/s (half the limit)",
                                            rate * config.batch_reports)
                          : "ingestion at the limit (closed loop)";
      LoadSpec ingest = stored_loads().batched;
      ingest.duration = config.query_seconds;
      ingest.calls_per_second = std::max(rate, 0.0);
      LoadResult load;
      std::thread ingestion;
      if (rate >= 0) {
        ingestion = std::thread(
            [&] { load = RunUnary(MakeChannels(c->targets[0], config.channels), ingest, &ids); });
      }
      if (absl::Status s = TimeQueries(query, c->storages[0], metric_id, now_hour, config, &t);
          !s.ok()) {
        if (ingestion.joinable()) ingestion.join();
        return fail(s);
      }
      if (ingestion.joinable()) ingestion.join();
      t.ingest_rate = load.reports_per_second();
      absl::PrintF("  %s\n", t.Line());
      query_times.push_back(t);
    }
  }

  const auto f = [](const std::string& k) { return figures.count(k) ? figures[k] : 0.0; };
  std::vector<Figure> rows;  // every figure in reports/s
  const auto add = [&rows](std::string name, double value, std::string limit_name, double limit) {
    rows.push_back({std::move(name), "reports/s", value, std::move(limit_name), limit, ""});
  };
  for (int k : {1, 2}) {
    const std::string e = absl::StrCat("empty", k), l = absl::StrCat("large", k);
    const std::string who = absl::StrCat(k, " collector", k > 1 ? "s" : "");
    add(absl::StrCat("batched, ", who), f(e + "_batched"), "raw INSERT ON CONFLICT",
        f("raw_insert"));
    add(absl::StrCat("batched, ", who), f(e + "_batched"), "raw COPY, no index", f("raw_copy"));
    add(absl::StrCat("streaming, ", who), f(e + "_streaming"), "raw INSERT ON CONFLICT",
        f("raw_insert"));
    add(absl::StrCat("unary, ", who), f(e + "_unary"), "raw gRPC unary", f("raw_grpc_unary"));
    for (const char* load : {"unary", "batched", "streaming"}) {
      add(absl::StrCat(load, ", ", who, ", at stored"), f(l + "_" + load),
          absl::StrCat(load, ", ", who, ", empty"), f(e + "_" + load));
    }
  }
  add("batched, 2 vs 1 collector", f("empty2_batched"), "1 collector", f("empty1_batched"));
  absl::PrintF("\n== results (one run; ratio = value / limit)\n");
  absl::PrintF("%-36s %12s   %-30s %12s %7s\n", "figure (reports/s)", "value", "limit", "value",
               "ratio");
  for (const Figure& r : rows) {
    absl::PrintF("%-36s %12.0f   %-30s %12.0f %7.2f\n", r.name, r.value, r.limit_name, r.limit,
                 Ratio(r));
  }
  if (!config.json_path.empty()) {
    google::protobuf::Struct json;
    for (const Figure& r : rows) AddFigure(&json, r);
    WriteJson(json, config.json_path);
  }
  absl::PrintF(
      "raw gRPC batched %.0f, streaming %.0f reports/s; prefill %.0f s (%.0f rows/s)\n"
      "queries at %d stored reports:\n",
      f("raw_grpc_batched"), f("raw_grpc_streaming"), prefill_seconds,
      static_cast<double>(config.stored_reports) / std::max(prefill_seconds, 1e-9),
      config.stored_reports);
  for (const QueryTimes& t : query_times) absl::PrintF("  %s\n", t.Line());
  if (errors > 0) {
    absl::FPrintF(stderr, "%d loads had errors or stored nothing\n", errors);
    return 1;
  }
  return 0;
}

}  // namespace deniable::bench
