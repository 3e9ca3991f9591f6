#include "tools/cli/import_transport.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"

namespace deniable::tools {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace

std::array<uint8_t, 16> ImportReportId(absl::string_view token, absl::string_view metric,
                                       absl::string_view csv_sha256, int64_t record,
                                       int64_t event_time_seconds) {
  std::string message("deniable-import-v1");
  message.push_back('\0');
  absl::StrAppend(&message, metric);
  message.push_back('\0');
  absl::StrAppend(&message, csv_sha256);
  message.push_back('\0');
  absl::StrAppend(&message, record);
  message.push_back('\0');
  absl::StrAppend(&message, event_time_seconds);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int mac_size = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &mac_size);
  std::array<uint8_t, 16> id{};
  std::memcpy(id.data(), mac, id.size());
  return id;
}

void AssignImportIds(absl::string_view token, absl::string_view csv_sha256, int64_t record,
                     v1::SubmitReportsRequest* request) {
  for (v1::Report& report : *request->mutable_reports()) {
    const std::array<uint8_t, 16> id =
        ImportReportId(token, report.metric(), csv_sha256, record, report.event_time_seconds());
    report.set_report_id(std::string(reinterpret_cast<const char*>(id.data()), id.size()));
  }
}

absl::StatusOr<std::string> FileSha256(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  std::ostringstream contents;
  contents << in.rdbuf();
  const std::string bytes = contents.str();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

ImportTransport::ImportTransport(std::shared_ptr<grpc::Channel> channel,
                                 std::function<void(grpc::ClientContext*)> prepare,
                                 std::string token, std::string csv_sha256)
    : channel_(std::move(channel)),
      stub_(v1::ReportService::NewStub(channel_)),
      prepare_(std::move(prepare)),
      token_(std::move(token)),
      csv_sha256_(std::move(csv_sha256)) {}

void ImportTransport::Prepare(grpc::ClientContext* context, absl::Duration timeout) const {
  if (prepare_) prepare_(context);
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));  // saturates, never overflows
}

absl::StatusOr<v1::GetDesignResponse> ImportTransport::GetDesign(const std::string& metric,
                                                                 absl::Duration timeout) {
  grpc::ClientContext context;
  Prepare(&context, timeout);
  v1::GetDesignRequest request;
  request.set_metric(metric);
  v1::GetDesignResponse response;
  if (grpc::Status s = stub_->GetDesign(&context, request, &response); !s.ok()) return FromGrpc(s);
  return response;
}

absl::StatusOr<v1::SubmitReportsResponse> ImportTransport::SubmitReports(
    const v1::SubmitReportsRequest& request, absl::Duration timeout) {
  v1::SubmitReportsRequest imported = request;
  AssignImportIds(token_, csv_sha256_, record_.load(std::memory_order_relaxed), &imported);
  grpc::ClientContext context;
  Prepare(&context, timeout);
  context.AddMetadata("x-deniable-import", "historical");
  v1::SubmitReportsResponse response;
  if (grpc::Status s = stub_->SubmitReports(&context, imported, &response); !s.ok()) {
    return FromGrpc(s);
  }
  return response;
}

}  // namespace deniable::tools
