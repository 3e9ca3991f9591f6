#include "bench/sdk_bench.h"

#include <benchmark/benchmark.h>
#include <openssl/rand.h>

#include <cstdint>
#include <cstdlib>

#include "absl/random/distributions.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/common/design.h"
#include "deniable/common/randomizer.h"

namespace deniable::bench {
namespace {

void SecureBitGen64(benchmark::State& state) {
  client::SecureBitGen gen;
  for (auto _ : state) benchmark::DoNotOptimize(gen());
}

void RandBytes8(benchmark::State& state) {
  uint64_t word = 0;
  for (auto _ : state) {
    if (RAND_bytes(reinterpret_cast<unsigned char*>(&word), sizeof(word)) != 1) std::abort();
    benchmark::DoNotOptimize(word);
  }
}

void RandomizeReport(benchmark::State& state) {
  client::SecureBitGen gen;
  const Channel channel = Design::TwoCoin().channel();
  bool answer = false;
  for (auto _ : state) {
    answer = !answer;
    benchmark::DoNotOptimize(RandomizeAnswer(channel, answer, gen));
    benchmark::DoNotOptimize(absl::Uniform<uint64_t>(gen));
    benchmark::DoNotOptimize(absl::Uniform<uint64_t>(gen));
  }
}

// Keeps the console output and records each run's mean time per iteration.
class CollectingReporter : public benchmark::ConsoleReporter {
 public:
  explicit CollectingReporter(std::map<std::string, double>* out) : out_(out) {}
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Iteration && !run.error_occurred) {
        (*out_)[run.benchmark_name()] = run.GetAdjustedRealTime();  // in time_unit: ns
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }

 private:
  std::map<std::string, double>* out_;
};

}  // namespace

std::map<std::string, double> RunSdkBenchmarks() {
  benchmark::RegisterBenchmark("SecureBitGen64", SecureBitGen64);
  benchmark::RegisterBenchmark("RandBytes8", RandBytes8);
  benchmark::RegisterBenchmark("RandomizeReport", RandomizeReport);
  std::map<std::string, double> results;
  CollectingReporter reporter(&results);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();
  return results;
}

}  // namespace deniable::bench
