// Commands that act as devices or probes: replay (a CSV survey through the SDK) and health.
#include <cstdio>
#include <iostream>
#include <map>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/common/status_macros.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tools/cli/categorical_flags.h"
#include "tools/cli/categorical_output.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/cli_flags.h"
#include "tools/cli/cli_kinds.h"
#include "tools/cli/import_transport.h"
#include "tools/cli/numeric_flags.h"
#include "tools/cli/numeric_output.h"
#include "tools/cli/output.h"
#include "tools/cli/replay_progress.h"
#include "tools/cli/replay_times.h"
#include "tools/cli/survey_replay.h"

namespace deniable::tools {

namespace {

// Lists the reports the collector rejected for good on stderr: how many, and the first few with
// their CSV record and the collector's reason.
void PrintRejections(const std::vector<ReplayRejection>& rejections) {
  if (rejections.empty()) return;
  constexpr size_t kShown = 10;
  std::fprintf(stderr, "deniable: replay: the collector rejected %zu reports for good:\n",
               rejections.size());
  for (size_t i = 0; i < rejections.size() && i < kShown; ++i) {
    std::fprintf(stderr, "  record %lld: %s\n", static_cast<long long>(rejections[i].record),
                 rejections[i].reason.c_str());
  }
  if (rejections.size() > kShown) {
    std::fprintf(stderr, "  ... and %zu more\n", rejections.size() - kShown);
  }
}

// Sets each row's event time from --time_column (with --time_format) or --spread; neither:
// leaves them at 0 (now). Errors: INVALID_ARGUMENT naming the flag or the record.
absl::Status AssignEventTimes(std::vector<SurveyRow>* rows) {
  const std::string spread_flag = absl::GetFlag(FLAGS_spread);
  const bool by_column = !absl::GetFlag(FLAGS_time_column).empty();
  if (by_column && !spread_flag.empty()) {
    return absl::InvalidArgumentError("give --time_column or --spread, not both");
  }
  if (by_column) {
    const std::string format = absl::GetFlag(FLAGS_time_format);
    for (SurveyRow& row : *rows) {
      absl::StatusOr<int64_t> t = ParseEventTime(row.time_value, format);
      if (!t.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("csv: record ", row.record, ": ", t.status().message()));
      }
      row.event_time_seconds = *t;
    }
  } else if (!spread_flag.empty()) {
    absl::StatusOr<absl::Duration> spread = ParseSpread(spread_flag);
    if (!spread.ok()) return spread.status();
    const std::vector<int64_t> times = SpreadEventTimes(static_cast<int64_t>(rows->size()),
                                                        absl::Now(), *spread, kReplaySpreadSeed);
    for (size_t i = 0; i < rows->size(); ++i) (*rows)[i].event_time_seconds = times[i];
  }
  return absl::OkStatus();
}

// The transport of --import (import_transport.h). Errors: INVALID_ARGUMENT naming --import when
// --token or the answers' times are missing; NOT_FOUND naming --csv.
absl::StatusOr<std::shared_ptr<ImportTransport>> MakeImportTransport(
    const std::shared_ptr<grpc::Channel>& channel) {
  const std::string token = absl::GetFlag(FLAGS_token);
  if (token.empty()) {
    return absl::InvalidArgumentError(
        "--import: a historical import needs an analyst token; give --token (or set "
        "DENIABLE_TOKEN)");
  }
  if (absl::GetFlag(FLAGS_time_column).empty() && absl::GetFlag(FLAGS_spread).empty()) {
    return absl::InvalidArgumentError(
        "--import: give the answers' times with --time_column (or --spread); without them every "
        "answer would be dated now");
  }
  DENIABLE_ASSIGN_OR_RETURN(std::string digest, FileSha256(absl::GetFlag(FLAGS_csv), "csv"));
  return std::make_shared<ImportTransport>(
      channel, [](grpc::ClientContext* context) { SetDeadline(context); }, token,
      std::move(digest));
}

}  // namespace

