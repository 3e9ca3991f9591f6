// Shared plumbing of the deniable commands: channel, deadlines, errors, JSON, flag parsing.
#ifndef DENIABLE_TOOLS_CLI_CLI_COMMON_H_
#define DENIABLE_TOOLS_CLI_CLI_COMMON_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/client/transport.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "google/protobuf/message.h"
#include "tools/cli/numeric_flags.h"

namespace deniable::tools {

// A channel to --target: TLS when --tls_ca_file is set (with the client certificate for mTLS and
// the bearer token as call credentials), else plaintext. Errors: NOT_FOUND naming an unreadable
// PEM file.
absl::StatusOr<std::shared_ptr<grpc::Channel>> Channel();
// Sets the deadline from --timeout_seconds and, on a plaintext channel, the "authorization"
// metadata from --token (a loopback server with tokens but no TLS accepts it).
void SetDeadline(grpc::ClientContext* context);
// The SDK transport for --target with the same TLS and token settings. Errors: as Channel, and
// INVALID_ARGUMENT for a token on a plaintext channel (the SDK sends tokens only over TLS).
absl::StatusOr<std::shared_ptr<client::ReportTransport>> Transport();
// Prints "deniable: WHAT failed: CODE: message" to stderr (with --json also, on stdout,
// {"error": {"command": WHAT, "code": "CODE", "message": ..., "exitCode": N}}); returns the exit
// code of the status (ExitCodeFor in command_flags.h: 3 NOT_FOUND, 4 UNAVAILABLE, ...).
int Fail(const std::string& what, const grpc::Status& status);
// Prints "deniable: MESSAGE" to stderr (with --json also the JSON error, code INVALID_ARGUMENT);
// returns exit code 2 (usage error).
int FailUsage(const std::string& message);
// `deniable --help` (empty or unknown `command`) or `deniable COMMAND --help`, on stdout;
// returns 0.
int PrintHelp(const std::string& command);
// What --version prints: "deniable 0.1.0 (RelWithDebInfo, GNU 12.2.0)".
std::string VersionString();
// Prints the message as protobuf JSON (camelCase names, defaults included).
void PrintJson(const google::protobuf::Message& message);
// The design chosen by --design and its parameter flags (numeric_flags.h for --range and the
// numeric flags). Errors: INVALID_ARGUMENT naming the flag.
absl::StatusOr<v1::DesignParameters> DesignFromFlags();
// The numeric flags as given (--design, --epsilon, --range, --unit, --mechanism, --buckets,
// --bucket_edges, --sampled_buckets).
NumericFlagValues NumericFlags();
// --method as the wire enum; empty gives INTERVAL_METHOD_UNSPECIFIED (the server then uses the
// design's default method). Errors: INVALID_ARGUMENT listing the methods.
absl::StatusOr<v1::IntervalMethod> MethodFromFlag();

// The flags named on the command line (main sets them once, before the command runs), so that
// a command can tell a flag given at its default from one not given. Not thread-safe: main only.
void SetGivenFlags(std::vector<std::string> names);
bool FlagGiven(const std::string& name);

// The CreateMetricRequest that create-metric sends, from its flags, for metric `name`. With
// `once_by_default` (replay of a survey) the metric reports once per device unless
// --reporting_period is given. Errors: INVALID_ARGUMENT naming the flag.
absl::StatusOr<v1::CreateMetricRequest> CreateMetricRequestFromFlags(const std::string& name,
                                                                     bool once_by_default);

// The commands; each returns the process exit code.
int CreateMetric();
int ListMetrics();
// `alerts`: QueryService.ListAlerts as FormatAlerts prints it (exit 3, NOT_FOUND, without
// --alert_rules on the server).
int Alerts();
// `delete-metric NAME`: asks on stderr for the name to be typed on stdin unless --yes; a
// different answer or end of input exits 2 with nothing deleted.
int DeleteMetric(const std::string& name);
int SetRetention(const std::string& name);
int AddVersion();
int Prevalence();
int Series();
int Difference();
int DescribeDesign();
int Plan();
int Replay();
int Stats();
// `tail`: polls GetServerStats every --interval (up to --count polls, 0 = until interrupted) and
// prints a line per watched metric whose stored report count grew (report_arrivals.h).
int Tail();
int Health();

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CLI_COMMON_H_
