// deniable: the command-line tool for operators and analysts.
//
//   deniable create-metric --name=NAME (--design=two_coin | --epsilon=E | --p=P --q=Q | ...)
//   deniable list-metrics [--json]
//   deniable prevalence --metric=NAME [--start=UNIX --end=UNIX --level=0.95 --method=wilson]
//   deniable replay --metric=NAME --csv=FILE --column=vote --yes=Y [--label_columns=region]
//   deniable health
// Every command takes --target=host:port (default 127.0.0.1:50051, env DENIABLE_TARGET).
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tools/cli/output.h"
#include "tools/cli/survey_replay.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

ABSL_FLAG(std::string, target, EnvOr("DENIABLE_TARGET", "127.0.0.1:50051"),
          "server address host:port (env DENIABLE_TARGET)");
ABSL_FLAG(double, timeout_seconds, 10, "deadline of each call");
ABSL_FLAG(bool, json, false, "print JSON instead of a table");
// create-metric
ABSL_FLAG(std::string, name, "", "create-metric: metric name, [a-z][a-z0-9_.-]{0,63}");
ABSL_FLAG(std::string, description, "", "create-metric: the question asked");
ABSL_FLAG(std::string, design, "",
          "create-metric: two_coin | tails_says_yes | symmetric_epsilon (--epsilon) | "
          "forced_response (--p --q) | unrelated_question (--p --pi_b) | mirrored_question (--p) "
          "| truth_with_gamma (--gamma)");
ABSL_FLAG(double, epsilon, 0, "create-metric: epsilon in nats for symmetric_epsilon");
ABSL_FLAG(double, p, 0, "create-metric: p (forced_response) or P (unrelated/mirrored question)");
ABSL_FLAG(double, q, 0, "create-metric: q (forced_response)");
ABSL_FLAG(double, pi_b, 0, "create-metric: pi_B, the innocuous question's yes share");
ABSL_FLAG(double, gamma, 0, "create-metric: gamma (truth_with_gamma)");
ABSL_FLAG(int, time_precision_seconds, 0, "create-metric: event-time precision; 0 = 3600");
// prevalence / replay
ABSL_FLAG(std::string, metric, "", "prevalence, replay: metric name");
ABSL_FLAG(int64_t, start, 0, "prevalence: start of [start, end), Unix seconds; 0 = beginning");
ABSL_FLAG(int64_t, end, 0, "prevalence: end of [start, end), Unix seconds; 0 = no end");
ABSL_FLAG(double, level, 0.95, "prevalence: confidence level in (0, 1)");
ABSL_FLAG(std::string, method, "wilson",
          "prevalence: wald | wilson | agresti_coull | jeffreys | clopper_pearson");
ABSL_FLAG(std::string, csv, "", "replay: CSV file with a header row");
ABSL_FLAG(std::string, column, "", "replay: the yes/no column");
ABSL_FLAG(std::string, yes, "", "replay: the value of --column that means yes");
ABSL_FLAG(std::vector<std::string>, label_columns, {},
          "replay: columns sent as public labels (comma-separated)");

namespace deniable::tools {
namespace {

std::shared_ptr<grpc::Channel> Channel() {
  return grpc::CreateChannel(absl::GetFlag(FLAGS_target), grpc::InsecureChannelCredentials());
}

void SetDeadline(grpc::ClientContext* context) {
  context->set_deadline(
      std::chrono::system_clock::now() +
      std::chrono::milliseconds(static_cast<int64_t>(absl::GetFlag(FLAGS_timeout_seconds) * 1000)));
}

int Fail(const std::string& what, const grpc::Status& status) {
  std::fprintf(stderr, "deniable: %s failed: %s: %s\n", what.c_str(),
               StatusCodeName(status.error_code()), status.error_message().c_str());
  return 1;
}

int FailUsage(const std::string& message) {
  std::fprintf(stderr, "deniable: %s\n", message.c_str());
  return 2;
}

void PrintJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = false;
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(message, &json, options);
  std::cout << json;
}

absl::StatusOr<v1::DesignParameters> DesignFromFlags() {
  v1::DesignParameters d;
  const std::string kind = absl::GetFlag(FLAGS_design);
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
    return absl::InvalidArgumentError(
        "--design must be one of two_coin, tails_says_yes, symmetric_epsilon, forced_response, "
        "unrelated_question, mirrored_question, truth_with_gamma (or give --epsilon)");
  }
  return d;
}

int CreateMetric() {
  v1::CreateMetricRequest request;
  request.set_name(absl::GetFlag(FLAGS_name));
  request.set_description(absl::GetFlag(FLAGS_description));
  request.set_time_precision_seconds(
      static_cast<uint32_t>(absl::GetFlag(FLAGS_time_precision_seconds)));
  absl::StatusOr<v1::DesignParameters> design = DesignFromFlags();
  if (!design.ok()) return FailUsage(std::string(design.status().message()));
  *request.mutable_design() = *design;
  auto stub = v1::QueryService::NewStub(Channel());
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::Metric metric;
  grpc::Status status = stub->CreateMetric(&context, request, &metric);
  if (!status.ok()) return Fail("create-metric", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(metric);
  } else {
    std::cout << FormatMetric(metric);
  }
  return 0;
}

