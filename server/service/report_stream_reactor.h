// StreamReports on gRPC's callback API: one reactor per stream, no thread held while a stream
// waits for its next message or for a commit.
//
// A ReportStreamReactor reads a message, runs the admission check on it (the caller's token and
// rate limit, guarded_services.h), has the core validate and buffer it (CollectorCore::Stream,
// which writes the stream's log lines and counters) and reads on. Storing
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
// StreamLimits, shared by all streams of a server, bounds what streams hold:
//   - at most `max_streams` StreamReports calls are open at once over all connections; the next
//     one ends at once with RESOURCE_EXHAUSTED "reports: too many open streams" before anything
//     is read, and is logged and counted by the core (CollectorCore::ShedStream);
//   - at most `max_buffered_rows` validated rows are held (buffered or being stored) by all
//     streams together: a stream whose message takes the total over it reads on only once its
//     flush in progress has committed, so the rows held in memory stay near the bound (+ one
//     message and one flush per stream) whatever the number of streams.
//
// Example (a service's handler):
//   grpc::ServerReadReactor<v1::SubmitReportsRequest>* StreamReports(
//       grpc::CallbackServerContext* context, v1::SubmitReportsResponse* response) override {
//     return ReportStreamReactor::Open(&core_, &limits_, response, nullptr);
//   }
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
#include <functional>
#include <memory>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "server/service/collector_core.h"

namespace deniable::server {

class StreamLimits {
 public:
  // `max_streams`: StreamReports calls open at once (0: no limit). `max_buffered_rows`: rows
  // buffered by all streams before a stream stores early (0: only stream_flush_reports applies).
  StreamLimits(int max_streams, int64_t max_buffered_rows)
      : max_streams_(max_streams), max_buffered_rows_(max_buffered_rows) {}

  // Takes a slot for a new stream; false (nothing taken) when max_streams are open.
  bool TryOpen();
  // Gives back a slot taken by TryOpen.
  void Close() { open_.fetch_sub(1, std::memory_order_relaxed); }
  // Rows entering (`rows` > 0) or leaving (< 0) the streams' buffers.
  void AddBuffered(int64_t rows) { buffered_.fetch_add(rows, std::memory_order_relaxed); }
  // Whether the buffers of all streams together hold more than max_buffered_rows.
  bool BuffersFull() const {
    return max_buffered_rows_ > 0 && buffered_.load(std::memory_order_relaxed) > max_buffered_rows_;
  }

  // A stream stopped reading (its flush is in progress and its or all streams' buffers are
  // full). read_pauses() counts them since start: the event tests wait for, instead of
  // watching for a read that does not come.
  void NoteReadPaused() { read_pauses_.fetch_add(1, std::memory_order_relaxed); }
  int64_t read_pauses() const { return read_pauses_.load(std::memory_order_relaxed); }

  int max_streams() const { return max_streams_; }
  int open_streams() const { return open_.load(std::memory_order_relaxed); }
  int64_t buffered_rows() const { return buffered_.load(std::memory_order_relaxed); }

 private:
  const int max_streams_;
  const int64_t max_buffered_rows_;
  std::atomic<int> open_{0};
  std::atomic<int64_t> buffered_{0};
  std::atomic<int64_t> read_pauses_{0};
};

// A reactor that ends its stream at once with `status` (a refused or shed stream).
class RefusedStreamReactor final : public grpc::ServerReadReactor<v1::SubmitReportsRequest> {
 public:
  explicit RefusedStreamReactor(const grpc::Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

class ReportStreamReactor final : public grpc::ServerReadReactor<v1::SubmitReportsRequest> {
 public:
  // Runs on each message before it is validated, with its number of reports; a refusal ends the
  // stream with that status (the function logs and counts the refusal itself).
  using Admit = std::function<absl::Status(int64_t)>;

  // A reactor for a new stream of `core` (CollectorCore::OpenStream), or a RefusedStreamReactor
  // answering RESOURCE_EXHAUSTED when `limits` has no free slot (CollectorCore::ShedStream).
  // `admit` may be empty. Neither `core` nor `limits` is owned; both must outlive the call.
  // `call`: an import's messages are judged as an import and the stream is logged as one.
  static grpc::ServerReadReactor<v1::SubmitReportsRequest>* Open(
      CollectorCore* core, StreamLimits* limits, v1::SubmitReportsResponse* response, Admit admit,
      ReportCall call = {});

  void OnReadDone(bool ok) override;
  void OnDone() override;

 private:
  ReportStreamReactor(CollectorCore* core, StreamLimits* limits,
                      v1::SubmitReportsResponse* response, Admit admit, ReportCall call);
  // Admits, validates and buffers message_, then reads on and/or starts a flush, or ends the
  // stream.
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
  const Admit admit_;
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
