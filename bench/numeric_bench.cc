// deniable-numeric-bench: numeric ingestion through the collector against yes/no ingestion in the
// same run, and the SDK's cost per randomized value (issue 28; docs/performance.md "Numeric
// ingestion").
//
//   deniable-numeric-bench                      200 k reports per phase, 5 rounds (under a minute)
//   deniable-numeric-bench --reports=1000000 --json=/tmp/numeric.json      steadier (~3 minutes)
//   deniable-numeric-bench --kinds=d_bit_flip_d4 --repeat=1                 one kind, to profile
//
// Phases:
//   ingest  per round, one phase per kind in round-robin order (yes/no, 1BitMean, dBitFlip d=1,
//           dBitFlip d=4), so drift on the shared machine hits every kind alike: the collector as
//           deniable-server assembles it (SQLite under GroupCommitStorage, CollectorServer on
//           127.0.0.1:0) on a fresh database in --dir, a fresh metric of that kind, and --reports
//           reports sent as SubmitReports calls of --batch_reports with --in_flight calls in
//           flight over --channels connections. Every kind sends the same report ids' shape,
//           event hour, label set and batch size; only the answer differs (`bit`, or
//           Report.numeric's d buckets and bits). Requests are built before the clock starts.
//   sdk     the device's cost per randomized value, in the same run:
//           - Google Benchmark, CPU ns per value: yes/no RandomizeAnswer against the numeric
//             path Reporter::ReportValue runs (randomize/: clip, alpha-point rounding or bucket,
//             the mechanism's draws into the wire report), with its parts (level/: clip and
//             level; mechanism/: Mechanism::Randomize of a level), on the production
//             SecureBitGen;
//           - the whole Reporter call per value (Report(metric, bool) against ReportValue) on an
//             in-memory store, FRESH_PER_PERIOD so every call draws, rounds interleaved; CPU ns
//             of the calling thread (the reporter sends nothing meanwhile).
// Prints reports/s per kind and round, the medians and the ratios to yes/no (dBitFlip also per
// sampled bit: reports/s * d), then ns per value and its ratio; --json writes every figure.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/load.h"
#include "client/src/numeric_answer.h"
#include "deniable/client/reporter.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/client/transport.h"
#include "deniable/common/clock.h"
#include "deniable/common/design.h"
#include "deniable/common/draws.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/common/randomizer.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/numeric_convert.h"
#include "server/core/metric_registry.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/sqlite/sqlite_storage.h"

