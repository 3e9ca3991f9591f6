// Eventually: waits, bounded, for a condition that a test cannot be told about by an event, by
// polling it. Tests wait for the state they need this way instead of sleeping for a guessed
// time and then asserting (a sleep passes on a slow machine only by luck, and a wait long enough
// for every machine makes every run slow).
//
//   ASSERT_TRUE(Eventually([&] { return server->open_streams() == 2; }));
//
// Thread-compatible: `done` runs on the calling thread only.
#ifndef DENIABLE_TESTS_SUPPORT_EVENTUALLY_H_
#define DENIABLE_TESTS_SUPPORT_EVENTUALLY_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace deniable::testing_util {

// Polls `done` every 5 ms until it returns true (returns true) or `limit` has passed (returns
// the last poll's result, so a condition that holds at the deadline still counts). The limit is
// generous (20 s by default): a correct run returns at the first true poll, so only a broken one
// waits it out.
template <typename F>
bool Eventually(F done, absl::Duration limit = absl::Seconds(20)) {
  const absl::Time deadline = absl::Now() + limit;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return done();
}

}  // namespace deniable::testing_util

#endif  // DENIABLE_TESTS_SUPPORT_EVENTUALLY_H_
