// What the gRPC services share to translate a call: the caller's credentials from its metadata,
// and the last guard at the service boundary (an escaping exception becomes INTERNAL).
// Thread-safe.
#ifndef DENIABLE_SERVER_SERVICE_GRPC_CALL_H_
#define DENIABLE_SERVER_SERVICE_GRPC_CALL_H_

#include <grpcpp/grpcpp.h>

#include <exception>
#include <string>

#include "absl/strings/string_view.h"
#include "server/core/collector_core.h"

namespace deniable::server {

// The call's "authorization" and "x-deniable-import" metadata (views into `context`, which must
// outlive the result) and its peer.
CallCredentials CredentialsOf(const grpc::ServerContextBase& context);

// Logs event=handler_exception naming `method` and the exception (EchoValue-bounded).
void LogHandlerException(const char* method, const char* what);

// Runs `handler`; an exception escaping it would reach the client as UNKNOWN: it becomes
// INTERNAL "<method>: internal error (logged on the server)" (a bug by definition: handlers
// validate their input and call Boost with non-throwing policies), logged with the method.
template <typename Handler>
grpc::Status CatchAll(const char* method, Handler&& handler) {
  try {
    return handler();
  } catch (const std::exception& e) {
    LogHandlerException(method, e.what());
  } catch (...) {
    LogHandlerException(method, nullptr);
  }
  return grpc::Status(grpc::StatusCode::INTERNAL,
                      std::string(method) + ": internal error (logged on the server)");
}

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_SERVICE_GRPC_CALL_H_
