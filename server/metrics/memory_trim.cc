#include "server/metrics/memory_trim.h"

#include <malloc.h>

namespace deniable::server {

MemoryTrimmer::MemoryTrimmer(absl::Duration interval) {
  mallopt(M_ARENA_MAX, kMallocArenas);
  if (interval > absl::ZeroDuration()) thread_ = std::thread([this, interval] { Loop(interval); });
}

MemoryTrimmer::~MemoryTrimmer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

bool MemoryTrimmer::TrimNow() { return malloc_trim(0) != 0; }

void MemoryTrimmer::Loop(absl::Duration interval) {
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) {
    mu_.Unlock();
    TrimNow();
    mu_.Lock();
  }
}

}  // namespace deniable::server
