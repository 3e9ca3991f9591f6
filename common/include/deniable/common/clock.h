// Time is injected: logic reads a Clock, tests pass a FakeClock.
//
// Example:
//   deniable::SystemClock clock;
//   absl::Time now = clock.Now();
#ifndef DENIABLE_COMMON_CLOCK_H_
#define DENIABLE_COMMON_CLOCK_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deniable {

// A source of wall-clock time. Implementations are safe for concurrent use.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// The real clock (absl::Now()). A process-wide instance is returned by SystemClock::Default();
// it is never destroyed.
class SystemClock : public Clock {
 public:
  absl::Time Now() const override;
  static SystemClock* Default();
};

// A clock that moves only when told to. Thread-safe.
class FakeClock : public Clock {
 public:
  explicit FakeClock(absl::Time start) : now_(start) {}
  absl::Time Now() const override;
  void Set(absl::Time t);
  void Advance(absl::Duration d);

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

// Rounds `t` down to a multiple of `precision_seconds` (> 0) since the Unix epoch, in seconds.
// Reports carry only rounded times, so that the event time does not single out a device.
int64_t RoundDownToPrecision(absl::Time t, int64_t precision_seconds);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CLOCK_H_
