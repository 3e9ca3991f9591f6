// Commands of heavy-hitters metrics (values are strings; docs/cli.md, "Heavy hitters"): `top`
// (the most frequent values, found with no candidates), `frequency` (the shares of given values)
// and `replay --string_column` (one fresh device per CSV row, then the values found next to their
// true shares in the file).
#include "tools/cli/heavy_hitters_commands.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/random/distributions.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "deniable/client/secure_bit_gen.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/heavy_hitters_advice.h"
#include "deniable/convert/mechanism_convert.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "google/protobuf/struct.pb.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/cli_flags.h"
#include "tools/cli/cli_kinds.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/heavy_hitters_output.h"
#include "tools/cli/output.h"
#include "tools/cli/query_call.h"
#include "tools/cli/survey_replay.h"

ABSL_FLAG(uint32_t, max_length, 0,
          "create-metric: a heavy_hitters metric's longest value in bytes (1 to 64; 0 = 32)");
ABSL_FLAG(uint32_t, max_prefixes, 0,
          "top: prefixes kept per discovery level (1 to 4096; 0 = 64): more finds rarer values, "
          "slower");
ABSL_FLAG(std::string, value, "", "frequency: one candidate value (a string)");
ABSL_FLAG(std::string, values_file, "",
          "frequency: a file of candidate values, one per line (at most 10 000)");
ABSL_FLAG(bool, estimation_group_only, false,
          "frequency: estimate from the held-out estimation group only: set it for values "
          "chosen by looking at this data (e.g. from `top`)");
ABSL_FLAG(double, find_share, 0,
          "plan (heavy_hitters): the share of devices holding a value that `top` should find, "
          "in (0, 1), e.g. 0.02");
ABSL_FLAG(double, find_probability, 0.9,
          "plan (heavy_hitters): the probability of finding a value of --find_share, in (0, 1)");
ABSL_FLAG(std::string, string_column, "",
          "replay: the column of a heavy-hitters metric's values (strings); one fresh device "
          "per row");

namespace deniable::tools {
namespace {

// A value for people: as is when printable ASCII, else C-escaped, quoted either way.
std::string Shown(const std::string& value) {
  return absl::StrCat("\"", absl::CHexEscape(value), "\"");
}

}  // namespace

std::string FormatTopValues(const v1::TopValues& t) {
  std::string out = absl::StrFormat(
      "metric %s (design version %d, eps %.4g per report): %d devices, %d in the held-out "
      "estimation group\n",
      t.metric(), t.design_version(), t.epsilon(), t.devices(), t.estimation_reports());
  if (t.reports_of_older_versions() > 0) {
    absl::StrAppendFormat(&out, "  (%d reports of older design versions not used)\n",
                          t.reports_of_older_versions());
  }
  absl::StrAppendFormat(&out,
                        "detection threshold %.2f%%: a value with a smaller share may be missed "
                        "(found with probability 0.9 at this share)\n",
                        100 * t.detection_threshold());
  out += HeavyHittersCentralLine(t);
  if (t.values_size() == 0) {
    out += "no value found above the noise\n";
    return out;
  }
  absl::StrAppendFormat(&out, "%-4s %-34s %8s  %-19s %-19s %10s\n", "#", "value", "share",
                        absl::StrFormat("%.0f%% interval", 100 * t.confidence_level()),
                        "simultaneous", "devices");
  int rank = 0;
  for (const v1::ValueShare& v : t.values()) {
    absl::StrAppendFormat(
        &out, "%-4d %-34s %7.2f%%  [%5.2f%%, %5.2f%%]  [%5.2f%%, %5.2f%%] %10.0f%s\n", ++rank,
        Shown(v.value()), 100 * v.share(), 100 * v.lower(), 100 * v.upper(),
        100 * v.simultaneous_lower(), 100 * v.simultaneous_upper(), v.count(),
        v.above_threshold() ? "  above threshold" : "");
  }
  absl::StrAppendFormat(
      &out, "simultaneous: all %d values tested at once at %.0f%% (Sidak, each at %.4g%%)\n",
      t.tested(), 100 * t.confidence_level(), 100 * t.per_value_level());
  return out;
}

namespace {

// --window=day|week|month: the range becomes that whole window (CalendarWindowRange), which the
// collector counts by devices; a usage error message, or empty.
template <typename Request>
std::string SetRange(Request* request) {
  if (const std::string usage = SetMetricRangeLevel(request); !usage.empty()) return usage;
  if (!FlagGiven("window")) return "";
  absl::StatusOr<TimeWindow> window =
      CalendarWindowRange(absl::GetFlag(FLAGS_window), TimeFlags(), absl::Now());
  if (!window.ok()) return std::string(window.status().message());
  request->set_start_time_seconds(window->start_seconds);
  request->set_end_time_seconds(window->end_seconds);
  return "";
}

// Under the table of a --window query: how devices were counted.
template <typename Request>
std::function<int(const v1::TopValues&)> WindowNote(const Request& request) {
  if (!FlagGiven("window")) return nullptr;
  const int64_t start = request.start_time_seconds();
  return [start](const v1::TopValues&) {
    if (!absl::GetFlag(FLAGS_json)) {
      std::cout << HeavyHittersWindowLine(absl::GetFlag(FLAGS_window), start);
    }
    return 0;
  };
}

}  // namespace

int Top() {
  v1::GetTopValuesRequest request;
  if (const std::string usage = SetRange(&request); !usage.empty()) return FailUsage(usage);
  request.set_max_prefixes(absl::GetFlag(FLAGS_max_prefixes));
  return Call("top", &v1::QueryService::Stub::GetTopValues, request, &FormatTopValues,
              WindowNote(request));
}

int Frequency() {
  v1::GetFrequenciesRequest request;
  if (const std::string usage = SetRange(&request); !usage.empty()) return FailUsage(usage);
  request.set_estimation_group_only(absl::GetFlag(FLAGS_estimation_group_only));
  if (FlagGiven("value")) request.add_values(absl::GetFlag(FLAGS_value));
  if (const std::string file = absl::GetFlag(FLAGS_values_file); !file.empty()) {
    std::ifstream in(file);
    if (!in) return FailUsage("--values_file: cannot open \"" + file + "\"");
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      request.add_values(line);
    }
  }
  if (request.values_size() == 0) {
    return FailUsage("frequency needs --value=V or --values_file=F (one value per line)");
  }
  return Call("frequency", &v1::QueryService::Stub::GetFrequencies, request, &FormatTopValues,
              WindowNote(request));
}

