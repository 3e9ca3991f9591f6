#include "tools/cli/survey_replay.h"

#include <csv.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/common/status_macros.h"

namespace deniable::tools {
namespace {

struct CsvState {
  std::vector<std::vector<std::string>> rows{1};
};

void OnField(void* data, size_t size, void* state) {
  static_cast<CsvState*>(state)->rows.back().emplace_back(static_cast<const char*>(data), size);
}

void OnRowEnd(int /*terminator*/, void* state) {
  static_cast<CsvState*>(state)->rows.emplace_back();
}

}  // namespace

absl::StatusOr<std::vector<std::vector<std::string>>> ParseCsv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("csv: cannot open \"", path, "\""));
  struct csv_parser parser;
  if (csv_init(&parser, CSV_APPEND_NULL) != 0) return absl::InternalError("csv: init failed");
  CsvState state;
  char buffer[1 << 16];
  absl::Status status;
  while (in) {
    in.read(buffer, sizeof(buffer));
    const size_t got = static_cast<size_t>(in.gcount());
    if (csv_parse(&parser, buffer, got, OnField, OnRowEnd, &state) != got) {
      status = absl::InvalidArgumentError(
          absl::StrCat("csv: \"", path, "\": ", csv_strerror(csv_error(&parser))));
      break;
    }
  }
  if (status.ok()) csv_fini(&parser, OnField, OnRowEnd, &state);
  csv_free(&parser);
  DENIABLE_RETURN_IF_ERROR(status);
  if (state.rows.back().empty()) state.rows.pop_back();
  return std::move(state.rows);
}

namespace {

int ColumnIndex(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

absl::StatusOr<std::vector<SurveyRow>> ReadSurvey(const SurveySpec& spec, int64_t* blank_skipped) {
  if (blank_skipped != nullptr) *blank_skipped = 0;
  DENIABLE_ASSIGN_OR_RETURN(auto table, ParseCsv(spec.csv_path));
  if (table.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("csv: \"", spec.csv_path, "\" is empty"));
  }
  const bool numeric = !spec.value_column.empty();
  const bool categorical = spec.yes_value.empty() && !numeric;
  if (numeric && spec.blank == BlankAnswers::kNo) {
    return absl::InvalidArgumentError(
        "blank: --blank=no counts a blank answer as \"no\", which a numeric metric does not "
        "have; use --blank=skip");
  }
  if (categorical && spec.blank == BlankAnswers::kNo) {
    return absl::InvalidArgumentError(
        "blank: --blank=no counts a blank answer as \"no\", which a metric with categories "
        "does not have; use --blank=skip");
  }
  const std::vector<std::string>& header = table.front();
  const std::string& answer_column = numeric ? spec.value_column : spec.column;
  const int answer_index = ColumnIndex(header, answer_column);
  if (answer_index < 0) {
    return absl::InvalidArgumentError(absl::StrCat(numeric ? "value_column: \"" : "column: \"",
                                                   answer_column, "\" is not in the CSV header"));
  }
  std::vector<std::pair<std::string, int>> labels;
  for (const std::string& name : spec.label_columns) {
    const int index = ColumnIndex(header, name);
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("label_columns: \"", name, "\" is not in the CSV header"));
    }
    labels.emplace_back(name, index);
  }
  const int time_index = spec.time_column.empty() ? -1 : ColumnIndex(header, spec.time_column);
  if (!spec.time_column.empty() && time_index < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("time_column: \"", spec.time_column, "\" is not in the CSV header"));
  }
  std::vector<SurveyRow> rows;
  rows.reserve(table.size() - 1);
  for (size_t line = 1; line < table.size(); ++line) {
    const std::vector<std::string>& fields = table[line];
    if (fields.size() != header.size()) {
      return absl::InvalidArgumentError(absl::StrCat("csv: record ", line + 1, " has ",
                                                     fields.size(), " fields, the header has ",
                                                     header.size()));
    }
    SurveyRow row;
    row.record = static_cast<int64_t>(line) + 1;
    const std::string& answer = fields[static_cast<size_t>(answer_index)];
    if (absl::StripAsciiWhitespace(answer).empty()) {
      if (spec.blank == BlankAnswers::kRefuse) {
        return absl::InvalidArgumentError(absl::StrCat(
            "csv: record ", line + 1, " has a blank \"", answer_column,
            "\"; say how to read blank answers with --blank=no (count as no) or --blank=skip "
            "(leave the respondent out)"));
      }
      if (spec.blank == BlankAnswers::kSkip) {
        if (blank_skipped != nullptr) ++*blank_skipped;
        continue;
      }
    }
    if (numeric) {
      row.has_value = absl::SimpleAtod(absl::StripAsciiWhitespace(answer), &row.value) &&
                      std::isfinite(row.value);
      if (!row.has_value) {
        return absl::InvalidArgumentError(absl::StrCat("csv: record ", line + 1, ": its \"",
                                                       answer_column, "\" is not a finite number"));
      }
    } else if (categorical) {
      row.category = std::string(absl::StripAsciiWhitespace(answer));
      if (std::find(spec.categories.begin(), spec.categories.end(), row.category) ==
          spec.categories.end()) {
        return absl::InvalidArgumentError(absl::StrCat("csv: record ", line + 1, ": its \"",
                                                       spec.column,
                                                       "\" is not one of the metric's categories (",
                                                       absl::StrJoin(spec.categories, ", "), ")"));
      }
    } else {
      row.answer = answer == spec.yes_value;
    }
    for (const auto& [name, index] : labels) {
      const std::string& value = fields[static_cast<size_t>(index)];
      if (value.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("csv: record ", line + 1, " has an empty \"", name, "\""));
      }
      row.labels[name] = value;
    }
    if (time_index >= 0) row.time_value = fields[static_cast<size_t>(time_index)];
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// What one respondent's device did: its status (OK, or the error that ends the replay), whether
// its report was rejected for good (and why), and the duplicates the collector answered.
struct RowOutcome {
  bool ran = false;
  absl::Status status;
  bool rejected = false;
  std::string reason;
  int64_t duplicates = 0;
};

