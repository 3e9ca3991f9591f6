#include "server/http/json_api.h"

#include <spdlog/spdlog.h>

#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "google/protobuf/util/json_util.h"
#include "server/core/echo.h"
#include "server/http/http_status.h"
#include "server/http/json_print.h"
#include "server/service/grpc_status.h"
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

JsonApi::JsonApi(JsonApiBackends backends) : backends_(backends) {
  auto add = [this](const char* method, Handler handler) {
    order_.push_back(method);
    handlers_.emplace(method, std::move(handler));
    if (backends_.counters != nullptr) backends_.counters->AddMethod("http", method);
  };
  MetricRegistry* registry = backends_.registry;
  PrevalenceQuery* prevalence = backends_.prevalence;
  DesignAdvisor* advisor = backends_.advisor;
  ServerCounters* counters = backends_.counters;

  add("deniable.v1.ReportService/GetDesign", Unary<v1::GetDesignRequest, v1::GetDesignResponse>(
                                                 [registry](const v1::GetDesignRequest& request) {
                                                   return DesignForDevice(*registry,
                                                                          request.metric());
                                                 }));
  add("deniable.v1.ReportService/SubmitReports",
      [this](const Caller& caller, absl::string_view body, JsonReply* out) {
        return SubmitReports(caller, body, out);
      });
  add("deniable.v1.QueryService/CreateMetric",
      Unary<v1::CreateMetricRequest, v1::Metric>([registry](const v1::CreateMetricRequest& r) {
        absl::StatusOr<v1::Metric> metric = registry->Create(r);
        if (metric.ok()) {
          spdlog::info("event=metric_created metric={} design_version={} epsilon={}",
                       metric->name(), metric->design().version(), metric->design().epsilon());
        }
        return metric;
      }));
  add("deniable.v1.QueryService/ListMetrics",
      Unary<v1::ListMetricsRequest, v1::ListMetricsResponse>(
          [registry](const v1::ListMetricsRequest&) -> absl::StatusOr<v1::ListMetricsResponse> {
            absl::StatusOr<std::vector<v1::Metric>> metrics = registry->List();
            if (!metrics.ok()) return metrics.status();
            v1::ListMetricsResponse response;
            for (v1::Metric& m : *metrics) *response.add_metrics() = std::move(m);
            return response;
          }));
  add("deniable.v1.QueryService/AddDesignVersion",
      Unary<v1::AddDesignVersionRequest, v1::Metric>(
          [registry](const v1::AddDesignVersionRequest& r) {
            absl::StatusOr<v1::Metric> metric = registry->AddVersion(r);
            if (metric.ok()) {
              spdlog::info("event=design_version_added metric={} design_version={} epsilon={}",
                           metric->name(), metric->design().version(), metric->design().epsilon());
            }
            return metric;
          }));
  add("deniable.v1.QueryService/DeleteMetric",
      Unary<v1::DeleteMetricRequest, v1::DeleteMetricResponse>(
          [registry](const v1::DeleteMetricRequest& r) -> absl::StatusOr<v1::DeleteMetricResponse> {
            const absl::Status status = registry->Delete(r.metric());
            if (!status.ok()) return status;
            spdlog::warn("event=metric_deleted metric={}", r.metric());
            return v1::DeleteMetricResponse();
          }));
  add("deniable.v1.QueryService/SetRetention",
      Unary<v1::SetRetentionRequest, v1::Metric>([registry](const v1::SetRetentionRequest& r) {
        absl::StatusOr<v1::Metric> metric = registry->SetRetention(r);
        if (metric.ok()) {
          spdlog::warn("event=retention_set metric={} retention_days={} retention_policy={}",
                       metric->name(), metric->retention_days(),
                       v1::RetentionPolicy_Name(metric->retention_policy()));
        }
        return metric;
      }));
  add("deniable.v1.QueryService/GetPrevalence",
      Unary<v1::GetPrevalenceRequest, v1::Prevalence>(
          [prevalence](const v1::GetPrevalenceRequest& r) { return prevalence->Get(r); }));
  add("deniable.v1.QueryService/GetSeries",
      Unary<v1::GetSeriesRequest, v1::Series>(
          [prevalence](const v1::GetSeriesRequest& r) { return prevalence->Series(r); }));
  add("deniable.v1.QueryService/GetDifference",
      Unary<v1::GetDifferenceRequest, v1::Difference>(
          [prevalence](const v1::GetDifferenceRequest& r) { return prevalence->Difference(r); }));
  add("deniable.v1.QueryService/DescribeDesign",
      Unary<v1::DescribeDesignRequest, v1::DesignDescription>(
          [advisor](const v1::DescribeDesignRequest& r) { return advisor->Describe(r); }));
  add("deniable.v1.QueryService/PlanSurvey",
      Unary<v1::PlanSurveyRequest, v1::SurveyPlan>(
          [advisor](const v1::PlanSurveyRequest& r) { return advisor->Plan(r); }));
  add("deniable.v1.AdminService/GetServerStats",
      Unary<v1::GetServerStatsRequest, v1::ServerStats>(
          [counters](const v1::GetServerStatsRequest&) -> absl::StatusOr<v1::ServerStats> {
            if (counters == nullptr) return absl::UnavailableError("stats: no counters");
            return counters->Snapshot();
          }));
}

