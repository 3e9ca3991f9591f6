// The C API over Reporter (deniable_c.h): conversions only; the contract is the Reporter's.
#include "deniable/client/deniable_c.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "deniable/client/device_store.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"

struct deniable_reporter {
  std::unique_ptr<deniable::client::Reporter> reporter;
};

namespace {

namespace dc = deniable::client;

int Fill(const absl::Status& status, deniable_error* error) {
  if (error != nullptr) {
    error->code = static_cast<int>(status.code());
    const size_t size = std::min(status.message().size(), size_t{DENIABLE_ERROR_MESSAGE_SIZE - 1});
    std::memcpy(error->message, status.message().data(), size);
    error->message[size] = '\0';
  }
  return static_cast<int>(status.code());
}

// Runs `body` (returning absl::Status) so that no exception crosses the C boundary.
template <typename Body>
int Guarded(deniable_error* error, Body body) {
  try {
    return Fill(body(), error);
  } catch (const std::exception& e) {
    return Fill(absl::InternalError(absl::StrCat("internal: ", e.what())), error);
  } catch (...) {
    return Fill(absl::InternalError("internal: unknown exception"), error);
  }
}

std::string Str(const char* s) { return s == nullptr ? std::string() : std::string(s); }

absl::Duration Millis(int64_t ms) { return absl::Milliseconds(ms); }

absl::Status CheckPositive(int64_t value, const char* field) {
  if (value > 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(field, ": must be > 0, but is ", value));
}

// The body every deniable_reporter_report* function shares: checks the reporter, the metric and
// the labels (naming the field), runs `report` (one of the Reporter's Report calls, with the
// labels and the id to fill), and copies the queued report's id out; nothing queued leaves
// *report_id_size at 0 (set by the caller before Guarded, so that it is 0 on every error).
template <typename Report>
absl::Status ReportWithLabels(deniable_reporter* reporter, const char* metric,
                              const deniable_label* labels, size_t label_count, uint8_t* report_id,
                              size_t* report_id_size, Report report) {
  if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
  if (metric == nullptr || metric[0] == '\0') {
    return absl::InvalidArgumentError("metric: must be a metric name, but is empty");
  }
  if (labels == nullptr && label_count > 0) {
    return absl::InvalidArgumentError("labels: NULL with label_count > 0");
  }
  std::map<std::string, std::string> extra;
  for (size_t i = 0; i < label_count; ++i) {
    if (labels[i].key == nullptr || labels[i].value == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("labels[", i, "]: key and value must not be NULL"));
    }
    extra[labels[i].key] = labels[i].value;
  }
  std::string id;
  absl::Status status = report(*reporter->reporter, extra, &id);
  if (status.ok() && !id.empty()) {
    if (report_id != nullptr) std::memcpy(report_id, id.data(), std::min<size_t>(id.size(), 16));
    if (report_id_size != nullptr) *report_id_size = id.size();
  }
  return status;
}

}  // namespace