int PlanHeavyHittersDesign(const v1::DesignParameters& design) {
  if (!FlagGiven("find_share")) {
    return FailUsage(
        "--find_share: a heavy-hitters plan needs the share of devices holding a value that "
        "`top` should find, in (0, 1) (e.g. --find_share=0.02)");
  }
  const double level = absl::GetFlag(FLAGS_level);
  absl::StatusOr<HeavyHittersPlan> plan = PlanHeavyHitters(
      design, absl::GetFlag(FLAGS_find_share), absl::GetFlag(FLAGS_find_probability), level,
      absl::GetFlag(FLAGS_max_prefixes));
  if (!plan.ok()) {
    // The planner's fields under their flags' names.
    std::string message(plan.status().message());
    if (absl::StartsWith(message, "share")) {
      message = "--find_" + message;
    } else if (absl::StartsWith(message, "probability")) {
      message = "--find_" + message;
    } else if (absl::StartsWith(message, "confidence_level")) {
      message = "--level: " + message;
    } else if (absl::StartsWith(message, "max_prefixes")) {
      message = "--" + message;
    }
    return FailUsage(message);
  }
  if (absl::GetFlag(FLAGS_json)) {
    google::protobuf::Struct out;
    auto& f = *out.mutable_fields();
    f["mechanism"].set_string_value("heavy_hitters");
    f["epsilon"].set_number_value(plan->epsilon);
    f["maxLength"].set_number_value(plan->max_length);
    f["share"].set_number_value(plan->share);
    f["probability"].set_number_value(plan->probability);
    f["confidenceLevel"].set_number_value(plan->confidence_level);
    f["maxPrefixes"].set_number_value(plan->max_prefixes);
    f["devicesNeeded"].set_number_value(static_cast<double>(plan->devices_needed));
    f["assumption"].set_string_value(plan->assumption);
    PrintJson(out);
  } else {
    std::cout << FormatHeavyHittersPlan(*plan);
  }
  return 0;
}

absl::StatusOr<ReplayStringsResult> ReplayStrings(const std::vector<std::string>& values,
                                                  const std::string& metric,
                                                  client::ReportTransport& transport,
                                                  absl::BitGenRef gen) {
  DENIABLE_ASSIGN_OR_RETURN(v1::GetDesignResponse design,
                            transport.GetDesign(metric, absl::Seconds(10)));
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const Mechanism> mechanism,
                            MechanismForWire(design.design()));
  if (!mechanism->TakesStrings()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "--string_column: metric \"", metric, "\" is a ", ReportKindName(mechanism->kind()),
        " metric; string values are for a heavy_hitters metric"));
  }
  BitGenDraws draws(gen);
  ReplayStringsResult result;
  const int64_t precision = std::max<int64_t>(1, design.time_precision_seconds());
  const int64_t now = absl::ToUnixSeconds(absl::Now()) / precision * precision;
  v1::SubmitReportsRequest batch;
  auto send = [&]() -> absl::Status {
    if (batch.reports_size() == 0) return absl::OkStatus();
    DENIABLE_ASSIGN_OR_RETURN(v1::SubmitReportsResponse response,
                              transport.SubmitReports(batch, absl::Seconds(30)));
    result.rejected += response.rejections_size();
    result.devices += batch.reports_size() - response.rejections_size();
    batch.clear_reports();
    return absl::OkStatus();
  };
  for (size_t i = 0; i < values.size(); ++i) {
    // One fresh device per row: its group, then its one report.
    const uint32_t group = mechanism->DrawDeviceGroup(draws);
    absl::StatusOr<WireAnswer> answer = mechanism->RandomizeString(values[i], group, draws);
    if (!answer.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--string_column: record ", i + 2, ": ", answer.status().message()));
    }
    v1::Report* report = batch.add_reports();
    report->set_metric(metric);
    report->set_design_version(design.design().version());
    report->set_design_fingerprint(design.design_fingerprint());
    report->set_event_time_seconds(now);
    // A fresh device's only report is its first in its day, week and month: a whole-window
    // `top --window` counts every row once, as it counts an SDK's devices.
    report->mutable_window_firsts()->set_day(true);
    report->mutable_window_firsts()->set_week(true);
    report->mutable_window_firsts()->set_month(true);
    std::string id(16, '\0');
    for (char& c : id) c = static_cast<char>(absl::Uniform<uint32_t>(gen, 0, 256));
    report->set_report_id(id);
    WireAnswerToProto(*answer, report);
    ++result.true_counts[values[i]];
    if (batch.reports_size() == 1000) DENIABLE_RETURN_IF_ERROR(send());
  }
  DENIABLE_RETURN_IF_ERROR(send());
  return result;
}

