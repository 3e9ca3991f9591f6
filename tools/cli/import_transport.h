// The transport of `deniable replay --import` (docs/cli.md, "Importing historical data"): an
// analyst loads a historical survey, whose answers are older than the collector's
// --max_report_age_seconds, as a historical import.
//
// Every call carries the analyst's token (the CLI's channel) and, for SubmitReports, the header
// `x-deniable-import: historical`, so the collector judges the batch against its
// --max_import_age_seconds (server/auth/access_policy.h). The report ids are not random: each is
// ImportReportId(token, metric, SHA-256 of the CSV, CSV record, event time), so re-running the same
// import (same token, CSV, metric and --time_column) sends the same ids and the collector counts
// each respondent once, however often the import is repeated or resumed after a failure. The ids
// are keyed with the token, a secret: without it nobody can tell which stored report came from
// which record. The bits stay drawn by the SDK from the secure generator.
//
// Example:
//   auto transport = std::make_shared<ImportTransport>(channel, prepare, token, "vote", digest);
//   ReplaySurvey(rows, "vote", transport, options, nullptr, nullptr, nullptr,
//                [&](const SurveyRow& row) { transport->SetRecord(row.record); });
//
// Thread-safe.
#ifndef DENIABLE_TOOLS_CLI_IMPORT_TRANSPORT_H_
#define DENIABLE_TOOLS_CLI_IMPORT_TRANSPORT_H_

#include <grpcpp/grpcpp.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/client/transport.h"
#include "deniable/v1/report_service.grpc.pb.h"

namespace deniable::tools {

// The report id of CSV record `record` (1 is the header) answered at `event_time_seconds`, in an
// import of `metric` from the CSV whose SHA-256 is `csv_sha256` (32 raw bytes): the first 16
// bytes of HMAC-SHA256(key = `token`, "deniable-import-v1" NUL metric NUL csv_sha256 NUL record
// NUL event time, the numbers in decimal). Pure.
std::array<uint8_t, 16> ImportReportId(absl::string_view token, absl::string_view metric,
                                       absl::string_view csv_sha256, int64_t record,
                                       int64_t event_time_seconds);

// Sets the report id of each report of `request` to ImportReportId(token, its metric,
// csv_sha256, `record`, its event time). REQUIRES: every report is of CSV record `record` (the
// replay sends one report per respondent).
void AssignImportIds(absl::string_view token, absl::string_view csv_sha256, int64_t record,
                     v1::SubmitReportsRequest* request);

// The SHA-256 of the file at `path` (32 raw bytes). Errors: NOT_FOUND naming `flag` when the file
// cannot be read.
absl::StatusOr<std::string> FileSha256(const std::string& path, absl::string_view flag);

class ImportTransport : public client::ReportTransport {
 public:
  // `channel`: to the collector, carrying the token on a TLS channel; `prepare` runs on each
  // call's context first (the CLI's SetDeadline, which adds the token on a plaintext channel).
  // `token`: the analyst's token, the key of the ids. `csv_sha256`: FileSha256 of the CSV.
  ImportTransport(std::shared_ptr<grpc::Channel> channel,
                  std::function<void(grpc::ClientContext*)> prepare, std::string token,
                  std::string csv_sha256);

  // The CSV record whose report the next SubmitReports calls carry.
  void SetRecord(int64_t record) { record_.store(record, std::memory_order_relaxed); }

  // Errors: the collector's status, as client::ReportTransport says.
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration timeout) override;
  // Sends `request` with its ids replaced (AssignImportIds) and the import header.
  // Errors: the collector's status; PERMISSION_DENIED "x-deniable-import: ..." for a token that
  // is not an analyst's, FAILED_PRECONDITION when the collector's imports are off.
  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration timeout) override;

 private:
  void Prepare(grpc::ClientContext* context, absl::Duration timeout) const;

  const std::shared_ptr<grpc::Channel> channel_;
  const std::unique_ptr<v1::ReportService::Stub> stub_;
  const std::function<void(grpc::ClientContext*)> prepare_;
  const std::string token_;
  const std::string csv_sha256_;
  std::atomic<int64_t> record_{0};
};

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_IMPORT_TRANSPORT_H_
