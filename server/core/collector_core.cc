#include "server/core/collector_core.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deniable/common/design.h"
#include "deniable/common/status_macros.h"
#include "server/storage/storage_error.h"

namespace deniable::server {
namespace {

// The field the HTTP side's log lines carry after their event name (the gRPC side's carry none).
const char* TransportField(Transport transport) {
  return transport == Transport::kHttp ? " transport=http" : "";
}

// Warns in the log when an analyst created a design with no privacy (allow_no_privacy).
void WarnIfNoPrivacy(const v1::Metric& metric) {
  if (RevealsEveryAnswer(Channel{metric.design().a(), metric.design().b()})) {
    spdlog::warn(
        "event=design_without_privacy metric={} design_version={} warning=\"every report reveals "
        "its true answer\"",
        metric.name(), metric.design().version());
  }
}

// One line per batch with rejected reports: how many, and the first reason (bounded by
// EchoValue, never a bit).
void LogRejections(Transport transport, const v1::SubmitReportsResponse& response) {
  if (response.rejections_size() == 0) return;
  spdlog::warn(
      "event=reports_rejected{} rejected={} accepted={} first_index={} first_code={} "
      "first_reason=\"{}\"",
      TransportField(transport), response.rejections_size(), response.accepted(),
      response.rejections(0).index(),
      absl::StatusCodeToString(static_cast<absl::StatusCode>(response.rejections(0).code())),
      response.rejections(0).reason());
}

}  // namespace

thread_local int CollectorCore::Entry::depth_ = 0;

bool StreamLimits::TryOpen() {
  const int open = open_.fetch_add(1, std::memory_order_relaxed) + 1;
  if (max_streams_ > 0 && open > max_streams_) {
    open_.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  return true;
}

const char* TransportName(Transport transport) {
  return transport == Transport::kHttp ? "http" : "grpc";
}

ReportCall ReportCallOf(const Caller& caller) {
  ReportCall call;
  if (caller.import) call.origin = ReportOrigin::kImport;
  // The token keys the limit on first-in-window reports (Ingestor) and an import's log line.
  if (caller.principal.has_value()) call.token_id = caller.principal->token_id;
  return call;
}

void LogImport(Transport transport, absl::string_view method, const ReportCall& call,
               const v1::SubmitReportsResponse& response) {
  spdlog::info(
      "event=historical_import{} method={} token_id={} accepted={} duplicates={} rejected={}",
      TransportField(transport), std::string(method), call.token_id, response.accepted(),
      response.duplicates(), response.rejections_size() + response.rejections_omitted());
}

CollectorCore::CollectorCore(std::unique_ptr<Storage> storage, const Clock* clock,
                             const CoreOptions& options)
    : storage_(std::move(storage)),
      clock_(clock),
      dedup_window_(options.ingest.max_report_age),
      registry_(storage_.get(), clock, options.metric_cache_age, options.heavy_hitters_salt),
      ingestor_(&registry_, storage_.get(), clock, options.ingest),
      prevalence_(&registry_, storage_.get(), options.query),
      heavy_hitters_(&registry_, storage_.get()),
      advisor_(&registry_),
      authenticator_(options.authenticator),
      limiter_(options.rate_limit, clock),
      policy_(authenticator_.get(), &limiter_),
      counters_(absl::ToUnixSeconds(clock->Now()), options.metrics_registry) {
  ingestor_.set_outcome_sink(&counters_);
}

absl::StatusOr<Caller> CollectorCore::Authorize(absl::string_view method,
                                                absl::string_view authorization,
                                                absl::string_view peer,
                                                std::optional<absl::string_view> import_header) {
  const Entry entry(this);
  return policy_.Authorize(method, authorization, peer, import_header);
}

absl::Status CollectorCore::AdmitReports(const Caller& caller, int64_t reports) {
  return policy_.AdmitReports(caller, reports);
}

absl::StatusOr<v1::GetDesignResponse> CollectorCore::GetDesign(
    const v1::GetDesignRequest& request) {
  const Entry entry(this);
  return DesignForDevice(registry_, request.metric());
}

void CollectorCore::SubmitReports(Transport transport, absl::string_view method,
                                  const CallCredentials& credentials,
                                  const v1::SubmitReportsRequest& request, SubmitDone done) {
  const Entry entry(this);
  absl::StatusOr<Caller> caller =
      Authorize(method, credentials.authorization, credentials.peer, credentials.import_header);
  if (!caller.ok()) {
    RejectBatch(transport, caller.status(), request.reports_size(), /*rate_limited=*/false);
    done(caller.status());
    return;
  }
  SubmitReports(transport, *caller, request, std::move(done));
}

void CollectorCore::SubmitReports(Transport transport, const Caller& caller,
                                  const v1::SubmitReportsRequest& request, SubmitDone done) {
  const Entry entry(this);
  if (absl::Status admitted = AdmitReports(caller, request.reports_size()); !admitted.ok()) {
    RejectBatch(transport, admitted, request.reports_size(), /*rate_limited=*/true);
    done(admitted);
    return;
  }
  SubmitAdmitted(transport, ReportCallOf(caller), request, std::move(done));
}

void CollectorCore::SubmitAdmitted(Transport transport, const ReportCall& call,
                                   const v1::SubmitReportsRequest& request, SubmitDone done) {
  const int64_t size = request.reports_size();
  ingestor_.SubmitAsync(request, call.origin, call.token_id,
                        [this, transport, call, size,
                         done = std::move(done)](absl::StatusOr<v1::SubmitReportsResponse> result) {
                          if (!result.ok()) {
                            RejectBatch(transport, result.status(), size, /*rate_limited=*/false);
                          } else {
                            LogRejections(transport, *result);
                            if (call.origin == ReportOrigin::kImport) {
                              LogImport(transport, "SubmitReports", call, *result);
                            }
                            counters_.RecordAccepted(*result);
                          }
                          done(std::move(result));
                        });
}

void CollectorCore::RejectBatch(Transport transport, const absl::Status& status, int64_t reports,
                                bool rate_limited) {
  const Entry entry(this);
  // The reason names a field and value, never a bit; no peer address is logged.
  spdlog::warn("event=batch_rejected{} reports={} code={} reason=\"{}\"", TransportField(transport),
               reports, absl::StatusCodeToString(status.code()), std::string(status.message()));
  counters_.RecordRejected(ClientVisibleStatus(status).code(), reports, rate_limited);
}

CollectorCore::Stream::Stream(CollectorCore* core, const Caller& caller, std::string method,
                              const CallCredentials& credentials, StreamLimits* limits)
    : core_(core),
      caller_(caller),
      call_(ReportCallOf(caller)),
      method_(std::move(method)),
      authorization_(credentials.authorization),
      peer_(credentials.peer),
      import_header_(credentials.import_header.has_value()
                         ? std::optional<std::string>(*credentials.import_header)
                         : std::nullopt),
      limits_(limits),
      stream_(&core->ingestor_, ReportStream::kMaxListedRejections, call_.origin, call_.token_id) {
  core_->counters_.RecordOpenStreams(1);
}

CollectorCore::Stream::~Stream() {
  core_->counters_.RecordOpenStreams(-1);
  if (limits_ != nullptr) limits_->Close();
}

absl::Status CollectorCore::Stream::Add(const v1::SubmitReportsRequest& message) {
  const Entry entry(core_);
  const int64_t reports = message.reports_size();
  if (caller_.principal.has_value()) {
    absl::StatusOr<Caller> still = core_->Authorize(method_, authorization_, peer_, import_header_);
    if (!still.ok()) {
      core_->RejectBatch(Transport::kGrpc, still.status(), reports, /*rate_limited=*/false);
      return still.status();
    }
  }
  if (absl::Status admitted = core_->AdmitReports(caller_, reports); !admitted.ok()) {
    core_->RejectBatch(Transport::kGrpc, admitted, reports, /*rate_limited=*/true);
    return admitted;
  }
  absl::Status added = stream_.Add(message);
  if (!added.ok()) LogRejected(added);
  return added;
}

int64_t CollectorCore::Stream::flush_reports() const {
  return core_->ingestor_.options().stream_flush_reports;
}

void CollectorCore::Stream::Flush(ReportStream::FlushCallback done) {
  stream_.Flush([this, done = std::move(done)](absl::Status stored) mutable {
    if (!stored.ok()) LogRejected(stored);
    std::move(done)(std::move(stored));  // may end the stream: nothing of this after it
  });
}

absl::StatusOr<v1::SubmitReportsResponse> CollectorCore::Stream::Finish() {
  absl::StatusOr<v1::SubmitReportsResponse> totals = stream_.Totals();
  if (!totals.ok()) {
    LogRejected(totals.status());
    return totals;
  }
  if (totals->rejections_size() > 0) {
    spdlog::warn(
        "event=stream_reports_rejected rejected={} accepted={} first_index={} first_code={} "
        "first_reason=\"{}\"",
        totals->rejections_size() + totals->rejections_omitted(), totals->accepted(),
        totals->rejections(0).index(),
        absl::StatusCodeToString(static_cast<absl::StatusCode>(totals->rejections(0).code())),
        totals->rejections(0).reason());
  }
  if (call_.origin == ReportOrigin::kImport) {
    LogImport(Transport::kGrpc, "StreamReports", call_, *totals);
  }
  core_->counters_.RecordAccepted(*totals);
  return totals;
}

void CollectorCore::Stream::LogRejected(const absl::Status& status) {
  spdlog::warn("event=stream_rejected code={} reason=\"{}\"",
               absl::StatusCodeToString(status.code()), std::string(status.message()));
  core_->counters_.RecordRejected(ClientVisibleStatus(status).code(), 0, false);
}

absl::StatusOr<std::unique_ptr<CollectorCore::Stream>> CollectorCore::OpenStream(
    absl::string_view method, const CallCredentials& credentials, StreamLimits* limits) {
  const Entry entry(this);
  absl::StatusOr<Caller> caller =
      Authorize(method, credentials.authorization, credentials.peer, credentials.import_header);
  if (!caller.ok()) {
    RejectBatch(Transport::kGrpc, caller.status(), 0, /*rate_limited=*/false);
    return caller.status();
  }
  if (!limits->TryOpen()) return ShedStream(limits->max_streams(), limits->open_streams());
  return std::make_unique<Stream>(this, *caller, std::string(method), credentials, limits);
}

absl::Status CollectorCore::ShedStream(int max_streams, int open_streams) {
  spdlog::warn("event=stream_shed open_streams={} code=RESOURCE_EXHAUSTED", open_streams);
  counters_.RecordStreamShed();
  counters_.RecordRejected(absl::StatusCode::kResourceExhausted, 0, false);
  return absl::ResourceExhaustedError(
      absl::StrCat("reports: too many open streams (the server's limit is ", max_streams,
                   "); retry later or use SubmitReports"));
}

absl::StatusOr<v1::Metric> CollectorCore::CreateMetric(const v1::CreateMetricRequest& request) {
  const Entry entry(this);
  absl::StatusOr<v1::Metric> metric = registry_.Create(request);
  if (!metric.ok()) return metric;
  spdlog::info("event=metric_created metric={} design_version={} epsilon={}", metric->name(),
               metric->design().version(), metric->design().epsilon());
  WarnIfNoPrivacy(*metric);
  return metric;
}

absl::StatusOr<v1::ListMetricsResponse> CollectorCore::ListMetrics(
    const v1::ListMetricsRequest& /*request*/) {
  const Entry entry(this);
  DENIABLE_ASSIGN_OR_RETURN(std::vector<v1::Metric> metrics, registry_.List());
  v1::ListMetricsResponse response;
  for (v1::Metric& m : metrics) *response.add_metrics() = std::move(m);
  return response;
}

absl::StatusOr<v1::ListAlertsResponse> CollectorCore::ListAlerts(
    const v1::ListAlertsRequest& /*request*/) {
  std::function<v1::ListAlertsResponse()> source;
  {
    absl::MutexLock lock(&alerts_mu_);
    source = alerts_;
  }
  if (source == nullptr) {
    return absl::NotFoundError(
        "alert_rules: this server runs without --alert_rules, so it has no alerts "
        "(docs/alerts.md)");
  }
  return source();
}

void CollectorCore::SetAlertSource(std::function<v1::ListAlertsResponse()> source) {
  absl::MutexLock lock(&alerts_mu_);
  alerts_ = std::move(source);
}

absl::StatusOr<v1::Metric> CollectorCore::AddDesignVersion(
    const v1::AddDesignVersionRequest& request) {
  const Entry entry(this);
  absl::StatusOr<v1::Metric> metric = registry_.AddVersion(request);
  if (!metric.ok()) return metric;
  spdlog::info("event=design_version_added metric={} design_version={} epsilon={}", metric->name(),
               metric->design().version(), metric->design().epsilon());
  WarnIfNoPrivacy(*metric);
  return metric;
}

absl::StatusOr<v1::DeleteMetricResponse> CollectorCore::DeleteMetric(
    const v1::DeleteMetricRequest& request) {
  const Entry entry(this);
  DENIABLE_RETURN_IF_ERROR(registry_.Delete(request.metric()));
  spdlog::warn("event=metric_deleted metric={}", request.metric());
  return v1::DeleteMetricResponse();
}

absl::StatusOr<v1::Metric> CollectorCore::SetRetention(const v1::SetRetentionRequest& request) {
  const Entry entry(this);
  absl::StatusOr<v1::Metric> metric = registry_.SetRetention(request);
  if (!metric.ok()) return metric;
  spdlog::warn("event=retention_set metric={} retention_days={} retention_policy={}",
               metric->name(), metric->retention_days(),
               v1::RetentionPolicy_Name(metric->retention_policy()));
  return metric;
}

absl::StatusOr<v1::Prevalence> CollectorCore::GetPrevalence(
    const v1::GetPrevalenceRequest& request) {
  const Entry entry(this);
  return prevalence_.Get(request);
}

absl::StatusOr<v1::Series> CollectorCore::GetSeries(const v1::GetSeriesRequest& request) {
  const Entry entry(this);
  return prevalence_.Series(request);
}

absl::StatusOr<v1::Difference> CollectorCore::GetDifference(
    const v1::GetDifferenceRequest& request) {
  const Entry entry(this);
  return prevalence_.Difference(request);
}

absl::StatusOr<v1::DesignDescription> CollectorCore::DescribeDesign(
    const v1::DescribeDesignRequest& request) {
  const Entry entry(this);
  return advisor_.Describe(request);
}

absl::StatusOr<v1::SurveyPlan> CollectorCore::PlanSurvey(const v1::PlanSurveyRequest& request) {
  const Entry entry(this);
  return advisor_.Plan(request);
}

absl::StatusOr<v1::TopValues> CollectorCore::GetTopValues(const v1::GetTopValuesRequest& request) {
  const Entry entry(this);
  return heavy_hitters_.Top(request);
}

absl::StatusOr<v1::TopValues> CollectorCore::GetFrequencies(
    const v1::GetFrequenciesRequest& request) {
  const Entry entry(this);
  return heavy_hitters_.Frequencies(request);
}

void CollectorCore::AddMethod(Transport transport, absl::string_view method) {
  counters_.AddMethod(TransportName(transport), method);
}

void CollectorCore::RecordCall(Transport transport, absl::string_view method, absl::StatusCode code,
                               absl::Duration duration) {
  counters_.RecordCall(TransportName(transport), method, code, duration);
}

absl::Status CollectorCore::AddMetricSeries() {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<v1::Metric> metrics, registry_.List());
  for (const v1::Metric& metric : metrics) counters_.AddMetric(metric.name());
  return absl::OkStatus();
}

absl::StatusOr<RetentionResult> CollectorCore::ApplyRetention() {
  RetentionOptions options;
  options.now_seconds = absl::ToUnixSeconds(clock_->Now());
  options.dedup_window_seconds = absl::ToInt64Seconds(dedup_window_);
  absl::StatusOr<RetentionResult> result = storage_->ApplyRetention(options);
  if (!result.ok()) {
    spdlog::error("event=retention_failed reason=\"{}\"", std::string(result.status().message()));
    counters_.RecordRetentionFailed();
    return result;
  }
  counters_.RecordRetention(*result);
  if (result->reports_dropped > 0 || result->count_rows_dropped > 0 ||
      result->count_rows_folded > 0) {
    spdlog::info(
        "event=retention_applied reports_dropped={} count_rows_dropped={} partitions_dropped={} "
        "count_rows_folded={}",
        result->reports_dropped, result->count_rows_dropped, result->partitions_dropped,
        result->count_rows_folded);
  }
  return result;
}

}  // namespace deniable::server
