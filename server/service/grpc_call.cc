#include "server/service/grpc_call.h"

#include <spdlog/spdlog.h>

#include <optional>

#include "server/auth/access_policy.h"
#include "server/core/echo.h"

namespace deniable::server {
namespace {

std::optional<absl::string_view> Metadata(const grpc::ServerContextBase& context,
                                          absl::string_view key) {
  const auto& md = context.client_metadata();
  auto it = md.find(grpc::string_ref(key.data(), key.size()));
  if (it == md.end()) return std::nullopt;
  return absl::string_view(it->second.data(), it->second.size());
}

}  // namespace

CallCredentials CredentialsOf(const grpc::ServerContextBase& context) {
  return CallCredentials{.authorization = Metadata(context, "authorization").value_or(""),
                         .peer = context.peer(),
                         .import_header = Metadata(context, kImportHeader)};
}

void LogHandlerException(const char* method, const char* what) {
  if (what == nullptr) {
    spdlog::error("event=handler_exception method={} what=\"(not a std::exception)\"", method);
    return;
  }
  spdlog::error("event=handler_exception method={} what=\"{}\"", method, EchoValue(what));
}

}  // namespace deniable::server
