// The collector's core under both front ends (tensorflow/serving's ServerCore): it owns the
// storage, the metric registry, the ingestor, the queries, the design advisor, the access policy
// (tokens, roles, rate limit) and the counters, and it is the one place that writes the audit log
// lines (metric_created, design_version_added, metric_deleted, retention_set,
// design_without_privacy, historical_import) and accounts for report batches (batch_rejected,
// reports_rejected; ServerCounters::RecordRejected / RecordAccepted) and report streams
// (CollectorCore::Stream: stream_rejected, stream_reports_rejected, stream_shed, the open-streams
// gauge). The gRPC services (report_service.h, query_service.h, and the stream reactor,
// report_stream_reactor.h, which only reads and flushes) and the HTTP/JSON API
// (server/http/json_api.h) only translate: they parse their transport's request, call one
// method here and write its answer.
//
// One entry per call: a gRPC handler passes the caller's CallCredentials with its request and
// the core runs the checks (token, role, rate limit, stream shedding) and the call together --
// Call, SubmitReports, OpenStream, Stream::Add; entries() counts the calls into the core, which
// tests read. The HTTP listener authorizes from the headers before it reads the body (Authorize,
// the call's entry), then makes the call with the Caller it got inside ContinueCall.
//
// Its interface speaks absl::Status and the deniable.v1 messages, never a transport's types;
// `Transport` names the front end in log lines and counters only.
//
// Example (what CollectorServer does):
//   CollectorCore core(std::make_unique<MemoryStorage>(), &clock, {.ingest = {}, .query = {}});
//   absl::StatusOr<v1::Metric> metric = core.CreateMetric(request);  // logged once, here
//
// Thread-safe. Owns the storage; does not own the clock, which must outlive it.
#ifndef DENIABLE_SERVER_CORE_COLLECTOR_CORE_H_
#define DENIABLE_SERVER_CORE_COLLECTOR_CORE_H_

#include <prometheus/registry.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "server/auth/access_policy.h"
#include "server/auth/authenticator.h"
#include "server/auth/rate_limiter.h"
#include "server/core/design_advisor.h"
#include "server/core/heavy_hitters_query.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/core/report_stream.h"
#include "server/core/server_counters.h"
#include "server/storage/storage.h"

namespace deniable::server {

// The front end a call came through: the `transport` label of the call counters, and a
// "transport=http" field in the HTTP side's log lines (the gRPC side's lines have none).
enum class Transport { kGrpc, kHttp };

// "grpc" or "http".
const char* TransportName(Transport transport);

// Who sent a report call: a device (the default) or an analyst's historical import admitted by
// AccessPolicy, with the caller's token id (0 when tokenless): the key of the limit on
// first-in-window reports (Ingestor) and, for an import, the log line's token_id.
struct ReportCall {
  ReportOrigin origin = ReportOrigin::kDevice;
  int64_t token_id = 0;
};

// The report call an authorized caller makes (Caller::import makes it an import).
ReportCall ReportCallOf(const Caller& caller);

// Writes the log line of a historical import that committed (`event=historical_import`: method,
// token id, reports and their outcome; never a bit, label or address).
void LogImport(Transport transport, absl::string_view method, const ReportCall& call,
               const v1::SubmitReportsResponse& response);

// What a front end knows of its caller, from the transport's metadata or headers: the
// Authorization value ("" when absent), the peer's address in gRPC's form ("ipv4:1.2.3.4:5678";
// for the tokenless rate-limit key only, never stored) and the x-deniable-import value (nullopt
// when absent). The views are valid during the call that passes them.
struct CallCredentials {
  absl::string_view authorization;
  std::string peer;
  std::optional<absl::string_view> import_header;
};

// Bounds on what the open StreamReports calls hold, shared by all streams of a server:
//   - at most `max_streams` streams are open at once; the next one is shed (OpenStream:
//     RESOURCE_EXHAUSTED "reports: too many open streams") before anything is read;
//   - at most `max_buffered_rows` validated rows are held (buffered or being stored) by all
//     streams together: a stream whose message takes the total over it reads on only once its
//     flush in progress has committed (report_stream_reactor.h).
// Thread-safe (atomics).
class StreamLimits {
 public:
  // `max_streams`: StreamReports calls open at once (0: no limit). `max_buffered_rows`: rows
  // buffered by all streams before a stream stores early (0: only stream_flush_reports applies).
  StreamLimits(int max_streams, int64_t max_buffered_rows)
      : max_streams_(max_streams), max_buffered_rows_(max_buffered_rows) {}

