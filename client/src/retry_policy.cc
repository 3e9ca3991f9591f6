#include "deniable/client/retry_policy.h"

#include <algorithm>

namespace deniable::client {

bool IsPermanentBatchError(const absl::Status& status) { return absl::IsInvalidArgument(status); }

std::unique_ptr<RetryPolicy> LimitedErrorCountRetryPolicy::clone() const {
  return std::make_unique<LimitedErrorCountRetryPolicy>(maximum_failures_);
}

bool LimitedErrorCountRetryPolicy::OnFailure(const absl::Status& status) {
  if (IsPermanentFailure(status)) return false;
  ++failures_;
  return !IsExhausted();
}

std::unique_ptr<RetryPolicy> LimitedTimeRetryPolicy::clone() const {
  return std::make_unique<LimitedTimeRetryPolicy>(maximum_duration_);
}

bool LimitedTimeRetryPolicy::OnFailure(const absl::Status& status) {
  if (IsPermanentFailure(status)) return false;
  if (first_failure_ == absl::InfiniteFuture()) first_failure_ = absl::Now();
  return !IsExhausted();
}

bool LimitedTimeRetryPolicy::IsExhausted() const {
  return first_failure_ != absl::InfiniteFuture() &&
         absl::Now() - first_failure_ > maximum_duration_;
}

std::unique_ptr<BackoffPolicy> ExponentialBackoffPolicy::clone() const {
  return std::make_unique<ExponentialBackoffPolicy>(initial_, maximum_, scaling_);
}

absl::Duration ExponentialBackoffPolicy::OnCompletion() {
  const absl::Duration bound = std::min(bound_, maximum_);
  bound_ = std::min(bound_ * scaling_, maximum_);
  const int64_t bound_ns = std::max<int64_t>(0, absl::ToInt64Nanoseconds(bound));
  std::uniform_int_distribution<int64_t> draw(0, bound_ns);
  return absl::Nanoseconds(draw(engine_));
}

}  // namespace deniable::client
