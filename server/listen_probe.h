#pragma once
// Why a listening address cannot be bound, in words for the error a server prints when gRPC or
// libmicrohttpd refuses it (they report only "cannot listen", or a gRPC status dump).

#include <sys/socket.h>

#include <string>

#include "absl/strings/string_view.h"

namespace deniable::server {

// Binds (and closes) one probe socket per address `address` ("host:port", "[v6]:port", ":port")
// resolves to, with SO_REUSEADDR as the servers set it, and says why it failed: for example
// "address in use: another process listens on port 50051 (stop it, or pick another port)", or
// "permission denied: ports below 1024 need privileges". Returns "" when the address does not
// parse, does not resolve, or a probe binds (the caller's message then stands alone).
// Thread-safe; no side effect beyond the probe socket, closed before it returns.
std::string BindFailureReason(absl::string_view address);

// The same for an address already resolved (`address` of `length` bytes), `port` being its port
// number for the message.
std::string BindFailureReason(const sockaddr* address, socklen_t length, int port);

}  // namespace deniable::server
