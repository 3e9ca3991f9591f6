// The cost of a rate-limit check shared through PostgreSQL (PostgresRateBuckets) beside the
// in-process bucket, in one run:
//
//   postgres_rate_limit_bench [--calls=N] [--threads=K]
//
// Starts its own PostgreSQL 15 (server/storage/testing/test_postgres.h). K threads, as the
// handler threads of one collector, call RateLimiter::Admit(token key, 1) N times in all with a
// limit high enough that every call passes (the admitting path: one UPDATE per call), first on
// one shared key (every call waits for the row lock of the one before), then on one key per
// thread. Prints microseconds per call and calls per second.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/clock.h"
#include "server/auth/rate_limiter.h"
#include "server/storage/postgres/postgres_rate_buckets.h"
#include "server/storage/testing/test_postgres.h"

ABSL_FLAG(int, calls, 20000, "Admit calls per measurement");
ABSL_FLAG(int, threads, 4, "calling threads");

namespace {

using deniable::server::RateLimiter;
using deniable::server::RateLimitOptions;

double PerCallMicros(RateLimiter& limiter, int calls, int threads, bool key_per_thread) {
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      const std::string key = key_per_thread ? absl::StrCat("t:", t) : "t:0";
      while (next.fetch_add(1) < calls) {
        if (!limiter.Admit(key, 1).ok()) ++failed;
      }
    });
  }
  for (auto& th : pool) th.join();
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (failed > 0) std::fprintf(stderr, "%d calls refused\n", failed.load());
  return us / calls;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int calls = absl::GetFlag(FLAGS_calls), threads = absl::GetFlag(FLAGS_threads);
  auto pg = deniable::server::testing_util::TestPostgres::Start();
  if (!pg.ok()) {
    std::fprintf(stderr, "%s\n", pg.status().ToString().c_str());
    return 1;
  }
  auto buckets = deniable::server::PostgresRateBuckets::Open(*(*pg)->NewDatabase());
  if (!buckets.ok()) {
    std::fprintf(stderr, "%s\n", buckets.status().ToString().c_str());
    return 1;
  }
  deniable::SystemClock clock;
  RateLimitOptions local{.reports_per_second = 1e9, .burst = 1e9, .shared = nullptr};
  RateLimitOptions shared = local;
  shared.shared = *std::move(buckets);
  RateLimiter in_process(local, &clock), in_postgres(shared, &clock);
  std::printf("%d Admit calls from %d threads, every one admitted\n", calls, threads);
  for (bool per_thread : {false, true}) {
    const double l = PerCallMicros(in_process, calls, threads, per_thread);
    const double p = PerCallMicros(in_postgres, calls, threads, per_thread);
    std::printf(
        "%-22s in process %8.2f us/call   shared in PostgreSQL %8.1f us/call (%6.0f calls/s)\n",
        per_thread ? "one key per thread" : "one key for all", l, p, 1e6 / p);
  }
  return 0;
}
