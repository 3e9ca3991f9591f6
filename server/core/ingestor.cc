#include "server/core/ingestor.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {
namespace {

constexpr size_t kMaxLabels = 4;
constexpr size_t kMaxLabelKeyLength = 32;
constexpr size_t kMaxLabelValueLength = 32;

bool ValidLabelKey(absl::string_view key) {
  if (key.empty() || key.size() > kMaxLabelKeyLength || !absl::ascii_islower(key[0])) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
  });
}

bool ValidLabelValue(absl::string_view value) {
  if (value.empty() || value.size() > kMaxLabelValueLength) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-';
  });
}

}  // namespace

absl::StatusOr<std::string> CanonicalLabels(
    const google::protobuf::Map<std::string, std::string>& labels, absl::string_view field) {
  if (labels.empty()) return std::string();
  if (labels.size() > kMaxLabels) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": at most ", kMaxLabels, " labels, but has ", labels.size()));
  }
  absl::btree_map<std::string, std::string> sorted(labels.begin(), labels.end());
  for (const auto& [key, value] : sorted) {
    if (!ValidLabelKey(key)) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[\"", absl::CEscape(key),
                                                     "\"]: key must match [a-z][a-z0-9_]{0,31}"));
    }
    if (!ValidLabelValue(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[\"", key, "\"]: value must match [A-Za-z0-9_.:-]{1,32}, but is \"",
                       absl::CEscape(value.substr(0, 64)), "\""));
    }
  }
  return absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

Ingestor::Ingestor(MetricRegistry* registry, Storage* storage, const Clock* clock,
                   IngestOptions options)
    : registry_(registry), storage_(storage), clock_(clock), options_(options) {}

absl::StatusOr<v1::SubmitReportsResponse> Ingestor::Submit(
    const v1::SubmitReportsRequest& request) {
  DENIABLE_ASSIGN_OR_RETURN(ValidatedBatch batch, Validate(request));
  DENIABLE_ASSIGN_OR_RETURN(AppendResult result, storage_->AppendReports(batch.rows));
  v1::SubmitReportsResponse response;
  response.set_accepted(static_cast<uint32_t>(result.accepted));
  response.set_duplicates(static_cast<uint32_t>(result.duplicates));
  for (std::string& name : batch.stale_metrics) response.add_stale_metrics(std::move(name));
  return response;
}

void Ingestor::SubmitAsync(const v1::SubmitReportsRequest& request, SubmitCallback done) {
  absl::StatusOr<ValidatedBatch> validated = Validate(request);
  if (!validated.ok()) {
    std::move(done)(validated.status());
    return;
  }
  auto batch = std::make_unique<ValidatedBatch>(*std::move(validated));
  const absl::Span<const ReportRow> rows = batch->rows;
  storage_->AppendReportsAsync(rows, [batch = std::move(batch), done = std::move(done)](
                                         absl::StatusOr<AppendResult> result) mutable {
    if (!result.ok()) {
      std::move(done)(result.status());
      return;
    }
    v1::SubmitReportsResponse response;
    response.set_accepted(static_cast<uint32_t>(result->accepted));
    response.set_duplicates(static_cast<uint32_t>(result->duplicates));
    for (std::string& name : batch->stale_metrics) response.add_stale_metrics(std::move(name));
    std::move(done)(std::move(response));
  });
}

absl::StatusOr<ValidatedBatch> Ingestor::Validate(const v1::SubmitReportsRequest& request) {
  const int size = request.reports_size();
  if (size == 0) return absl::InvalidArgumentError("reports: the batch is empty");
  if (size > options_.max_batch_reports) {
    return absl::InvalidArgumentError(absl::StrCat("reports: the batch has ", size,
                                                   " reports, more than the limit of ",
                                                   options_.max_batch_reports));
  }
  const absl::Time now = clock_->Now();
  const int64_t latest_allowed = absl::ToUnixSeconds(now + options_.max_future_skew);
  const int64_t earliest_allowed = absl::ToUnixSeconds(now - options_.max_report_age);
  absl::flat_hash_map<std::string, std::shared_ptr<const MetricInfo>> metrics;
  std::vector<std::string> stale;
  std::vector<ReportRow> rows;
  rows.reserve(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) {
    const v1::Report& report = request.reports(i);
    const std::string field = absl::StrCat("reports[", i, "]");
    auto it = metrics.find(report.metric());
    if (it == metrics.end()) {
      absl::StatusOr<std::shared_ptr<const MetricInfo>> info = registry_->Find(report.metric());
      if (!info.ok()) {
        if (absl::IsNotFound(info.status())) {
          return absl::NotFoundError(absl::StrCat(field, ".metric: unknown metric \"",
                                                  absl::CEscape(report.metric()), "\""));
        }
        return info.status();
      }
      it = metrics.emplace(report.metric(), *std::move(info)).first;
    }
    const MetricInfo& metric = *it->second;
    if (metric.Find(report.design_version()) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".design_version: metric \"", report.metric(), "\" has no design version ",
          report.design_version(), " (current version is ", metric.current().version, ")"));
    }
    if (report.design_version() != metric.current().version &&
        std::find(stale.begin(), stale.end(), report.metric()) == stale.end()) {
      stale.push_back(report.metric());
    }
    if (report.bit() > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".bit: must be 0 or 1, but is ", report.bit()));
    }
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
    if (t > latest_allowed) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".event_time_seconds: ", t,
                                                     " is in the future (latest allowed is ",
                                                     latest_allowed, ")"));
    }
    if (t < earliest_allowed) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".event_time_seconds: ", t, " is too old (earliest allowed is ",
                       earliest_allowed, ", the server's maximum report age is ",
                       absl::FormatDuration(options_.max_report_age), ")"));
    }
    DENIABLE_ASSIGN_OR_RETURN(std::string labels,
                              CanonicalLabels(report.labels(), absl::StrCat(field, ".labels")));
    ReportRow row;
    row.metric_id = metric.id;
    row.design_version = report.design_version();
    row.bit = report.bit() == 1;
    std::memcpy(row.report_id.data(), report.report_id().data(), row.report_id.size());
    row.event_time_seconds = t;
    row.labels = std::move(labels);
    rows.push_back(std::move(row));
  }
  return ValidatedBatch{std::move(rows), std::move(stale)};
}

}  // namespace deniable::server
