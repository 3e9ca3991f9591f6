#include "server/http/json_api.h"

#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/core/client_status.h"
#include "server/core/echo.h"
#include "server/http/http_status.h"
#include "server/http/json_print.h"
#include "server/storage/storage_error.h"

namespace deniable::server::http {
namespace {

// The longest part of protobuf's JSON parse message repeated (it quotes the client's text).
constexpr size_t kMaxParseMessageBytes = 128;

absl::Status ParseJson(absl::string_view body, google::protobuf::Message* message) {
  if (body.find_first_not_of(" \t\r\n") == absl::string_view::npos) return absl::OkStatus();
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(body.data(), body.size()), message, options);
  if (!status.ok()) {
    // protobuf's message quotes the client's text (an unknown field's name): clipped.
    return absl::InvalidArgumentError(
        absl::StrCat("body: not a JSON ", message->GetDescriptor()->full_name(), ": ",
                     ClipText(status.message().as_string(), kMaxParseMessageBytes)));
  }
  return absl::OkStatus();
}

// Counts as JSON numbers, missing values as null (json_print.h).
void PrintJson(const google::protobuf::Message& message, std::string* out) {
  *out = PrintApiJson(message);
}

// A handler for a unary core call `call(request) -> StatusOr<Response>`.
template <typename Request, typename Response, typename Call>
auto Unary(Call call) {
  return [call](const Caller&, absl::string_view body, JsonReply* out) -> absl::Status {
    Request request;
    if (absl::Status s = ParseJson(body, &request); !s.ok()) return s;
    absl::StatusOr<Response> response = call(request);
    if (!response.ok()) return response.status();
    PrintJson(*response, &out->body);
    return absl::OkStatus();
  };
}

}  // namespace

JsonApi::JsonApi(CollectorCore* core) : core_(core) {
  auto add = [this](const char* method, Handler handler) {
    order_.push_back(method);
    handlers_.emplace(method, std::move(handler));
    core_->AddMethod(Transport::kHttp, method);
  };
  // A core method as a handler of a unary call.
#define DENIABLE_UNARY(Service, Method, Request, Response) \
  add("deniable.v1." #Service "/" #Method,                 \
      Unary<v1::Request, v1::Response>(                    \
          [core](const v1::Request& request) { return core->Method(request); }))
  DENIABLE_UNARY(ReportService, GetDesign, GetDesignRequest, GetDesignResponse);
  add("deniable.v1.ReportService/SubmitReports",
      [this](const Caller& caller, absl::string_view body, JsonReply* out) {
        return SubmitReports(caller, body, out);
      });
  DENIABLE_UNARY(QueryService, CreateMetric, CreateMetricRequest, Metric);
  DENIABLE_UNARY(QueryService, ListMetrics, ListMetricsRequest, ListMetricsResponse);
  DENIABLE_UNARY(QueryService, AddDesignVersion, AddDesignVersionRequest, Metric);
  DENIABLE_UNARY(QueryService, DeleteMetric, DeleteMetricRequest, DeleteMetricResponse);
  DENIABLE_UNARY(QueryService, SetRetention, SetRetentionRequest, Metric);
  DENIABLE_UNARY(QueryService, GetPrevalence, GetPrevalenceRequest, Prevalence);
  DENIABLE_UNARY(QueryService, GetSeries, GetSeriesRequest, Series);
  DENIABLE_UNARY(QueryService, GetDifference, GetDifferenceRequest, Difference);
  DENIABLE_UNARY(QueryService, DescribeDesign, DescribeDesignRequest, DesignDescription);
  DENIABLE_UNARY(QueryService, PlanSurvey, PlanSurveyRequest, SurveyPlan);
  DENIABLE_UNARY(QueryService, GetTopValues, GetTopValuesRequest, TopValues);
  DENIABLE_UNARY(QueryService, GetFrequencies, GetFrequenciesRequest, TopValues);
#undef DENIABLE_UNARY
  add("deniable.v1.AdminService/GetServerStats",
      Unary<v1::GetServerStatsRequest, v1::ServerStats>(
          [core](const v1::GetServerStatsRequest&) -> absl::StatusOr<v1::ServerStats> {
            return core->GetServerStats();
          }));
}

