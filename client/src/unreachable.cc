#include "client/src/unreachable.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deniable::client {

std::optional<std::string> ExplainUnreachable(absl::string_view target, TransportSecurity security,
                                              absl::string_view details) {
  const std::string where = target.empty() ? std::string("the collector") : std::string(target);
  const std::string lowered = absl::AsciiStrToLower(details);
  const std::string grpc = absl::StrCat(" gRPC: ", details);
  if (absl::StrContains(lowered, "wrong version number") ||
      absl::StrContains(lowered, "wrong_version_number")) {
    return absl::StrCat("cannot reach ", where,
                        " over TLS: the server there speaks plaintext (TLS handshake failed: "
                        "wrong version number). For a local development server started without "
                        "--tls_cert_file use a plaintext transport (C++ "
                        "MakeInsecureGrpcTransport, C insecure = 1, Java "
                        "Reporter.builder(target).insecure()); otherwise start the server with "
                        "TLS.",
                        grpc);
  }
  if (absl::StrContains(lowered, "ssl handshake failed") ||
      absl::StrContains(lowered, "handshake failed")) {
    return absl::StrCat("cannot reach ", where,
                        " over TLS: the TLS handshake failed (check the server's certificate "
                        "against ca_file, and the client certificate for mutual TLS).",
                        grpc);
  }
  if (absl::StrContains(lowered, "http1.x server")) {
    return absl::StrCat("cannot reach ", where,
                        ": an HTTP/1.x server answered there, not gRPC. That is the collector's "
                        "HTTP listener (--http_listen, for the JavaScript SDK and the "
                        "dashboard); give the SDK the gRPC --listen address (50051 by default).",
                        grpc);
  }
  if (security == TransportSecurity::kPlaintext &&
      (absl::StrContains(lowered, "socket closed") ||
       absl::StrContains(lowered, "connection reset") ||
       absl::StrContains(lowered, "end of tcp stream"))) {
    return absl::StrCat("cannot reach ", where,
                        " in plaintext: the server closed the connection (does it expect TLS? "
                        "then use MakeSecureGrpcTransport with its CA instead of the plaintext "
                        "transport).",
                        grpc);
  }
  if (absl::StrContains(lowered, "connection refused") ||
      absl::StrContains(lowered, "dns resolution failed") ||
      (absl::StrContains(lowered, "failed to connect") &&
       !absl::StrContains(lowered, "socket closed"))) {
    return absl::StrCat("cannot reach ", where,
                        ": nothing answered there (is deniable-server running, and is this its "
                        "gRPC --listen address?).",
                        grpc);
  }
  return std::nullopt;
}

}  // namespace deniable::client
