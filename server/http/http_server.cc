#include "server/http/http_server.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/access_log.h"
#include "server/core/echo.h"
#include "server/http/connection_deadlines.h"
#include "server/http/dashboard_assets.h"
#include "server/http/http_status.h"
#include "server/http/request_checks.h"
#include "server/listen_probe.h"

namespace deniable::server::http {

struct HttpServer::Listener {
  HttpOptions options;
  const JsonApi* api = nullptr;
  std::function<std::string()> metrics_text;
  HealthCheck health;
  bool tls = false, mtls = false;
  std::string cert_pem, key_pem, ca_pem;                 // alive as long as the daemon
  mutable std::optional<ConnectionDeadlines> deadlines;  // thread-safe itself
};

namespace {

using Listener = HttpServer::Listener;
using Header = std::pair<const char*, std::string>;

// One request, from its request line to its answer (the library's per-request context).
struct Exchange {
  absl::Time start = absl::Now();
  bool seen = false;  // the access handler saw the headers
  // The access line.
  std::string route = "other";
  absl::StatusCode code = absl::StatusCode::kOk;
  bool has_code = false;
  int http_status = 0;  // 0: no answer queued (the library answered, or the client left)
  int64_t reports = -1;
  bool import = false;
  // An admitted API call waiting for its body.
  std::string method;
  std::optional<Caller> caller;
  std::string body;
  bool too_large = false;
  std::string cors_origin;  // echoed in Access-Control-Allow-Origin when allowed
};

ConnectionDeadlines::Connection* DeadlinesOf(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info != nullptr ? static_cast<ConnectionDeadlines::Connection*>(info->socket_context)
                         : nullptr;
}

std::optional<absl::string_view> HeaderOf(MHD_Connection* connection, const char* name) {
  const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
  if (value == nullptr) return std::nullopt;
  return absl::string_view(value);
}

// "ipv4:1.2.3.4:5678" / "ipv6:[::1]:5678", the form AccessPolicy (and gRPC) uses.
std::string Peer(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == nullptr || info->client_addr == nullptr) return "unknown";
  char host[INET6_ADDRSTRLEN] = {};
  if (info->client_addr->sa_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(info->client_addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    return absl::StrCat("ipv6:[", host, "]:", ntohs(a->sin6_port));
  }
  const auto* a = reinterpret_cast<const sockaddr_in*>(info->client_addr);
  inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
  return absl::StrCat("ipv4:", host, ":", ntohs(a->sin_port));
}

// {"status":"NOT_SERVING","reason":"..."}, escaped by protobuf's JSON printer.
std::string NotServingBody(absl::string_view reason) {
  google::protobuf::Struct body;
  auto& fields = *body.mutable_fields();
  fields["status"].set_string_value("NOT_SERVING");
  fields["reason"].set_string_value(std::string(reason));
  std::string json;
  (void)google::protobuf::util::MessageToJsonString(body, &json);
  return json + "\n";
}

// Queues the answer. `persistent`: `body` points at static data (the dashboard's files).
MHD_Result Send(MHD_Connection* connection, Exchange& exchange, int status, absl::string_view body,
                const char* content_type, const std::vector<Header>& headers = {},
                bool persistent = false) {
  MHD_Response* response =
      MHD_create_response_from_buffer(body.size(), const_cast<char*>(body.data()),
                                      persistent ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  for (const auto& [name, value] : headers) MHD_add_response_header(response, name, value.c_str());
  if (!exchange.cors_origin.empty()) {
    MHD_add_response_header(response, "Access-Control-Allow-Origin", exchange.cors_origin.c_str());
    MHD_add_response_header(response, "Vary", "Origin");
  }
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  exchange.http_status = status;
  return queued;
}

MHD_Result SendReply(MHD_Connection* connection, Exchange& exchange, JsonReply reply) {
  exchange.code = reply.code;
  exchange.has_code = true;
  if (reply.reports >= 0) exchange.reports = reply.reports;
  return Send(connection, exchange, reply.http_status, reply.body, "application/json");
}

MHD_Result SendError(MHD_Connection* connection, Exchange& exchange, const absl::Status& status,
                     int http_status = 0) {
  exchange.code = status.code();
  exchange.has_code = true;
  if (http_status == 0) http_status = HttpStatusFor(status.code());
  return Send(connection, exchange, http_status, ErrorBody(status, http_status),
              "application/json");
}

// CORS for the browser SDK: the request's Origin, when allowed, for ReportService only
// (HttpOptions::cors_origins).
bool CorsAllowed(const std::vector<std::string>& origins, absl::string_view path,
                 std::optional<absl::string_view> origin) {
  if (!origin.has_value() || origin->empty() || !absl::StartsWith(path, "/v1/ReportService/")) {
    return false;
  }
  return std::find(origins.begin(), origins.end(), *origin) != origins.end() ||
         std::find(origins.begin(), origins.end(), "*") != origins.end();
}

// "/v1/<Service>/<Method>" with letters only, as deniable.v1.<Service>/<Method>.
std::optional<std::string> ApiMethod(absl::string_view path) {
  if (!absl::ConsumePrefix(&path, "/v1/")) return std::nullopt;
  const size_t slash = path.find('/');
  if (slash == absl::string_view::npos) return std::nullopt;
  const absl::string_view service = path.substr(0, slash), method = path.substr(slash + 1);
  auto letters = [](absl::string_view s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return absl::ascii_isalpha(c); });
  };
  if (!letters(service) || !letters(method)) return std::nullopt;
  return absl::StrCat("deniable.v1.", service, "/", method);
}

// Mutual TLS: the library asks for a client certificate; the listener checks it against the
// client CA (once per connection would do, but the check is cheap beside the handshake).
bool ClientCertificateVerified(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  if (info == nullptr || info->tls_session == nullptr) return false;
  unsigned int status = 0;
  return gnutls_certificate_verify_peers2(static_cast<gnutls_session_t>(info->tls_session),
                                          &status) == GNUTLS_E_SUCCESS &&
         status == 0;
}

// Whether `authorization` is "Bearer <token>", compared in constant time (CRYPTO_memcmp).
bool BearerMatches(std::optional<absl::string_view> authorization, const std::string& token) {
  if (!authorization.has_value()) return false;
  absl::string_view given = *authorization;
  if (!absl::ConsumePrefix(&given, "Bearer ") || given.size() != token.size()) return false;
  return CRYPTO_memcmp(given.data(), token.data(), token.size()) == 0;
}

MHD_Result NotFound(MHD_Connection* connection, Exchange& exchange, absl::string_view path) {
  return SendError(connection, exchange,
                   absl::NotFoundError(absl::StrCat("path: no page or method at ", EchoValue(path),
                                                    "; the API is POST /v1/<Service>/<Method>")));
}

MHD_Result Get(const Listener& listener, MHD_Connection* connection, Exchange& exchange,
               absl::string_view path) {
  const std::vector<Header> no_store = {{"Cache-Control", "no-store"}};
  if (path == "/metrics") {
    exchange.route = "/metrics";
    if (!listener.options.metrics_token.empty() &&
        !BearerMatches(HeaderOf(connection, "Authorization"), listener.options.metrics_token)) {
      return SendError(connection, exchange,
                       absl::UnauthenticatedError(
                           "authorization: /metrics needs the bearer token of --metrics_token"));
    }
    std::string body = listener.metrics_text();
    if (listener.options.estimates_text) {
      // Estimates are analyst data: the metrics token (checked above), or a query's access.
      const bool estimates = !listener.options.metrics_token.empty() ||
                             listener.api
                                 ->Authorize("deniable.v1.QueryService/GetPrevalence",
                                             HeaderOf(connection, "Authorization").value_or(""),
                                             Peer(connection), std::nullopt)
                                 .ok();
      if (estimates) body += listener.options.estimates_text();
    }
    return Send(connection, exchange, 200, body, "text/plain; version=0.0.4; charset=utf-8");
  }
  if (path == "/v1/alerts") {
    exchange.route = "/v1/alerts";
    // Whoever may read estimates may read the alerts on them.
    const absl::StatusOr<Caller> caller = listener.api->Authorize(
        "deniable.v1.QueryService/GetPrevalence",
        HeaderOf(connection, "Authorization").value_or(""), Peer(connection), std::nullopt);
    if (!caller.ok()) return SendError(connection, exchange, caller.status());
    if (!listener.options.alerts_json) {
      return SendError(connection, exchange,
                       absl::NotFoundError("path: /v1/alerts: no alert rules (start "
                                           "deniable-server with --alert_rules=FILE)"));
    }
    return Send(connection, exchange, 200, listener.options.alerts_json(), "application/json",
                no_store);
  }
  if (path == "/livez") {
    exchange.route = "/livez";
    return Send(connection, exchange, 200, "{\"status\":\"ALIVE\"}\n", "application/json",
                no_store);
  }
  if (path == "/healthz") {
    exchange.route = "/healthz";
    const char* service = MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, "service");
    const absl::Status status = listener.health != nullptr
                                    ? listener.health(service != nullptr ? service : "")
                                    : absl::OkStatus();
    exchange.code = status.code();
    exchange.has_code = true;
    if (status.ok()) {
      return Send(connection, exchange, 200, "{\"status\":\"SERVING\"}\n", "application/json",
                  no_store);
    }
    if (status.code() == absl::StatusCode::kUnavailable) {
      return Send(connection, exchange, 503, NotServingBody(status.message()), "application/json",
                  no_store);
    }
    return Send(connection, exchange, HttpStatusFor(status.code()), ErrorBody(status),
                "application/json", no_store);
  }
  absl::string_view name = path;
  if (absl::ConsumePrefix(&name, "/") && std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_islower(c) || c == '.' || c == '-';
      })) {
    const DashboardFile* file = DashboardAsset(std::string(name));
    if (file == nullptr) return Send(connection, exchange, 404, "not found\n", "text/plain");
    exchange.route = std::string(path);
    return Send(connection, exchange, 200,
                absl::string_view(file->content.data(), file->content.size()), file->content_type,
                {{"Cache-Control", "no-cache"},
                 {"X-Content-Type-Options", "nosniff"},
                 {"Content-Security-Policy",
                  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"}},
                /*persistent=*/true);
  }
  return NotFound(connection, exchange, path);
}

MHD_Result Preflight(const Listener& listener, MHD_Connection* connection, Exchange& exchange,
                     absl::string_view path) {
  exchange.route = "preflight:/v1/ReportService";
  if (!CorsAllowed(listener.options.cors_origins, path, HeaderOf(connection, "Origin"))) {
    return SendError(connection, exchange,
                     absl::PermissionDeniedError("origin: not in --http_cors_origins"));
  }
  exchange.cors_origin = std::string(*HeaderOf(connection, "Origin"));
  return Send(connection, exchange, 204, "", "text/plain",
              {{"Access-Control-Allow-Methods", "POST"},
               {"Access-Control-Allow-Headers", "Authorization, Content-Type"},
               {"Access-Control-Max-Age", "600"}});
}

// The first call of an API request: every check the headers allow, before the body is read.
MHD_Result AdmitCall(const Listener& listener, MHD_Connection* connection, Exchange& exchange,
                     absl::string_view path, std::string method) {
  const JsonApi& api = *listener.api;
  exchange.route = api.Serves(method) ? method : "unknown";
  std::optional<absl::string_view> origin = HeaderOf(connection, "Origin");
  if (!listener.options.cors_origins.empty() &&
      CorsAllowed(listener.options.cors_origins, path, origin)) {
    exchange.cors_origin = std::string(*origin);
  }
  const std::optional<absl::string_view> import_header =
      HeaderOf(connection, std::string(kImportHeader).c_str());
  exchange.import = import_header.has_value() && IsReportMethod(method);
  const std::optional<absl::string_view> authorization = HeaderOf(connection, "Authorization");
  absl::StatusOr<Caller> caller =
      api.Authorize(method, authorization.value_or(""), Peer(connection), import_header);
  if (!caller.ok())
    return SendReply(connection, exchange, api.Refuse(method, caller.status(), 0, exchange.start));
  if (IsGuardedRoute(path)) {
    const RequestHeaders headers{.content_type = HeaderOf(connection, "Content-Type"),
                                 .origin = origin,
                                 .host = HeaderOf(connection, "Host"),
                                 .forwarded_host = HeaderOf(connection, "X-Forwarded-Host"),
                                 .forwarded_proto = HeaderOf(connection, "X-Forwarded-Proto"),
                                 .tls = listener.tls};
    if (absl::Status s = CheckJsonContentType(headers); !s.ok()) {
      return SendReply(connection, exchange, api.Refuse(method, s, 415, exchange.start));
    }
    if (absl::Status s = CheckSameOrigin(headers); !s.ok()) {
      return SendReply(connection, exchange, api.Refuse(method, s, 0, exchange.start));
    }
  }
  if (absl::Status s = CheckContentLength(HeaderOf(connection, "Content-Length"),
                                          listener.options.max_body_bytes);
      !s.ok()) {
    return SendReply(
        connection, exchange,
        api.Refuse(method, s, absl::StartsWith(s.message(), "body:") ? 413 : 0, exchange.start));
  }
  exchange.method = std::move(method);
  exchange.caller = *std::move(caller);
  return MHD_YES;
}

MHD_Result FirstCall(const Listener& listener, MHD_Connection* connection, Exchange& exchange,
                     absl::string_view path, absl::string_view verb) {
  if (listener.mtls && !ClientCertificateVerified(connection)) {
    return SendError(connection, exchange,
                     absl::UnauthenticatedError("tls: a client certificate signed by "
                                                "--tls_client_ca_file is required"));
  }
  if (verb == MHD_HTTP_METHOD_POST) {
    std::optional<std::string> method = ApiMethod(path);
    if (method.has_value()) {
      return AdmitCall(listener, connection, exchange, path, *std::move(method));
    }
  } else if (verb == MHD_HTTP_METHOD_GET || verb == MHD_HTTP_METHOD_HEAD) {
    return Get(listener, connection, exchange, path);
  } else if (verb == MHD_HTTP_METHOD_OPTIONS && !listener.options.cors_origins.empty() &&
             absl::StartsWith(path, "/v1/ReportService/") && ApiMethod(path).has_value()) {
    return Preflight(listener, connection, exchange, path);
  }
  return NotFound(connection, exchange, path);
}

bool IsHealthCheck(absl::string_view path, absl::string_view verb) {
  return (verb == MHD_HTTP_METHOD_GET || verb == MHD_HTTP_METHOD_HEAD) &&
         (path == "/livez" || path == "/healthz");
}

// A request other than a health check on a connection past max_connections (issue 38): 503 at
// once, from its headers, and the connection closed, so the reserve stays free for health.
MHD_Result ReservedRefusal(const Listener& listener, MHD_Connection* connection,
                           Exchange& exchange) {
  exchange.route = "reserved";
  exchange.code = absl::StatusCode::kUnavailable;
  exchange.has_code = true;
  return Send(connection, exchange, 503,
              ErrorBody(absl::UnavailableError(
                  absl::StrCat("connections: the listener holds --http_max_connections (",
                               listener.options.max_connections,
                               ") connections; this one is kept for /livez and /healthz; retry"))),
              "application/json", {{"Retry-After", "1"}, {"Connection", "close"}});
}

MHD_Result Access(void* cls, MHD_Connection* connection, const char* url, const char* verb,
                  const char* /*version*/, const char* upload_data, size_t* upload_data_size,
                  void** context) {
  const Listener& listener = *static_cast<const Listener*>(cls);
  if (*context == nullptr) *context = new Exchange();
  Exchange& exchange = *static_cast<Exchange*>(*context);
  ConnectionDeadlines::Connection* deadlines = DeadlinesOf(connection);
  if (!exchange.seen) {
    exchange.seen = true;
    if (deadlines != nullptr) listener.deadlines->HeadersDone(deadlines);
    if (deadlines != nullptr && listener.deadlines->Reserved(deadlines) &&
        !IsHealthCheck(url, verb)) {
      return ReservedRefusal(listener, connection, exchange);
    }
    return FirstCall(listener, connection, exchange, url, verb);
  }
  if (*upload_data_size > 0) {
    if (deadlines != nullptr) listener.deadlines->BodyBytes(deadlines, *upload_data_size);
    // Counted as it arrives; past the limit thrown away as it comes (the request deadline
    // bounds how long).
    if (!exchange.too_large) {
      if (exchange.body.size() + *upload_data_size > listener.options.max_body_bytes) {
        exchange.too_large = true;
        std::string().swap(exchange.body);
      } else {
        exchange.body.append(upload_data, *upload_data_size);
      }
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  if (deadlines != nullptr) listener.deadlines->BodyDone(deadlines);
  const JsonApi& api = *listener.api;
  if (exchange.too_large || !exchange.caller.has_value()) {
    return SendReply(connection, exchange,
                     api.Refuse(exchange.method, BodyTooLargeError(listener.options.max_body_bytes),
                                413, exchange.start));
  }
  return SendReply(connection, exchange,
                   api.Run(exchange.method, *exchange.caller, exchange.body, exchange.start));
}

void* RequestStarted(void* /*cls*/, const char* /*uri*/, MHD_Connection* /*connection*/) {
  return new Exchange();
}

void RequestCompleted(void* cls, MHD_Connection* connection, void** context,
                      MHD_RequestTerminationCode /*why*/) {
  const Listener& listener = *static_cast<const Listener*>(cls);
  auto* exchange = static_cast<Exchange*>(*context);
  *context = nullptr;
  if (ConnectionDeadlines::Connection* d = DeadlinesOf(connection); d != nullptr) {
    listener.deadlines->RequestDone(d);
  }
  if (exchange == nullptr) return;
  if (listener.options.access_log && exchange->http_status != 0) {
    absl::StatusCode code = exchange->code;
    if (!exchange->has_code && exchange->http_status >= 400) {
      code = exchange->http_status == 404 ? absl::StatusCode::kNotFound
                                          : absl::StatusCode::kInvalidArgument;
    }
    const std::string code_name = absl::StatusCodeToString(code);
    LogAccess({.transport = "http",
               .method = exchange->route,
               .code = code_name,
               .http_status = exchange->http_status,
               .latency = absl::Now() - exchange->start,
               .reports = exchange->reports,
               .import = exchange->import});
  }
  delete exchange;
}

void ConnectionEvent(void* cls, MHD_Connection* connection, void** socket_context,
                     MHD_ConnectionNotificationCode event) {
  auto* listener = static_cast<Listener*>(cls);
  if (event == MHD_CONNECTION_NOTIFY_STARTED) {
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    *socket_context = info != nullptr ? listener->deadlines->Opened(info->connect_fd) : nullptr;
  } else if (*socket_context != nullptr) {
    listener->deadlines->Closed(static_cast<ConnectionDeadlines::Connection*>(*socket_context));
    *socket_context = nullptr;
  }
}

void LibraryLog(void* /*cls*/, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof line, format, args);
  absl::string_view text(line);
  absl::ConsumeSuffix(&text, "\n");
  spdlog::debug("event=http_library msg=\"{}\"", std::string(text));
}

absl::StatusOr<std::string> ReadPem(const std::string& flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(flag, ": the HTTP listener cannot read \"", path, "\""));
  }
  return text.str();
}

