// Linked into every executable of the ThreadSanitizer build (tests/sanitize/run_sanitizers.sh),
// never elsewhere. Debian's libabsl_synchronization is not instrumented, so ThreadSanitizer does
// not see absl::Mutex order memory: every field guarded by a Mutex would be reported as a race.
// These definitions take the place of the library's lock, unlock and wait functions (the
// executable's symbols come first, for the SDK, the server and gRPC alike), call the library's
// own through dlsym(RTLD_NEXT), and annotate them with ThreadSanitizer's mutex interface, as
// Abseil does itself when it is built with -fsanitize=thread (ABSL_TSAN_MUTEX_PRE_LOCK, ...):
// each mutex's happens-before edges and lock-order checking are restored. Between pre_* and
// post_* ThreadSanitizer ignores memory accesses, so an absl::Condition evaluated inside the
// library (by whichever thread holds the mutex then) is not checked; its fields are read with
// the mutex held anyway. The symbol names are those of Debian 12's Abseil (absl::debian3).
#include <dlfcn.h>
#include <sanitizer/tsan_interface.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

#include "absl/synchronization/mutex.h"

namespace {

// Resolved on first use (gRPC locks mutexes from its own static initialisers, before ours run);
// races on the cache are benign: every thread stores the same address. No function-local
// statics and no exceptions (compiled with -fno-exceptions): the object is linked into C
// programs too, which have no C++ runtime.
void* Real(std::atomic<void*>* cache, const char* name) {
  void* f = cache->load(std::memory_order_relaxed);
  if (f != nullptr) return f;
  f = dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "tsan_absl_mutex: %s not found in libabsl_synchronization\n", name);
    std::abort();
  }
  cache->store(f, std::memory_order_relaxed);
  return f;
}

using absl::Condition;
using absl::CondVar;
using absl::Duration;
using absl::Mutex;
using absl::Time;

constexpr unsigned kRead = __tsan_mutex_read_lock;

// The library calls its own public functions through the PLT too (AwaitWithTimeout calls
// AwaitWithDeadline, CondVar::WaitWithTimeout calls WaitWithDeadline): only the outermost call
// of a thread is annotated.
thread_local int depth = 0;
struct Depth {
  Depth() { ++depth; }
  ~Depth() { --depth; }
};

// Held on return (Lock*, LockWhen*): pre_lock before, post_lock after.
#define DENIABLE_LOCKING(flags, call)     \
  __tsan_mutex_pre_lock(this, flags);     \
  auto result = call;                     \
  __tsan_mutex_post_lock(this, flags, 0); \
  return result

// Let go while waiting, held again on return (Await*, CondVar::Wait*).
#define DENIABLE_WAITING(mu, call)  \
  __tsan_mutex_pre_unlock(mu, 0);   \
  auto result = call;               \
  __tsan_mutex_post_unlock(mu, 0);  \
  __tsan_mutex_pre_lock(mu, 0);     \
  __tsan_mutex_post_lock(mu, 0, 0); \
  return result

#define DENIABLE_REAL(type, name)         \
  static std::atomic<void*> real_cache{}; \
  const auto real = reinterpret_cast<type>(Real(&real_cache, name))

}  // namespace

void Mutex::Lock() {
  DENIABLE_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex4LockEv");
  if (depth > 0) return real(this);
  const Depth outermost;
  __tsan_mutex_pre_lock(this, 0);
  real(this);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::ReaderLock() {
  DENIABLE_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex10ReaderLockEv");
  if (depth > 0) return real(this);
  const Depth outermost;
  __tsan_mutex_pre_lock(this, kRead);
  real(this);
  __tsan_mutex_post_lock(this, kRead, 0);
}

bool Mutex::TryLock() {
  DENIABLE_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex7TryLockEv");
  if (depth > 0) return real(this);
  const Depth outermost;
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_lock);
  const bool held = real(this);
  __tsan_mutex_post_lock(this, held ? __tsan_mutex_try_lock : __tsan_mutex_try_lock_failed, 0);
  return held;
}

bool Mutex::ReaderTryLock() {
  DENIABLE_REAL(bool (*)(Mutex*), "_ZN4absl7debian35Mutex13ReaderTryLockEv");
  if (depth > 0) return real(this);
  const Depth outermost;
  __tsan_mutex_pre_lock(this, __tsan_mutex_try_read_lock);
  const bool held = real(this);
  __tsan_mutex_post_lock(this,
                         held ? __tsan_mutex_try_read_lock : __tsan_mutex_try_read_lock_failed, 0);
  return held;
}

void Mutex::Unlock() {
  DENIABLE_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex6UnlockEv");
  if (depth > 0) return real(this);
  const Depth outermost;
  __tsan_mutex_pre_unlock(this, 0);
  real(this);
  __tsan_mutex_post_unlock(this, 0);
}

void Mutex::ReaderUnlock() {
  DENIABLE_REAL(void (*)(Mutex*), "_ZN4absl7debian35Mutex12ReaderUnlockEv");
  if (depth > 0) return real(this);
  const Depth outermost;
  __tsan_mutex_pre_unlock(this, kRead);
  real(this);
  __tsan_mutex_post_unlock(this, kRead);
}