  // Takes a slot for a new stream; false (nothing taken) when max_streams are open.
  bool TryOpen();
  // Gives back a slot taken by TryOpen.
  void Close() { open_.fetch_sub(1, std::memory_order_relaxed); }
  // Rows entering (`rows` > 0) or leaving (< 0) the streams' buffers.
  void AddBuffered(int64_t rows) { buffered_.fetch_add(rows, std::memory_order_relaxed); }
  // Whether the buffers of all streams together hold more than max_buffered_rows.
  bool BuffersFull() const {
    return max_buffered_rows_ > 0 && buffered_.load(std::memory_order_relaxed) > max_buffered_rows_;
  }

  // A stream stopped reading (its flush is in progress and its or all streams' buffers are
  // full). read_pauses() counts them since start: the event tests wait for, instead of
  // watching for a read that does not come.
  void NoteReadPaused() { read_pauses_.fetch_add(1, std::memory_order_relaxed); }
  int64_t read_pauses() const { return read_pauses_.load(std::memory_order_relaxed); }

  int max_streams() const { return max_streams_; }
  int open_streams() const { return open_.load(std::memory_order_relaxed); }
  int64_t buffered_rows() const { return buffered_.load(std::memory_order_relaxed); }

 private:
  const int max_streams_;
  const int64_t max_buffered_rows_;
  std::atomic<int> open_{0};
  std::atomic<int64_t> buffered_{0};
  std::atomic<int64_t> read_pauses_{0};
};

struct CoreOptions {
  IngestOptions ingest;
  QueryOptions query;
  // Bearer-token check; null: tokenless (every call passes; for local development only).
  std::shared_ptr<Authenticator> authenticator;
  // Per-token (tokenless: per salted peer hash) limit on reports; off by default.
  RateLimitOptions rate_limit;
  // See ServerOptions::metric_cache_age.
  absl::Duration metric_cache_age = absl::InfiniteDuration();
  // See ServerOptions::heavy_hitters_salt.
  uint64_t heavy_hitters_salt = 0;
  // Where the counters register their Prometheus metrics; null: a registry of their own.
  std::shared_ptr<prometheus::Registry> metrics_registry;
};

class CollectorCore {
 public:
  CollectorCore(std::unique_ptr<Storage> storage, const Clock* clock, const CoreOptions& options);
  CollectorCore(const CollectorCore&) = delete;
  CollectorCore& operator=(const CollectorCore&) = delete;

  // Access: see AccessPolicy::Authorize (UNAUTHENTICATED, PERMISSION_DENIED, INVALID_ARGUMENT
  // "x-deniable-import: ..."). Counts nothing; a refused report batch goes to RejectBatch. For
  // a front end that checks its caller before it has the request (the HTTP listener, from the
  // headers); the gRPC services pass CallCredentials to the calls below instead. This is the
  // call's entry: what the front end then does for the same call goes through ContinueCall.
  absl::StatusOr<Caller> Authorize(absl::string_view method, absl::string_view authorization,
                                   absl::string_view peer,
                                   std::optional<absl::string_view> import_header);

  // The rest of a call that Authorize opened (the HTTP listener: the body has arrived, or the
  // call is refused after its headers): runs `rest` (which calls the core's methods below for
  // that call: the query, SubmitReports for the Caller, RejectBatch, RecordCall) as part of
  // Authorize's entry, so an HTTP call enters the core once, as a gRPC call does. Returns what
  // `rest` returns. Thread-safe; `rest` runs on the calling thread, before this returns.
  template <typename F>
  decltype(auto) ContinueCall(F&& rest) {
    const Continuation continuation;
    return std::forward<F>(rest)();
  }

  // A unary call in one entry: authorizes `credentials` for `method` (the full name,
  // "deniable.v1.QueryService/GetPrevalence"), then runs `run` (one of the core's methods
  // below) on `request`. Errors: Authorize's, then `run`'s. Example:
  //   core.Call("deniable.v1.QueryService/GetPrevalence", credentials, request,
  //             &CollectorCore::GetPrevalence);
  template <typename Request, typename Response>
  absl::StatusOr<Response> Call(absl::string_view method, const CallCredentials& credentials,
                                const Request& request,
                                absl::StatusOr<Response> (CollectorCore::*run)(const Request&)) {
    const Entry entry(this);
    absl::StatusOr<Caller> caller =
        Authorize(method, credentials.authorization, credentials.peer, credentials.import_header);
    if (!caller.ok()) return caller.status();
    return (this->*run)(request);
  }

  // ReportService.GetDesign (DesignForDevice).
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const v1::GetDesignRequest& request);