// The PEM files checked with GnuTLS before the daemon starts, so that a bad file gets its own
// message instead of a failed start.
absl::Status CheckTls(const Listener& listener) {
  gnutls_certificate_credentials_t credentials = nullptr;
  if (gnutls_certificate_allocate_credentials(&credentials) != GNUTLS_E_SUCCESS) {
    return absl::ResourceExhaustedError("tls: cannot allocate GnuTLS credentials");
  }
  const gnutls_datum_t cert{
      reinterpret_cast<unsigned char*>(const_cast<char*>(listener.cert_pem.data())),
      static_cast<unsigned int>(listener.cert_pem.size())};
  const gnutls_datum_t key{
      reinterpret_cast<unsigned char*>(const_cast<char*>(listener.key_pem.data())),
      static_cast<unsigned int>(listener.key_pem.size())};
  absl::Status status;
  if (gnutls_certificate_set_x509_key_mem(credentials, &cert, &key, GNUTLS_X509_FMT_PEM) !=
      GNUTLS_E_SUCCESS) {
    status = absl::FailedPreconditionError(
        "tls_cert_file, tls_key_file: the HTTP listener cannot load the certificate and key");
  } else if (listener.mtls) {
    const gnutls_datum_t ca{
        reinterpret_cast<unsigned char*>(const_cast<char*>(listener.ca_pem.data())),
        static_cast<unsigned int>(listener.ca_pem.size())};
    if (gnutls_certificate_set_x509_trust_mem(credentials, &ca, GNUTLS_X509_FMT_PEM) <= 0) {
      status = absl::FailedPreconditionError(
          "tls_client_ca_file: the HTTP listener finds no CA certificate in it");
    }
  }
  gnutls_certificate_free_credentials(credentials);
  return status;
}

