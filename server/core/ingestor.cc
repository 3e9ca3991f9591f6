#include "server/core/ingestor.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/calendar_windows.h"
#include "deniable/common/labels.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/mechanism_convert.h"
#include "server/core/design_fingerprint.h"

namespace deniable::server {
namespace {

v1::ReportRejection Rejection(int index, const absl::Status& status) {
  v1::ReportRejection r;
  r.set_index(static_cast<uint32_t>(index));
  r.set_code(static_cast<int32_t>(status.code()));
  r.set_reason(std::string(status.message()));
  // Only an unknown metric may change (created later, database restored); every other verdict
  // is about the report itself.
  r.set_permanent(!absl::IsNotFound(status));
  return r;
}

v1::SubmitReportsResponse Response(const AppendResult& stored, ValidatedBatch& batch) {
  v1::SubmitReportsResponse response;
  response.set_accepted(static_cast<uint32_t>(stored.accepted));
  response.set_duplicates(static_cast<uint32_t>(stored.duplicates));
  for (std::string& name : batch.stale_metrics) response.add_stale_metrics(std::move(name));
  for (v1::ReportRejection& r : batch.rejections) *response.add_rejections() = std::move(r);
  return response;
}

}  // namespace

v1::ReportRejection DeletedMetricRejection(int index, absl::string_view metric) {
  return Rejection(
      index, absl::NotFoundError(absl::StrCat("reports[", index, "].metric: metric \"", metric,
                                              "\" was deleted while this batch was being stored")));
}

v1::ReportRejection LabelValueRejection(int index, absl::string_view metric,
                                        const LabelValueRefusal& refusal) {
  const std::string field = absl::StrCat("reports[", index, "].labels[\"", refusal.key, "\"]: ");
  constexpr char kContract[] = "labels must be low-cardinality and never identify a device";
  if (refusal.new_key) {
    return Rejection(index, absl::InvalidArgumentError(absl::StrCat(
                                field, "metric \"", metric, "\" already has ", refusal.max_keys,
                                " distinct label keys (--max_label_keys); ", kContract)));
  }
  return Rejection(index, absl::InvalidArgumentError(
                              absl::StrCat(field, "metric \"", metric, "\" already has ",
                                           refusal.max_values, " distinct values of label \"",
                                           refusal.key, "\" (--max_label_values); ", kContract)));
}

void Ingestor::RejectDeleted(const AppendResult& stored, ValidatedBatch* batch) const {
  if (stored.missing_metrics.empty() && stored.label_refusals.empty()) return;
  const auto name_of = [&](int64_t id) {
    std::string name;
    for (const auto& [named_id, named] : batch->metric_names) {
      if (named_id == id) name = named;
    }
    return name;
  };
  for (size_t j = 0; j < batch->rows.size() && j < batch->row_indices.size(); ++j) {
    const int64_t id = batch->rows[j].metric_id;
    if (!stored.IsMissing(id)) continue;
    batch->rejections.push_back(DeletedMetricRejection(batch->row_indices[j], name_of(id)));
    batch->rejected_metrics.emplace_back();  // no longer a metric of this server
  }
  for (const LabelValueRefusal& refusal : stored.label_refusals) {
    if (refusal.row >= batch->row_indices.size()) continue;
    const std::string name = name_of(refusal.metric_id);
    batch->rejections.push_back(
        LabelValueRejection(batch->row_indices[refusal.row], name, refusal));
    batch->rejected_metrics.push_back(name);
    RecordLabelValueRefused(name);
  }
  // Back in index order, rejected_metrics alongside.
  std::vector<size_t> order(batch->rejections.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return batch->rejections[x].index() < batch->rejections[y].index();
  });
  std::vector<v1::ReportRejection> rejections;
  std::vector<std::string> metrics;
  for (size_t i : order) {
    rejections.push_back(std::move(batch->rejections[i]));
    metrics.push_back(std::move(batch->rejected_metrics[i]));
  }
  batch->rejections = std::move(rejections);
  batch->rejected_metrics = std::move(metrics);
  ForgetDeleted(stored, batch->metric_names);
}

