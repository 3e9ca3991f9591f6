// Gives the heap's free memory back to the operating system after load, so that a collector's
// resident memory follows its load instead of staying at the peak of the busiest wave.
//
// glibc's malloc keeps freed memory in its arenas (one per thread that allocated, up to 8 per
// core): after a burst of calls on gRPC's threads the freed blocks stay resident, and the next
// burst, served by other threads, adds its own. The trimmer caps the arenas (M_ARENA_MAX) at
// start and calls malloc_trim(0) (glibc, malloc.h: releases the free pages of every arena with
// madvise) every `interval` on a thread of its own.
//
//   MemoryTrimmer trimmer(absl::Seconds(10));   // until destroyed
//
// Thread-safe; the destructor stops and joins the thread (at most one trim's time).
#ifndef DENIABLE_SERVER_METRICS_MEMORY_TRIM_H_
#define DENIABLE_SERVER_METRICS_MEMORY_TRIM_H_

#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deniable::server {

// The arenas glibc's malloc may use at most, set by MemoryTrimmer (M_ARENA_MAX): enough for the
// 2-8 cores a collector runs on without one arena per thread of gRPC's pools.
inline constexpr int kMallocArenas = 4;

class MemoryTrimmer {
 public:
  // `interval` > 0: trims every interval; zero or negative: sets M_ARENA_MAX only, no thread.
  explicit MemoryTrimmer(absl::Duration interval);
  ~MemoryTrimmer();
  MemoryTrimmer(const MemoryTrimmer&) = delete;
  MemoryTrimmer& operator=(const MemoryTrimmer&) = delete;

  // Trims now; returns whether malloc_trim released any memory. Used by the thread and tests.
  static bool TrimNow();

 private:
  void Loop(absl::Duration interval);

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_METRICS_MEMORY_TRIM_H_