absl::Status CheckOptions(const HttpOptions& o) {
  for (const auto& [flag, value] : {std::pair{"http_header_timeout_seconds", o.header_timeout},
                                    std::pair{"http_request_timeout_seconds", o.request_timeout},
                                    std::pair{"http_idle_timeout_seconds", o.idle_timeout}}) {
    if (value <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": must be > 0, but is ", absl::FormatDuration(value)));
    }
  }
  if (o.max_connections <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("http_max_connections: must be > 0, but is ", o.max_connections));
  }
  if (o.max_connections_per_address < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("http_max_connections_per_address: must be >= 0 (0: --http_max_connections "
                     "/ 16), but is ",
                     o.max_connections_per_address));
  }
  if (!(o.min_body_bytes_per_second >= 0) || !std::isfinite(o.min_body_bytes_per_second)) {
    return absl::InvalidArgumentError(
        absl::StrCat("http_min_body_bytes_per_second: must be >= 0 (0: no minimum), but is ",
                     o.min_body_bytes_per_second));
  }
  return absl::OkStatus();
}

MHD_OptionItem Item(MHD_OPTION option, intptr_t value, void* pointer = nullptr) {
  return MHD_OptionItem{option, value, pointer};
}

}  // namespace

int ScaledPerAddressLimit(int max_connections) { return std::max(1, max_connections / 16); }