void Ingestor::ForgetDeleted(const AppendResult& stored,
                             const std::vector<std::pair<int64_t, std::string>>& names) const {
  for (const auto& [id, name] : names) {
    if (stored.IsMissing(id)) registry_->Forget(name, id);
  }
}

absl::StatusOr<std::string> CanonicalLabels(
    const google::protobuf::Map<std::string, std::string>& labels, absl::string_view field) {
  if (labels.empty()) return std::string();
  return ::deniable::CanonicalLabels(
      std::map<std::string, std::string>(labels.begin(), labels.end()), field);
}

Ingestor::Ingestor(MetricRegistry* registry, Storage* storage, const Clock* clock,
                   IngestOptions options)
    : registry_(registry),
      storage_(storage),
      clock_(clock),
      options_(options),
      firsts_limit_(WindowFirstLimitOptions{
          .max_per_window = options.max_window_firsts_per_token,
          .keep_after_end = std::max(options.max_report_age, absl::Hours(24)) + absl::Hours(24)}) {}

void Ingestor::RecordStored(const AppendResult& stored,
                            const std::vector<std::pair<int64_t, std::string>>& names,
                            ReportOrigin origin) const {
  if (sink_ == nullptr) return;
  for (const MetricAppendCount& m : stored.per_metric) {
    for (const auto& [id, name] : names) {
      if (id != m.metric_id) continue;
      sink_->RecordStored(name, m.accepted, m.duplicates);
      if (origin == ReportOrigin::kImport) sink_->RecordImported(name, m.accepted, m.duplicates);
      break;
    }
  }
}

void Ingestor::RecordRejected(const std::vector<v1::ReportRejection>& rejections,
                              const std::vector<std::string>& metrics) const {
  if (sink_ == nullptr) return;
  for (size_t i = 0; i < rejections.size(); ++i) {
    sink_->RecordReportRejected(i < metrics.size() ? metrics[i] : "",
                                static_cast<absl::StatusCode>(rejections[i].code()));
  }
}

absl::StatusOr<v1::SubmitReportsResponse> Ingestor::Submit(const v1::SubmitReportsRequest& request,
                                                           ReportOrigin origin, int64_t token_id) {
  DENIABLE_ASSIGN_OR_RETURN(ValidatedBatch batch, Validate(request, origin, token_id));
  AppendResult stored;
  if (!batch.rows.empty()) {
    DENIABLE_ASSIGN_OR_RETURN(stored, storage_->AppendReports(batch.rows));
    RejectDeleted(stored, &batch);
  }
  RecordStored(stored, batch.metric_names, origin);
  RecordRejected(batch.rejections, batch.rejected_metrics);
  return Response(stored, batch);
}

void Ingestor::SubmitAsync(const v1::SubmitReportsRequest& request, ReportOrigin origin,
                           int64_t token_id, SubmitCallback done) {
  absl::StatusOr<ValidatedBatch> validated = Validate(request, origin, token_id);
  if (!validated.ok()) {
    std::move(done)(validated.status());
    return;
  }
  if (validated->rows.empty()) {
    RecordRejected(validated->rejections, validated->rejected_metrics);
    std::move(done)(Response(AppendResult(), *validated));
    return;
  }
  auto batch = std::make_unique<ValidatedBatch>(*std::move(validated));
  const absl::Span<const ReportRow> rows = batch->rows;
  storage_->AppendReportsAsync(rows, [this, batch = std::move(batch), done = std::move(done)](
                                         absl::StatusOr<AppendResult> result) mutable {
    if (!result.ok()) {
      std::move(done)(result.status());
      return;
    }
    RejectDeleted(*result, batch.get());
    RecordStored(*result, batch->metric_names, batch->origin);
    RecordRejected(batch->rejections, batch->rejected_metrics);
    std::move(done)(Response(*result, *batch));
  });
}

