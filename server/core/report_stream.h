// One client stream of StreamReports: validates each message as SubmitReports does, buffers the
// rows and stores them in large appends, so a stream of small messages costs about as much as
// batched calls.
//
// Each message is judged as SubmitReports judges a batch: a message malformed as a whole (empty,
// over max_batch_reports) ends the stream with INVALID_ARGUMENT; an invalid report is listed in
// the response's rejections and the valid reports beside it are stored. In the stream's response
// a rejection's index counts the reports of the whole stream (the first report of message k has
// index = the number of reports in messages 0..k-1) and its reason starts with "message k: ".
// Only the first `max_listed_rejections` rejections of the stream are kept and listed (1000 by
// default): a long stream of invalid reports would otherwise grow the server's memory and the
// response without bound; the others are counted in the response's rejections_omitted, so
// accepted + duplicates + rejections_size() + rejections_omitted = the reports of the stream.
// Reports whose metric was deleted while they were buffered are rejected with NOT_FOUND when
// their flush finds the metric gone (DeletedMetricRejection).
//
// The stream's single response acknowledges all of its messages, so rows wait in the buffer
// until the caller flushes them (the gRPC handler does so once IngestOptions::stream_flush_reports
// are pending, when the server's buffers of all streams are full, and at the end of the stream).
// On an error the stream stops: messages before it may or may not have been stored (the client
// re-sends them; report ids make that safe).
//
// Flushing never blocks the caller: Flush hands the buffer to Storage::AppendReportsAsync, so
// the handler (a gRPC reactor, server/service/report_stream_reactor.h) holds no thread while a
// commit is in progress.
//
// Example (a blocking caller):
//   ReportStream stream(&ingestor);
//   while (reader->Read(&message)) RETURN_IF_ERROR(stream.Add(message));
//   absl::Notification done;
//   stream.Flush([&](absl::Status s) { status = s; done.Notify(); });
//   done.WaitForNotification();
//   ASSIGN_OR_RETURN(v1::SubmitReportsResponse totals, stream.Totals());
//
// Thread-compatible: one stream per call; no method may run while a Flush is in progress (until
// its callback runs). Does not own the ingestor.
#ifndef DENIABLE_SERVER_CORE_REPORT_STREAM_H_
#define DENIABLE_SERVER_CORE_REPORT_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/ingestor.h"

namespace deniable::server {

class ReportStream {
 public:
  // Rejections listed in one stream's response by default; later ones are only counted.
  static constexpr int64_t kMaxListedRejections = 1000;

  // `origin` kImport: every message is judged as an analyst's historical import
  // (Ingestor::Validate). REQUIRES: max_listed_rejections >= 0.
  explicit ReportStream(Ingestor* ingestor, int64_t max_listed_rejections = kMaxListedRejections,
                        ReportOrigin origin = ReportOrigin::kDevice)
      : ingestor_(ingestor), max_listed_rejections_(max_listed_rejections), origin_(origin) {}

  // Validates one message, buffers its valid reports and records its rejections; stores nothing.
  // Errors: the message's batch-wide validation error (INVALID_ARGUMENT, or FAILED_PRECONDITION
  // for an import while imports are off) prefixed with
  // "message N: " (N counts from 0); storage errors from reading a metric.
  absl::Status Add(const v1::SubmitReportsRequest& message);

  // Rows buffered and not yet stored.
  int64_t pending_rows() const { return static_cast<int64_t>(pending_.size()); }

  // Stores the buffer in one append and then calls `done` with OK, or with the storage's error
  // (nothing of the buffer acknowledged). `done` runs inline when the buffer is empty, else on
  // the storage's thread (or inline for a storage without a committer); it must not block.
  using FlushCallback = absl::AnyInvocable<void(absl::Status) &&>;
  void Flush(FlushCallback done);

  // The totals of the whole stream (accepted, duplicates, stale metrics, the first
  // max_listed_rejections rejections and the count of the others in rejections_omitted).
  // REQUIRES: pending_rows() == 0 (flushed). Errors: INVALID_ARGUMENT "stream: no messages" for
  // an empty stream.
  absl::StatusOr<v1::SubmitReportsResponse> Totals();

 private:
  Ingestor* const ingestor_;
  const int64_t max_listed_rejections_;
  const ReportOrigin origin_;
  int64_t rejections_omitted_ = 0;  // rejections beyond max_listed_rejections_, only counted
  int64_t messages_ = 0;
  int64_t reports_ = 0;  // reports in the messages added so far
  std::vector<v1::ReportRejection> rejections_;
  std::vector<std::pair<int64_t, std::string>> metric_names_;  // of the rows added
  std::vector<ReportRow> pending_;
  // Where pending_[j] came from, for the rejection of a report whose metric the storage found
  // deleted (AppendResult::missing_metrics).
  struct Origin {
    int64_t message = 0;
    int64_t stream_index = 0;
    int index_in_message = 0;
  };
  std::vector<Origin> pending_origin_;
  // Lists (or counts, beyond the cap) the rejections of pending rows of deleted metrics.
  void RejectDeleted(const AppendResult& stored);
  int64_t accepted_ = 0;
  int64_t duplicates_ = 0;
  std::vector<std::string> stale_metrics_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_REPORT_STREAM_H_