int HealthReserve(int max_connections) { return std::max(4, max_connections / 32); }

namespace {

// The listener's certificate, key and (mutual TLS) client CA from its options' files, checked.
// Errors: ReadPem's and CheckTls's (naming the flag or file).
absl::Status LoadTls(Listener* listener) {
  const HttpOptions& options = listener->options;
  absl::StatusOr<std::string> cert = ReadPem("tls_cert_file", options.tls_cert_file);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem("tls_key_file", options.tls_key_file);
  if (!key.ok()) return key.status();
  listener->cert_pem = *std::move(cert);
  listener->key_pem = *std::move(key);
  if (listener->mtls) {
    absl::StatusOr<std::string> ca = ReadPem("tls_client_ca_file", options.tls_client_ca_file);
    if (!ca.ok()) return ca.status();
    listener->ca_pem = *std::move(ca);
  }
  return CheckTls(*listener);
}

// The address to bind for `host` and `port` (numeric service). Errors: UNAVAILABLE
// "http_listen: cannot resolve ..." naming `listen_address`.
absl::StatusOr<sockaddr_storage> Resolve(absl::string_view host, int port,
                                         absl::string_view listen_address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* resolved = nullptr;
  const std::string host_string(host), port_string = std::to_string(port);
  if (getaddrinfo(host_string.c_str(), port_string.c_str(), &hints, &resolved) != 0 ||
      resolved == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("http_listen: cannot resolve \"", listen_address, "\""));
  }
  sockaddr_storage bind_address{};
  std::memcpy(&bind_address, resolved->ai_addr,
              std::min<size_t>(resolved->ai_addrlen, sizeof bind_address));
  freeaddrinfo(resolved);
  return bind_address;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpOptions& options, const JsonApi* api, std::function<std::string()> metrics_text,
    HealthCheck health) {
  absl::string_view address = options.listen_address;
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "http_listen: must be host:port, for example 127.0.0.1:8080, but is \"", address, "\""));
  }
  if (absl::Status s = CheckOptions(options); !s.ok()) return s;
  absl::string_view host = address.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  if (host.empty()) host = "0.0.0.0";

  std::unique_ptr<HttpServer> server(new HttpServer());
  server->listener_ = std::make_unique<Listener>();
  Listener& listener = *server->listener_;
  listener.options = options;
  listener.api = api;
  listener.metrics_text = std::move(metrics_text);
  listener.health = std::move(health);
  listener.tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  listener.mtls = listener.tls && !options.tls_client_ca_file.empty();
  if (listener.tls) {
    if (absl::Status s = LoadTls(&listener); !s.ok()) return s;
  }
  absl::StatusOr<sockaddr_storage> resolved = Resolve(host, port, options.listen_address);
  if (!resolved.ok()) return resolved.status();
  sockaddr_storage bind_address = *resolved;

  listener.deadlines.emplace(
      ConnectionDeadlines::Limits{.header_timeout = options.header_timeout,
                                  .request_timeout = options.request_timeout,
                                  .min_body_bytes_per_second = options.min_body_bytes_per_second,
                                  .normal_connections = options.max_connections},
      options.on_connection_cut);
  const int per_address = options.max_connections_per_address > 0
                              ? options.max_connections_per_address
                              : ScaledPerAddressLimit(options.max_connections);
  unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                       MHD_USE_POLL | MHD_USE_ERROR_LOG;
  if (bind_address.ss_family == AF_INET6) flags |= MHD_USE_IPv6;
  if (listener.tls) flags |= MHD_USE_TLS;
  // The callbacks' function pointers travel as intptr_t (MHD_OptionItem's value).
  std::vector<MHD_OptionItem> items = {
      Item(MHD_OPTION_SOCK_ADDR, 0, &bind_address),
      Item(MHD_OPTION_CONNECTION_LIMIT,
           options.max_connections + HealthReserve(options.max_connections)),
      Item(MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address),
      Item(MHD_OPTION_CONNECTION_TIMEOUT,
           std::max<int64_t>(1, absl::ToInt64Seconds(options.idle_timeout))),
      // Headers (the request line, Authorization, ...) must fit in this much per connection;
      // bodies stream through it.
      Item(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 64 * 1024),
      Item(MHD_OPTION_URI_LOG_CALLBACK, reinterpret_cast<intptr_t>(&RequestStarted), &listener),
      Item(MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&RequestCompleted), &listener),
      Item(MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&ConnectionEvent), &listener),
      Item(MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&LibraryLog), nullptr),
  };
  if (listener.tls) {
    items.push_back(Item(MHD_OPTION_HTTPS_MEM_CERT, 0, listener.cert_pem.data()));
    items.push_back(Item(MHD_OPTION_HTTPS_MEM_KEY, 0, listener.key_pem.data()));
    if (listener.mtls) items.push_back(Item(MHD_OPTION_HTTPS_MEM_TRUST, 0, listener.ca_pem.data()));
  }
  items.push_back(Item(MHD_OPTION_END, 0));
  server->daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr, &Access, &listener,
                                     MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
  if (server->daemon_ == nullptr) {
    const std::string reason = BindFailureReason(
        reinterpret_cast<const sockaddr*>(&bind_address),
        bind_address.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in), port);
    return absl::UnavailableError(absl::StrCat("http_listen: cannot listen on \"",
                                               options.listen_address, "\"",
                                               reason.empty() ? "" : ": ", reason));
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(server->daemon_, MHD_DAEMON_INFO_BIND_PORT);
  server->port_ = info != nullptr ? info->port : port;
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace deniable::server::http