absl::StatusOr<ValidatedBatch> Ingestor::Validate(const v1::SubmitReportsRequest& request,
                                                  ReportOrigin origin, int64_t token_id) {
  const bool import = origin == ReportOrigin::kImport;
  if (import && options_.max_import_age <= absl::ZeroDuration()) {
    return absl::FailedPreconditionError(
        "x-deniable-import: this server does not accept historical imports (its maximum import "
        "age, deniable-server --max_import_age_seconds, is 0)");
  }
  const int size = request.reports_size();
  if (size == 0) return absl::InvalidArgumentError("reports: the batch is empty");
  if (size > options_.max_batch_reports) {
    return absl::InvalidArgumentError(absl::StrCat("reports: the batch has ", size,
                                                   " reports, more than the limit of ",
                                                   options_.max_batch_reports));
  }
  const absl::Time now = clock_->Now();
  Bounds bounds;
  bounds.latest_allowed = absl::ToUnixSeconds(now + options_.max_future_skew);
  bounds.max_age =
      import ? std::max(options_.max_report_age, options_.max_import_age) : options_.max_report_age;
  bounds.max_age_name = import ? "import" : "report";
  bounds.earliest_allowed = absl::ToUnixSeconds(now - bounds.max_age);
  bounds.now = absl::ToUnixSeconds(now);
  bounds.import = import;
  absl::flat_hash_map<std::string, std::shared_ptr<const MetricInfo>> metrics;
  std::vector<std::string> reloaded;  // metrics read again for a newer design version
  ValidatedBatch batch;
  batch.origin = origin;
  batch.rows.reserve(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) {
    const v1::Report& report = request.reports(i);
    const std::string field = absl::StrCat("reports[", i, "]");
    if (absl::Status name = ValidateMetricName(report.metric(), absl::StrCat(field, ".metric"));
        !name.ok()) {
      batch.rejections.push_back(Rejection(i, name));
      batch.rejected_metrics.emplace_back();
      continue;
    }
    auto it = metrics.find(report.metric());
    if (it == metrics.end()) {
      absl::StatusOr<std::shared_ptr<const MetricInfo>> info = registry_->Find(report.metric());
      if (!info.ok() && !absl::IsNotFound(info.status())) return info.status();
      // An unknown metric is remembered as null, so a batch of it costs one lookup.
      it = metrics.emplace(report.metric(), info.ok() ? *std::move(info) : nullptr).first;
    }
    if (it->second == nullptr) {
      batch.rejections.push_back(
          Rejection(i, absl::NotFoundError(absl::StrCat(field, ".metric: unknown metric \"",
                                                        report.metric(), "\""))));
      batch.rejected_metrics.emplace_back();
      continue;
    }
    // A version newer than the cached metric's may have been added by another collector on the
    // same database: read the metric again once per batch before judging the report.
    if (it->second->Find(report.design_version()) == nullptr &&
        report.design_version() > it->second->current().version &&
        std::find(reloaded.begin(), reloaded.end(), report.metric()) == reloaded.end()) {
      reloaded.push_back(report.metric());
      absl::StatusOr<std::shared_ptr<const MetricInfo>> info = registry_->Reload(report.metric());
      if (!info.ok() && !absl::IsNotFound(info.status())) return info.status();
      if (info.ok()) it->second = *std::move(info);
    }
    absl::StatusOr<ReportRow> row = ValidateReport(report, *it->second, field, bounds);
    if (!row.ok()) {
      batch.rejections.push_back(Rejection(i, row.status()));
      batch.rejected_metrics.push_back(report.metric());
      continue;
    }
    if (token_id > 0 && !import && row->window_firsts > 0) {
      // A valid report's window flags, taken from its token's budget (docs/security.md).
      if (absl::Status firsts =
              firsts_limit_.Admit(token_id, row->metric_id, row->window_firsts,
                                  row->event_time_seconds, bounds.now, field, report.metric());
          !firsts.ok()) {
        batch.rejections.push_back(Rejection(i, firsts));
        batch.rejected_metrics.push_back(report.metric());
        if (sink_ != nullptr) sink_->RecordWindowFirstRefused(report.metric());
        continue;
      }
    }
    if (report.design_version() != it->second->current().version &&
        std::find(batch.stale_metrics.begin(), batch.stale_metrics.end(), report.metric()) ==
            batch.stale_metrics.end()) {
      batch.stale_metrics.push_back(report.metric());
    }
    if (std::none_of(batch.metric_names.begin(), batch.metric_names.end(),
                     [&](const auto& named) { return named.first == row->metric_id; })) {
      batch.metric_names.emplace_back(row->metric_id, report.metric());
    }
    batch.rows.push_back(*std::move(row));
    batch.row_indices.push_back(i);
  }
  return batch;
}