// A replay is of a survey: a metric that does not exist yet is created as a survey question,
// answered once per device (reporting_period=once unless --reporting_period is given), with the
// design flags of create-metric (a yes/no metric without them: two coins), so that a survey
// spread over weeks gets its respondents' interval (docs/cli.md). Returns 0 when the metric
// exists or was created, else the exit code of the failure.
int CreateSurveyMetricIfMissing(client::ReportTransport& transport,
                                const std::shared_ptr<grpc::Channel>& channel,
                                const std::string& metric, bool categorical, bool numeric) {
  absl::StatusOr<v1::GetDesignResponse> design =
      transport.GetDesign(metric, absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds)));
  if (design.ok() || design.status().code() != absl::StatusCode::kNotFound) return 0;
  if (categorical && absl::GetFlag(FLAGS_categories).empty()) {
    return FailUsage("replay: metric \"" + metric +
                     "\" does not exist; give its --categories (and --design, --epsilon) to "
                     "create it as a survey question, or create it with create-metric");
  }
  if (numeric && absl::GetFlag(FLAGS_range).empty()) {
    return FailUsage("replay: metric \"" + metric +
                     "\" does not exist; give its --range=LO,HI (and --epsilon) to create it "
                     "as a survey question, or create it with create-metric");
  }
  if (!categorical && !numeric && absl::GetFlag(FLAGS_design).empty() &&
      absl::GetFlag(FLAGS_epsilon) == 0) {
    absl::SetFlag(&FLAGS_design, "two_coin");
  }
  absl::StatusOr<v1::CreateMetricRequest> request =
      CreateMetricRequestFromFlags(metric, /*once_by_default=*/true);
  if (!request.ok()) return FailUsage("replay: " + std::string(request.status().message()));
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::Metric created;
  grpc::Status status = stub->CreateMetric(&context, *request, &created);
  if (!status.ok()) return Fail("replay: create-metric", status);
  std::cerr << "deniable: replay: created metric \"" << metric << "\" as "
            << (request->reporting_once()
                    ? "a survey question, answered once per device (reporting_period=once): "
                      "every respondent is counted once however long the answers are spread"
                    : "a metric reporting every period (--reporting_period)")
            << "\n";
  return 0;
}

// Checks that `metric`'s design fits the replay's flags (a numeric metric for --value_column,
// categories unless --yes) and copies its categories into `spec`. Returns 0, or the exit code
// after printing the error.
int CheckReplayDesign(client::ReportTransport& transport, const std::string& metric,
                      bool categorical, bool numeric, SurveySpec* spec) {
  absl::StatusOr<v1::GetDesignResponse> design =
      transport.GetDesign(metric, absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds)));
  if (!design.ok()) {
    return Fail("replay: design",
                grpc::Status(static_cast<grpc::StatusCode>(design.status().code()),
                             std::string(design.status().message())));
  }
  if (numeric && !design->has_range()) {
    return FailUsage("replay: metric \"" + metric +
                     "\" is not a numeric metric: --value_column replays the values of a "
                     "metric created with --range; use --column (and --yes for yes/no)");
  }
  if (!numeric && design->has_range()) {
    return FailUsage("replay: metric \"" + metric +
                     "\" is a numeric metric: give --value_column=COLUMN (its values)");
  }
  if (categorical && design->categories_size() == 0) {
    return FailUsage("replay: metric \"" + metric +
                     "\" is a yes/no metric: give --yes=VALUE (the --column value meaning yes)");
  }
  spec->categories.assign(design->categories().begin(), design->categories().end());
  return 0;
}

// The true answers per --group_by value: known here only because this is a replay of a survey
// with known answers; the server never sees them. Rejected respondents are not in the server's
// count, so they are left out of the truth too.
GroupTruth TrueAnswersByGroup(const std::vector<SurveyRow>& rows,
                              const std::vector<ReplayRejection>& rejections,
                              const std::string& group_by) {
  absl::flat_hash_set<int64_t> rejected_records;
  for (const ReplayRejection& r : rejections) rejected_records.insert(r.record);
  GroupTruth truth;
  for (const SurveyRow& row : rows) {
    if (rejected_records.contains(row.record)) continue;
    auto it = row.labels.find(group_by);
    auto& [devices, yes] = truth[it == row.labels.end() ? "" : it->second];
    ++devices;
    yes += row.answer ? 1 : 0;
  }
  return truth;
}