ABSL_FLAG(int64_t, reports, 200'000, "reports ingested per phase");
ABSL_FLAG(int, repeat, 5, "rounds; each runs every kind once (figures are medians)");
ABSL_FLAG(int, batch_reports, 1000, "reports per SubmitReports call");
ABSL_FLAG(int, in_flight, 8, "SubmitReports calls in flight");
ABSL_FLAG(int, channels, 4, "client connections");
ABSL_FLAG(int, buckets, 10, "dBitFlip's k (equal-width buckets over [0, 1000])");
ABSL_FLAG(std::string, dir, "", "directory for the databases (default: a new temporary one)");
ABSL_FLAG(std::string, json, "", "write every figure as JSON to this file");
ABSL_FLAG(int64_t, sdk_calls, 100'000, "Reporter calls per kind and round of the SDK phase");
ABSL_FLAG(bool, skip_ingest, false, "run only the SDK phase");
ABSL_FLAG(std::vector<std::string>, kinds,
          std::vector<std::string>({"yes_no", "one_bit_mean", "d_bit_flip_d1", "d_bit_flip_d4",
                                    "heavy_hitters"}),
          "kinds to run (for profiling one of them; the ratios need yes_no)");

namespace deniable::bench {
namespace {

constexpr double kLo = 0, kHi = 1000;
constexpr char kUnit[] = "ms";
const double kEpsilon = std::log(3.0);

// One kind of report: its metric and how a report of it is filled in.
struct Kind {
  std::string name;            // "yes_no", "one_bit_mean", "d_bit_flip_d1", ...
  std::string metric;          // the metric's name on the collector
  int sampled = 0;             // dBitFlip's d (0: one bit per report, yes/no and 1BitMean)
  bool heavy_hitters = false;  // a string metric: each report's bit at a sketch cell
  v1::CreateMetricRequest create;
  std::shared_ptr<const Mechanism> mechanism;  // numeric kinds: for the SDK phase
  std::optional<NumericDesign> numeric;
  int bits_per_report() const { return sampled > 0 ? sampled : 1; }
};

std::vector<Kind> Kinds(int k) {
  std::vector<Kind> kinds;
  Kind yes_no;
  yes_no.name = yes_no.metric = "yes_no";
  yes_no.create.set_name(yes_no.metric);
  yes_no.create.mutable_design()->mutable_two_coin();
  kinds.push_back(yes_no);
  auto numeric = [&](const std::string& name, v1::NumericMechanism mechanism, int buckets, int d) {
    Kind kind;
    kind.name = kind.metric = name;
    kind.sampled = d;
    kind.create.set_name(name);
    kind.create.mutable_range()->set_lo(kLo);
    kind.create.mutable_range()->set_hi(kHi);
    kind.create.mutable_range()->set_unit(kUnit);
    v1::Numeric* n = kind.create.mutable_design()->mutable_numeric();
    n->set_mechanism(mechanism);
    n->set_epsilon(kEpsilon);
    n->set_buckets(static_cast<uint32_t>(buckets));
    n->set_sampled_buckets(static_cast<uint32_t>(d));
    absl::StatusOr<NumericDesign> design = NumericDesign::EqualWidth(
        mechanism == v1::D_BIT_FLIP ? NumericMechanism::kDBitFlip : NumericMechanism::kOneBitMean,
        kEpsilon, kLo, kHi, buckets, d);
    if (!design.ok()) {
      absl::FPrintF(stderr, "%s: %s\n", name, design.status().ToString());
      std::exit(2);
    }
    kind.numeric = *design;
    kind.mechanism = MechanismFor(*design);
    kinds.push_back(std::move(kind));
  };
  numeric("one_bit_mean", v1::ONE_BIT_MEAN, 1, 0);
  numeric("d_bit_flip_d1", v1::D_BIT_FLIP, k, 1);
  numeric("d_bit_flip_d4", v1::D_BIT_FLIP, k, std::min(4, k));
  Kind hh;  // the default sketch: 34 groups x 16 rows x 1024 coefficients, 2 counters a cell
  hh.name = hh.metric = "heavy_hitters";
  hh.heavy_hitters = true;
  hh.create.set_name(hh.metric);
  hh.create.mutable_design()->mutable_heavy_hitters()->set_epsilon(kEpsilon);
  kinds.push_back(std::move(hh));
  return kinds;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

// ---- Ingestion through the collector.

struct Collector {
  std::unique_ptr<server::CollectorServer> server;
  server::SqliteStorage* sqlite = nullptr;
  std::string target;
};

// A fresh database at `path` holding `kind`'s metric, served as deniable-server serves it.
absl::StatusOr<Collector> StartCollector(const std::string& path, const Kind& kind) {
  server::SqliteOptions sqlite_options;
  sqlite_options.path = path;
  DENIABLE_ASSIGN_OR_RETURN(std::unique_ptr<server::SqliteStorage> sqlite,
                            server::SqliteStorage::Open(sqlite_options));
  {
    server::MetricRegistry registry(sqlite.get(), SystemClock::Default());
    DENIABLE_RETURN_IF_ERROR(registry.Create(kind.create).status());
  }
  Collector c;
  c.sqlite = sqlite.get();
  server::ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.max_receive_message_bytes = 8 * 1024 * 1024;
  options.access_log = false;  // as deniable-bench can; the same for every kind
  DENIABLE_ASSIGN_OR_RETURN(c.server,
                            server::CollectorServer::Start(
                                std::make_unique<server::GroupCommitStorage>(std::move(sqlite)),
                                SystemClock::Default(), options));
  c.target = absl::StrCat("127.0.0.1:", c.server->port());
  return c;
}

// The batches of one phase: `total` reports of `kind` at `event_time`, `batch` per request, with
// distinct ids, labels {app_version: one of 4} and answers from a seeded generator.
std::vector<v1::SubmitReportsRequest> BuildRequests(const Kind& kind, int64_t total, int batch,
                                                    int64_t event_time, int k, IdSource* ids) {
  std::mt19937_64 gen(12345);
  std::vector<uint32_t> order(static_cast<size_t>(k));
  std::vector<v1::SubmitReportsRequest> requests;
  for (int64_t done = 0; done < total;) {
    v1::SubmitReportsRequest& request = requests.emplace_back();
    const int64_t n = std::min<int64_t>(batch, total - done);
    for (int64_t i = 0; i < n; ++i, ++done) {
      v1::Report* r = request.add_reports();
      r->set_metric(kind.metric);
      r->set_design_version(1);
      ids->Next(r->mutable_report_id());
      r->set_event_time_seconds(event_time);
      (*r->mutable_labels())["app_version"] = absl::StrCat("4.", done % 4);
      if (kind.heavy_hitters) {  // a uniform place in the default sketch, as devices draw
        r->set_bit(static_cast<uint32_t>(gen() & 1));
        v1::HeavyHittersReport* h = r->mutable_heavy_hitters();
        h->set_group(static_cast<uint32_t>(gen() % 34));
        h->set_row(static_cast<uint32_t>(gen() % 16));
        h->set_coefficient(static_cast<uint32_t>(gen() % 1024));
        continue;
      }
      if (kind.sampled == 0) {
        r->set_bit(static_cast<uint32_t>(gen() & 1));
        continue;
      }
      // d distinct buckets, ascending, one bit each (the SDK's Report.numeric).
      for (uint32_t j = 0; j < order.size(); ++j) order[j] = j;
      for (int j = 0; j < kind.sampled; ++j) {
        std::swap(order[static_cast<size_t>(j)],
                  order[static_cast<size_t>(j) + gen() % (order.size() - static_cast<size_t>(j))]);
      }
      std::sort(order.begin(), order.begin() + kind.sampled);
      v1::NumericReport* numeric = r->mutable_numeric();
      for (int j = 0; j < kind.sampled; ++j) {
        numeric->add_buckets(order[static_cast<size_t>(j)]);
        numeric->add_bits((gen() & 1) != 0);
      }
    }
  }
  return requests;
}

struct PhaseResult {
  double seconds = 0;
  double cpu_seconds = 0;  // the process's (collector and load clients) user + system time
  int64_t accepted = 0;
  int64_t stored = 0;
  int errors = 0;
  std::string first_error;
  double reports_per_second() const { return seconds > 0 ? accepted / seconds : 0; }
};

// User + system CPU time of this process (every thread), seconds.
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return seconds(u.ru_utime) + seconds(u.ru_stime);
}

// Sends `requests` to `target` as blocking SubmitReports calls, `in_flight` at once over
// `channels` connections (connected before the clock starts).
PhaseResult Send(const std::string& target, const std::vector<v1::SubmitReportsRequest>& requests,
                 int in_flight, int channels) {
  std::vector<std::shared_ptr<grpc::Channel>> ch = MakeChannels(target, channels);
  for (const auto& c : ch)
    c->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10));
  PhaseResult result;
  absl::Mutex mu;
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  const double cpu_start = ProcessCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < in_flight; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::ReportService::NewStub(ch[static_cast<size_t>(t) % ch.size()]);
      for (size_t i = next++; i < requests.size(); i = next++) {
        grpc::ClientContext context;
        v1::SubmitReportsResponse response;
        const grpc::Status s = stub->SubmitReports(&context, requests[i], &response);
        absl::MutexLock lock(&mu);
        if (!s.ok() || response.rejections_size() > 0) {
          if (result.errors++ == 0) {
            result.first_error = s.ok() ? response.rejections(0).reason() : s.error_message();
          }
        }
        result.accepted += response.accepted();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.cpu_seconds = ProcessCpuSeconds() - cpu_start;
  return result;
}

// ---- The SDK: a transport that serves the kinds' designs and acknowledges every report.

class DesignTransport final : public client::ReportTransport {
 public:
  explicit DesignTransport(const std::vector<Kind>& kinds) {
    for (const Kind& kind : kinds) {
      v1::GetDesignResponse& r = designs_[kind.metric];
      r.set_metric(kind.metric);
      if (kind.numeric.has_value()) {
        NumericDesignToProto(*kind.numeric, 1, kUnit, r.mutable_design());
        r.mutable_range()->set_lo(kLo);
        r.mutable_range()->set_hi(kHi);
        r.mutable_range()->set_unit(kUnit);
      } else {
        DesignToProto(Design::TwoCoin(), 1, r.mutable_design());
      }
      r.set_time_precision_seconds(3600);
      r.set_reporting_period_seconds(86400);
      r.set_randomization(v1::FRESH_PER_PERIOD);  // every call draws: the randomizer is timed
    }
  }
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration /*timeout*/) override {
    auto it = designs_.find(metric);
    if (it == designs_.end()) return absl::NotFoundError(metric);
    return it->second;
  }
  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration /*timeout*/) override {
    v1::SubmitReportsResponse response;
    response.set_accepted(static_cast<uint32_t>(request.reports_size()));
    return response;
  }

 private:
  std::map<std::string, v1::GetDesignResponse> designs_;  // read-only after construction
};

// Values in [lo - 5 %, hi + 5 %] (some clipped), cycled through by every SDK measurement.
std::vector<double> Values() {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> u(kLo - 0.05 * (kHi - kLo), kHi + 0.05 * (kHi - kLo));
  std::vector<double> v(1024);
  for (double& x : v) x = u(gen);
  return v;
}

// The calling thread's CPU time in ns (the Reporter calls below run on it alone).
double ThreadCpuNanos() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

// CPU ns per Reporter call of `kind`: `calls` calls on a fresh reporter (in-memory store, the
// production SecureBitGen, no background sender, each call a new device's report).
absl::StatusOr<double> ReporterNsPerCall(const std::shared_ptr<client::ReportTransport>& transport,
                                         const Kind& kind, int64_t calls,
                                         const std::vector<double>& values) {
  client::ReporterOptions options;
  options.one_report_per_period = false;
  options.background_sending = false;
  options.max_epsilon_per_metric = std::numeric_limits<double>::infinity();
  options.max_queued_reports = calls + 1;
  options.shutdown_drain_timeout = absl::ZeroDuration();
  std::unique_ptr<client::Reporter> reporter = client::Reporter::Create(transport, options);
  DENIABLE_RETURN_IF_ERROR(reporter->Prefetch({kind.metric}, absl::Seconds(5)));
  const size_t mask = values.size() - 1;
  const double mid = (kLo + kHi) / 2;
  absl::Status status;
  const double start = ThreadCpuNanos();
  for (int64_t i = 0; i < calls && status.ok(); ++i) {
    const double v = values[static_cast<size_t>(i) & mask];
    status = kind.numeric.has_value() ? reporter->ReportValue(kind.metric, v)
                                      : reporter->Report(kind.metric, v > mid);
  }
  const double ns = ThreadCpuNanos() - start;
  DENIABLE_RETURN_IF_ERROR(status);
  if (reporter->pending() != static_cast<size_t>(calls)) {
    return absl::InternalError(
        absl::StrCat(kind.name, ": ", reporter->pending(), " queued of ", calls, " calls"));
  }
  (void)reporter->Close(absl::ZeroDuration());
  return ns / static_cast<double>(calls);
}

// Google Benchmark: one randomized value each, on the production generator.
void RegisterRandomizerBenchmarks(const std::vector<Kind>& kinds,
                                  const std::vector<double>* values) {
  benchmark::RegisterBenchmark("randomize/yes_no", [values](benchmark::State& state) {
    client::SecureBitGen gen;
    const Channel channel = Design::TwoCoin().channel();
    const size_t mask = values->size() - 1;
    size_t i = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(RandomizeAnswer(channel, (*values)[i++ & mask] > 500, gen));
    }
  });
  // The mechanism alone (mechanism.h Randomize of the value's level into a WireAnswer), without
  // the clip, the level and the wire report: where the SDK path's cost goes.
  for (const Kind& kind : kinds) {
    if (kind.heavy_hitters) {  // RandomizeString of a 16-byte value, a device of level 5
      std::shared_ptr<const Mechanism> mechanism = MechanismFor(HeavyHittersDesign{});
      benchmark::RegisterBenchmark(("mechanism/" + kind.name).c_str(),
                                   [mechanism](benchmark::State& state) {
                                     client::SecureBitGen gen;
                                     BitGenDraws draws(gen);
                                     for (auto _ : state) {
                                       absl::StatusOr<WireAnswer> answer =
                                           mechanism->RandomizeString("example.org/a/b/", 5, draws);
                                       if (!answer.ok()) state.SkipWithError("randomize failed");
                                       benchmark::DoNotOptimize(answer);
                                     }
                                   });
      continue;
    }
    std::shared_ptr<const Mechanism> mechanism =
        kind.mechanism ? kind.mechanism : MechanismFor(Design::TwoCoin());
    const int levels = kind.numeric.has_value() ? kind.numeric->buckets() : 2;
    benchmark::RegisterBenchmark(
        ("mechanism/" + kind.name).c_str(), [mechanism, levels](benchmark::State& state) {
          client::SecureBitGen gen;
          BitGenDraws draws(gen);
          int32_t level = 0;
          for (auto _ : state) {
            level = level + 1 < levels ? level + 1 : 0;
            absl::StatusOr<WireAnswer> answer = mechanism->Randomize(level, draws);
            if (!answer.ok()) state.SkipWithError("randomize failed");
            benchmark::DoNotOptimize(answer);
          }
        });
  }
  // The clip and the level alone (numeric.h ClipValue, LevelOf).
  for (const Kind& kind : kinds) {
    if (!kind.numeric.has_value()) continue;
    benchmark::RegisterBenchmark(("level/" + kind.name).c_str(), [kind,
                                                                  values](benchmark::State& state) {
      const size_t mask = values->size() - 1;
      size_t i = 0;
      for (auto _ : state) {
        benchmark::DoNotOptimize(client::LevelOfValue(*kind.numeric, (*values)[i++ & mask], 0.37));
      }
    });
  }
  for (const Kind& kind : kinds) {
    if (!kind.numeric.has_value()) continue;
    benchmark::RegisterBenchmark(
        ("randomize/" + kind.name).c_str(), [kind, values](benchmark::State& state) {
          client::SecureBitGen gen;
          BitGenDraws draws(gen);
          const double alpha = 0.37;  // the device's alpha, drawn once per metric
          const size_t mask = values->size() - 1;
          size_t i = 0;
          for (auto _ : state) {
            const client::ValueLevel level =
                client::LevelOfValue(*kind.numeric, (*values)[i++ & mask], alpha);
            absl::StatusOr<v1::Report> r =
                client::DrawNumericAnswer(*kind.mechanism, level.level, draws);
            if (!r.ok()) state.SkipWithError("randomize failed");
            benchmark::DoNotOptimize(r);
          }
        });
  }
}

