#include "deniable/client/reporter.h"

#include <algorithm>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/randomizer.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/design_convert.h"

namespace deniable::client {
namespace {

bool IsTransient(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         absl::IsResourceExhausted(status) || absl::IsAborted(status);
}

}  // namespace

std::unique_ptr<Reporter> Reporter::Create(std::shared_ptr<ReportTransport> transport,
                                           ReporterOptions options) {
  auto secure = std::make_unique<SecureBitGen>();
  SecureBitGen* raw = secure.get();
  return std::unique_ptr<Reporter>(new Reporter(std::move(transport), std::move(options),
                                                std::move(secure), absl::BitGenRef(*raw),
                                                SystemClock::Default()));
}

std::unique_ptr<Reporter> Reporter::CreateForTesting(std::shared_ptr<ReportTransport> transport,
                                                     ReporterOptions options, absl::BitGenRef gen,
                                                     const Clock* clock) {
  return std::unique_ptr<Reporter>(
      new Reporter(std::move(transport), std::move(options), nullptr, gen, clock));
}

Reporter::Reporter(std::shared_ptr<ReportTransport> transport, ReporterOptions options,
                   std::unique_ptr<SecureBitGen> secure, absl::BitGenRef gen, const Clock* clock)
    : transport_(std::move(transport)),
      options_(std::move(options)),
      clock_(clock),
      secure_(std::move(secure)),
      gen_(gen) {}

absl::StatusOr<Reporter::CachedDesign> Reporter::DesignFor(const std::string& metric) {
  {
    absl::MutexLock lock(&mu_);
    if (auto it = designs_.find(metric); it != designs_.end()) return it->second;
  }
  DENIABLE_ASSIGN_OR_RETURN(v1::GetDesignResponse response,
                            transport_->GetDesign(metric, options_.rpc_timeout));
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromWire(response.design()));
  CachedDesign cached;
  cached.version = response.design().version();
  cached.channel = design.channel();
  cached.time_precision_seconds =
      response.time_precision_seconds() == 0 ? 3600 : response.time_precision_seconds();
  absl::MutexLock lock(&mu_);
  designs_[metric] = cached;
  return cached;
}

absl::Status Reporter::Report(const std::string& metric, bool answer) {
  DENIABLE_ASSIGN_OR_RETURN(CachedDesign design, DesignFor(metric));
  const int64_t event_time = RoundDownToPrecision(clock_->Now(), design.time_precision_seconds);
  absl::MutexLock lock(&mu_);
  // The only use of `answer`: it goes into the randomizer and only the bit comes out.
  const bool bit = RandomizeAnswer(design.channel, answer, gen_);
  uint64_t id_words[2] = {absl::Uniform<uint64_t>(gen_), absl::Uniform<uint64_t>(gen_)};
  v1::Report& report = queue_.emplace_back();
  report.set_metric(metric);
  report.set_design_version(design.version);
  report.set_bit(bit ? 1 : 0);
  report.set_report_id(reinterpret_cast<const char*>(id_words), sizeof(id_words));
  report.set_event_time_seconds(event_time);
  for (const auto& [key, value] : options_.labels) (*report.mutable_labels())[key] = value;
  return absl::OkStatus();
}

absl::Status Reporter::SendWithRetry(const v1::SubmitReportsRequest& request) {
  absl::Duration backoff = options_.initial_backoff;
  absl::Status last;
  for (int attempt = 1; attempt <= std::max(1, options_.max_attempts); ++attempt) {
    absl::StatusOr<v1::SubmitReportsResponse> response =
        transport_->SubmitReports(request, options_.rpc_timeout);
    if (response.ok()) {
      absl::MutexLock lock(&mu_);
      for (const std::string& stale : response->stale_metrics()) designs_.erase(stale);
      return absl::OkStatus();
    }
    last = response.status();
    if (!IsTransient(last) || attempt == options_.max_attempts) break;
    absl::Duration sleep;
    {
      absl::MutexLock lock(&mu_);
      sleep = absl::Nanoseconds(
          absl::Uniform<int64_t>(gen_, 0, std::max<int64_t>(1, absl::ToInt64Nanoseconds(backoff))));
    }
    absl::SleepFor(sleep);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
  return last;
}

absl::Status Reporter::Flush() {
  absl::MutexLock flush_lock(&flush_mu_);
  while (true) {
    v1::SubmitReportsRequest request;
    {
      absl::MutexLock lock(&mu_);
      if (queue_.empty()) return absl::OkStatus();
      const size_t take =
          std::min(queue_.size(), static_cast<size_t>(std::max(1, options_.max_batch_reports)));
      for (size_t i = 0; i < take; ++i) *request.add_reports() = queue_[i];
    }
    absl::Status status = SendWithRetry(request);
    if (!status.ok() && IsTransient(status)) return status;  // stays queued for a later Flush
    {
      absl::MutexLock lock(&mu_);
      // Only Flush removes from the front, and Report only appends, so the batch is the prefix.
      queue_.erase(queue_.begin(), queue_.begin() + request.reports_size());
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("batch of ", request.reports_size(),
                                       " reports rejected and dropped: ", status.message()));
    }
  }
}

size_t Reporter::pending() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

}  // namespace deniable::client
