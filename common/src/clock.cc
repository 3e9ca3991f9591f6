#include "deniable/common/clock.h"

namespace deniable {

absl::Time SystemClock::Now() const { return absl::Now(); }

SystemClock* SystemClock::Default() {
  static SystemClock* clock = new SystemClock();
  return clock;
}

absl::Time FakeClock::Now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

void FakeClock::Set(absl::Time t) {
  absl::MutexLock lock(&mu_);
  now_ = t;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ += d;
}

int64_t RoundDownToPrecision(absl::Time t, int64_t precision_seconds) {
  const int64_t s = absl::ToUnixSeconds(t);
  int64_t r = s % precision_seconds;
  if (r < 0) r += precision_seconds;
  return s - r;
}

}  // namespace deniable
