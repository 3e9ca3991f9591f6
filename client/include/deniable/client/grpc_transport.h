// The gRPC ReportTransport.
//
// Example:
//   auto channel = grpc::CreateChannel("collector.example:50051",
//                                      grpc::SslCredentials(grpc::SslCredentialsOptions()));
//   std::shared_ptr<deniable::client::ReportTransport> transport =
//       deniable::client::MakeGrpcTransport(channel);
#ifndef DENIABLE_CLIENT_GRPC_TRANSPORT_H_
#define DENIABLE_CLIENT_GRPC_TRANSPORT_H_

#include <grpcpp/channel.h>

#include <memory>
#include <string>

#include "deniable/client/transport.h"

namespace deniable::client {

// A transport over `channel` (shared; the transport keeps it alive). Every call carries a
// deadline. Thread-safe.
std::shared_ptr<ReportTransport> MakeGrpcTransport(std::shared_ptr<grpc::Channel> channel);

// Convenience: a channel to `target` ("host:port") with plaintext credentials, for local
// development and tests only.
std::shared_ptr<ReportTransport> MakeInsecureGrpcTransport(const std::string& target);

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_GRPC_TRANSPORT_H_
