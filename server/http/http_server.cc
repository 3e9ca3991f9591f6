#include "server/http/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "server/http/dashboard_assets.h"
#include "server/http/http_status.h"

namespace deniable::server::http {
namespace {

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
           const std::vector<std::string>& cors_origins) {
  if (!cors_origins.empty()) {
    server.Options(
        R"(/v1/ReportService/([A-Za-z]+))",
        [cors_origins](const httplib::Request& request, httplib::Response& response) {
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
    JsonReply reply =
        api->Call(method, request.body, request.get_header_value("Authorization"), Peer(request));
    response.status = reply.http_status;
    response.set_content(std::move(reply.body), "application/json");
  });
  server.Get("/metrics", [metrics = std::move(metrics_text)](const httplib::Request&,
                                                             httplib::Response& response) {
    response.set_content(metrics(), "text/plain; version=0.0.4; charset=utf-8");
  });
  server.Get(R"(/([a-z.\-]*))", [](const httplib::Request& request, httplib::Response& response) {
    const DashboardFile* file = DashboardAsset(request.matches[1].str());
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
    response.set_content(ErrorBody(status), "application/json");
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const HttpOptions& options, const JsonApi* api, std::function<std::string()> metrics_text) {
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
  Route(*server->server_, api, std::move(metrics_text), options.cors_origins);
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
