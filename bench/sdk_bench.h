// Client-side microbenchmarks (Google Benchmark): the cost of secure randomness per report.
#ifndef DENIABLE_BENCH_SDK_BENCH_H_
#define DENIABLE_BENCH_SDK_BENCH_H_

#include <map>
#include <string>

namespace deniable::bench {

// Runs the SDK benchmarks through Google Benchmark (honouring --benchmark_* flags already parsed
// by benchmark::Initialize) and returns the mean real time per iteration in nanoseconds, by
// benchmark name:
//   SecureBitGen64      one 64-bit draw from the buffered SecureBitGen (divide by 64: ns/bit)
//   RandBytes8          one unbuffered RAND_bytes call for 8 bytes (the per-report alternative)
//   RandomizeReport     one randomized bit plus a 16-byte report id, as Reporter::Report draws
std::map<std::string, double> RunSdkBenchmarks();

}  // namespace deniable::bench

#endif  // DENIABLE_BENCH_SDK_BENCH_H_