extern "C" {

const char* deniable_status_name(int code) {
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  return code >= 0 && code <= 16 ? kNames[code] : "UNKNOWN";
}

void deniable_reporter_options_init(deniable_reporter_options* options) {
  if (options == nullptr) return;
  *options = deniable_reporter_options{};
  options->sync_every_report = 1;
  options->background_sending = 1;
  options->send_interval_ms = 200;
  options->rpc_timeout_ms = 10000;
  options->first_design_wait_ms = 2000;
  options->shutdown_drain_ms = 2000;
  options->max_queued_reports = 100000;
  options->max_batch_reports = 1000;
  options->one_report_per_period = 1;
}

int deniable_reporter_open(const deniable_reporter_options* options, deniable_reporter** out,
                           deniable_error* error) {
  return Guarded(error, [&]() -> absl::Status {
    if (options == nullptr) return absl::InvalidArgumentError("options: must not be NULL");
    if (out == nullptr) return absl::InvalidArgumentError("out: must not be NULL");
    *out = nullptr;
    if (options->target == nullptr || options->target[0] == '\0') {
      return absl::InvalidArgumentError("target: must be host:port, but is empty");
    }
    for (auto [value, field] : {std::pair{options->send_interval_ms, "send_interval_ms"},
                                {options->rpc_timeout_ms, "rpc_timeout_ms"},
                                {options->max_queued_reports, "max_queued_reports"}}) {
      if (absl::Status s = CheckPositive(value, field); !s.ok()) return s;
    }
    if (options->first_design_wait_ms < 0 || options->shutdown_drain_ms < 0) {
      return absl::InvalidArgumentError("first_design_wait_ms, shutdown_drain_ms: must be >= 0");
    }
    dc::ReporterOptions reporter_options;
    reporter_options.max_epsilon_per_metric = options->max_epsilon_per_metric;
    reporter_options.one_report_per_period = options->one_report_per_period != 0;
    reporter_options.background_sending = options->background_sending != 0;
    reporter_options.send_interval = Millis(options->send_interval_ms);
    reporter_options.rpc_timeout = Millis(options->rpc_timeout_ms);
    reporter_options.first_design_wait = Millis(options->first_design_wait_ms);
    reporter_options.shutdown_drain_timeout = Millis(options->shutdown_drain_ms);
    reporter_options.max_queued_reports = options->max_queued_reports;
    reporter_options.max_batch_reports = options->max_batch_reports;
    for (size_t i = 0; i < options->label_count; ++i) {
      const deniable_label& label = options->labels[i];
      if (label.key == nullptr || label.value == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("labels[", i, "]: key and value must not be NULL"));
      }
      reporter_options.labels[label.key] = label.value;
    }

    std::shared_ptr<dc::ReportTransport> transport;
    if (options->insecure != 0) {
      transport = dc::MakeInsecureGrpcTransport(options->target);
    } else {
      absl::StatusOr<std::shared_ptr<dc::ReportTransport>> secure =
          dc::MakeSecureGrpcTransport({.target = options->target,
                                       .ca_file = Str(options->ca_file),
                                       .client_cert_file = Str(options->client_cert_file),
                                       .client_key_file = Str(options->client_key_file),
                                       .bearer_token = Str(options->bearer_token)});
      if (!secure.ok()) return secure.status();
      transport = *std::move(secure);
    }
    std::unique_ptr<dc::DeviceStore> store;
    if (options->store_path == nullptr || options->store_path[0] == '\0') {
      store = dc::MakeMemoryDeviceStore();
    } else {
      absl::StatusOr<std::unique_ptr<dc::DeviceStore>> sqlite = dc::OpenSqliteDeviceStore(
          {.path = options->store_path, .sync_every_report = options->sync_every_report != 0});
      if (!sqlite.ok()) return sqlite.status();
      store = *std::move(sqlite);
    }
    absl::StatusOr<std::unique_ptr<dc::Reporter>> reporter =
        dc::Reporter::Open(std::move(transport), std::move(store), std::move(reporter_options));
    if (!reporter.ok()) return reporter.status();
    *out = new deniable_reporter{*std::move(reporter)};
    return absl::OkStatus();
  });
}

void deniable_reporter_close(deniable_reporter* reporter) {
  try {
    delete reporter;
  } catch (...) {  // the destructor does not throw; nothing may cross the C boundary anyway
  }
}

int deniable_reporter_prefetch(deniable_reporter* reporter, const char* const* metrics,
                               size_t count, int64_t timeout_ms, deniable_error* error) {
  return Guarded(error, [&]() -> absl::Status {
    if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
    if (metrics == nullptr && count > 0) {
      return absl::InvalidArgumentError("metrics: must not be NULL");
    }
    if (timeout_ms <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("timeout_ms: must be > 0, but is ", timeout_ms));
    }
    std::vector<std::string> names;
    for (size_t i = 0; i < count; ++i) {
      if (metrics[i] == nullptr || metrics[i][0] == '\0') {
        return absl::InvalidArgumentError(absl::StrCat("metrics[", i, "]: must not be empty"));
      }
      names.emplace_back(metrics[i]);
    }
    return reporter->reporter->Prefetch(names, Millis(timeout_ms));
  });
}

int deniable_reporter_report(deniable_reporter* reporter, const char* metric, int answer,
                             uint8_t* report_id, size_t* report_id_size, deniable_error* error) {
  if (report_id_size != nullptr) *report_id_size = 0;
  return Guarded(error, [&]() -> absl::Status {
    if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
    if (metric == nullptr || metric[0] == '\0') {
      return absl::InvalidArgumentError("metric: must be a metric name, but is empty");
    }
    std::string id;
    absl::Status status = reporter->reporter->Report(metric, answer != 0, &id);
    if (status.ok() && !id.empty()) {
      if (report_id != nullptr) std::memcpy(report_id, id.data(), std::min<size_t>(id.size(), 16));
      if (report_id_size != nullptr) *report_id_size = id.size();
    }
    return status;
  });
}