absl::Status JsonApi::SubmitReports(const Caller& caller, absl::string_view body,
                                    JsonReply* out) const {
  v1::SubmitReportsRequest request;
  absl::Status status = ParseJson(body, &request);
  if (status.ok()) out->reports = request.reports_size();
  bool rate_limited = false;
  if (status.ok()) {
    status = backends_.policy->AdmitReports(caller, request.reports_size());
    rate_limited = !status.ok();
  }
  absl::StatusOr<v1::SubmitReportsResponse> result = absl::UnknownError("not submitted");
  if (!status.ok()) {
    result = status;
  } else {
    // The same path as the gRPC handler: the group committer answers after the commit.
    std::promise<absl::StatusOr<v1::SubmitReportsResponse>> done;
    std::future<absl::StatusOr<v1::SubmitReportsResponse>> answer = done.get_future();
    backends_.ingestor->SubmitAsync(request,
                                    caller.import ? ReportOrigin::kImport : ReportOrigin::kDevice,
                                    [&done](absl::StatusOr<v1::SubmitReportsResponse> r) mutable {
                                      done.set_value(std::move(r));
                                    });
    result = answer.get();
  }
  ServerCounters* counters = backends_.counters;
  if (!result.ok()) {
    // The reason names a field and value, never a bit; no peer address is logged.
    spdlog::warn("event=batch_rejected transport=http reports={} code={} reason=\"{}\"",
                 request.reports_size(), absl::StatusCodeToString(result.status().code()),
                 std::string(result.status().message()));
    if (counters != nullptr) {
      counters->RecordRejected(
          static_cast<grpc::StatusCode>(ClientVisibleStatus(result.status()).code()),
          request.reports_size(), rate_limited);
    }
    return result.status();
  }
  if (caller.import) {
    spdlog::info(
        "event=historical_import transport=http method=SubmitReports token_id={} accepted={} "
        "duplicates={} rejected={}",
        caller.principal.has_value() ? caller.principal->token_id : 0, result->accepted(),
        result->duplicates(), result->rejections_size());
  }
  if (counters != nullptr) counters->RecordAccepted(*result);
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
  return backends_.policy->Authorize(method, authorization, peer, import_header);
}

JsonReply JsonApi::Run(absl::string_view method, const Caller& caller, absl::string_view body,
                       absl::Time arrival) const {
  const absl::Time start = arrival == absl::InfinitePast() ? absl::Now() : arrival;
  JsonReply reply;
  auto it = handlers_.find(method);
  absl::Status status = it == handlers_.end()
                            ? absl::NotFoundError("method: not served")  // Authorize checked
                            : ForClient(it->second(caller, body, &reply));
  if (backends_.counters != nullptr) {
    backends_.counters->RecordCall("http", it == handlers_.end() ? "unknown" : method,
                                   status.code(), absl::Now() - start);
  }
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
  if (method == "deniable.v1.ReportService/SubmitReports") {
    // As the gRPC guard: a refused batch is logged and counted (its size is not parsed).
    spdlog::warn("event=batch_rejected transport=http reports=0 code={} reason=\"{}\"",
                 absl::StatusCodeToString(status.code()), std::string(status.message()));
    if (backends_.counters != nullptr) {
      backends_.counters->RecordRejected(static_cast<grpc::StatusCode>(status.code()), 0, false);
    }
  }
  if (backends_.counters != nullptr) {
    backends_.counters->RecordCall(
        "http", served ? method : "unknown", status.code(),
        arrival == absl::InfinitePast() ? absl::ZeroDuration() : absl::Now() - arrival);
  }
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
