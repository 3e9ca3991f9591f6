// The HTTP/JSON API's calls, independent of the HTTP library: POST /v1/<Service>/<Method> with
// a request message in protobuf's JSON mapping becomes the same core call the gRPC front end
// makes, behind the same AccessPolicy (tokens, roles, rate limit), and its answer a response
// message in the same mapping (lowerCamelCase names, enums by name, fields at their default value
// included) but for 64-bit integers as JSON numbers where they fit in 2^53 and values the server
// does not have (a suppressed bucket's estimate) as null (json_print.h).
//
// Methods (docs/http.md): deniable.v1.ReportService/{GetDesign, SubmitReports};
// deniable.v1.QueryService/{CreateMetric, ListMetrics, AddDesignVersion, GetPrevalence,
// GetSeries, GetDifference, DescribeDesign, PlanSurvey, DeleteMetric, SetRetention};
// deniable.v1.AdminService/GetServerStats.
// StreamReports is gRPC-only (a client stream has no JSON form).
//
// A translator only: each method parses its JSON into the request message, calls the
// CollectorCore (server/core/collector_core.h) that the gRPC services call too, and prints the
// answer; the audit lines, the batch accounting and the counters are the core's.
//
// Thread-safe. Does not own the core, which must outlive it.
#ifndef DENIABLE_SERVER_HTTP_JSON_API_H_
#define DENIABLE_SERVER_HTTP_JSON_API_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/auth/access_policy.h"
#include "server/core/collector_core.h"

namespace deniable::server::http {

// One answer: the HTTP status and the JSON body (the response message, or ErrorBody).
struct JsonReply {
  int http_status = 200;
  std::string body;
  absl::StatusCode code = absl::StatusCode::kOk;  // the status behind http_status
  int64_t reports = -1;  // SubmitReports: the reports the body held; -1 otherwise or unparsed
  bool import = false;   // SubmitReports carrying the import header (for the access log)
};

class JsonApi {
 public:
  explicit JsonApi(CollectorCore* core);

  // Runs `method` ("deniable.v1.QueryService/GetPrevalence") with the JSON `body` ("" means
  // "{}"): Authorize, then Run or Refuse. `authorization` is the Authorization header ("" when
  // absent); `peer` the client's address in gRPC's form ("ipv4:1.2.3.4:5678"), for the tokenless
  // rate-limit key only.
  // Errors, as HTTP status + ErrorBody: 404 NOT_FOUND "method: ..." for an unknown method;
  // 401 / 403 from the AccessPolicy; 400 INVALID_ARGUMENT "body: ..." when the JSON does not
  // parse into the request message (unknown field, wrong type; client text in the message
  // clipped); 429 for the rate limit; then whatever the core call answers (400 naming the field,
  // 404, 409, 503, ...).
  // `import_header`: the X-Deniable-Import header's value (nullopt when absent); on SubmitReports
  // it makes the call an analyst's historical import, as over gRPC (AccessPolicy::Authorize:
  // 400 / 403 "x-deniable-import: ..." for a bad value or a caller without an analyst token; 400
  // FAILED_PRECONDITION from the ingestor while the server's imports are off).
  JsonReply Call(absl::string_view method, absl::string_view body, absl::string_view authorization,
                 absl::string_view peer,
                 std::optional<absl::string_view> import_header = std::nullopt) const;

  // The first half of Call, from the request's headers alone, so that a listener can refuse a
  // call before it reads a byte of the body: `method` is served and the caller may call it.
  // Errors: NOT_FOUND "method: ..." (the method's name clipped); UNAUTHENTICATED,
  // PERMISSION_DENIED, INVALID_ARGUMENT from AccessPolicy::Authorize. Counts nothing: pass an
  // error on to Refuse. The call's one entry into the core (CollectorCore::entries): Run and
  // Refuse continue it (CollectorCore::ContinueCall). An unknown method enters no core.
  absl::StatusOr<Caller> Authorize(absl::string_view method, absl::string_view authorization,
                                   absl::string_view peer,
                                   std::optional<absl::string_view> import_header) const;

  // The second half: runs the call Authorize admitted, with its JSON `body`. Errors as Call's.
  // Counts the call and its duration from `arrival` (the request's first byte; InfinitePast:
  // from now, the handler alone) in ServerCounters::RecordCall.
  JsonReply Run(absl::string_view method, const Caller& caller, absl::string_view body,
                absl::Time arrival = absl::InfinitePast()) const;

  // The answer to a call refused before it ran: Authorize's error, or the listener's own (413
  // body too large, 415 content type, 403 cross-origin). Counted like a call that ran; a refused
  // SubmitReports is also logged and counted as a refused batch, as the gRPC guard does.
  // `http_status` 0: HttpStatusFor(status.code()).
  // `arrival` as for Run.
  JsonReply Refuse(absl::string_view method, const absl::Status& status, int http_status = 0,
                   absl::Time arrival = absl::InfinitePast()) const;

  // Whether `method` (a full name) is served.
  bool Serves(absl::string_view method) const { return handlers_.contains(method); }

  // The full names of the methods served, in the order above.
  std::vector<std::string> Methods() const;

 private:
  // Parses the body, runs the core call, prints the response. Errors: as Call's.
  using Handler = std::function<absl::Status(const Caller&, absl::string_view, JsonReply*)>;
  absl::Status SubmitReports(const Caller& caller, absl::string_view body, JsonReply* out) const;

  CollectorCore* const core_;
  std::vector<std::string> order_;
  absl::flat_hash_map<std::string, Handler> handlers_;
};

}  // namespace deniable::server::http

#endif  // DENIABLE_SERVER_HTTP_JSON_API_H_