int deniable_reporter_report_category(deniable_reporter* reporter, const char* metric,
                                      const char* category, uint8_t* report_id,
                                      size_t* report_id_size, deniable_error* error) {
  if (report_id_size != nullptr) *report_id_size = 0;
  return Guarded(error, [&]() -> absl::Status {
    if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
    if (metric == nullptr || metric[0] == '\0') {
      return absl::InvalidArgumentError("metric: must be a metric name, but is empty");
    }
    if (category == nullptr || category[0] == '\0') {
      return absl::InvalidArgumentError("category: must be a category name, but is empty");
    }
    std::string id;
    absl::Status status = reporter->reporter->Report(metric, absl::string_view(category), {}, &id);
    if (status.ok() && !id.empty()) {
      if (report_id != nullptr) std::memcpy(report_id, id.data(), std::min<size_t>(id.size(), 16));
      if (report_id_size != nullptr) *report_id_size = id.size();
    }
    return status;
  });
}

int deniable_reporter_report_labeled(deniable_reporter* reporter, const char* metric, int answer,
                                     const char* category, const deniable_label* labels,
                                     size_t label_count, uint8_t* report_id, size_t* report_id_size,
                                     deniable_error* error) {
  if (report_id_size != nullptr) *report_id_size = 0;
  return Guarded(error, [&]() -> absl::Status {
    if (category != nullptr && category[0] == '\0') {
      return absl::InvalidArgumentError("category: must be a category name or NULL, but is empty");
    }
    return ReportWithLabels(
        reporter, metric, labels, label_count, report_id, report_id_size,
        [&](dc::Reporter& r, const std::map<std::string, std::string>& extra, std::string* id) {
          return category == nullptr ? r.Report(metric, answer != 0, extra, id)
                                     : r.Report(metric, absl::string_view(category), extra, id);
        });
  });
}

int deniable_reporter_report_category_index(deniable_reporter* reporter, const char* metric,
                                            int index, uint8_t* report_id, size_t* report_id_size,
                                            deniable_error* error) {
  return deniable_reporter_report_category_index_labeled(reporter, metric, index, nullptr, 0,
                                                         report_id, report_id_size, error);
}

int deniable_reporter_report_category_index_labeled(deniable_reporter* reporter, const char* metric,
                                                    int index, const deniable_label* labels,
                                                    size_t label_count, uint8_t* report_id,
                                                    size_t* report_id_size, deniable_error* error) {
  if (report_id_size != nullptr) *report_id_size = 0;
  return Guarded(error, [&]() -> absl::Status {
    return ReportWithLabels(
        reporter, metric, labels, label_count, report_id, report_id_size,
        [&](dc::Reporter& r, const std::map<std::string, std::string>& extra, std::string* id) {
          return r.ReportCategoryIndex(metric, index, extra, id);
        });
  });
}

int deniable_reporter_report_value(deniable_reporter* reporter, const char* metric, double value,
                                   uint8_t* report_id, size_t* report_id_size,
                                   deniable_error* error) {
  return deniable_reporter_report_value_labeled(reporter, metric, value, nullptr, 0, report_id,
                                                report_id_size, error);
}

int deniable_reporter_report_value_labeled(deniable_reporter* reporter, const char* metric,
                                           double value, const deniable_label* labels,
                                           size_t label_count, uint8_t* report_id,
                                           size_t* report_id_size, deniable_error* error) {
  if (report_id_size != nullptr) *report_id_size = 0;
  return Guarded(error, [&]() -> absl::Status {
    return ReportWithLabels(
        reporter, metric, labels, label_count, report_id, report_id_size,
        [&](dc::Reporter& r, const std::map<std::string, std::string>& extra, std::string* id) {
          return r.ReportValue(metric, value, extra, id);
        });
  });
}

