// Shared plumbing of the deniable commands: channel, deadlines, errors, JSON, flag parsing.
#ifndef DENIABLE_TOOLS_CLI_CLI_COMMON_H_
#define DENIABLE_TOOLS_CLI_CLI_COMMON_H_

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "google/protobuf/message.h"

namespace deniable::tools {

// A channel to --target (plaintext).
std::shared_ptr<grpc::Channel> Channel();
// Sets the deadline from --timeout_seconds.
void SetDeadline(grpc::ClientContext* context);
// Prints "deniable: WHAT failed: CODE: message" to stderr; returns exit code 1.
int Fail(const std::string& what, const grpc::Status& status);
// Prints "deniable: MESSAGE" to stderr; returns exit code 2 (usage error).
int FailUsage(const std::string& message);
// Prints the message as protobuf JSON (camelCase names, defaults included).
void PrintJson(const google::protobuf::Message& message);
// The design chosen by --design and its parameter flags. Errors: INVALID_ARGUMENT.
absl::StatusOr<v1::DesignParameters> DesignFromFlags();
// --method as the wire enum. Errors: INVALID_ARGUMENT listing the methods.
absl::StatusOr<v1::IntervalMethod> MethodFromFlag();

// The commands; each returns the process exit code.
int CreateMetric();
int ListMetrics();
int AddVersion();
int Prevalence();
int Series();
int Difference();
int DescribeDesign();
int Plan();
int Replay();
int Health();

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CLI_COMMON_H_
