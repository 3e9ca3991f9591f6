#include "server/core/server_counters.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace deniable::server {
namespace {

std::shared_ptr<prometheus::Registry> OrNew(std::shared_ptr<prometheus::Registry> registry) {
  return registry != nullptr ? std::move(registry) : std::make_shared<prometheus::Registry>();
}

prometheus::Family<prometheus::Counter>& Counters(prometheus::Registry& registry, const char* name,
                                                  const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(registry);
}

uint64_t Get(const prometheus::Counter& c) { return static_cast<uint64_t>(c.Value()); }

}  // namespace

ServerCounters::ServerCounters(int64_t start_time_seconds,
                               std::shared_ptr<prometheus::Registry> registry)
    : start_time_seconds_(start_time_seconds),
      registry_(OrNew(std::move(registry))),
      batches_(Counters(*registry_, "deniable_report_batches_total",
                        "Report batches (SubmitReports calls, streams) by outcome")),
      reports_(Counters(*registry_, "deniable_reports_total",
                        "Reports by outcome: accepted (stored now), duplicate (already stored), "
                        "rejected (judged alone, or in a call refused whole); metric=\"\" counts "
                        "reports that name no metric of this server or came in a call refused "
                        "whole")),
      rejected_batches_(Counters(*registry_, "deniable_report_batches_rejected_total",
                                 "Rejected report batches by reason")),
      rejected_reports_(
          Counters(*registry_, "deniable_reports_rejected_total",
                   "Rejected reports by status code: judged alone, or in a call refused whole; "
                   "metric=\"\" as in deniable_reports_total")),
      calls_(Counters(*registry_, "deniable_calls_total",
                      "Finished calls by transport, method and status code")),
      imported_(Counters(*registry_, "deniable_imported_reports_total",
                         "Reports of historical imports (x-deniable-import) by outcome: accepted "
                         "(stored now), duplicate (already stored); also in "
                         "deniable_reports_total")),
      durations_(prometheus::BuildHistogram()
                     .Name("deniable_request_duration_seconds")
                     .Help("Time of finished calls from arrival to status, in seconds, by "
                           "transport, method and status code (a stream: its whole life)")
                     .Register(*registry_)),
      label_values_refused_(Counters(*registry_, "deniable_label_values_refused_total",
                                     "Reports refused because a label key of their metric "
                                     "already had --max_label_values distinct values, or the "
                                     "metric --max_label_keys keys; also in "
                                     "deniable_reports_rejected_total (INVALID_ARGUMENT)")),
      window_firsts_refused_(Counters(*registry_, "deniable_window_firsts_refused_total",
                                      "Reports refused because their token had already sent "
                                      "--max_window_firsts_per_token reports of the metric "
                                      "flagged first in the same day, week or month; also in "
                                      "deniable_reports_rejected_total (RESOURCE_EXHAUSTED)")),
      batches_accepted_(batches_.Add({{"outcome", "accepted"}})),
      batches_rejected_(batches_.Add({{"outcome", "rejected"}})),
      invalid_(rejected_batches_.Add({{"reason", "invalid"}})),
      unauthenticated_(rejected_batches_.Add({{"reason", "unauthenticated"}})),
      permission_denied_(rejected_batches_.Add({{"reason", "permission_denied"}})),
      rate_limited_(rejected_batches_.Add({{"reason", "rate_limited"}})),
      other_(rejected_batches_.Add({{"reason", "other"}})),
      streams_shed_(Counters(*registry_, "deniable_streams_shed_total",
                             "StreamReports calls refused with RESOURCE_EXHAUSTED because the "
                             "server's limit of open streams was reached")
                        .Add({})),
      retention_dropped_(Counters(*registry_, "deniable_retention_reports_dropped_total",
                                  "Reports dropped by metrics' retention (--retention_interval_"
                                  "seconds runs), by metric")),
      retention_runs_(Counters(*registry_, "deniable_retention_runs_total",
                               "Retention runs finished (--retention_interval_seconds), by "
                               "outcome")),
      retention_applied_(retention_runs_.Add({{"outcome", "applied"}})),
      retention_failed_(retention_runs_.Add({{"outcome", "failed"}})),
      open_streams_(prometheus::BuildGauge()
                        .Name("deniable_open_streams")
                        .Help("StreamReports calls open now (limit: --max_concurrent_streams)")
                        .Register(*registry_)
                        .Add({})) {
  ForMetric("");  // the unattributed series exist (at 0) from the start
  for (absl::StatusCode code : kReportRejectionCodes) {
    rejected_reports_.Add({{"code", absl::StatusCodeToString(code)}, {"metric", ""}});
  }
}

void ServerCounters::AddMetric(absl::string_view metric) {
  const std::string name(metric);
  ForMetric(name);
  for (absl::StatusCode code : kReportRejectionCodes) {
    rejected_reports_.Add({{"code", absl::StatusCodeToString(code)}, {"metric", name}});
  }
  imported_.Add({{"outcome", "accepted"}, {"metric", name}});
  imported_.Add({{"outcome", "duplicate"}, {"metric", name}});
  retention_dropped_.Add({{"metric", name}});
  label_values_refused_.Add({{"metric", name}});
  window_firsts_refused_.Add({{"metric", name}});
}

void ServerCounters::AddMethod(absl::string_view transport, absl::string_view method) {
  ForCall(transport, method, absl::StatusCode::kOk);
}

