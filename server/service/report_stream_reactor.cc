#include "server/service/report_stream_reactor.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "server/core/echo.h"
#include "server/service/grpc_status.h"

namespace deniable::server {

ReportStreamReactor::ReportStreamReactor(std::unique_ptr<CollectorCore::Stream> stream,
                                         StreamLimits* limits, v1::SubmitReportsResponse* response)
    : limits_(limits), response_(response), stream_(std::move(stream)) {
  StartRead(&message_);
}

void ReportStreamReactor::OnReadDone(bool ok) {
  // !ok: the client has half-closed (or the call was cancelled): store the rest and answer, once
  // the flush in progress, if any, is done (OnFlushed).
  if (!ok) {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      ended_ = true;
      if (flushing_) return;
      flushing_ = true;
    }
    FinalFlush();
    return;
  }
  // The last guard of this handler, as CatchAll (grpc_call.h) is for the others: an
  // exception becomes INTERNAL rather than UNKNOWN or a crash.
  try {
    HandleMessage();
  } catch (const std::exception& e) {
    spdlog::error("event=handler_exception method=StreamReports what=\"{}\"", EchoValue(e.what()));
    FinishStream(grpc::Status(grpc::StatusCode::INTERNAL,
                              "StreamReports: internal error (logged on the server)"));
  }
}

void ReportStreamReactor::HandleMessage() {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;  // a flush failed meanwhile and answered
  }
  // The core checks the caller again, then validates and buffers; a refusal is logged by it.
  if (absl::Status added = stream_->Add(message_); !added.ok()) {
    FinishStream(ToGrpcStatus(added));
    return;
  }
  message_.Clear();
  bool read = false, flush = false;
  {
    absl::MutexLock lock(&mu_);
    if (finished_ || failure_.has_value()) return;  // the flush in progress answers
    AccountHeld();
    const int64_t pending = stream_->pending_rows();
    if (!flushing_ && pending > 0) {
      flushing_ = flush = read = true;
    } else if (flushing_ && (pending >= stream_->flush_reports() || limits_->BuffersFull())) {
      read_paused_ = true;  // OnFlushed reads on
      limits_->NoteReadPaused();
    } else {
      read = true;
    }
  }
  // Reading first: a flush may complete inline and finish the stream, after which nothing of
  // this object may be touched.
  if (read) StartRead(&message_);
  if (flush) StartFlush();
}

void ReportStreamReactor::StartFlush() {
  stream_->Flush([this](absl::Status stored) { OnFlushed(std::move(stored)); });
}

void ReportStreamReactor::OnFlushed(absl::Status stored) {  // a failure: logged by the core
  bool resume = false, next = false, final_flush = false;
  std::optional<grpc::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    flushing_ = false;
    AccountHeld();
    if (!stored.ok() && !failure_.has_value()) failure_ = ToGrpcStatus(stored);
    if (failure_.has_value()) {
      finished_ = true;
      finish = *failure_;
    } else if (ended_) {
      flushing_ = final_flush = true;
    } else {
      if (stream_->pending_rows() > 0) flushing_ = next = true;
      resume = std::exchange(read_paused_, false);
    }
  }
  // Each branch ends with the call that may let the stream finish.
  if (finish.has_value()) {
    Finish(*finish);
    return;
  }
  if (final_flush) {
    FinalFlush();
    return;
  }
  if (resume) StartRead(&message_);
  if (next) StartFlush();
}

void ReportStreamReactor::FinalFlush() {
  stream_->Flush([this](absl::Status stored) {
    // Both logged and counted by the core: a failed store, or the totals.
    absl::StatusOr<v1::SubmitReportsResponse> totals =
        stored.ok() ? stream_->Finish() : absl::StatusOr<v1::SubmitReportsResponse>(stored);
    {
      absl::MutexLock lock(&mu_);
      flushing_ = false;
      finished_ = true;
      AccountHeld();
    }
    if (!totals.ok()) {
      Finish(ToGrpcStatus(totals.status()));
      return;
    }
    *response_ = *std::move(totals);
    Finish(grpc::Status::OK);
  });
}

void ReportStreamReactor::FinishStream(const grpc::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (finished_) return;
    if (flushing_) {
      if (!failure_.has_value()) failure_ = status;
      return;
    }
    finished_ = true;
  }
  Finish(status);
}

void ReportStreamReactor::AccountHeld() {
  const int64_t rows = stream_->held_rows();
  limits_->AddBuffered(rows - accounted_rows_);
  accounted_rows_ = rows;
}

void ReportStreamReactor::OnDone() {
  {
    absl::MutexLock lock(&mu_);
    limits_->AddBuffered(-accounted_rows_);
    accounted_rows_ = 0;
  }
  delete this;  // and stream_ with it: its slot and the open-streams gauge go
                // (CollectorCore::Stream)
}

}  // namespace deniable::server