absl::StatusOr<ReportRow> Ingestor::ValidateReport(const v1::Report& report,
                                                   const MetricInfo& metric,
                                                   absl::string_view field, const Bounds& bounds) {
  const MetricVersion* version = metric.Find(report.design_version());
  if (version == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".design_version: metric \"", report.metric(), "\" has no design version ",
        report.design_version(), " (current version is ", metric.current().version, ")"));
  }
  if (report.design_fingerprint() != 0 && report.design_fingerprint() != version->fingerprint) {
    return absl::FailedPreconditionError(absl::StrCat(
        field, ".design_fingerprint: ", FingerprintHex(report.design_fingerprint()),
        " is not the fingerprint of metric \"", report.metric(), "\" design version ",
        report.design_version(), " on this collector (", FingerprintHex(version->fingerprint),
        "): the bit was randomized with another design; fetch the design again"));
  }
  // The design's mechanism checks the answer fields (`bit`, `categorical`) and says which
  // counters the report adds to.
  DENIABLE_ASSIGN_OR_RETURN(
      CounterIncrements increments,
      version->mechanism->Validate(WireAnswerFromProto(report), field, metric.proto.name()));
  if (report.report_id().size() != 16) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".report_id: must be 16 bytes, but is ",
                                                   report.report_id().size(), " bytes"));
  }
  const int64_t t = report.event_time_seconds();
  const int64_t precision = metric.proto.time_precision_seconds();
  if (t <= 0 || t % precision != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".event_time_seconds: must be > 0 and a multiple of ", precision,
                     " (the metric's time precision), but is ", t));
  }
  if (t > bounds.latest_allowed) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".event_time_seconds: ", t,
                                                   " is in the future (latest allowed is ",
                                                   bounds.latest_allowed, ")"));
  }
  if (t < bounds.earliest_allowed) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".event_time_seconds: ", t, " is too old (earliest allowed is ",
                     bounds.earliest_allowed, ", the server's maximum ", bounds.max_age_name,
                     " age is ", absl::FormatDuration(bounds.max_age), ")"));
  }
  // An import older than the metric's retention would be dropped by the next retention run, and
  // once its row is gone (retention keeps the counts) a repeated import of the same id would be
  // counted again: imports stop at the retention horizon (docs/operations.md, "Retention").
  if (const int64_t days = metric.proto.retention_days();
      bounds.import && days > 0 && t < bounds.now - days * 86400) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ".event_time_seconds: ", t, " is older than metric \"", report.metric(),
        "\"'s retention of ", days, " days (earliest importable is ", bounds.now - days * 86400,
        "); set a longer retention first (deniable set-retention)"));
  }
  // Window flags (docs/statistics.md section 4.4): a first in its week or month is a first in
  // its day (a new week or month starts a new day). Kept only when the metric asks for them.
  int window_firsts = -1;
  if (report.has_window_firsts()) {
    const v1::WindowFirsts& f = report.window_firsts();
    if ((f.week() || f.month()) && !f.day()) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".window_firsts.day: must be true when week or month is (a report first in its ",
          f.week() ? "week" : "month", " is first in its day)"));
    }
    if (!metric.proto.window_firsts_off()) {
      window_firsts = (f.day() ? kFirstInDay : 0) | (f.week() ? kFirstInWeek : 0) |
                      (f.month() ? kFirstInMonth : 0);
    }
  }
  DENIABLE_ASSIGN_OR_RETURN(std::string labels,
                            CanonicalLabels(report.labels(), absl::StrCat(field, ".labels")));
  ReportRow row;
  row.metric_id = metric.id;
  row.design_version = report.design_version();
  std::memcpy(row.report_id.data(), report.report_id().data(), row.report_id.size());
  row.event_time_seconds = t;
  row.labels = std::move(labels);
  // Storage sums counter vectors without knowing the kind: the report adds 1 to n and to each
  // counter its mechanism's validation found (CounterIncrements::ones; yes/no: counter 0 for a
  // 1 bit; categorical: the supported categories; dBitFlip: j and k + j, numeric.h).
  row.counters = increments.ones;
  row.window_firsts = window_firsts;
  return row;
}

}  // namespace deniable::server
