// The SDK's entry point: answer a yes/no metric on the device, send only randomized bits.
//
// Example:
//   auto transport = deniable::client::MakeGrpcTransport(channel);
//   std::unique_ptr<deniable::client::Reporter> reporter =
//       deniable::client::Reporter::Create(transport);
//   absl::Status s = reporter->Report("uses_drugs", /*answer=*/true);  // randomized here
//   s = reporter->Flush();                                             // sends the batch
//
// What leaves the device: for each Report() one randomized bit r (drawn with the metric's
// design, statistics.md section 1), a 16-byte report id from the secure generator, the design
// version, the event time rounded down to the metric's precision (an hour by default) and the
// reporter's public labels. The true answer is passed to the randomizer and dropped; it is
// never stored, queued, logged or sent.
//
// Randomness: Create() uses SecureBitGen (OpenSSL RAND_bytes). CreateForTesting() takes any
// absl::BitGenRef (a seeded engine or absl::MockingBitGen) and must not be used in production.
//
// Each Report() is an independent randomization: repeated reports of the same true value
// spend epsilon again each time (statistics.md section 4).
//
// Thread-safe: Report() and Flush() may be called from any number of threads.
#ifndef DENIABLE_CLIENT_REPORTER_H_
#define DENIABLE_CLIENT_REPORTER_H_

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/client/transport.h"
#include "deniable/common/clock.h"
#include "deniable/common/design.h"

namespace deniable::client {

struct ReporterOptions {
  // Deadline of each RPC.
  absl::Duration rpc_timeout = absl::Seconds(10);
  // Reports per SubmitReports call (the server accepts up to 10000 by default).
  int max_batch_reports = 1000;
  // Attempts per batch when the server is UNAVAILABLE, DEADLINE_EXCEEDED or RESOURCE_EXHAUSTED;
  // each retry re-sends the same report ids, so the server counts each report once.
  int max_attempts = 5;
  // Exponential backoff between attempts: initial_backoff * 2^k, capped, with full jitter.
  absl::Duration initial_backoff = absl::Milliseconds(100);
  absl::Duration max_backoff = absl::Seconds(5);
  // Public, low-cardinality labels attached to every report (for example {"region", "N"}).
  // Never put identifying or free-text values here: they are sent in the clear.
  std::map<std::string, std::string> labels;
};

class Reporter {
 public:
  // A reporter that randomizes with SecureBitGen and reads the system clock.
  static std::unique_ptr<Reporter> Create(std::shared_ptr<ReportTransport> transport,
                                          ReporterOptions options = {});
  // For tests and simulations only: randomness from `gen` (must outlive the reporter; calls to
  // it are serialized by the reporter) and time from `clock` (must outlive the reporter).
  static std::unique_ptr<Reporter> CreateForTesting(std::shared_ptr<ReportTransport> transport,
                                                    ReporterOptions options, absl::BitGenRef gen,
                                                    const Clock* clock);

  // Randomizes `answer` with the metric's design and queues the randomized report. Fetches and
  // caches the design on first use of a metric (a network call bounded by rpc_timeout).
  // Errors: from fetching the design (NOT_FOUND for an unknown metric, UNAVAILABLE, ...), or
  // INVALID_ARGUMENT if the server sent a design the SDK cannot verify. Nothing is queued then.
  absl::Status Report(const std::string& metric, bool answer);

  // Sends every queued report in batches, retrying transient errors with backoff. Returns OK
  // when all were acknowledged. On a transient error after max_attempts the unsent reports stay
  // queued (a later Flush re-sends them with the same ids) and the error is returned. On a
  // permanent error (INVALID_ARGUMENT, NOT_FOUND, ...) that batch is dropped and the error is
  // returned.
  absl::Status Flush();

  // Reports queued and not yet acknowledged.
  size_t pending() const;

 private:
  struct CachedDesign {
    uint32_t version = 0;
    Channel channel;
    int64_t time_precision_seconds = 3600;
  };

  Reporter(std::shared_ptr<ReportTransport> transport, ReporterOptions options,
           std::unique_ptr<SecureBitGen> secure, absl::BitGenRef gen, const Clock* clock);
  absl::StatusOr<CachedDesign> DesignFor(const std::string& metric);
  absl::Status SendWithRetry(const v1::SubmitReportsRequest& request);

  const std::shared_ptr<ReportTransport> transport_;
  const ReporterOptions options_;
  const Clock* const clock_;

  mutable absl::Mutex mu_;
  std::unique_ptr<SecureBitGen> secure_ ABSL_GUARDED_BY(mu_);  // owned default generator
  absl::BitGenRef gen_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, CachedDesign> designs_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::Report> queue_ ABSL_GUARDED_BY(mu_);

  absl::Mutex flush_mu_;  // one Flush at a time, so a batch is never sent twice concurrently
};

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_REPORTER_H_