// One row's device: a fresh Reporter that reports the row's answer and flushes it.
RowOutcome ReplayRow(const SurveyRow& row, const std::string& metric,
                     const std::shared_ptr<client::ReportTransport>& transport,
                     const client::ReporterOptions& options, absl::BitGenRef bits,
                     const Clock* clock, bool seeded) {
  RowOutcome outcome;
  outcome.ran = true;
  client::ReporterOptions device_options = options;
  device_options.background_sending = false;  // each device flushes right away below
  for (const auto& [key, value] : row.labels) device_options.labels[key] = value;
  // A row with its own time: the device's clock stands at it (randomness stays secure).
  FakeClock at(absl::FromUnixSeconds(row.event_time_seconds));
  std::unique_ptr<client::Reporter> device;
  if (row.event_time_seconds > 0) {
    device = client::Reporter::CreateForTesting(transport, device_options, bits, &at);
  } else if (!seeded) {
    device = client::Reporter::Create(transport, device_options);
  } else {
    device = client::Reporter::CreateForTesting(transport, device_options, bits,
                                                clock != nullptr ? clock : SystemClock::Default());
  }
  outcome.status = row.has_value          ? device->ReportValue(metric, row.value)
                   : row.category.empty() ? device->Report(metric, row.answer)
                                          : device->Report(metric, row.category);
  if (!outcome.status.ok()) return outcome;
  const absl::Status flushed = device->Flush();
  absl::StatusOr<client::DeliveryStats> stats = device->Stats();
  if (!stats.ok()) {
    outcome.status = stats.status();
    return outcome;
  }
  if (stats->counters.dropped_rejected > 0) {
    outcome.rejected = true;
    outcome.reason = std::string(flushed.message());
    return outcome;
  }
  outcome.status = flushed;
  outcome.duplicates = stats->counters.duplicates;
  return outcome;
}

// Runs ReplayRow for every row on `threads` threads, each taking the next row not yet taken;
// after an error no thread takes a new row. Returns the outcomes in the rows' order (those not
// run have ran = false).
std::vector<RowOutcome> ReplayRowsConcurrently(
    const std::vector<SurveyRow>& rows, const std::string& metric,
    const std::shared_ptr<client::ReportTransport>& transport,
    const client::ReporterOptions& options, int threads, const ReplayProgressFn& progress) {
  std::vector<RowOutcome> outcomes(rows.size());
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  absl::Mutex progress_mu;
  int64_t done = 0;
  auto work = [&] {
    client::SecureBitGen secure;  // each device's randomness: production's, one per thread
    for (size_t i = next++; i < rows.size() && !failed.load(); i = next++) {
      outcomes[i] = ReplayRow(rows[i], metric, transport, options, secure, nullptr, false);
      if (!outcomes[i].status.ok()) failed = true;
      if (progress) {
        absl::MutexLock lock(&progress_mu);
        progress(++done, static_cast<int64_t>(rows.size()));
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return outcomes;
}

}  // namespace

absl::StatusOr<ReplayResult> ReplaySurvey(
    const std::vector<SurveyRow>& rows, const std::string& metric,
    std::shared_ptr<client::ReportTransport> transport, const client::ReporterOptions& options,
    absl::BitGenRef* gen, const Clock* clock, const ReplayProgressFn& progress,
    const std::function<void(const SurveyRow&)>& before_row, int devices_in_flight) {
  std::vector<RowOutcome> outcomes;
  if (devices_in_flight > 1 && gen == nullptr && clock == nullptr && !before_row) {
    if (progress) progress(0, static_cast<int64_t>(rows.size()));
    outcomes =
        ReplayRowsConcurrently(rows, metric, transport, options, devices_in_flight, progress);
  } else {
    client::SecureBitGen secure;
    outcomes.resize(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      if (progress) progress(static_cast<int64_t>(i), static_cast<int64_t>(rows.size()));
      if (before_row) before_row(rows[i]);
      outcomes[i] =
          ReplayRow(rows[i], metric, transport, options,
                    gen == nullptr ? absl::BitGenRef(secure) : *gen, clock, gen != nullptr);
      if (!outcomes[i].status.ok()) break;
    }
    if (progress) progress(static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows.size()));
  }
  ReplayResult result;
  for (size_t i = 0; i < rows.size(); ++i) {  // in the rows' order, whatever order they ran in
    const SurveyRow& row = rows[i];
    const RowOutcome& outcome = outcomes[i];
    if (!outcome.ran) continue;
    if (outcome.rejected) {
      result.rejections.push_back({row.record, outcome.reason});
      continue;
    }
    DENIABLE_RETURN_IF_ERROR(outcome.status);
    ++result.devices;
    result.duplicates += outcome.duplicates;
    result.true_yes += row.answer ? 1 : 0;
    if (!row.category.empty()) ++result.true_categories[row.category];
    if (row.has_value) result.true_values.push_back(row.value);
  }
  return result;
}

}  // namespace deniable::tools
