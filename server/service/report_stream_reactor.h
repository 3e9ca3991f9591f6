// StreamReports on gRPC's callback API: one reactor per stream, no thread held while a stream
// waits for its next message or for a commit.
//
// A ReportStreamReactor reads a message, hands it to the core in one call (CollectorCore::Stream::
// Add: the caller's token and rate limit checked again, then validated and buffered; the core
// writes the stream's log lines and counters) and reads on. Storing
// overlaps reading: whenever no flush of the stream is in progress, the buffer is handed to
// Storage::AppendReportsAsync at once, and the messages read while that commits wait in the
// buffer for the next flush, so a stream's rows join the next group commit with the other
// streams' (one writer per stream and commit) rather than one append per message or a pause of
// the stream per commit. Reading pauses only while a flush is in progress AND the buffer holds
// IngestOptions::stream_flush_reports rows (or the buffers of all streams are full, below): a
// stream holds at most about twice that many rows. At the end of the stream the reactor waits for
// the flush in progress, stores the rest and only then answers with the totals: the response,
// which acknowledges every message of the stream, is sent only once all of them are durable. An
// idle stream costs its HTTP/2 stream and this object (about a kilobyte; measured in
// docs/security.md section 6), not a thread.
//
// StreamLimits (collector_core.h), shared by all streams of a server, bounds what streams hold:
// the core sheds a stream beyond max_streams before anything is read (CollectorCore::OpenStream),
// and a stream whose message takes the rows held by all streams over max_buffered_rows reads on
// only once its flush in progress has committed, so the rows held in memory stay near the bound
// (+ one message and one flush per stream) whatever the number of streams.
//
// Example (a service's handler):
//   absl::StatusOr<std::unique_ptr<CollectorCore::Stream>> stream =
//       core_->OpenStream(method, CredentialsOf(*context), &limits_);
//   if (!stream.ok()) return new RefusedStreamReactor(ToGrpcStatus(stream.status()));
//   return new ReportStreamReactor(*std::move(stream), &limits_, response);
//
// Thread-safe: StreamLimits is; a reactor's gRPC reactions (one read at a time) and its flush
// callbacks (on the storage's thread) share its state under its mutex, and the stream is finished
// only when no flush is in progress, so no callback outlives the reactor. A reactor deletes
// itself when gRPC calls OnDone.
#ifndef DENIABLE_SERVER_SERVICE_REPORT_STREAM_REACTOR_H_
#define DENIABLE_SERVER_SERVICE_REPORT_STREAM_REACTOR_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "server/core/collector_core.h"

namespace deniable::server {

// A reactor that ends its stream at once with `status` (a refused or shed stream).
class RefusedStreamReactor final : public grpc::ServerReadReactor<v1::SubmitReportsRequest> {
 public:
  explicit RefusedStreamReactor(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

class ReportStreamReactor final : public grpc::ServerReadReactor<v1::SubmitReportsRequest> {
 public:
  // Runs `stream` (CollectorCore::OpenStream, which took its slot of `limits`) and starts
  // reading. `limits` is not owned and must outlive the call.
  ReportStreamReactor(std::unique_ptr<CollectorCore::Stream> stream, StreamLimits* limits,
                      v1::SubmitReportsResponse* response);

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  // Has the core admit, validate and buffer message_, then reads on and/or starts a flush, or ends
  // the stream.
  void HandleMessage();
  // Starts a flush of the buffer (flushing_ already set) whose callback is OnFlushed.
  void StartFlush();
  // A flush has committed (or failed): next flush, resumed reading, the end, or the failure.
  void OnFlushed(absl::Status stored);
  // The last flush at the end of the stream, then the totals (flushing_ already set).
  void FinalFlush();
  // Ends the stream with `status` now, or (a flush in progress) when that flush is done.
  void FinishStream(const grpc::Status& status);
  // Moves this stream's held-row count in `limits_` to what stream_ holds.
  void AccountHeld() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  StreamLimits* const limits_;
  v1::SubmitReportsResponse* const response_;
  const std::unique_ptr<CollectorCore::Stream> stream_;
  v1::SubmitReportsRequest message_;
  absl::Mutex mu_;
  int64_t accounted_rows_ ABSL_GUARDED_BY(mu_) = 0;  // counted in limits_->buffered_rows()
  bool flushing_ ABSL_GUARDED_BY(mu_) = false;       // a flush of stream_ is in progress
  bool read_paused_ ABSL_GUARDED_BY(mu_) = false;    // no read started: waiting for the flush
  bool ended_ ABSL_GUARDED_BY(mu_) = false;          // the client has half-closed
  bool finished_ ABSL_GUARDED_BY(mu_) = false;       // Finish called (or about to be)
  // A failure found while a flush was in progress, answered once it is done.
  std::optional<grpc::Status> failure_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_REPORT_STREAM_REACTOR_H_