// GetPrevalence of the replayed metric, printed against the truth (or as JSON), with a note when
// the metric reports every period. Returns 0, or the exit code after printing the error.
int QueryAndPrintReplay(const std::shared_ptr<grpc::Channel>& channel, const std::string& metric,
                        const std::string& group_by, v1::SimultaneousMethod simultaneous,
                        const std::vector<double>& quantiles, const ReplayResult& result,
                        const SurveySpec& spec, const GroupTruth& truth, bool numeric,
                        bool categorical) {
  v1::GetPrevalenceRequest request;
  request.set_metric(metric);
  request.set_confidence_level(absl::GetFlag(FLAGS_level));
  request.set_group_by(group_by);
  absl::StatusOr<v1::IntervalMethod> method = MethodFromFlag();
  if (!method.ok()) return FailUsage(std::string(method.status().message()));
  request.set_method(*method);
  request.set_simultaneous(simultaneous);
  for (double level : quantiles) request.add_quantiles(level);
  auto stub = v1::QueryService::NewStub(channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  v1::Prevalence prevalence;
  grpc::Status status = stub->GetPrevalence(&context, request, &prevalence);
  if (!status.ok()) return Fail("prevalence after replay", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(prevalence);
  } else if (numeric) {
    std::cout << FormatNumericReplay(result, spec, prevalence,
                                     ComputeNumericTruth(result.true_values, prevalence));
  } else if (categorical) {
    std::cout << FormatCategoricalReplay(result, spec, prevalence);
  } else {
    std::cout << FormatReplay(result, spec, prevalence, truth);
  }
  // A survey spread over several reporting periods into a metric that reports every period is
  // served with the bound for devices that may repeat (docs/statistics.md section 4.4): say how
  // a survey question gets its respondents' interval.
  if (prevalence.estimand() == "mean_period_prevalence") {
    std::cerr << "note: metric \"" << metric << "\" reports every period, so answers spread over "
              << prevalence.periods()
              << " periods get the interval for devices that may report in each (wider); a "
                 "survey question, answered once per device, is created with `deniable "
                 "create-metric --reporting_period=once` (docs/statistics.md section 4.4)\n";
  }
  return 0;
}

// --blank into `spec`. Errors: INVALID_ARGUMENT "--blank must be no or skip, ...".
absl::Status BlankFromFlag(SurveySpec* spec) {
  const std::string blank = absl::GetFlag(FLAGS_blank);
  if (blank == "no") {
    spec->blank = BlankAnswers::kNo;
  } else if (blank == "skip") {
    spec->blank = BlankAnswers::kSkip;
  } else if (!blank.empty()) {
    return absl::InvalidArgumentError("--blank must be no or skip, but is \"" + blank + "\"");
  }
  return absl::OkStatus();
}

// The replay's transport: an import's (kept in `importer`, which tags each report with its
// record) with --import, else the SDK's. Errors: the transport's flags'.
absl::StatusOr<std::shared_ptr<client::ReportTransport>> ReplayTransport(
    const std::shared_ptr<grpc::Channel>& channel, bool import,
    std::shared_ptr<ImportTransport>* importer) {
  if (!import) return Transport();
  absl::StatusOr<std::shared_ptr<ImportTransport>> made = MakeImportTransport(channel);
  if (!made.ok()) return made.status();
  *importer = *made;
  return std::static_pointer_cast<client::ReportTransport>(*importer);
}

int Replay() {
  SurveySpec spec;
  spec.csv_path = absl::GetFlag(FLAGS_csv);
  spec.column = absl::GetFlag(FLAGS_column);
  spec.yes_value = absl::GetFlag(FLAGS_yes);
  spec.label_columns = absl::GetFlag(FLAGS_label_columns);
  spec.time_column = absl::GetFlag(FLAGS_time_column);
  spec.value_column = absl::GetFlag(FLAGS_value_column);
  for (const CliKind& kind : CliKinds()) {  // the kinds of their own files (cli_kinds.h)
    if (!kind.replay) continue;
    if (std::optional<int> code = kind.replay(); code.has_value()) return *code;
  }
  const bool numeric = !spec.value_column.empty();
  if (numeric && (!spec.column.empty() || !spec.yes_value.empty())) {
    return FailUsage(
        "--value_column: a numeric metric's replay reads its values from --value_column; "
        "--column and --yes are for yes/no and categorical metrics");
  }
  absl::StatusOr<std::vector<double>> quantiles = QuantilesFromFlag(absl::GetFlag(FLAGS_quantiles));
  if (!quantiles.ok()) return FailUsage(std::string(quantiles.status().message()));
  if (absl::Status blank = BlankFromFlag(&spec); !blank.ok()) {
    return FailUsage(std::string(blank.message()));
  }
  const int32_t in_flight = absl::GetFlag(FLAGS_devices_in_flight);
  if (in_flight < 1 || in_flight > 256) {
    return FailUsage(absl::StrCat("--devices_in_flight must be 1 to 256, but is ", in_flight));
  }
  const std::string metric = absl::GetFlag(FLAGS_metric);
  const std::string group_by = absl::GetFlag(FLAGS_group_by);
  if (spec.csv_path.empty() || (spec.column.empty() && !numeric) || metric.empty()) {
    return FailUsage(
        "replay needs --metric, --csv, and --column (with --yes unless the metric has "
        "categories) or, for a numeric metric, --value_column");
  }
  absl::StatusOr<v1::SimultaneousMethod> simultaneous =
      ParseSimultaneous(absl::GetFlag(FLAGS_simultaneous));
  if (!simultaneous.ok()) return FailUsage(std::string(simultaneous.status().message()));
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Channel();
  if (!channel.ok()) return FailUsage(std::string(channel.status().message()));
  const bool import = absl::GetFlag(FLAGS_import);
  std::shared_ptr<ImportTransport> importer;
  absl::StatusOr<std::shared_ptr<client::ReportTransport>> transport =
      ReplayTransport(*channel, import, &importer);
  if (!transport.ok()) return FailUsage(std::string(transport.status().message()));
  const bool categorical = spec.yes_value.empty() && !numeric;
  if (int created =
          CreateSurveyMetricIfMissing(**transport, *channel, metric, categorical, numeric);
      created != 0) {
    return created;
  }
  if (categorical || numeric) {  // the metric's categories or range: check every row up front
    if (int checked = CheckReplayDesign(**transport, metric, categorical, numeric, &spec);
        checked != 0) {
      return checked;
    }
  }
  int64_t blank_skipped = 0;
  absl::StatusOr<std::vector<SurveyRow>> rows = ReadSurvey(spec, &blank_skipped);
  if (!rows.ok()) return FailUsage(rows.status().ToString());
  if (absl::Status times = AssignEventTimes(&*rows); !times.ok()) {
    return FailUsage(std::string(times.message()));
  }
  if (blank_skipped > 0) {
    std::fprintf(stderr, "deniable: replay: %lld respondents with a blank answer left out\n",
                 static_cast<long long>(blank_skipped));
  }
  client::ReporterOptions options;
  options.rpc_timeout = absl::Seconds(absl::GetFlag(FLAGS_timeout_seconds));
  // An import's reports are older than the SDK's own age limit by design: the collector judges
  // them against its --max_import_age_seconds.
  if (import) options.max_report_age = absl::InfiniteDuration();
  ProgressLine progress(stderr, StderrIsTerminal(), SystemClock::Default());
  absl::StatusOr<ReplayResult> result = ReplaySurvey(
      *rows, metric, *std::move(transport), options, nullptr, nullptr,
      [&progress](int64_t done, int64_t total) { progress.Update(done, total); },
      import ? std::function<void(const SurveyRow&)>(
                   [&importer](const SurveyRow& row) { importer->SetRecord(row.record); })
             : nullptr,
      in_flight);
  progress.Finish();
  if (!result.ok() && import) {
    // A refused import (not an analyst token, imports off) exits with the code of its status.
    return Fail("replay --import",
                grpc::Status(static_cast<grpc::StatusCode>(result.status().code()),
                             std::string(result.status().message())));
  }
  if (!result.ok()) {
    std::fprintf(stderr, "deniable: replay failed: %s\n", result.status().ToString().c_str());
    return 1;
  }
  PrintRejections(result->rejections);
  const GroupTruth truth = TrueAnswersByGroup(*rows, result->rejections, group_by);
  if (int printed = QueryAndPrintReplay(*channel, metric, group_by, *simultaneous, *quantiles,
                                        *result, spec, truth, numeric, categorical);
      printed != 0) {
    return printed;
  }
  return result->rejections.empty() ? 0 : 1;  // docs/cli.md: some reports were rejected
}

int Health() {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = Channel();
  if (!channel.ok()) return FailUsage(std::string(channel.status().message()));
  auto stub = grpc::health::v1::Health::NewStub(*channel);
  grpc::ClientContext context;
  SetDeadline(&context);
  grpc::health::v1::HealthCheckResponse response;
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(absl::GetFlag(FLAGS_service));
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) return Fail("health", status);
  if (absl::GetFlag(FLAGS_json)) {
    PrintJson(response);
    std::cout << "\n";
  } else {
    std::cout << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status())
              << "\n";
  }
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace deniable::tools
