#include "deniable/client/grpc_transport.h"

#include <grpc/support/log.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "client/src/unreachable.h"
#include "deniable/v1/report_service.grpc.pb.h"

namespace deniable::client {
namespace {

// The one place where a grpc::Status becomes an absl::Status in the SDK. UNAVAILABLE from the
// transport (nothing listening, TLS against plaintext, the HTTP port) says what to do
// (unreachable.h); the code is kept, so the delivery contract is unchanged.
absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& target,
                            TransportSecurity security) {
  if (status.ok()) return absl::OkStatus();
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE) {
    if (std::optional<std::string> explained =
            ExplainUnreachable(target, security, status.error_message())) {
      return absl::UnavailableError(*explained);
    }
  }
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

// absl's Time arithmetic and ToChronoTime saturate: an infinite or huge timeout becomes
// time_point::max(), which gRPC reads as no deadline (now() + microseconds(INT64_MAX)
// overflowed and put the deadline in the past).
void SetDeadline(grpc::ClientContext* context, absl::Duration timeout) {
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

class GrpcTransport : public ReportTransport {
 public:
  GrpcTransport(std::shared_ptr<grpc::Channel> channel, std::string target,
                TransportSecurity security)
      : channel_(std::move(channel)),
        stub_(v1::ReportService::NewStub(channel_)),
        target_(std::move(target)),
        security_(security) {}

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration timeout) override {
    grpc::ClientContext context;
    SetDeadline(&context, timeout);
    v1::GetDesignRequest request;
    request.set_metric(metric);
    v1::GetDesignResponse response;
    grpc::Status status = stub_->GetDesign(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status, target_, security_);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration timeout) override {
    grpc::ClientContext context;
    SetDeadline(&context, timeout);
    v1::SubmitReportsResponse response;
    grpc::Status status = stub_->SubmitReports(&context, request, &response);
    if (!status.ok()) return FromGrpcStatus(status, target_, security_);
    return response;
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ReportService::Stub> stub_;
  const std::string target_;  // for messages; empty for a caller's channel
  const TransportSecurity security_;
};

absl::StatusOr<std::string> ReadPem(const std::string& field, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(field, ": cannot read \"", path, "\""));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// gRPC's C core logs each failed TLS handshake on stderr ("E1201 ... Handshake failed with fatal
// error SSL_ERROR_SSL: ... WRONG_VERSION_NUMBER"), once per connection attempt, from the
// process of the app that embeds the SDK. The SDK's own status says the same in words that say
// what to do (unreachable.h), so those lines are dropped; every other line gRPC would print is
// printed as gRPC prints it. GRPC_VERBOSITY or GRPC_TRACE set: gRPC's logging is left alone.
void DropHandshakeLines(gpr_log_func_args* args) {
  const char* message = args->message != nullptr ? args->message : "";
  if (std::strstr(message, "Handshake failed") != nullptr) return;
  const char* file = args->file != nullptr ? args->file : "?";
  const char* slash = std::strrchr(file, '/');
  std::fprintf(stderr, "%s %s:%d] %s\n", gpr_log_severity_string(args->severity),
               slash != nullptr ? slash + 1 : file, args->line, message);
}

std::once_flag grpc_log_once;

void QuietGrpcHandshakeLog() {
  std::call_once(grpc_log_once, [] {
    if (std::getenv("GRPC_VERBOSITY") != nullptr || std::getenv("GRPC_TRACE") != nullptr) return;
    gpr_set_log_function(DropHandshakeLines);
  });
}

grpc::ChannelArguments ChannelArgs(absl::Duration max_reconnect_backoff) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(absl::ToInt64Milliseconds(max_reconnect_backoff)));
  args.SetInt(
      GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
      static_cast<int>(std::min<int64_t>(1000, absl::ToInt64Milliseconds(max_reconnect_backoff))));
  return args;
}

}  // namespace

void KeepGrpcLogFunction() {
  std::call_once(grpc_log_once, [] {});
}

std::shared_ptr<ReportTransport> MakeGrpcTransport(std::shared_ptr<grpc::Channel> channel) {
  return std::make_shared<GrpcTransport>(std::move(channel), "", TransportSecurity::kUnknown);
}

absl::StatusOr<std::shared_ptr<ReportTransport>> MakeSecureGrpcTransport(
    const GrpcTransportOptions& options) {
  if (options.target.empty()) return absl::InvalidArgumentError("target: must not be empty");
  if (options.client_cert_file.empty() != options.client_key_file.empty()) {
    return absl::InvalidArgumentError(
        "client_cert_file, client_key_file: give both for mutual TLS, or neither");
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadPem("ca_file", options.ca_file);
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
  }
  if (!options.client_cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadPem("client_cert_file", options.client_cert_file);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadPem("client_key_file", options.client_key_file);
    if (!key.ok()) return key.status();
    ssl.pem_cert_chain = *cert;
    ssl.pem_private_key = *key;
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (!options.bearer_token.empty()) {
    credentials = grpc::CompositeChannelCredentials(
        credentials, grpc::AccessTokenCredentials(options.bearer_token));
  }
  grpc::ChannelArguments args = ChannelArgs(options.max_reconnect_backoff);
  if (!options.server_name_override.empty()) {
    args.SetSslTargetNameOverride(options.server_name_override);
  }
  QuietGrpcHandshakeLog();
  return std::make_shared<GrpcTransport>(
      grpc::CreateCustomChannel(options.target, credentials, args), options.target,
      TransportSecurity::kTls);
}

std::shared_ptr<ReportTransport> MakeInsecureGrpcTransport(const std::string& target,
                                                           absl::Duration max_reconnect_backoff) {
  QuietGrpcHandshakeLog();
  return std::make_shared<GrpcTransport>(
      grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                ChannelArgs(max_reconnect_backoff)),
      target, TransportSecurity::kPlaintext);
}

}  // namespace deniable::client
