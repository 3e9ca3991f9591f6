// Replaying a survey through the SDK: one simulated device (its own Reporter) per respondent.
//
// Used by `deniable replay` and by the statistical tests. The true answers are read from the
// CSV here only to be handed to each device's randomizer, and their share is returned so a demo
// can print it next to the server's estimate.
#ifndef DENIABLE_TOOLS_CLI_SURVEY_REPLAY_H_
#define DENIABLE_TOOLS_CLI_SURVEY_REPLAY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/statusor.h"
#include "deniable/client/reporter.h"
#include "deniable/client/transport.h"
#include "deniable/common/clock.h"

namespace deniable::tools {

struct SurveyRow {
  int64_t record = 0;  // the CSV record it came from (1 is the header), for messages
  bool answer = false;
  // A metric with categories (SurveySpec::yes_value empty): the true category, the --column
  // value with surrounding whitespace removed; empty for a yes/no survey.
  std::string category;
  // A numeric metric (SurveySpec::value_column set): the respondent's value, as read.
  bool has_value = false;
  double value = 0;
  std::map<std::string, std::string> labels;  // label name -> value, from the label columns
  std::string time_value;                     // the --time_column field as read (empty without one)
  int64_t event_time_seconds = 0;             // when the device answers (replay_times.h); 0: now
};

// What a blank answer (an empty or all-whitespace --column field) means. Refused by default:
// counting blanks as "no" (what replay did before) biases the prevalence down without a word.
enum class BlankAnswers {
  kRefuse,  // INVALID_ARGUMENT naming the record
  kNo,      // a blank answer is "no"
  kSkip,    // the respondent is left out (no device, no report)
};

struct SurveySpec {
  std::string csv_path;
  std::string column;  // the yes/no column, e.g. "vote"
  // The value meaning "yes", e.g. "Y". Empty: a metric with categories, whose names are the
  // --column values (`categories`).
  std::string yes_value;
  std::vector<std::string> label_columns;  // columns sent as public labels, e.g. {"region"}
  BlankAnswers blank = BlankAnswers::kRefuse;
  std::string time_column{};  // read into SurveyRow::time_value when not empty
  // With yes_value empty: the metric's categories; every answer must be one of them.
  std::vector<std::string> categories = {};
  // A numeric metric: the column of the values (then `column` and `yes_value` are unused); every
  // value must be a finite number.
  std::string value_column = {};
};

// The records of a CSV file (RFC 4180 quoting, parsed by libcsv), the header first.
// Errors: NOT_FOUND naming "csv" and the path; INVALID_ARGUMENT for malformed quoting.
absl::StatusOr<std::vector<std::vector<std::string>>> ParseCsv(const std::string& path);

// Reads a CSV with a header row (RFC 4180 quoting, parsed by libcsv).
// Errors: NOT_FOUND if the file cannot be opened; INVALID_ARGUMENT naming a missing column, a
// row with the wrong number of fields (with its line number), an empty label value, or (with
// BlankAnswers::kRefuse) a blank answer, naming its record and --blank; for a metric with
// categories, an answer that is not one of `categories` (naming its record and the categories,
// not the value) and BlankAnswers::kNo (meaningless there); for a numeric metric
// (`value_column`), a value that is not a finite number (naming its record, not the value) and
// BlankAnswers::kNo. `blank_skipped`, if not
// null, receives the number of rows left out by BlankAnswers::kSkip.
absl::StatusOr<std::vector<SurveyRow>> ReadSurvey(const SurveySpec& spec,
                                                  int64_t* blank_skipped = nullptr);

// What happened to one respondent's report that the collector rejected for good.
struct ReplayRejection {
  int64_t record = 0;  // the CSV record (SurveyRow::record)
  std::string reason;  // the collector's reason, naming the field
};

struct ReplayResult {
  int64_t devices = 0;     // reports the collector acknowledged (stored now or already)
  int64_t duplicates = 0;  // of those, ids it already had
  int64_t true_yes = 0;    // acknowledged respondents whose true answer is "yes"
  // Metrics with categories: acknowledged respondents per true category.
  std::map<std::string, int64_t> true_categories;
  // Numeric metrics: the acknowledged respondents' true values, as read (not clipped).
  std::vector<double> true_values;
  // Reports rejected for good (SubmitReportsResponse.rejections with permanent = true), in the
  // order of the rows; their respondents are left out of `devices` and `true_yes`.
  std::vector<ReplayRejection> rejections;
};

// Called after each respondent with (respondents done, respondents in all).
using ReplayProgressFn = std::function<void(int64_t done, int64_t total)>;

// Sends each row's answer through a fresh Reporter (one device each) over `transport`: its
// value with ReportValue(metric, value) when SurveyRow::has_value, its category with
// Report(metric, category) when SurveyRow::category is set, else its yes/no answer.
// `gen` and `clock` null: each device uses SecureBitGen and the system clock (production
// randomness). Non-null: all devices draw from `gen` (seeded simulations) and read `clock`.
// A row with event_time_seconds > 0 is answered at that time (its device's clock stands there;
// the SDK rounds it down to the metric's time precision) instead of `clock`'s or the system's.
// A report the collector rejects for good is recorded in ReplayResult::rejections and the replay
// goes on with the next row. `before_row`, when set, runs with each row before its device reports
// (`deniable replay --import` tells its transport the row's record, import_transport.h). Errors:
// the first other device error (fetching the design, a transient send failure that Flush() gave up
// on), which ends the replay.
// `devices_in_flight` > 1: that many devices report at once, each row still its own device (a
// thread each, sharing `transport`, which must be thread-safe as every ReportTransport is), when
// the devices' randomness and clock are production's (`gen` and `clock` null) and `before_row`
// is unset; otherwise the rows go one after another. The result is the same as one after another
// (rejections in the rows' order), except after an error: rows after the failing one may have
// been reported already (each device still reports at most once). `progress` is then called from
// the devices' threads, one call at a time. Thread-safe as long as `transport` is.
absl::StatusOr<ReplayResult> ReplaySurvey(
    const std::vector<SurveyRow>& rows, const std::string& metric,
    std::shared_ptr<client::ReportTransport> transport, const client::ReporterOptions& options,
    absl::BitGenRef* gen = nullptr, const Clock* clock = nullptr,
    const ReplayProgressFn& progress = nullptr,
    const std::function<void(const SurveyRow&)>& before_row = nullptr, int devices_in_flight = 1);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_SURVEY_REPLAY_H_