absl::Status JsonApi::SubmitReports(const Caller& caller, absl::string_view body,
                                    JsonReply* out) const {
  v1::SubmitReportsRequest request;
  if (absl::Status parsed = ParseJson(body, &request); !parsed.ok()) {
    core_->RejectBatch(Transport::kHttp, parsed, request.reports_size(), /*rate_limited=*/false);
    return parsed;
  }
  out->reports = request.reports_size();
  // The same path as the gRPC handler: the group committer answers after the commit.
  std::promise<absl::StatusOr<v1::SubmitReportsResponse>> done;
  std::future<absl::StatusOr<v1::SubmitReportsResponse>> answer = done.get_future();
  core_->SubmitReports(Transport::kHttp, caller, request,
                       [&done](absl::StatusOr<v1::SubmitReportsResponse> result) {
                         done.set_value(std::move(result));
                       });
  absl::StatusOr<v1::SubmitReportsResponse> result = answer.get();
  if (!result.ok()) return result.status();
  PrintJson(*result, &out->body);
  return absl::OkStatus();
}

absl::StatusOr<Caller> JsonApi::Authorize(absl::string_view method, absl::string_view authorization,
                                          absl::string_view peer,
                                          std::optional<absl::string_view> import_header) const {
  if (!handlers_.contains(method)) {
    return absl::NotFoundError(absl::StrCat(
        "method: no method \"", ClipText(method, kMaxEchoBytes),
        "\"; POST /v1/<Service>/<Method>, for example /v1/QueryService/GetPrevalence"));
  }
  return core_->Authorize(method, authorization, peer, import_header);
}

JsonReply JsonApi::Run(absl::string_view method, const Caller& caller, absl::string_view body,
                       absl::Time arrival) const {
  const absl::Time start = arrival == absl::InfinitePast() ? absl::Now() : arrival;
  JsonReply reply;
  auto it = handlers_.find(method);
  // Part of the entry Authorize opened: the call enters the core once.
  const absl::Status status = core_->ContinueCall([&] {
    absl::Status s = it == handlers_.end()
                         ? absl::NotFoundError("method: not served")  // Authorize checked
                         : ForClient(it->second(caller, body, &reply));
    core_->RecordCall(Transport::kHttp, it == handlers_.end() ? "unknown" : method, s.code(),
                      absl::Now() - start);
    return s;
  });
  reply.code = status.code();
  if (!status.ok()) {
    reply.http_status = HttpStatusFor(status.code());
    reply.body = ErrorBody(status);
  }
  return reply;
}

JsonReply JsonApi::Refuse(absl::string_view method, const absl::Status& status, int http_status,
                          absl::Time arrival) const {
  const bool served = handlers_.contains(method);
  core_->ContinueCall([&] {  // part of the entry Authorize opened, as in Run
    if (method == "deniable.v1.ReportService/SubmitReports") {
      // As the gRPC guard: a refused batch is logged and counted (its size is not parsed).
      core_->RejectBatch(Transport::kHttp, status, 0, /*rate_limited=*/false);
    }
    core_->RecordCall(
        Transport::kHttp, served ? method : "unknown", status.code(),
        arrival == absl::InfinitePast() ? absl::ZeroDuration() : absl::Now() - arrival);
  });
  JsonReply reply;
  reply.code = status.code();
  reply.http_status = http_status != 0 ? http_status : HttpStatusFor(status.code());
  reply.body = ErrorBody(status, reply.http_status);
  return reply;
}

JsonReply JsonApi::Call(absl::string_view method, absl::string_view body,
                        absl::string_view authorization, absl::string_view peer,
                        std::optional<absl::string_view> import_header) const {
  absl::StatusOr<Caller> caller = Authorize(method, authorization, peer, import_header);
  JsonReply reply = caller.ok() ? Run(method, *caller, body) : Refuse(method, caller.status());
  reply.import = import_header.has_value() && IsReportMethod(method);
  return reply;
}

std::vector<std::string> JsonApi::Methods() const { return order_; }

}  // namespace deniable::server::http
