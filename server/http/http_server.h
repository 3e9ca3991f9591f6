// The HTTP listener of deniable-server (GNU libmicrohttpd): the JSON API, the Prometheus scrape
// endpoint and the dashboard, off unless --http_listen is given (docs/http.md).
//
//   POST /v1/<Service>/<Method>   JsonApi::Call for "deniable.v1.<Service>/<Method>"
//   GET  /metrics                 Prometheus text format 0.0.4 (it holds counts, never a report
//                                 or token; open unless HttpOptions::metrics_token is set; the
//                                 estimates only for the analyst role or the metrics token)
//   GET  /, /dashboard.js, ...    the dashboard's static files (DashboardAsset)
//   OPTIONS /v1/ReportService/*   CORS preflight, only with cors_origins (browser SDKs)
//   GET  /healthz[?service=NAME]  readiness: 200 {"status":"SERVING"} or 503
//                                 {"status":"NOT_SERVING","reason":...}; 404 for an unknown
//                                 service (the same answer as grpc.health.v1.Health/Check)
//   GET  /livez                   liveness: 200 {"status":"ALIVE"} while the listener answers
//
// With access_log, each request writes one access line (server/access_log.h).
//
// Holding against hostile clients (docs/http.md, "Limits"):
// - every check that needs only the headers runs before a byte of the body is read: the method,
//   the token and role (401 / 403), the analyst and admin routes' Content-Type (415) and Origin
//   (403) rules (request_checks.h), and a Content-Length over max_body_bytes (413);
// - a body is counted as it arrives, whatever its transfer encoding (chunked included); past
//   max_body_bytes it is thrown away as it comes and the request answered 413;
// - deadlines for a request's headers and for the whole request and a minimum body rate
//   (connection_deadlines.h), an idle timeout, a limit on open connections and one per client
//   address that scales with it, and connections past the limit kept for health checks;
// - one thread per connection (at most max_connections): a slow client or a slow storage query
//   holds its own thread only, so /livez and /healthz answer while others stall.
//
// TLS (and mutual TLS) with the same PEM files as the gRPC port. Thread-safe; the JsonApi and
// the metrics callback must outlive the server.
#ifndef DENIABLE_SERVER_HTTP_HTTP_SERVER_H_
#define DENIABLE_SERVER_HTTP_HTTP_SERVER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/http/json_api.h"

struct MHD_Daemon;

namespace deniable::server::http {

struct HttpOptions {
  // host:port ("127.0.0.1:8080"; "[::1]:8080"); port 0 picks a free port (see port()).
  std::string listen_address;
  // TLS: both set turns HTTPS on; client_ca_file also requires client certificates.
  std::string tls_cert_file, tls_key_file, tls_client_ca_file;
  size_t max_body_bytes = 2 * 1024 * 1024;
  // A request's headers must arrive within header_timeout of the connection being ready for it
  // (opened, or done with its previous request: an idle kept-alive connection is closed after it
  // too); the whole request, body included, within request_timeout. idle_timeout: a connection
  // that neither sends nor takes a byte for this long is closed (a client that stops reading
  // its answer). All > 0.
  absl::Duration header_timeout = absl::Seconds(10);
  absl::Duration request_timeout = absl::Seconds(60);
  absl::Duration idle_timeout = absl::Seconds(60);
  // Connections open at once, in all and from one client address (an IPv4 or a whole IPv6
  // address). A connection past the per-address limit is closed as soon as it is accepted.
  // max_connections_per_address 0 scales with the total: max(1, max_connections / 16) (64 of
  // 1024), so that eight addresses cannot fill the listener (issue 38). Past max_connections,
  // HealthReserve(max_connections) more are accepted for /livez and /healthz only: any other
  // request on them is answered 503 UNAVAILABLE ("Retry-After: 1", the connection closed), so
  // health checks are answered while the listener is full; past those the library closes new
  // connections at once. Each open connection holds one thread. max_connections > 0,
  // max_connections_per_address >= 0.
  int max_connections = 1024;
  int max_connections_per_address = 0;
  // A request's body must arrive at min_body_bytes_per_second on average from its headers on,
  // checked from 5 s after them (ConnectionDeadlines): a client that trickles a body a byte a
  // second is cut after 5 s, not held to request_timeout. 0: no minimum. >= 0.
  double min_body_bytes_per_second = 1024;
  // Called (on the deadline watchdog's thread) for each connection shut down for missing its
  // header or request deadline; main.cc counts them in deniable_http_connections_cut_total.
  std::function<void()> on_connection_cut;
  // Web origins ("https://app.example", scheme://host[:port], or "*" for any) whose pages may
  // call ReportService (GetDesign, SubmitReports) from a browser: the browser SDK
  // (client/js) running on a page the collector does not serve. Only ReportService answers
  // cross-origin; analyst calls, /metrics and the dashboard stay same-origin. The bearer token
  // travels in the Authorization header (no cookies, no credentials mode). Empty: no CORS.
  std::vector<std::string> cors_origins;
  // One access line per request (method or route, code, HTTP status, latency, reports).
  bool access_log = false;
  // Non-empty: GET /metrics needs "Authorization: Bearer <metrics_token>" (401 otherwise). The
  // scrape lists every metric's name and its report counts; a Prometheus server sends the token
  // with `authorization: {credentials: ...}` (docs/security.md). Empty: /metrics is open.
  std::string metrics_token;
  // Set (main.cc, with --alert_rules): GET /v1/alerts answers its JSON (docs/alerts.md), to
  // callers that may call QueryService/GetPrevalence. Unset: GET /v1/alerts is NOT_FOUND.
  std::function<std::string()> alerts_json;
  // Non-null: its text (each metric's estimate series, server/metrics/estimate_metrics.h) is
  // appended to GET /metrics for a scrape that may read estimates: one with the metrics token
  // when it is set, else one whose bearer token has the analyst role (or any while the server is
  // tokenless, when queries need no token either). Other scrapes get the counters only.
  std::function<std::string()> estimates_text;
};

// The per-address limit that HttpOptions::max_connections_per_address = 0 stands for.
int ScaledPerAddressLimit(int max_connections);
// The connections accepted past max_connections for health checks: max(4, max_connections / 32).
int HealthReserve(int max_connections);

// The health of `service` ("" for the whole server) for /healthz: OK (SERVING), UNAVAILABLE
// (NOT_SERVING, with the reason) or NOT_FOUND (no such service). Null: always SERVING.
using HealthCheck = std::function<absl::Status(absl::string_view service)>;

class HttpServer {
 public:
  // `metrics_text` returns the /metrics body. Starts serving on its own threads.
  // Errors: INVALID_ARGUMENT "http_listen: ..." for an address without a port, "http_...: ..."
  // for a limit or timeout <= 0; FAILED_PRECONDITION "tls_...: ..." when the TLS files cannot
  // be loaded; UNAVAILABLE "http_listen: ..." when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const HttpOptions& options, const JsonApi* api, std::function<std::string()> metrics_text,
      HealthCheck health = nullptr);
  ~HttpServer();  // Stop()

  int port() const { return port_; }
  // Stops accepting, closes the connections (a handler already running finishes first), joins
  // the threads. Idempotent.
  void Stop();

  struct Listener;  // what the library's callbacks see (http_server.cc)

 private:
  HttpServer() = default;
  std::unique_ptr<Listener> listener_;
  MHD_Daemon* daemon_ = nullptr;
  int port_ = 0;
};

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_HTTP_SERVER_H_