int ListMetrics() {
  auto stub = v1::QueryService::NewStub(Channel());
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::ListMetricsResponse response;
  grpc::Status status = stub->ListMetrics(&context, v1::ListMetricsRequest(), &response);
  if (!status.ok()) return Fail("list-metrics", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
  } else {
    std::cout << FormatMetricList(response);
  }
  return 0;
}

absl::StatusOr<v1::IntervalMethod> MethodFromFlag() {
  const std::string m = absl::GetFlag(FLAGS_method);
  if (m == "wald") return v1::WALD;
  if (m == "wilson") return v1::WILSON;
  if (m == "agresti_coull") return v1::AGRESTI_COULL;
  if (m == "jeffreys") return v1::JEFFREYS;
  if (m == "clopper_pearson") return v1::CLOPPER_PEARSON;
  return absl::InvalidArgumentError(
      "--method must be wald, wilson, agresti_coull, jeffreys or clopper_pearson");
}

grpc::Status QueryPrevalence(const std::string& metric, v1::Prevalence* out) {
  v1::GetPrevalenceRequest request;
  request.set_metric(metric);
  request.set_start_time_seconds(absl::GetFlag(FLAGS_start));
  request.set_end_time_seconds(absl::GetFlag(FLAGS_end));
  request.set_confidence_level(absl::GetFlag(FLAGS_level));
  absl::StatusOr<v1::IntervalMethod> method = MethodFromFlag();
  if (!method.ok()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, std::string(method.status().message()));
  }
  request.set_method(*method);
  auto stub = v1::QueryService::NewStub(Channel());
  grpc::ClientContext context;
  SetDeadline(&context);
  return stub->GetPrevalence(&context, request, out);
}

int Prevalence() {
  v1::Prevalence prevalence;
  grpc::Status status = QueryPrevalence(absl::GetFlag(FLAGS_metric), &prevalence);
  if (!status.ok()) return Fail("prevalence", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(prevalence);
  } else {
    std::cout << FormatPrevalence(prevalence);
  }
  return 0;
}

int Replay() {
  SurveySpec spec;
  spec.csv_path = absl::GetFlag(FLAGS_csv);
  spec.column = absl::GetFlag(FLAGS_column);
  spec.yes_value = absl::GetFlag(FLAGS_yes);
  spec.label_columns = absl::GetFlag(FLAGS_label_columns);
  const std::string metric = absl::GetFlag(FLAGS_metric);
  if (spec.csv_path.empty() || spec.column.empty() || spec.yes_value.empty() || metric.empty()) {
    return FailUsage("replay needs --metric, --csv, --column and --yes");
  }
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec);
  if (!rows.ok()) return FailUsage(rows.status().ToString());
  client::ReporterOptions options;
  options.rpc_timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds));
  absl::StatusOr<ReplayResult> result =
      ReplaySurvey(*rows, metric, client::MakeGrpcTransport(Channel()), options);
  if (!result.ok()) {
    std::fprintf(stderr, "deniable: replay failed: %s\n", result.status().ToString().c_str());
    return 1;
  }
  v1::Prevalence prevalence;
  grpc::Status status = QueryPrevalence(metric, &prevalence);
  if (!status.ok()) return Fail("prevalence after replay", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(prevalence);
  } else {
    std::cout << FormatReplay(*result, spec, prevalence);
  }
  return 0;
}

int Health() {
  auto stub = grpc::health::v1::Health::NewStub(Channel());
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, grpc::health::v1::HealthCheckRequest(), &response);
  if (!status.ok()) return Fail("health", status);
  const bool serving = response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
  std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status()) << "\n";
  return serving ? 0 : 1;
}

}  // namespace
}  // namespace deniable::tools

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "deniable COMMAND [--flags]\n"
      "commands: create-metric, list-metrics, prevalence, replay, health\n"
      "  deniable create-metric --name=chile_vote_yes --design=two_coin\n"
      "  deniable replay --metric=chile_vote_yes --csv=chile.csv --column=vote --yes=Y\n"
      "  deniable prevalence --metric=chile_vote_yes [--json]");
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() != 2) {
    return deniable::tools::FailUsage(
        "expected one command: create-metric, list-metrics, prevalence, replay or health "
        "(--help lists the flags)");
  }
  const std::string command = args[1];
  if (command == "create-metric") return deniable::tools::CreateMetric();
  if (command == "list-metrics") return deniable::tools::ListMetrics();
  if (command == "prevalence") return deniable::tools::Prevalence();
  if (command == "replay") return deniable::tools::Replay();
  if (command == "health") return deniable::tools::Health();
  return deniable::tools::FailUsage("unknown command \"" + command + "\"");
}
