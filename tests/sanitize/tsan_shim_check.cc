// Proves, at each run of run_sanitizers.sh tsan, that ThreadSanitizer with tsan_absl_mutex.cc
// sees what absl::Mutex orders and still reports a race: two threads add to `guarded` under an
// absl::Mutex (and one waits on it with Await) and, with an argument, also to `unguarded`
// without one. Expected: exit 0 without an argument (no report), 66 (TSan's exit code) with.
#include <thread>

#include "absl/synchronization/mutex.h"

namespace {
absl::Mutex mu;
int guarded = 0;
int unguarded = 0;
}  // namespace

int main(int argc, char**) {
  const bool race = argc > 1;
  std::thread other([race] {
    for (int i = 0; i < 1000; ++i) {
      absl::MutexLock lock(&mu);
      ++guarded;
    }
    if (race) ++unguarded;
  });
  for (int i = 0; i < 1000; ++i) {
    absl::MutexLock lock(&mu);
    ++guarded;
  }
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* g) { return *g == 2000; }, &guarded));
  }
  if (race) ++unguarded;
  other.join();
  return guarded == 2000 ? 0 : 1;
}