ServerCounters::CallSeries ServerCounters::ForCall(absl::string_view transport,
                                                   absl::string_view method,
                                                   absl::StatusCode code) {
  const std::string code_name = absl::StatusCodeToString(code);
  std::string key = absl::StrCat(transport, " ", method, " ", code_name);
  absl::MutexLock lock(&calls_mu_);
  auto it = by_call_.find(key);
  if (it == by_call_.end()) {
    const prometheus::Labels labels = {{"transport", std::string(transport)},
                                       {"method", std::string(method)},
                                       {"code", code_name}};
    it = by_call_
             .emplace(std::move(key), CallSeries{&calls_.Add(labels),
                                                 &durations_.Add(labels, RequestDurationBuckets())})
             .first;
  }
  return it->second;
}

ServerCounters::MetricReports ServerCounters::ForMetric(absl::string_view metric) {
  absl::MutexLock lock(&mu_);
  auto it = by_metric_.find(metric);
  if (it == by_metric_.end()) {
    const std::string name(metric);
    it = by_metric_
             .emplace(name,
                      MetricReports{&reports_.Add({{"outcome", "accepted"}, {"metric", name}}),
                                    &reports_.Add({{"outcome", "duplicate"}, {"metric", name}}),
                                    &reports_.Add({{"outcome", "rejected"}, {"metric", name}})})
             .first;
  }
  return it->second;  // a copy: the counters stay put, the map's slots do not
}

void ServerCounters::RecordAccepted(const v1::SubmitReportsResponse& /*response*/) {
  batches_accepted_.Increment();
}

void ServerCounters::RecordStored(absl::string_view metric, int64_t accepted, int64_t duplicates) {
  const MetricReports counters = ForMetric(metric);
  counters.accepted->Increment(static_cast<double>(accepted));
  counters.duplicate->Increment(static_cast<double>(duplicates));
}

void ServerCounters::RecordImported(absl::string_view metric, int64_t accepted,
                                    int64_t duplicates) {
  const std::string name(metric);
  imported_.Add({{"outcome", "accepted"}, {"metric", name}})
      .Increment(static_cast<double>(accepted));
  imported_.Add({{"outcome", "duplicate"}, {"metric", name}})
      .Increment(static_cast<double>(duplicates));
}

void ServerCounters::RecordWindowFirstRefused(absl::string_view metric) {
  window_firsts_refused_.Add({{"metric", std::string(metric)}}).Increment();
}

void ServerCounters::RecordLabelValueRefused(absl::string_view metric) {
  label_values_refused_.Add({{"metric", std::string(metric)}}).Increment();
}

void ServerCounters::RecordReportRejected(absl::string_view metric, absl::StatusCode code) {
  ForMetric(metric).rejected->Increment();
  rejected_reports_.Add({{"code", absl::StatusCodeToString(code)}, {"metric", std::string(metric)}})
      .Increment();
}

void ServerCounters::RecordRejected(absl::StatusCode code, int64_t reports, bool rate_limited) {
  batches_rejected_.Increment();
  ForMetric("").rejected->Increment(static_cast<double>(reports));
  rejected_reports_.Add({{"code", absl::StatusCodeToString(code)}, {"metric", ""}})
      .Increment(static_cast<double>(reports));
  prometheus::Counter* reason = &other_;
  if (rate_limited) {
    reason = &rate_limited_;
  } else if (code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kNotFound) {
    reason = &invalid_;
  } else if (code == absl::StatusCode::kUnauthenticated) {
    reason = &unauthenticated_;
  } else if (code == absl::StatusCode::kPermissionDenied) {
    reason = &permission_denied_;
  }
  reason->Increment();
}

void ServerCounters::RecordCall(absl::string_view transport, absl::string_view method,
                                absl::StatusCode code) {
  ForCall(transport, method, code).calls->Increment();
}

void ServerCounters::RecordCall(absl::string_view transport, absl::string_view method,
                                absl::StatusCode code, absl::Duration duration) {
  const CallSeries series = ForCall(transport, method, code);
  series.calls->Increment();
  series.duration->Observe(absl::ToDoubleSeconds(duration));
}

void ServerCounters::RecordRetention(const RetentionResult& result) {
  retention_applied_.Increment();
  for (const MetricDropCount& m : result.per_metric) {
    retention_dropped_.Add({{"metric", m.name}}).Increment(static_cast<double>(m.reports));
    retention_dropped_total_ += static_cast<uint64_t>(m.reports);
  }
}

v1::ServerStats ServerCounters::Snapshot() const {
  v1::ServerStats s;
  s.set_start_time_seconds(start_time_seconds_);
  s.set_batches_accepted(Get(batches_accepted_));
  uint64_t accepted = 0, duplicate = 0, rejected = 0;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [name, counters] : by_metric_) {
      accepted += Get(*counters.accepted);
      duplicate += Get(*counters.duplicate);
      rejected += Get(*counters.rejected);
      if (name.empty()) continue;  // not attributed to a metric: in the totals only
      v1::MetricReportCounts* m = s.add_per_metric();
      m->set_metric(name);
      m->set_reports_accepted(Get(*counters.accepted));
      m->set_reports_duplicate(Get(*counters.duplicate));
      m->set_reports_rejected(Get(*counters.rejected));
    }
  }
  std::sort(s.mutable_per_metric()->begin(), s.mutable_per_metric()->end(),
            [](const v1::MetricReportCounts& a, const v1::MetricReportCounts& b) {
              return a.metric() < b.metric();
            });
  s.set_reports_accepted(accepted);
  s.set_reports_duplicate(duplicate);
  s.set_batches_rejected(Get(batches_rejected_));
  s.set_reports_rejected(rejected);
  s.set_rejected_invalid(Get(invalid_));
  s.set_rejected_unauthenticated(Get(unauthenticated_));
  s.set_rejected_permission_denied(Get(permission_denied_));
  s.set_rejected_rate_limited(Get(rate_limited_));
  s.set_rejected_other(Get(other_));
  s.set_reports_dropped_by_retention(retention_dropped_total_.load());
  return s;
}

}  // namespace deniable::server