class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(std::map<std::string, double>* out) : out_(out) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && !run.error_occurred) {
        // CPU time: one thread's own work, which other processes on the shared cores do not
        // inflate as they do the real time.
        (*out_)[run.benchmark_name()] = run.GetAdjustedCPUTime();  // ns
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

 private:
  std::map<std::string, double>* out_;
};

std::string JsonList(const std::vector<double>& v) {
  return absl::StrCat(
      "[",
      absl::StrJoin(v, ", ",
                    [](std::string* out, double x) { absl::StrAppendFormat(out, "%.6g", x); }),
      "]");
}

int Run() {
  const int64_t total = absl::GetFlag(FLAGS_reports);
  const int repeat = absl::GetFlag(FLAGS_repeat);
  const int batch = absl::GetFlag(FLAGS_batch_reports);
  const int k = absl::GetFlag(FLAGS_buckets);
  if (total < 1 || repeat < 1 || batch < 1 || k < 4 || absl::GetFlag(FLAGS_sdk_calls) < 1) {
    absl::FPrintF(stderr,
                  "--reports, --repeat, --batch_reports, --sdk_calls must be >= 1 and "
                  "--buckets >= 4\n");
    return 2;
  }
  std::vector<Kind> kinds = Kinds(k);
  const std::vector<std::string> wanted = absl::GetFlag(FLAGS_kinds);
  std::erase_if(kinds, [&](const Kind& kind) {
    return std::find(wanted.begin(), wanted.end(), kind.name) == wanted.end();
  });
  if (kinds.empty()) {
    absl::FPrintF(stderr,
                  "--kinds names none of yes_no, one_bit_mean, d_bit_flip_d1, "
                  "d_bit_flip_d4\n");
    return 2;
  }
  std::string dir = absl::GetFlag(FLAGS_dir);
  const bool temporary = dir.empty();
  if (temporary) {
    std::string pattern = (std::filesystem::temp_directory_path() / "deniable-numeric-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      absl::FPrintF(stderr, "cannot create a temporary directory\n");
      return 1;
    }
    dir = pattern;
  }
  std::filesystem::create_directories(dir);

  // ---- Ingestion, kinds in round-robin order within each round.
  std::map<std::string, std::vector<double>> rates;   // reports/s per kind, one per round
  std::map<std::string, std::vector<double>> cpu_us;  // process CPU us per report, likewise
  std::map<std::string, std::vector<double>> bytes_per_report;  // files / stored, likewise
  int errors = 0;
  if (!absl::GetFlag(FLAGS_skip_ingest)) {
    IdSource ids(static_cast<uint64_t>(absl::ToUnixNanos(absl::Now())) << 20);
    const int64_t event_time = absl::ToUnixSeconds(absl::Now()) / 3600 * 3600;
    absl::PrintF(
        "== ingest: %d reports per phase, %d per SubmitReports call, %d in flight, %d "
        "connections; SQLite (synchronous=FULL) under group commit; %d rounds\n",
        total, batch, absl::GetFlag(FLAGS_in_flight), absl::GetFlag(FLAGS_channels), repeat);
    for (int round = 0; round < repeat; ++round) {
      for (size_t i = 0; i < kinds.size(); ++i) {
        // Rotate the order each round, so no kind always runs first or after the same one.
        const Kind& kind = kinds[(i + static_cast<size_t>(round)) % kinds.size()];
        const std::string path = absl::StrCat(dir, "/", kind.name, ".db");
        for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
        const std::vector<v1::SubmitReportsRequest> requests =
            BuildRequests(kind, total, batch, event_time, k, &ids);
        absl::StatusOr<Collector> c = StartCollector(path, kind);
        if (!c.ok()) {
          absl::FPrintF(stderr, "%s: %s\n", kind.name, c.status().ToString());
          return 1;
        }
        PhaseResult r = Send(c->target, requests, absl::GetFlag(FLAGS_in_flight),
                             absl::GetFlag(FLAGS_channels));
        c->server->Shutdown(absl::Seconds(5));
        absl::StatusOr<int64_t> stored = c->sqlite->ReportCount();
        r.stored = stored.ok() ? *stored : -1;
        c->server.reset();
        // Bytes on disk per report: the database and its keyed reports file, with their WALs.
        int64_t bytes = 0;
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
          if (entry.path().string().rfind(path, 0) == 0) bytes += entry.file_size();
        }
        bytes_per_report[kind.name].push_back(r.stored > 0 ? double(bytes) / r.stored : 0);
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
          if (entry.path().string().rfind(path, 0) == 0) std::filesystem::remove(entry.path());
        }
        rates[kind.name].push_back(r.reports_per_second());
        cpu_us[kind.name].push_back(r.accepted > 0 ? r.cpu_seconds * 1e6 / r.accepted : 0);
        absl::PrintF(
            "  round %d %-14s %10.0f reports/s  %6.2f CPU us/report  %6.1f bytes/report  (%.2f s, "
            "%d stored%s)\n",
            round + 1, kind.name, r.reports_per_second(),
            r.accepted > 0 ? r.cpu_seconds * 1e6 / r.accepted : 0,
            bytes_per_report[kind.name].back(), r.seconds, r.stored,
            r.errors ? absl::StrCat(", ", r.errors, " errors: ", r.first_error) : "");
        if (r.errors > 0 || r.stored != total || r.accepted != total) ++errors;
      }
    }
  }

  // ---- The SDK.
  const std::vector<double> values = Values();
  absl::PrintF("== sdk: one randomized value (Google Benchmark, SecureBitGen; CPU ns)\n");
  std::map<std::string, double> randomize_ns;
  RegisterRandomizerBenchmarks(kinds, &values);
  {
    CollectingReporter reporter(&randomize_ns);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
  }
  const int64_t calls = absl::GetFlag(FLAGS_sdk_calls);
  absl::PrintF(
      "== sdk: Reporter::Report / ReportValue, %d calls per kind and round, in-memory "
      "store, FRESH_PER_PERIOD; CPU ns of the calling thread\n",
      calls);
  auto transport = std::make_shared<DesignTransport>(kinds);
  std::map<std::string, std::vector<double>> reporter_ns;
  for (int round = 0; round < repeat; ++round) {
    for (size_t i = 0; i < kinds.size(); ++i) {
      const Kind& kind = kinds[(i + static_cast<size_t>(round)) % kinds.size()];
      if (kind.heavy_hitters) continue;  // no Reporter call for strings yet (docs/sdk.md)
      absl::StatusOr<double> ns = ReporterNsPerCall(transport, kind, calls, values);
      if (!ns.ok()) {
        absl::FPrintF(stderr, "%s: %s\n", kind.name, ns.status().ToString());
        return 1;
      }
      reporter_ns[kind.name].push_back(*ns);
      absl::PrintF("  round %d %-14s %8.0f CPU ns per call\n", round + 1, kind.name, *ns);
    }
  }

  // ---- The tables.
  const double yes_no_rate = Median(rates["yes_no"]);
  const double yes_no_cpu = Median(cpu_us["yes_no"]);
  const double yes_no_randomize = randomize_ns["randomize/yes_no"];
  const double yes_no_call = Median(reporter_ns["yes_no"]);
  auto over = [](double a, double b) { return b > 0 ? a / b : 0; };
  absl::PrintF(
      "\n== ingestion (medians of %d rounds; ratio = kind / yes_no; capacity = yes_no's CPU "
      "per report / the kind's)\n",
      repeat);
  absl::PrintF("%-14s %4s %11s %7s %9s %12s %7s | %12s %8s %8s\n", "kind", "bits", "reports/s",
               "ratio", "round med", "bits/s", "per bit", "CPU us/rep", "capacity", "per bit");
  for (const Kind& kind : kinds) {
    const std::vector<double>& samples = rates[kind.name];
    const double rate = Median(samples);
    // The ratio of each round's pair (measured seconds apart), then their median.
    std::vector<double> round_ratios;
    for (size_t r = 0; r < samples.size() && r < rates["yes_no"].size(); ++r) {
      round_ratios.push_back(over(samples[r], rates["yes_no"][r]));
    }
    const double cpu = Median(cpu_us[kind.name]);
    const int d = kind.bits_per_report();
    absl::PrintF("%-14s %4d %11.0f %7.3f %9.3f %12.0f %7.3f | %12.3f %8.3f %8.3f\n", kind.name, d,
                 rate, over(rate, yes_no_rate), Median(round_ratios), rate * d,
                 over(rate * d, yes_no_rate), cpu, over(yes_no_cpu, cpu),
                 over(yes_no_cpu * d, cpu));
  }
  absl::PrintF("\n== sdk: CPU ns per value (ratio = kind / yes_no)\n");
  absl::PrintF("%-14s %11s %7s %11s %11s | %11s %7s\n", "kind", "randomize", "ratio", "level",
               "mechanism", "Reporter", "ratio");
  for (const Kind& kind : kinds) {
    const double randomize = randomize_ns["randomize/" + kind.name];
    const double call = Median(reporter_ns[kind.name]);
    const std::string level = kind.numeric.has_value()
                                  ? absl::StrFormat("%8.1f ns", randomize_ns["level/" + kind.name])
                                  : "-";
    absl::PrintF("%-14s %8.1f ns %7.2f %11s %8.1f ns | %8.0f ns %7.2f\n", kind.name, randomize,
                 over(randomize, yes_no_randomize), level, randomize_ns["mechanism/" + kind.name],
                 call, over(call, yes_no_call));
  }
  std::string json = "{\n  \"kinds\": [\n";
  for (size_t i = 0; i < kinds.size(); ++i) {
    const Kind& kind = kinds[i];
    absl::StrAppendFormat(
        &json,
        "    {\"kind\": \"%s\", \"bits_per_report\": %d, \"reports_per_second\": %s, "
        "\"cpu_us_per_report\": %s, \"randomize_ns\": %.6g, \"level_ns\": %.6g, "
        "\"mechanism_ns\": %.6g, \"reporter_ns\": %s}%s\n",
        kind.name, kind.bits_per_report(), JsonList(rates[kind.name]), JsonList(cpu_us[kind.name]),
        randomize_ns["randomize/" + kind.name], randomize_ns["level/" + kind.name],
        randomize_ns["mechanism/" + kind.name], JsonList(reporter_ns[kind.name]),
        i + 1 < kinds.size() ? "," : "");
  }
  absl::StrAppendFormat(&json,
                        "  ],\n  \"reports\": %d, \"batch_reports\": %d, \"in_flight\": %d, "
                        "\"channels\": %d, \"rounds\": %d, \"buckets\": %d, \"sdk_calls\": %d\n}\n",
                        total, batch, absl::GetFlag(FLAGS_in_flight), absl::GetFlag(FLAGS_channels),
                        repeat, k, calls);
  absl::PrintF(
      "target: one_bit_mean reports/s >= 0.90 of yes_no; dBitFlip is read per sampled bit "
      "(bits/s = reports/s * d)\n");
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    std::ofstream(path) << json;
    absl::PrintF("wrote %s\n", path);
  }
  if (temporary) std::filesystem::remove_all(dir);
  if (errors > 0) {
    absl::FPrintF(stderr, "%d phases had errors or stored fewer reports than sent\n", errors);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace deniable::bench

int main(int argc, char** argv) {
  // Google Benchmark takes its --benchmark_* flags first.
  benchmark::Initialize(&argc, argv);
  // Debian's Abseil checks every Mutex for lock cycles (a debug aid that costs on each lock).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  return deniable::bench::Run();
}