void Mutex::LockWhen(const Condition& cond) {
  DENIABLE_REAL(void (*)(Mutex*, const Condition&),
                "_ZN4absl7debian35Mutex8LockWhenERKNS0_9ConditionE");
  if (depth > 0) return real(this, cond);
  const Depth outermost;
  __tsan_mutex_pre_lock(this, 0);
  real(this, cond);
  __tsan_mutex_post_lock(this, 0, 0);
}

void Mutex::ReaderLockWhen(const Condition& cond) {
  DENIABLE_REAL(void (*)(Mutex*, const Condition&),
                "_ZN4absl7debian35Mutex14ReaderLockWhenERKNS0_9ConditionE");
  if (depth > 0) return real(this, cond);
  const Depth outermost;
  __tsan_mutex_pre_lock(this, kRead);
  real(this, cond);
  __tsan_mutex_post_lock(this, kRead, 0);
}

bool Mutex::LockWhenWithTimeout(const Condition& cond, Duration timeout) {
  DENIABLE_REAL(bool (*)(Mutex*, const Condition&, Duration),
                "_ZN4absl7debian35Mutex19LockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  if (depth > 0) return real(this, cond, timeout);
  const Depth outermost;
  DENIABLE_LOCKING(0, real(this, cond, timeout));  // held whether or not the condition is true
}

bool Mutex::LockWhenWithDeadline(const Condition& cond, Time deadline) {
  DENIABLE_REAL(bool (*)(Mutex*, const Condition&, Time),
                "_ZN4absl7debian35Mutex20LockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  if (depth > 0) return real(this, cond, deadline);
  const Depth outermost;
  DENIABLE_LOCKING(0, real(this, cond, deadline));
}

bool Mutex::ReaderLockWhenWithTimeout(const Condition& cond, Duration timeout) {
  DENIABLE_REAL(
      bool (*)(Mutex*, const Condition&, Duration),
      "_ZN4absl7debian35Mutex25ReaderLockWhenWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  if (depth > 0) return real(this, cond, timeout);
  const Depth outermost;
  DENIABLE_LOCKING(kRead, real(this, cond, timeout));
}

bool Mutex::ReaderLockWhenWithDeadline(const Condition& cond, Time deadline) {
  DENIABLE_REAL(bool (*)(Mutex*, const Condition&, Time),
                "_ZN4absl7debian35Mutex26ReaderLockWhenWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  if (depth > 0) return real(this, cond, deadline);
  const Depth outermost;
  DENIABLE_LOCKING(kRead, real(this, cond, deadline));
}

void Mutex::Await(const Condition& cond) {
  DENIABLE_REAL(void (*)(Mutex*, const Condition&),
                "_ZN4absl7debian35Mutex5AwaitERKNS0_9ConditionE");
  if (depth > 0) return real(this, cond);
  const Depth outermost;
  __tsan_mutex_pre_unlock(this, 0);
  real(this, cond);
  __tsan_mutex_post_unlock(this, 0);
  __tsan_mutex_pre_lock(this, 0);
  __tsan_mutex_post_lock(this, 0, 0);
}

bool Mutex::AwaitWithTimeout(const Condition& cond, Duration timeout) {
  DENIABLE_REAL(bool (*)(Mutex*, const Condition&, Duration),
                "_ZN4absl7debian35Mutex16AwaitWithTimeoutERKNS0_9ConditionENS0_8DurationE");
  if (depth > 0) return real(this, cond, timeout);
  const Depth outermost;
  DENIABLE_WAITING(this, real(this, cond, timeout));
}

bool Mutex::AwaitWithDeadline(const Condition& cond, Time deadline) {
  DENIABLE_REAL(bool (*)(Mutex*, const Condition&, Time),
                "_ZN4absl7debian35Mutex17AwaitWithDeadlineERKNS0_9ConditionENS0_4TimeE");
  if (depth > 0) return real(this, cond, deadline);
  const Depth outermost;
  DENIABLE_WAITING(this, real(this, cond, deadline));
}

void CondVar::Wait(Mutex* mu) {
  DENIABLE_REAL(void (*)(CondVar*, Mutex*), "_ZN4absl7debian37CondVar4WaitEPNS0_5MutexE");
  if (depth > 0) return real(this, mu);
  const Depth outermost;
  __tsan_mutex_pre_unlock(mu, 0);
  real(this, mu);
  __tsan_mutex_post_unlock(mu, 0);
  __tsan_mutex_pre_lock(mu, 0);
  __tsan_mutex_post_lock(mu, 0, 0);
}

bool CondVar::WaitWithTimeout(Mutex* mu, Duration timeout) {
  DENIABLE_REAL(bool (*)(CondVar*, Mutex*, Duration),
                "_ZN4absl7debian37CondVar15WaitWithTimeoutEPNS0_5MutexENS0_8DurationE");
  if (depth > 0) return real(this, mu, timeout);
  const Depth outermost;
  DENIABLE_WAITING(mu, real(this, mu, timeout));
}

bool CondVar::WaitWithDeadline(Mutex* mu, Time deadline) {
  DENIABLE_REAL(bool (*)(CondVar*, Mutex*, Time),
                "_ZN4absl7debian37CondVar16WaitWithDeadlineEPNS0_5MutexENS0_4TimeE");
  if (depth > 0) return real(this, mu, deadline);
  const Depth outermost;
  DENIABLE_WAITING(mu, real(this, mu, deadline));
}
