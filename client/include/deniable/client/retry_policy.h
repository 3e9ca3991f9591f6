// How the Reporter's sender treats a failed SubmitReports call: which statuses can never succeed
// (one traits function), how many failures a Flush() tolerates (RetryPolicy) and how long it
// waits between attempts (BackoffPolicy). Shaped like google-cloud-cpp's
// google/cloud/internal/retry_policy.h and backoff_policy.h; both are passed through
// ReporterOptions so an app can tune them and tests can drive them.
//
// Example (a Flush that gives up after 30 s of failures, with shorter waits):
//   deniable::client::ReporterOptions options;
//   options.retry_policy =
//       std::make_shared<deniable::client::LimitedTimeRetryPolicy>(absl::Seconds(30));
//   options.backoff_policy = std::make_shared<deniable::client::ExponentialBackoffPolicy>(
//       absl::Milliseconds(50), absl::Seconds(2));
//
// Whatever the policies say, a report leaves the device only as docs/sdk.md "Delivery
// contract" states: a policy decides when to wait and when Flush() returns, never whether a
// report is deleted, except through IsPermanentFailure for a one-report batch.
//
// Thread safety: a policy object is used by one thread at a time; the Reporter clones the
// prototypes from ReporterOptions for each sending loop, so one prototype may be shared by
// many reporters.
#ifndef DENIABLE_CLIENT_RETRY_POLICY_H_
#define DENIABLE_CLIENT_RETRY_POLICY_H_

#include <cstdint>
#include <memory>
#include <random>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace deniable::client {

// The traits function: true when a SubmitReports call that failed as a whole with `status`
// would fail the same way however often it is re-sent, because the server judged the batch's
// content (INVALID_ARGUMENT: too large for this server, or, on a server that judges batches
// whole, one invalid report in it). The Reporter never drops a batch of more than one report
// for this: it halves the batch and re-sends, so only a one-report batch is dropped.
// Every other code is transient: the server, the network or an operator (token, quota, disk)
// can change its answer. OK is not a failure (false).
bool IsPermanentBatchError(const absl::Status& status);

// Decides how many transient failures one sending loop (a Flush() call) tolerates.
class RetryPolicy {
 public:
  virtual ~RetryPolicy() = default;
  // A fresh policy with the same configuration and no failures counted.
  virtual std::unique_ptr<RetryPolicy> clone() const = 0;
  // Records a failure. Returns true when the caller may retry: the failure is not permanent
  // and the policy is not exhausted.
  virtual bool OnFailure(const absl::Status& status) = 0;
  // True once no more retries are allowed.
  virtual bool IsExhausted() const = 0;
  // True when `status` can never succeed on retry. Default: IsPermanentBatchError.
  virtual bool IsPermanentFailure(const absl::Status& status) const {
    return IsPermanentBatchError(status);
  }
};

// Tolerates up to `maximum_failures` transient failures; the next one exhausts it.
// REQUIRES: maximum_failures >= 0.
class LimitedErrorCountRetryPolicy : public RetryPolicy {
 public:
  explicit LimitedErrorCountRetryPolicy(int maximum_failures)
      : maximum_failures_(maximum_failures) {}
  std::unique_ptr<RetryPolicy> clone() const override;
  bool OnFailure(const absl::Status& status) override;
  bool IsExhausted() const override { return failures_ > maximum_failures_; }
  int maximum_failures() const { return maximum_failures_; }

 private:
  int maximum_failures_;
  int failures_ = 0;
};

// Tolerates transient failures for `maximum_duration` from its first failure (measured with
// the system clock, absl::Now()). REQUIRES: maximum_duration >= 0.
class LimitedTimeRetryPolicy : public RetryPolicy {
 public:
  explicit LimitedTimeRetryPolicy(absl::Duration maximum_duration)
      : maximum_duration_(maximum_duration) {}
  std::unique_ptr<RetryPolicy> clone() const override;
  bool OnFailure(const absl::Status& status) override;
  bool IsExhausted() const override;

 private:
  absl::Duration maximum_duration_;
  absl::Time first_failure_ = absl::InfiniteFuture();
};

// Decides how long to wait after each failure.
class BackoffPolicy {
 public:
  virtual ~BackoffPolicy() = default;
  // A fresh policy with the same configuration, its delay back at the start.
  virtual std::unique_ptr<BackoffPolicy> clone() const = 0;
  // The wait before the next attempt, after a failure. >= 0.
  virtual absl::Duration OnCompletion() = 0;
  // Seeds the jitter; the Reporter calls it on each clone with a value drawn from its own
  // generator (so a test's seeded generator makes the waits reproducible). Default: ignored.
  virtual void Seed(uint64_t /*seed*/) {}
};

// Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff and
// Jitter", 2015): the k-th wait (k = 0, 1, ...) is uniform in [0, min(maximum, initial *
// scaling^k)]. REQUIRES: initial >= 0, maximum >= 0, scaling >= 1.
class ExponentialBackoffPolicy : public BackoffPolicy {
 public:
  ExponentialBackoffPolicy(absl::Duration initial, absl::Duration maximum, double scaling = 2.0)
      : initial_(initial), maximum_(maximum), scaling_(scaling), bound_(initial) {}
  std::unique_ptr<BackoffPolicy> clone() const override;
  absl::Duration OnCompletion() override;
  void Seed(uint64_t seed) override { engine_.seed(seed); }

 private:
  absl::Duration initial_;
  absl::Duration maximum_;
  double scaling_;
  absl::Duration bound_;                           // the upper end of the next draw
  std::mt19937_64 engine_{0x9e3779b97f4a7c15ULL};  // jitter only: not used for privacy
};

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_RETRY_POLICY_H_
