#include "server/http/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/http/dashboard_assets.h"
#include "server/http/http_status.h"
#include "server/service/access_log.h"

namespace deniable::server::http {
namespace {

// What the access line of the request on this thread says: cpp-httplib runs a request's routing,
// handler and logger on one thread, one request at a time.
struct AccessNote {
  absl::Time start = absl::InfinitePast();
  std::string method = "other";
  absl::StatusCode code = absl::StatusCode::kOk;
  bool has_code = false;
  int64_t reports = -1;
  bool import = false;
};
thread_local AccessNote access_note;

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

void NoteRoute(std::string method) { access_note.method = std::move(method); }

// The access line of a finished request; resets the note for the thread's next request.
void LogRequest(const httplib::Response& response) {
  AccessNote note = std::exchange(access_note, AccessNote());
  const absl::Time now = absl::Now();
  absl::StatusCode code = note.code;
  if (!note.has_code && response.status >= 400) {
    code =
        response.status == 404 ? absl::StatusCode::kNotFound : absl::StatusCode::kInvalidArgument;
  }
  const std::string code_name = absl::StatusCodeToString(code);
  LogAccess(
      {.transport = "http",
       .method = note.method,
       .code = code_name,
       .http_status = response.status,
       .latency = note.start == absl::InfinitePast() ? absl::ZeroDuration() : now - note.start,
       .reports = note.reports,
       .import = note.import});
}

// "ipv4:1.2.3.4:5678" / "ipv6:[::1]:5678", the form AccessPolicy (and gRPC) uses.
std::string Peer(const httplib::Request& request) {
  const bool v6 = request.remote_addr.find(':') != std::string::npos;
  return v6 ? absl::StrCat("ipv6:[", request.remote_addr, "]:", request.remote_port)
            : absl::StrCat("ipv4:", request.remote_addr, ":", request.remote_port);
}

// CORS for the browser SDK: the request's Origin echoed back when it is allowed, for
// ReportService only (HttpOptions::cors_origins).
bool AllowCors(const std::vector<std::string>& origins, const httplib::Request& request,
               httplib::Response& response) {
  const std::string origin = request.get_header_value("Origin");
  if (origin.empty() || request.path.rfind("/v1/ReportService/", 0) != 0) return false;
  if (std::find(origins.begin(), origins.end(), origin) == origins.end() &&
      std::find(origins.begin(), origins.end(), "*") == origins.end()) {
    return false;
  }
  response.set_header("Access-Control-Allow-Origin", origin);
  response.set_header("Vary", "Origin");
  return true;
}

void Route(httplib::Server& server, const JsonApi* api, std::function<std::string()> metrics_text,
           HealthCheck health, const HttpOptions& options) {
  const std::vector<std::string>& cors_origins = options.cors_origins;
  if (options.access_log) {
    server.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
      access_note.start = absl::Now();
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server.set_logger(
        [](const httplib::Request&, const httplib::Response& response) { LogRequest(response); });
  }
  if (!cors_origins.empty()) {
    server.Options(
        R"(/v1/ReportService/([A-Za-z]+))",
        [cors_origins](const httplib::Request& request, httplib::Response& response) {
          NoteRoute("preflight:/v1/ReportService");
          if (!AllowCors(cors_origins, request, response)) {
            response.status = 403;
            response.set_content(
                ErrorBody(absl::PermissionDeniedError("origin: not in --http_cors_origins")),
                "application/json");
            return;
          }
          response.status = 204;
          response.set_header("Access-Control-Allow-Methods", "POST");
          response.set_header("Access-Control-Allow-Headers", "Authorization, Content-Type");
          response.set_header("Access-Control-Max-Age", "600");
        });
  }
  server.Post(R"(/v1/([A-Za-z]+)/([A-Za-z]+))", [api, cors_origins](const httplib::Request& request,
                                                                    httplib::Response& response) {
    if (!cors_origins.empty()) AllowCors(cors_origins, request, response);
    const std::string method =
        absl::StrCat("deniable.v1.", request.matches[1].str(), "/", request.matches[2].str());
    // Header names match in any case (cpp-httplib compares them case-insensitively).
    const std::string import_name(kImportHeader);
    std::optional<std::string> import_header;
    if (request.has_header(import_name)) import_header = request.get_header_value(import_name);
    JsonReply reply =
        api->Call(method, request.body, request.get_header_value("Authorization"), Peer(request),
                  import_header.has_value() ? std::optional<absl::string_view>(*import_header)
                                            : std::nullopt);
    // An unknown method is logged as "unknown": the path's letters are the client's choice.
    NoteRoute(reply.code == absl::StatusCode::kNotFound && !api->Serves(method) ? "unknown"
                                                                                : method);
    access_note.code = reply.code;
    access_note.has_code = true;
    access_note.reports = reply.reports;
    access_note.import = reply.import;
    response.status = reply.http_status;
    response.set_content(std::move(reply.body), "application/json");
  });
  server.Get("/metrics", [metrics = std::move(metrics_text)](const httplib::Request&,
                                                             httplib::Response& response) {
    NoteRoute("/metrics");
    response.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get("/healthz", [health](const httplib::Request& request, httplib::Response& response) {
    NoteRoute("/healthz");
    const std::string service = request.get_param_value("service");
    const absl::Status status = health != nullptr ? health(service) : absl::OkStatus();
    access_note.code = status.code();
    access_note.has_code = true;
    response.set_header("Cache-Control", "no-store");
    if (status.ok()) {
      response.set_content("{\"status\":\"SERVING\"}\n", "application/json");
    } else if (status.code() == absl::StatusCode::kUnavailable) {
      response.status = 503;
      response.set_content(NotServingBody(status.message()), "application/json");
    } else {
      response.status = HttpStatusFor(status.code());
      response.set_content(ErrorBody(status), "application/json");
    }
  });
  server.Get("/livez", [](const httplib::Request&, httplib::Response& response) {
    NoteRoute("/livez");
    response.set_header("Cache-Control", "no-store");
    response.set_content("{\"status\":\"ALIVE\"}\n", "application/json");
  });
  server.Get(R"(/([a-z.\-]*))", [](const httplib::Request& request, httplib::Response& response) {
    const DashboardFile* file = DashboardAsset(request.matches[1].str());
    if (file != nullptr) NoteRoute(absl::StrCat("/", request.matches[1].str()));
    if (file == nullptr) {
      response.status = 404;
      response.set_content("not found\n", "text/plain");
      return;
    }
    response.set_header("Cache-Control", "no-cache");
    response.set_header("X-Content-Type-Options", "nosniff");
    response.set_header(
        "Content-Security-Policy",
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
    response.set_content(file->content.data(), file->content.size(), file->content_type);
  });
  // Errors the library answers itself (malformed request, unknown path, body too large) get
  // the same JSON error body as the API's.
  server.set_error_handler([](const httplib::Request& request, httplib::Response& response) {
    if (!response.body.empty()) return;
    absl::Status status;
    if (response.status == 413) {
      status = absl::InvalidArgumentError("body: larger than the server accepts");
    } else if (response.status == 404) {
      status = absl::NotFoundError(absl::StrCat("path: no page or method at \"", request.path,
                                                "\"; the API is POST /v1/<Service>/<Method>"));
    } else if (response.status == 400) {
      status = absl::InvalidArgumentError(
          "request: malformed HTTP request (a POST needs a body, {} for an empty request)");
    } else {
      status = absl::InvalidArgumentError(absl::StrCat("request: HTTP status ", response.status));
    }
    access_note.code = status.code();
    access_note.has_code = true;
    response.set_content(ErrorBody(status), "application/json");
  });
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
  absl::string_view host = address.substr(0, colon);
  if (absl::ConsumePrefix(&host, "[")) absl::ConsumeSuffix(&host, "]");
  if (host.empty()) host = "0.0.0.0";

  std::unique_ptr<HttpServer> server(new HttpServer());
  const bool tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (tls) {
    auto ssl = std::make_unique<httplib::SSLServer>(
        options.tls_cert_file.c_str(), options.tls_key_file.c_str(),
        options.tls_client_ca_file.empty() ? nullptr : options.tls_client_ca_file.c_str());
    if (!ssl->is_valid()) {
      return absl::FailedPreconditionError(
          "tls_cert_file, tls_key_file: the HTTP listener cannot load the certificate, key or "
          "client CA");
    }
    server->server_ = std::move(ssl);
  } else {
    server->server_ = std::make_unique<httplib::Server>();
  }
  server->server_->set_payload_max_length(options.max_body_bytes);
  // Without it a response written in two parts waits for the client's delayed ACK (~40 ms).
  server->server_->set_tcp_nodelay(true);
  Route(*server->server_, api, std::move(metrics_text), std::move(health), options);
  const std::string host_string(host);
  server->port_ = port == 0 ? server->server_->bind_to_any_port(host_string)
                            : (server->server_->bind_to_port(host_string, port) ? port : -1);
  if (server->port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat("http_listen: cannot listen on \"", options.listen_address, "\""));
  }
  httplib::Server* raw = server->server_.get();
  server->thread_ = std::thread([raw] { raw->listen_after_bind(); });
  return server;
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace deniable::server::http
