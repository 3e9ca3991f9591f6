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
// The stream's single response acknowledges all of its messages, so it is sent only once every
// flush of the stream has committed (Totals requires it). Rows wait in the buffer until the
// caller flushes them; the gRPC handler (server/service/report_stream_reactor.h) flushes as soon
// as no flush of the stream is in progress and reads on meanwhile, so while one flush commits
// the next messages collect in the buffer and go to storage together, as one writer of the
// next group commit shared with the other streams' (group_commit_storage.h): a stream of small
// messages costs about as much as batched calls, and no stream waits idle for its own commit.
// On an error the stream stops: messages before it may or may not have been stored (the client
// re-sends them; report ids make that safe).
//
// Flushing never blocks the caller: Flush hands the buffer to Storage::AppendReportsAsync, so
// the handler holds no thread while a commit is in progress.
//
// Example (a blocking caller):
//   ReportStream stream(&ingestor);
//   while (reader->Read(&message)) RETURN_IF_ERROR(stream.Add(message));
//   absl::Notification done;
//   stream.Flush([&](absl::Status s) { status = s; done.Notify(); });
//   done.WaitForNotification();
//   ASSIGN_OR_RETURN(v1::SubmitReportsResponse totals, stream.Totals());
//
// Thread-safe with one restriction: at most one Flush may be in progress at a time (until its
// callback runs); Add may run meanwhile (from another thread), filling the buffer that the next
// Flush stores. Does not own the ingestor.
#ifndef DENIABLE_SERVER_CORE_REPORT_STREAM_H_
#define DENIABLE_SERVER_CORE_REPORT_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/ingestor.h"

namespace deniable::server {

class ReportStream {
 public:
  // Rejections listed in one stream's response by default; later ones are only counted.
  static constexpr int64_t kMaxListedRejections = 1000;

  // `origin` kImport: every message is judged as an analyst's historical import
  // (Ingestor::Validate). REQUIRES: max_listed_rejections >= 0.
  // `token_id`: the caller's token (0: tokenless), for Ingestor's limit on first-in-window
  // reports.
  explicit ReportStream(Ingestor* ingestor, int64_t max_listed_rejections = kMaxListedRejections,
                        ReportOrigin origin = ReportOrigin::kDevice, int64_t token_id = 0)
      : ingestor_(ingestor),
        max_listed_rejections_(max_listed_rejections),
        origin_(origin),
        token_id_(token_id) {}

  // Validates one message, buffers its valid reports and records its rejections; stores nothing.
  // Errors: the message's batch-wide validation error (INVALID_ARGUMENT, or FAILED_PRECONDITION
  // for an import while imports are off) prefixed with
  // "message N: " (N counts from 0); storage errors from reading a metric.
  absl::Status Add(const v1::SubmitReportsRequest& message);

  // Rows buffered and not yet handed to storage.
  int64_t pending_rows() const;
  // Rows buffered or in the flush in progress: what the stream holds in memory.
  int64_t held_rows() const;

  // Takes the buffer (Add starts a new one at once) and stores it in one append, then calls
  // `done` with OK once that append has committed, or with the storage's error (nothing of the
  // buffer acknowledged). `done` runs inline when the buffer is empty, else on the storage's
  // thread (or inline for a storage without a committer); it must not block.
  // REQUIRES: no other Flush in progress.
  using FlushCallback = absl::AnyInvocable<void(absl::Status) &&>;
  void Flush(FlushCallback done);

  // The totals of the whole stream (accepted, duplicates, stale metrics, the first
  // max_listed_rejections rejections and the count of the others in rejections_omitted).
  // REQUIRES: held_rows() == 0 (every row flushed and committed). Errors: INVALID_ARGUMENT
  // "stream: no messages" for an empty stream; FAILED_PRECONDITION when rows are still held.
  absl::StatusOr<v1::SubmitReportsResponse> Totals();

 private:
  Ingestor* const ingestor_;
  const int64_t max_listed_rejections_;
  const ReportOrigin origin_;
  const int64_t token_id_;
  // Where a buffered row came from, for the rejection of a report whose metric the storage found
  // deleted (AppendResult::missing_metrics).
  struct Origin {
    int64_t message = 0;
    int64_t stream_index = 0;
    int index_in_message = 0;
  };
  // Lists (or counts, beyond the cap) the rejections of the flushed `rows` (from `origins`) whose
  // metric was deleted, and drops those metrics from the registry's cache; and those the cap on
  // label values refused (AppendResult::label_refusals, LabelValueRejection).
  void RejectDeleted(const AppendResult& stored, const std::vector<ReportRow>& rows,
                     const std::vector<Origin>& origins,
                     const std::vector<std::pair<int64_t, std::string>>& names);
  mutable absl::Mutex mu_;
  // Rejections beyond max_listed_rejections_, only counted.
  int64_t rejections_omitted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t messages_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t reports_ ABSL_GUARDED_BY(mu_) = 0;  // reports in the messages added so far
  std::vector<v1::ReportRejection> rejections_ ABSL_GUARDED_BY(mu_);
  // Of the rows added.
  std::vector<std::pair<int64_t, std::string>> metric_names_ ABSL_GUARDED_BY(mu_);
  std::vector<ReportRow> pending_ ABSL_GUARDED_BY(mu_);
  std::vector<Origin> pending_origin_ ABSL_GUARDED_BY(mu_);  // pending_[j] came from [j]
  int64_t flushing_rows_ ABSL_GUARDED_BY(mu_) = 0;           // rows of the flush in progress
  int64_t accepted_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t duplicates_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::string> stale_metrics_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_REPORT_STREAM_H_
