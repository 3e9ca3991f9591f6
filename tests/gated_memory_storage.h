// A MemoryStorage whose appends wait while a test holds its gate: for tests that look at what
// the server does (reads on, answers, or not) while a commit is in progress.
//
// Example:
//   auto storage = std::make_unique<GatedMemoryStorage>();
//   storage->Hold();
//   ... start a stream; wait until storage->waiting() == 1 ...
//   storage->Release();
//
// Thread-safe. Release the gate before the server is destroyed (or its shutdown waits for ever).
#ifndef DENIABLE_TESTS_GATED_MEMORY_STORAGE_H_
#define DENIABLE_TESTS_GATED_MEMORY_STORAGE_H_

#include <vector>

#include "absl/synchronization/mutex.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::testing_util {

class GatedMemoryStorage : public server::MemoryStorage {
 public:
  // Appends from now on wait at the gate.
  void Hold() {
    absl::MutexLock lock(&mu_);
    open_ = false;
  }
  // Lets the waiting appends (and later ones) through.
  void Release() {
    absl::MutexLock lock(&mu_);
    open_ = true;
  }
  // Appends waiting at the gate now.
  int waiting() const {
    absl::MutexLock lock(&mu_);
    return waiting_;
  }

  absl::StatusOr<server::AppendResult> AppendReports(
      absl::Span<const server::ReportRow> rows) override {
    Pass();
    return server::MemoryStorage::AppendReports(rows);
  }
  absl::StatusOr<std::vector<server::AppendResult>> AppendBatches(
      absl::Span<const absl::Span<const server::ReportRow>> batches) override {
    Pass();
    return server::MemoryStorage::AppendBatches(batches);
  }

 private:
  void Pass() {
    absl::MutexLock lock(&mu_);
    ++waiting_;
    mu_.Await(absl::Condition(&open_));
    --waiting_;
  }

  mutable absl::Mutex mu_;
  bool open_ ABSL_GUARDED_BY(mu_) = true;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deniable::testing_util

#endif  // DENIABLE_TESTS_GATED_MEMORY_STORAGE_H_
