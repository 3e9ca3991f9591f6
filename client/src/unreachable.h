// What a developer should do when the collector cannot be reached: gRPC's UNAVAILABLE message
// (its last transport error) turned into a sentence that says what is wrong and what to do, as
// the Python SDK says it (client/python/deniable/_rpc.py explain_unreachable) and docs/sdk.md's
// table of first-report errors lists it.
#ifndef DENIABLE_CLIENT_SRC_UNREACHABLE_H_
#define DENIABLE_CLIENT_SRC_UNREACHABLE_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace deniable::client {

// How the transport speaks to the collector: TLS, plaintext, or not known (a caller's channel).
enum class TransportSecurity { kTls, kPlaintext, kUnknown };

// The explanation of gRPC's UNAVAILABLE `details` for a transport to `target` (empty: "the
// collector"), ending with gRPC's own text; nullopt when `details` is none of: TLS against a
// plaintext server ("wrong version number"), another TLS handshake failure, plaintext against
// a TLS server (the connection closed or reset), an HTTP/1.x server (the HTTP listener's port,
// which is for the JavaScript SDK), nothing listening (connection refused, DNS). Pure.
std::optional<std::string> ExplainUnreachable(absl::string_view target, TransportSecurity security,
                                              absl::string_view details);

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_SRC_UNREACHABLE_H_