  using SubmitDone = std::function<void(absl::StatusOr<v1::SubmitReportsResponse>)>;
  // ReportService.SubmitReports in one entry: authorizes `credentials` for `method` (a refusal:
  // RejectBatch-ed, then `done` with Authorize's error), then SubmitReports for that caller.
  void SubmitReports(Transport transport, absl::string_view method,
                     const CallCredentials& credentials, const v1::SubmitReportsRequest& request,
                     SubmitDone done);
  // ReportService.SubmitReports for an authorized caller: takes the batch from the caller's rate
  // limit (a refusal: RESOURCE_EXHAUSTED, counted as rate-limited), then SubmitAdmitted.
  void SubmitReports(Transport transport, const Caller& caller,
                     const v1::SubmitReportsRequest& request, SubmitDone done);
  // StreamReports: the core's side of one stream. The transport's reactor reads and admits the
  // messages and decides when to flush; this validates, buffers and stores them (ReportStream)
  // and writes every log line and counter of the stream: the open-streams gauge (+1 while it
  // lives), event=stream_rejected and a rejected batch for a message refused whole or a failed
  // store, and at the end event=stream_reports_rejected, an import's line (LogImport) and the
  // accepted reports (RecordAccepted). Thread-safe as ReportStream is (one Flush at a time).
  class Stream {
   public:
    // `limits`: the slot this stream holds (given back when it is destroyed); null: none.
    Stream(CollectorCore* core, const Caller& caller, std::string method,
           const CallCredentials& credentials, StreamLimits* limits);
    ~Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // One message in one entry: the caller's checks again -- the token (a revocation, seen
    // within the authenticator's reload interval, ends the stream before its next message is
    // stored; tokenless streams skip it) and the rate limit for the message's reports -- then
    // ReportStream::Add. Errors: UNAUTHENTICATED / PERMISSION_DENIED, RESOURCE_EXHAUSTED
    // (RejectBatch-ed, the latter as rate-limited), else ReportStream::Add's (logged and counted
    // before it is returned).
    absl::Status Add(const v1::SubmitReportsRequest& message);
    int64_t pending_rows() const { return stream_.pending_rows(); }
    int64_t held_rows() const { return stream_.held_rows(); }
    // IngestOptions::stream_flush_reports: the rows a stream buffers while a flush is in
    // progress before it stops reading.
    int64_t flush_reports() const;
    // ReportStream::Flush; a storage error is logged and counted before `done` runs with it.
    // REQUIRES: no other Flush in progress.
    void Flush(ReportStream::FlushCallback done);
    // After the last flush has committed: the stream's totals (ReportStream::Totals), logged and
    // counted as above. Errors: Totals's (logged and counted).
    absl::StatusOr<v1::SubmitReportsResponse> Finish();

   private:
    // event=stream_rejected and ServerCounters::RecordRejected with the code a client sees.
    void LogRejected(const absl::Status& status);

    CollectorCore* const core_;
    const Caller caller_;
    const ReportCall call_;
    // The credentials the stream was opened with, for the check of each message.
    const std::string method_;
    const std::string authorization_;
    const std::string peer_;
    const std::optional<std::string> import_header_;
    StreamLimits* const limits_;
    ReportStream stream_;
  };
  // ReportService.StreamReports in one entry: authorizes `credentials` for `method` (a refusal is
  // RejectBatch-ed and returned), then takes a slot of `limits` (none free: the stream is shed,
  // logged as event=stream_shed and counted in streams_shed_total and as a rejected batch;
  // RESOURCE_EXHAUSTED "reports: too many open streams"), then a new stream (never null), which
  // must not outlive the core or `limits`.
  absl::StatusOr<std::unique_ptr<Stream>> OpenStream(absl::string_view method,
                                                     const CallCredentials& credentials,
                                                     StreamLimits* limits);

  // Accounts for a report batch of `reports` refused whole (before or by the core): one
  // event=batch_rejected warning (reason and size, never a bit, token or address) and
  // ServerCounters::RecordRejected with the code a client sees.
  void RejectBatch(Transport transport, const absl::Status& status, int64_t reports,
                   bool rate_limited);

