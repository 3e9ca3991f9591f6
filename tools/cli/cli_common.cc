#include "tools/cli/cli_common.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/common/interval.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/interval_method_convert.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "tools/cli/categorical_flags.h"
#include "tools/cli/cli_flags.h"
#include "tools/cli/cli_kinds.h"
#include "tools/cli/command_flags.h"
#include "tools/cli/numeric_flags.h"
#include "tools/cli/output.h"

namespace deniable::tools {

namespace {

bool UseTls() { return !absl::GetFlag(FLAGS_tls_ca_file).empty(); }

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::Channel>> Channel() {
  const std::string target = absl::GetFlag(FLAGS_target);
  if (!UseTls()) return grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  grpc::SslCredentialsOptions ssl;
  DENIABLE_ASSIGN_OR_RETURN(ssl.pem_root_certs,
                            ReadPem(absl::GetFlag(FLAGS_tls_ca_file), "tls_ca_file"));
  if (!absl::GetFlag(FLAGS_tls_cert_file).empty()) {
    DENIABLE_ASSIGN_OR_RETURN(ssl.pem_cert_chain,
                              ReadPem(absl::GetFlag(FLAGS_tls_cert_file), "tls_cert_file"));
    DENIABLE_ASSIGN_OR_RETURN(ssl.pem_private_key,
                              ReadPem(absl::GetFlag(FLAGS_tls_key_file), "tls_key_file"));
  }
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::SslCredentials(ssl);
  if (!absl::GetFlag(FLAGS_token).empty()) {
    credentials = grpc::CompositeChannelCredentials(
        credentials, grpc::AccessTokenCredentials(absl::GetFlag(FLAGS_token)));
  }
  grpc::ChannelArguments args;
  if (!absl::GetFlag(FLAGS_tls_server_name).empty()) {
    args.SetSslTargetNameOverride(absl::GetFlag(FLAGS_tls_server_name));
  }
  return grpc::CreateCustomChannel(target, credentials, args);
}

void SetDeadline(grpc::ClientContext* context) {
  // Saturating: --timeout_seconds=inf (or 1e300) means no deadline; NaN means none left.
  const double seconds = absl::GetFlag(FLAGS_timeout_seconds);
  const absl::Duration timeout =
      std::isnan(seconds) ? absl::ZeroDuration() : absl::Seconds(seconds);
  context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  if (!UseTls() && !absl::GetFlag(FLAGS_token).empty()) {
    context->AddMetadata("authorization", "Bearer " + absl::GetFlag(FLAGS_token));
  }
}

absl::StatusOr<std::shared_ptr<client::ReportTransport>> Transport() {
  if (!UseTls()) {
    if (!absl::GetFlag(FLAGS_token).empty()) {
      return absl::InvalidArgumentError(
          "--token: the SDK sends tokens only over TLS; give --tls_ca_file");
    }
    return client::MakeInsecureGrpcTransport(absl::GetFlag(FLAGS_target));
  }
  client::GrpcTransportOptions options;
  options.target = absl::GetFlag(FLAGS_target);
  options.ca_file = absl::GetFlag(FLAGS_tls_ca_file);
  options.client_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.client_key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.bearer_token = absl::GetFlag(FLAGS_token);
  options.server_name_override = absl::GetFlag(FLAGS_tls_server_name);
  return client::MakeSecureGrpcTransport(options);
}

namespace {

// With --json, the error as one JSON object on stdout (scripts read stdout only).
void PrintJsonError(const std::string& what, const char* code, const std::string& message,
                    int exit_code) {
  if (!absl::GetFlag(FLAGS_json)) return;
  google::protobuf::Struct error;
  auto& fields = *(*error.mutable_fields())["error"].mutable_struct_value()->mutable_fields();
  if (!what.empty()) fields["command"].set_string_value(what);
  fields["code"].set_string_value(code);
  fields["message"].set_string_value(message);
  fields["exitCode"].set_number_value(exit_code);
  PrintJson(error);
  std::cout << "\n";
}

}  // namespace

namespace {
std::vector<std::string>& GivenFlags() {
  static auto* names = new std::vector<std::string>();
  return *names;
}
}  // namespace

void SetGivenFlags(std::vector<std::string> names) { GivenFlags() = std::move(names); }

bool FlagGiven(const std::string& name) {
  const std::vector<std::string>& names = GivenFlags();
  return std::find(names.begin(), names.end(), name) != names.end();
}

int Fail(const std::string& what, const grpc::Status& status) {
  std::string message = status.error_message();
  // A TLS listener closes a plaintext connection at its first bytes: gRPC says only "Socket
  // closed".
  if (status.error_code() == grpc::StatusCode::UNAVAILABLE && !UseTls() &&
      absl::StrContains(message, "Socket closed")) {
    absl::StrAppend(&message,
                    " (the server at --target may require TLS: give --tls_ca_file=CA.pem, the CA "
                    "that signed its certificate, or set DENIABLE_TLS_CA_FILE)");
  }
  std::fprintf(stderr, "deniable: %s failed: %s: %s\n", what.c_str(),
               StatusCodeName(status.error_code()), message.c_str());
  const int exit_code = ExitCodeFor(static_cast<absl::StatusCode>(status.error_code()));
  PrintJsonError(what, StatusCodeName(status.error_code()), message, exit_code);
  return exit_code;
}

int FailUsage(const std::string& message) {
  std::fprintf(stderr, "deniable: %s\n", message.c_str());
  PrintJsonError("", "INVALID_ARGUMENT", message, kExitUsage);
  return kExitUsage;
}

void PrintJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json;
}

NumericFlagValues NumericFlags() {
  return {.design = absl::GetFlag(FLAGS_design),
          .epsilon = absl::GetFlag(FLAGS_epsilon),
          .range = absl::GetFlag(FLAGS_range),
          .unit = absl::GetFlag(FLAGS_unit),
          .mechanism = absl::GetFlag(FLAGS_mechanism),
          .buckets = absl::GetFlag(FLAGS_buckets),
          .bucket_edges = absl::GetFlag(FLAGS_bucket_edges),
          .sampled_buckets = absl::GetFlag(FLAGS_sampled_buckets)};
}

absl::StatusOr<v1::DesignParameters> DesignFromFlags() {
  v1::DesignParameters d;
  const std::string kind = absl::GetFlag(FLAGS_design);
  DENIABLE_ASSIGN_OR_RETURN(std::optional<v1::NumericRange> range,
                            RangeFromFlagValues(NumericFlags()));
  DENIABLE_ASSIGN_OR_RETURN(std::optional<v1::DesignParameters> numeric,
                            NumericDesignFromFlagValues(NumericFlags(), range));
  if (numeric.has_value()) {
    if (!absl::GetFlag(FLAGS_categories).empty()) {
      return absl::InvalidArgumentError(
          "--categories: a metric has categories or a numeric --range, not both");
    }
    return *numeric;
  }
  DENIABLE_ASSIGN_OR_RETURN(
      std::optional<v1::DesignParameters> categorical,
      CategoricalDesignFromFlagValues(kind, absl::GetFlag(FLAGS_epsilon),
                                      !absl::GetFlag(FLAGS_categories).empty()));
  if (categorical.has_value()) return *categorical;
  // The kinds of their own files (cli_kinds.h) read their own design flags.
  std::string kind_names;
  for (const CliKind& other : CliKinds()) {
    if (!other.design_names.empty()) absl::StrAppend(&kind_names, "; ", other.design_names);
    if (!other.design_from_flags) continue;
    DENIABLE_ASSIGN_OR_RETURN(std::optional<v1::DesignParameters> own,
                              other.design_from_flags(kind));
    if (own.has_value()) return *own;
  }
  if (kind == "two_coin") {
    d.mutable_two_coin();
  } else if (kind == "tails_says_yes") {
    d.mutable_tails_says_yes();
  } else if (kind == "symmetric_epsilon" || (kind.empty() && absl::GetFlag(FLAGS_epsilon) != 0)) {
    d.mutable_symmetric_epsilon()->set_epsilon(absl::GetFlag(FLAGS_epsilon));
  } else if (kind == "forced_response") {
    d.mutable_forced_response()->set_p(absl::GetFlag(FLAGS_p));
    d.mutable_forced_response()->set_q(absl::GetFlag(FLAGS_q));
  } else if (kind == "unrelated_question") {
    d.mutable_unrelated_question()->set_p(absl::GetFlag(FLAGS_p));
    d.mutable_unrelated_question()->set_pi_b(absl::GetFlag(FLAGS_pi_b));
  } else if (kind == "mirrored_question") {
    d.mutable_mirrored_question()->set_p(absl::GetFlag(FLAGS_p));
  } else if (kind == "truth_with_gamma") {
    d.mutable_truth_with_gamma()->set_gamma(absl::GetFlag(FLAGS_gamma));
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--design must be one of two_coin, tails_says_yes, symmetric_epsilon, forced_response, "
        "unrelated_question, mirrored_question, truth_with_gamma (or give --epsilon); for a "
        "metric with categories k_rr, oue, olh or categorical; for a numeric metric (--range) "
        "numeric",
        kind_names));
  }
  return d;
}

absl::StatusOr<v1::IntervalMethod> MethodFromFlag() {
  if (absl::GetFlag(FLAGS_method).empty()) return v1::INTERVAL_METHOD_UNSPECIFIED;
  DENIABLE_ASSIGN_OR_RETURN(IntervalMethod method,
                            ParseIntervalMethod(absl::GetFlag(FLAGS_method)));
  return MethodToProto(method);
}

}  // namespace deniable::tools
