#include "server/service/report_stream_reactor.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/core/echo.h"
#include "server/service/grpc_status.h"

namespace deniable::server {

void LogImport(absl::string_view method, const ReportCall& call,
               const v1::SubmitReportsResponse& response) {
  spdlog::info(
      "event=historical_import method={} token_id={} accepted={} duplicates={} rejected={}",
      std::string(method), call.token_id, response.accepted(), response.duplicates(),
      response.rejections_size() + response.rejections_omitted());
}

bool StreamLimits::TryOpen() {
  const int open = open_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (max_streams_ > 0 && open > max_streams_) {
    open_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

grpc::ServerReadReactor<v1::SubmitReportsRequest>* ReportStreamReactor::Open(
    Ingestor* ingestor, ServerCounters* counters, StreamLimits* limits,
    v1::SubmitReportsResponse* response, Admit admit, ReportCall call) {
  if (!limits->TryOpen()) {
    const absl::Status shed = absl::ResourceExhaustedError(
        absl::StrCat("reports: too many open streams (the server's limit is ",
                     limits->max_streams(), "); retry later or use SubmitReports"));
    spdlog::warn("event=stream_shed open_streams={} code=RESOURCE_EXHAUSTED",
                 limits->open_streams());
    if (counters != nullptr) {
      counters->RecordStreamShed();
      counters->RecordRejected(grpc::StatusCode::RESOURCE_EXHAUSTED, 0, false);
    }
    return new RefusedStreamReactor(ToGrpcStatus(shed));
  }
  return new ReportStreamReactor(ingestor, counters, limits, response, std::move(admit), call);
}

ReportStreamReactor::ReportStreamReactor(Ingestor* ingestor, ServerCounters* counters,
                                         StreamLimits* limits, v1::SubmitReportsResponse* response,
                                         Admit admit, ReportCall call)
    : ingestor_(ingestor),
      counters_(counters),
      limits_(limits),
      response_(response),
      admit_(std::move(admit)),
      call_(call),
      stream_(ingestor, ReportStream::kMaxListedRejections, call.origin) {
  if (counters_ != nullptr) counters_->RecordOpenStreams(1);
  StartRead(&message_);
}

void ReportStreamReactor::OnReadDone(bool ok) {
  // !ok: the client has half-closed (or the call was cancelled): store the rest and answer.
  if (!ok) {
    FlushThen(/*end_of_stream=*/true);
    return;
  }
  // The last guard of this handler, as CatchAll in guarded_services.cc is for the others: an
  // exception becomes INTERNAL rather than UNKNOWN or a crash.
  try {
    HandleMessage();
  } catch (const std::exception& e) {
    spdlog::error("event=handler_exception method=StreamReports what=\"{}\"", EchoValue(e.what()));
    Finish(grpc::Status(grpc::StatusCode::INTERNAL,
                        "StreamReports: internal error (logged on the server)"));
  }
}

void ReportStreamReactor::HandleMessage() {
  if (admit_) {
    if (absl::Status admitted = admit_(message_.reports_size()); !admitted.ok()) {
      Finish(ToGrpcStatus(admitted));
      return;
    }
  }
  if (absl::Status added = stream_.Add(message_); !added.ok()) {
    Fail(added);
    return;
  }
  message_.Clear();
  AccountBuffered(stream_.pending_rows());
  if (stream_.pending_rows() >= ingestor_->options().stream_flush_reports ||
      limits_->BuffersFull()) {
    FlushThen(/*end_of_stream=*/false);
  } else {
    StartRead(&message_);
  }
}

void ReportStreamReactor::FlushThen(bool end_of_stream) {
  stream_.Flush([this, end_of_stream](absl::Status stored) {
    if (!stored.ok()) {
      Fail(stored);
      return;
    }
    AccountBuffered(0);
    if (!end_of_stream) {
      StartRead(&message_);
      return;
    }
    absl::StatusOr<v1::SubmitReportsResponse> totals = stream_.Totals();
    if (!totals.ok()) {
      Fail(totals.status());
      return;
    }
    *response_ = *std::move(totals);
    if (response_->rejections_size() > 0) {
      spdlog::warn(
          "event=stream_reports_rejected rejected={} accepted={} first_index={} first_code={} "
          "first_reason=\"{}\"",
          response_->rejections_size() + response_->rejections_omitted(), response_->accepted(),
          response_->rejections(0).index(),
          absl::StatusCodeToString(static_cast<absl::StatusCode>(response_->rejections(0).code())),
          response_->rejections(0).reason());
    }
    if (call_.origin == ReportOrigin::kImport) LogImport("StreamReports", call_, *response_);
    if (counters_ != nullptr) counters_->RecordAccepted(*response_);
    Finish(grpc::Status::OK);
  });
}

void ReportStreamReactor::Fail(const absl::Status& status) {
  spdlog::warn("event=stream_rejected code={} reason=\"{}\"",
               absl::StatusCodeToString(status.code()), std::string(status.message()));
  if (counters_ != nullptr) {
    counters_->RecordRejected(static_cast<grpc::StatusCode>(status.code()), 0, false);
  }
  Finish(ToGrpcStatus(status));
}

void ReportStreamReactor::AccountBuffered(int64_t rows) {
  limits_->AddBuffered(rows - accounted_rows_);
  accounted_rows_ = rows;
}

void ReportStreamReactor::OnDone() {
  AccountBuffered(0);
  limits_->Close();
  if (counters_ != nullptr) counters_->RecordOpenStreams(-1);
  delete this;
}

}  // namespace deniable::server