  // QueryService, each with its audit line where it changes something.
  absl::StatusOr<v1::Metric> CreateMetric(const v1::CreateMetricRequest& request);
  absl::StatusOr<v1::ListMetricsResponse> ListMetrics(const v1::ListMetricsRequest& request);
  absl::StatusOr<v1::Metric> AddDesignVersion(const v1::AddDesignVersionRequest& request);
  absl::StatusOr<v1::DeleteMetricResponse> DeleteMetric(const v1::DeleteMetricRequest& request);
  absl::StatusOr<v1::Metric> SetRetention(const v1::SetRetentionRequest& request);
  absl::StatusOr<v1::Prevalence> GetPrevalence(const v1::GetPrevalenceRequest& request);
  absl::StatusOr<v1::Series> GetSeries(const v1::GetSeriesRequest& request);
  absl::StatusOr<v1::Difference> GetDifference(const v1::GetDifferenceRequest& request);
  absl::StatusOr<v1::DesignDescription> DescribeDesign(const v1::DescribeDesignRequest& request);
  absl::StatusOr<v1::SurveyPlan> PlanSurvey(const v1::PlanSurveyRequest& request);
  absl::StatusOr<v1::TopValues> GetTopValues(const v1::GetTopValuesRequest& request);
  absl::StatusOr<v1::TopValues> GetFrequencies(const v1::GetFrequenciesRequest& request);
  // QueryService.ListAlerts: the states from the source set by SetAlertSource (docs/alerts.md).
  // Errors: NOT_FOUND naming "alert_rules" while no source is set (no --alert_rules).
  absl::StatusOr<v1::ListAlertsResponse> ListAlerts(const v1::ListAlertsRequest& request);
  // Where ListAlerts reads the alert states (the AlertMonitor's StatesProto); may be set while
  // calls are served (thread-safe). `source` must stay callable until the core is destroyed or
  // the source is replaced; null removes it.
  void SetAlertSource(std::function<v1::ListAlertsResponse()> source);
  // AdminService.GetServerStats: the counters.
  v1::ServerStats GetServerStats() const {
    const Entry entry(this);
    return counters_.Snapshot();
  }
  // The same, in the form Call takes. Never fails.
  absl::StatusOr<v1::ServerStats> GetServerStats(const v1::GetServerStatsRequest& /*request*/) {
    return GetServerStats();
  }

  // The calls made into the core since construction: each call of one of the methods above
  // from outside the core counts once, whatever it calls inside (a front end's request or
  // stream message should enter once). For tests.
  int64_t entries() const { return entries_.load(std::memory_order_relaxed); }

  // A front end's calls: `method` is the full name. AddMethod makes its series exist at 0.
  void AddMethod(Transport transport, absl::string_view method);
  void RecordCall(Transport transport, absl::string_view method, absl::StatusCode code,
                  absl::Duration duration);

  // Makes the per-metric Prometheus series exist, at 0, for every metric in storage (see
  // CollectorServer::AddMetricSeries). Errors: the storage's.
  absl::Status AddMetricSeries();
  // Applies retention now at the clock's now, keeping the dedup window; records the run
  // (retention_runs_total by outcome) and the dropped reports in the counters and logs
  // event=retention_applied when it dropped or folded anything (event=retention_failed when it
  // fails). Errors: the storage's.
  absl::StatusOr<RetentionResult> ApplyRetention();

  // The parts, for what is not a call (tests, /metrics).
  Storage* storage() { return storage_.get(); }
  MetricRegistry* registry() { return &registry_; }
  Ingestor* ingestor() { return &ingestor_; }
  AccessPolicy* policy() { return &policy_; }
  ServerCounters* counters() { return &counters_; }
  const ServerCounters& counters() const { return counters_; }

 private:
  class Continuation;
  // Marks a call into the core: counted in entries() unless this thread is already inside one.
  class Entry {
   public:
    explicit Entry(const CollectorCore* core) {
      if (depth_++ == 0) core->entries_.fetch_add(1, std::memory_order_relaxed);
    }
    ~Entry() { --depth_; }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

   private:
    friend class Continuation;
    static thread_local int depth_;
  };
  // Inside a call already counted (ContinueCall): the core's methods count no entry.
  class Continuation {
   public:
    Continuation() { ++Entry::depth_; }
    ~Continuation() { --Entry::depth_; }
    Continuation(const Continuation&) = delete;
    Continuation& operator=(const Continuation&) = delete;
  };

  // The caller's rate limit for `reports` (see AccessPolicy::AdmitReports); counts nothing.
  absl::Status AdmitReports(const Caller& caller, int64_t reports);
  // A stream refused because `open_streams` of at most `max_streams` are open (OpenStream).
  absl::Status ShedStream(int max_streams, int open_streams);
  // The batch (SubmitReports), admitted, to the ingestor; `done` runs once, after the commit (on
  // the group committer's thread) or at once for a batch refused whole. A refused batch is
  // RejectBatch-ed; an accepted one logs its rejected reports (event=reports_rejected), an import's
  // line (LogImport) and is counted (RecordAccepted). Errors, in `done`: the ingestor's.
  void SubmitAdmitted(Transport transport, const ReportCall& call,
                      const v1::SubmitReportsRequest& request, SubmitDone done);

  mutable std::atomic<int64_t> entries_{0};
  std::unique_ptr<Storage> storage_;
  const Clock* const clock_;
  const absl::Duration dedup_window_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery prevalence_;
  HeavyHittersQuery heavy_hitters_;
  DesignAdvisor advisor_;
  std::shared_ptr<Authenticator> authenticator_;
  RateLimiter limiter_;
  AccessPolicy policy_;
  ServerCounters counters_;
  absl::Mutex alerts_mu_;
  std::function<v1::ListAlertsResponse()> alerts_ ABSL_GUARDED_BY(alerts_mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_COLLECTOR_CORE_H_
