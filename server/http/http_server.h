// The HTTP listener of deniable-server (cpp-httplib): the JSON API, the Prometheus scrape
// endpoint and the dashboard, off unless --http_listen is given (docs/http.md).
//
//   POST /v1/<Service>/<Method>   JsonApi::Call for "deniable.v1.<Service>/<Method>"
//   GET  /metrics                 Prometheus text format 0.0.4 (unauthenticated, like the
//                                 gRPC health check: it holds counts, never a report or token)
//   GET  /, /dashboard.js, ...    the dashboard's static files (DashboardAsset)
//   OPTIONS /v1/ReportService/*   CORS preflight, only with cors_origins (browser SDKs)
//   GET  /healthz[?service=NAME]  readiness: 200 {"status":"SERVING"} or 503
//                                 {"status":"NOT_SERVING","reason":...}; 404 for an unknown
//                                 service (the same answer as grpc.health.v1.Health/Check)
//   GET  /livez                   liveness: 200 {"status":"ALIVE"} while the listener answers
//
// With access_log, each request writes one access line (service/access_log.h).
//
// TLS (and mutual TLS) with the same PEM files as the gRPC port. Requests larger than
// max_body_bytes are answered 413. Thread-safe; the JsonApi and the metrics callback must
// outlive the server.
#ifndef DENIABLE_SERVER_HTTP_HTTP_SERVER_H_
#define DENIABLE_SERVER_HTTP_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/http/json_api.h"

namespace httplib {
class Server;
}

namespace deniable::server::http {

struct HttpOptions {
  // host:port ("127.0.0.1:8080"; "[::1]:8080"); port 0 picks a free port (see port()).
  std::string listen_address;
  // TLS: both set turns HTTPS on; client_ca_file also requires client certificates.
  std::string tls_cert_file, tls_key_file, tls_client_ca_file;
  size_t max_body_bytes = 2 * 1024 * 1024;
  // Web origins ("https://app.example", scheme://host[:port], or "*" for any) whose pages may
  // call ReportService (GetDesign, SubmitReports) from a browser: the browser SDK
  // (client/js) running on a page the collector does not serve. Only ReportService answers
  // cross-origin; analyst calls, /metrics and the dashboard stay same-origin. The bearer token
  // travels in the Authorization header (no cookies, no credentials mode). Empty: no CORS.
  std::vector<std::string> cors_origins;
  // One access line per request (method or route, code, HTTP status, latency, reports).
  bool access_log = false;
};

// The health of `service` ("" for the whole server) for /healthz: OK (SERVING), UNAVAILABLE
// (NOT_SERVING, with the reason) or NOT_FOUND (no such service). Null: always SERVING.
using HealthCheck = std::function<absl::Status(absl::string_view service)>;

class HttpServer {
 public:
  // `metrics_text` returns the /metrics body. Starts serving on its own threads.
  // Errors: INVALID_ARGUMENT "http_listen: ..." for an address without a port; FAILED_PRECONDITION
  // "tls_...: ..." when the TLS files cannot be loaded; UNAVAILABLE "http_listen: ..." when the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpOptions& options, const JsonApi* api, std::function<std::string()> metrics_text,
      HealthCheck health = nullptr);
  ~HttpServer();  // Stop()

  int port() const { return port_; }
  // Stops accepting, lets the requests in progress finish, joins the threads. Idempotent.
  void Stop();

 private:
  HttpServer() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_HTTP_SERVER_H_
