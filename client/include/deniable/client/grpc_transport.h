// The gRPC ReportTransport, plaintext for development or TLS with an optional client certificate
// and a bearer token for production.
//
// Example:
//   absl::StatusOr<std::shared_ptr<deniable::client::ReportTransport>> transport =
//       deniable::client::MakeSecureGrpcTransport({.target = "collector.example:443",
//                                                  .ca_file = "/etc/deniable/ca.pem",
//                                                  .bearer_token = token});
#ifndef DENIABLE_CLIENT_GRPC_TRANSPORT_H_
#define DENIABLE_CLIENT_GRPC_TRANSPORT_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deniable/client/transport.h"

namespace deniable::client {

struct GrpcTransportOptions {
  // "host:port" of the collector.
  std::string target = {};
  // PEM file of the certificate authorities that sign the server's certificate. Empty: the
  // system's roots (gRPC's default roots).
  std::string ca_file = {};
  // Mutual TLS: PEM files of the client's certificate chain and private key; both or neither.
  std::string client_cert_file = {};
  std::string client_key_file = {};
  // Sent as "authorization: Bearer <token>" on every call (only over TLS). Empty: none.
  std::string bearer_token = {};
  // Overrides the name checked against the server's certificate (tests; normally empty).
  std::string server_name_override = {};
  // Longest wait between reconnection attempts after the server went away; short, so that a
  // queue drains soon after an outage ends.
  absl::Duration max_reconnect_backoff = absl::Seconds(5);
};

// A transport over `channel` (shared; the transport keeps it alive). Every call carries a
// deadline. Thread-safe.
std::shared_ptr<ReportTransport> MakeGrpcTransport(std::shared_ptr<grpc::Channel> channel);

// The first MakeSecureGrpcTransport or MakeInsecureGrpcTransport of a process installs a gRPC
// log function (gpr_set_log_function) that drops gRPC's "Handshake failed" lines, which repeat
// the UNAVAILABLE status's explanation on the app's stderr, and prints every other line gRPC
// would print; not when GRPC_VERBOSITY or GRPC_TRACE is set, nor after KeepGrpcLogFunction()
// (docs/sdk.md). Thread-safe.
//
// A TLS channel built from `options`. Errors: INVALID_ARGUMENT naming the field ("target" empty,
// "client_key_file" without "client_cert_file" or the reverse); NOT_FOUND naming the field when
// a PEM file cannot be read.
absl::StatusOr<std::shared_ptr<ReportTransport>> MakeSecureGrpcTransport(
    const GrpcTransportOptions& options);

// For an app that sets gRPC's log function itself (gpr_set_log_function): called before the
// first transport is made, no transport installs its own. Returns nothing, fails never;
// thread-safe.
void KeepGrpcLogFunction();

// Convenience: a channel to `target` ("host:port") with plaintext credentials, for local
// development and tests only.
std::shared_ptr<ReportTransport> MakeInsecureGrpcTransport(
    const std::string& target, absl::Duration max_reconnect_backoff = absl::Seconds(5));

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_GRPC_TRANSPORT_H_