int ReplayStringColumn(const std::string& metric, const std::string& csv,
                       const std::string& column) {
  absl::StatusOr<std::vector<std::vector<std::string>>> records = ParseCsv(csv);
  if (!records.ok()) return FailUsage(std::string(records.status().message()));
  if (records->empty()) return FailUsage("--csv: \"" + csv + "\" has no header row");
  const std::vector<std::string>& header = records->front();
  const auto at = std::find(header.begin(), header.end(), column);
  if (at == header.end()) {
    return FailUsage("--string_column: the CSV has no column \"" + column + "\"");
  }
  const size_t index = static_cast<size_t>(at - header.begin());
  std::vector<std::string> values;
  for (size_t r = 1; r < records->size(); ++r) {
    if (index >= (*records)[r].size()) {
      return FailUsage(
          absl::StrCat("--csv: record ", r + 1, " has no field for column \"", column, "\""));
    }
    values.push_back((*records)[r][index]);
  }
  absl::StatusOr<std::shared_ptr<client::ReportTransport>> transport = Transport();
  if (!transport.ok()) return FailUsage(std::string(transport.status().message()));
  client::SecureBitGen gen;
  absl::StatusOr<ReplayStringsResult> result = ReplayStrings(values, metric, **transport, gen);
  if (!result.ok()) {
    std::fprintf(stderr, "deniable: replay: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr,
               "deniable: replay: %lld devices reported %zu distinct values (%lld "
               "rejected)\n",
               static_cast<long long>(result->devices), result->true_counts.size(),
               static_cast<long long>(result->rejected));
  // The values found, each beside its true share in the file.
  v1::GetTopValuesRequest request;
  request.set_metric(metric);
  return Call("top", &v1::QueryService::Stub::GetTopValues, request, &FormatTopValues,
              std::function<int(const v1::TopValues&)>([&](const v1::TopValues& top) {
                if (absl::GetFlag(FLAGS_json)) return 0;
                std::printf("true shares in %s:\n", csv.c_str());
                for (const v1::ValueShare& v : top.values()) {
                  const auto it = result->true_counts.find(v.value());
                  const int64_t n = it == result->true_counts.end() ? 0 : it->second;
                  std::printf("  %-34s estimated %6.2f%%  true %6.2f%%\n",
                              absl::StrCat("\"", absl::CHexEscape(v.value()), "\"").c_str(),
                              100 * v.share(), 100.0 * n / std::max<size_t>(1, values.size()));
                }
                return 0;
              }));
}

void RegisterHeavyHittersCommands() {
  static const bool registered = [] {
    CliKind kind;
    kind.design_names = "for string values heavy_hitters";
    kind.design_from_flags =
        [](absl::string_view design) -> absl::StatusOr<std::optional<v1::DesignParameters>> {
      if (design != "heavy_hitters") return std::nullopt;
      // Values are strings; the server draws the hash salt (docs/cli.md, "Heavy hitters").
      v1::DesignParameters d;
      d.mutable_heavy_hitters()->set_epsilon(absl::GetFlag(FLAGS_epsilon));
      d.mutable_heavy_hitters()->set_max_length(absl::GetFlag(FLAGS_max_length));
      return d;
    };
    kind.plan = [](const v1::DesignParameters& design) -> std::optional<int> {
      if (!design.has_heavy_hitters()) return std::nullopt;
      return PlanHeavyHittersDesign(design);
    };
    kind.replay = []() -> std::optional<int> {
      const std::string strings = absl::GetFlag(FLAGS_string_column);
      if (strings.empty()) return std::nullopt;
      if (!absl::GetFlag(FLAGS_column).empty() || !absl::GetFlag(FLAGS_value_column).empty()) {
        return FailUsage("--string_column: a heavy-hitters metric's replay reads only that column");
      }
      return ReplayStringColumn(absl::GetFlag(FLAGS_metric), absl::GetFlag(FLAGS_csv), strings);
    };
    AddHeavyHittersOutput(&kind);
    RegisterCliKind(std::move(kind));
    return true;
  }();
  (void)registered;
}

}  // namespace deniable::tools
