// One client stream of StreamReports: validates each message as SubmitReports does, buffers the
// rows and stores them in large appends, so a stream of small messages costs about as much as
// batched calls.
//
// Each message is judged as SubmitReports judges a batch: a message malformed as a whole (empty,
// over max_batch_reports) ends the stream with INVALID_ARGUMENT; an invalid report is listed in
// the response's rejections and the valid reports beside it are stored. In the stream's response
// a rejection's index counts the reports of the whole stream (the first report of message k has
// index = the number of reports in messages 0..k-1) and its reason starts with "message k: ", so
// accepted + duplicates + rejections_size() = the reports of the stream.
//
// The stream's single response acknowledges all of its messages, so rows may wait in the buffer
// until IngestOptions::stream_flush_reports are pending or the stream ends; Finish() returns only
// after everything has been stored. On an error the stream stops: messages before it may or may
// not have been stored (the client re-sends them; report ids make that safe).
//
// Example (the gRPC handler):
//   ReportStream stream(&ingestor);
//   while (reader->Read(&message)) RETURN_IF_ERROR(stream.Add(message));
//   ASSIGN_OR_RETURN(v1::SubmitReportsResponse totals, stream.Finish());
//
// Thread-compatible: one stream per call. Does not own the ingestor.
#ifndef DENIABLE_SERVER_CORE_REPORT_STREAM_H_
#define DENIABLE_SERVER_CORE_REPORT_STREAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/v1/report_service.pb.h"
#include "server/core/ingestor.h"

namespace deniable::server {

class ReportStream {
 public:
  explicit ReportStream(Ingestor* ingestor) : ingestor_(ingestor) {}

  // Validates one message, buffers its valid reports and records its rejections; stores the
  // buffer once it holds stream_flush_reports or more. Errors: the message's batch-wide
  // validation error (INVALID_ARGUMENT) prefixed with "message N: " (N counts from 0); storage
  // errors.
  absl::Status Add(const v1::SubmitReportsRequest& message);

  // Stores what is buffered and returns the totals of the whole stream (accepted, duplicates,
  // stale metrics, rejections). Errors: INVALID_ARGUMENT "stream: no messages" for an empty stream;
  // storage errors.
  absl::StatusOr<v1::SubmitReportsResponse> Finish();

 private:
  absl::Status Flush();

  Ingestor* const ingestor_;
  int64_t messages_ = 0;
  int64_t reports_ = 0;  // reports in the messages added so far
  std::vector<v1::ReportRejection> rejections_;
  std::vector<ReportRow> pending_;
  int64_t accepted_ = 0;
  int64_t duplicates_ = 0;
  std::vector<std::string> stale_metrics_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_REPORT_STREAM_H_