int deniable_reporter_report_string(deniable_reporter* reporter, const char* metric,
                                    const uint8_t* value, size_t value_len, uint8_t* report_id,
                                    size_t* report_id_size, deniable_error* error) {
  return deniable_reporter_report_string_labeled(reporter, metric, value, value_len, nullptr, 0,
                                                 report_id, report_id_size, error);
}

int deniable_reporter_report_string_labeled(deniable_reporter* reporter, const char* metric,
                                            const uint8_t* value, size_t value_len,
                                            const deniable_label* labels, size_t label_count,
                                            uint8_t* report_id, size_t* report_id_size,
                                            deniable_error* error) {
  if (report_id_size != nullptr) *report_id_size = 0;
  return Guarded(error, [&]() -> absl::Status {
    if (value == nullptr && value_len > 0) {
      return absl::InvalidArgumentError("value: NULL with value_len > 0");
    }
    const absl::string_view bytes =
        value == nullptr ? absl::string_view()
                         : absl::string_view(reinterpret_cast<const char*>(value), value_len);
    return ReportWithLabels(
        reporter, metric, labels, label_count, report_id, report_id_size,
        [&](dc::Reporter& r, const std::map<std::string, std::string>& extra, std::string* id) {
          return r.ReportString(metric, bytes, extra, id);
        });
  });
}

int deniable_reporter_flush(deniable_reporter* reporter, int64_t timeout_ms,
                            deniable_error* error) {
  return Guarded(error, [&]() -> absl::Status {
    if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
    return reporter->reporter->Flush(timeout_ms < 0 ? absl::InfiniteDuration()
                                                    : Millis(timeout_ms));
  });
}

int64_t deniable_reporter_pending(const deniable_reporter* reporter) {
  if (reporter == nullptr) return -1;
  try {
    return static_cast<int64_t>(reporter->reporter->pending());
  } catch (...) {
    return -1;
  }
}

int deniable_reporter_ledger(const deniable_reporter* reporter, const char* metric,
                             deniable_metric_ledger* out, deniable_error* error) {
  return Guarded(error, [&]() -> absl::Status {
    if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
    if (metric == nullptr) return absl::InvalidArgumentError("metric: must not be NULL");
    if (out == nullptr) return absl::InvalidArgumentError("out: must not be NULL");
    absl::StatusOr<std::map<std::string, dc::MetricLedger>> ledger = reporter->reporter->Ledger();
    if (!ledger.ok()) return ledger.status();
    dc::MetricLedger l;
    if (auto it = ledger->find(metric); it != ledger->end()) l = it->second;
    *out = deniable_metric_ledger{.reports_accepted = l.reports_accepted,
                                  .reports_acknowledged = l.reports_acknowledged,
                                  .randomizations = l.randomizations,
                                  .epsilon_spent = l.epsilon_spent,
                                  .epsilon_if_fresh = l.epsilon_if_fresh,
                                  .period_start_seconds = l.period_start_seconds,
                                  .reports_this_period = l.reports_this_period,
                                  .reports_repeated_in_period = l.reports_repeated_in_period};
    return absl::OkStatus();
  });
}

int deniable_reporter_stats(const deniable_reporter* reporter, deniable_delivery_stats* out,
                            deniable_error* error) {
  return Guarded(error, [&]() -> absl::Status {
    if (reporter == nullptr) return absl::InvalidArgumentError("reporter: must not be NULL");
    if (out == nullptr) return absl::InvalidArgumentError("out: must not be NULL");
    absl::StatusOr<dc::DeliveryStats> stats = reporter->reporter->Stats();
    if (!stats.ok()) return stats.status();
    *out =
        deniable_delivery_stats{.queued = stats->queued,
                                .acknowledged = stats->counters.acknowledged,
                                .duplicates = stats->counters.duplicates,
                                .dropped_rejected = stats->counters.dropped_rejected,
                                .dropped_queue_full = stats->counters.dropped_queue_full,
                                .dropped_too_old = stats->counters.dropped_too_old,
                                .send_attempts = stats->send_attempts,
                                .failed_attempts = stats->failed_attempts,
                                .values_clipped = stats->values_clipped,
                                .dropped_design_mismatch = stats->counters.dropped_design_mismatch,
                                .batch_splits = stats->batch_splits,
                                .kept_after_rejection = stats->kept_after_rejection};
    return absl::OkStatus();
  });
}

}  // extern "C"
