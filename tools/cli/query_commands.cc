// Commands that call the QueryService: metrics, prevalence, series, difference; and design and
// plan, which compute locally (design --metric asks the server for the metric's design).
#include <algorithm>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "deniable/convert/design_advice.h"
#include "deniable/v1/query_service.grpc.pb.h"
#include "google/protobuf/struct.pb.h"
#include "tools/cli/categorical_flags.h"
#include "tools/cli/categorical_output.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/cli_flags.h"
#include "tools/cli/cli_kinds.h"
#include "tools/cli/cli_parse.h"
#include "tools/cli/numeric_flags.h"
#include "tools/cli/numeric_output.h"
#include "tools/cli/numeric_plan.h"
#include "tools/cli/output.h"
#include "tools/cli/query_call.h"
#include "tools/cli/series_plot.h"

namespace deniable::tools {
namespace {

absl::StatusOr<v1::VersionCombination> CombinationFromFlag() {
  const std::string c = absl::GetFlag(FLAGS_combination);
  if (c.empty() || c == "by_reports") return v1::BY_REPORTS;
  if (c == "inverse_variance") return v1::INVERSE_VARIANCE;
  return absl::InvalidArgumentError(
      absl::StrCat("--combination must be by_reports or inverse_variance, but is \"", c, "\""));
}

}  // namespace

absl::StatusOr<v1::CreateMetricRequest> CreateMetricRequestFromFlags(const std::string& name,
                                                                     bool once_by_default) {
  v1::CreateMetricRequest request;
  request.set_name(name);
  request.set_description(absl::GetFlag(FLAGS_description));
  request.set_time_precision_seconds(
      static_cast<uint32_t>(absl::GetFlag(FLAGS_time_precision_seconds)));
  request.set_min_reports(static_cast<uint32_t>(absl::GetFlag(FLAGS_min_reports)));
  const std::string period_text = absl::GetFlag(FLAGS_reporting_period);
  request.set_reporting_once(period_text == "once" ||
                             (once_by_default && !FlagGiven("reporting_period")));
  absl::StatusOr<uint32_t> period =
      ParseReportingPeriod(request.reporting_once() ? "" : period_text);
  if (!period.ok()) return period.status();
  request.set_reporting_period_seconds(*period);
  request.set_window_firsts_off(!absl::GetFlag(FLAGS_window_flags));
  absl::StatusOr<v1::Randomization> randomization =
      ParseRandomization(absl::GetFlag(FLAGS_randomization));
  if (!randomization.ok()) return randomization.status();
  request.set_randomization(*randomization);
  request.set_allow_no_privacy(absl::GetFlag(FLAGS_allow_no_privacy));
  if (absl::GetFlag(FLAGS_retention_days) < 0) {
    return absl::InvalidArgumentError("--retention_days: must be >= 0 (0 = keep forever), but is " +
                                      std::to_string(absl::GetFlag(FLAGS_retention_days)));
  }
  request.set_retention_days(static_cast<uint32_t>(absl::GetFlag(FLAGS_retention_days)));
  absl::StatusOr<v1::RetentionPolicy> retention =
      ParseRetentionPolicy(absl::GetFlag(FLAGS_retention_policy), "--retention_policy");
  if (!retention.ok()) return retention.status();
  request.set_retention_policy(*retention);
  if (!absl::GetFlag(FLAGS_categories).empty()) {
    absl::StatusOr<std::vector<std::string>> categories =
        CategoriesFromFlag(absl::GetFlag(FLAGS_categories));
    if (!categories.ok()) return categories.status();
    for (const std::string& c : *categories) request.add_categories(c);
  }
  absl::StatusOr<std::optional<v1::NumericRange>> range = RangeFromFlagValues(NumericFlags());
  if (!range.ok()) return range.status();
  if (range->has_value()) *request.mutable_range() = **range;
  absl::StatusOr<v1::DesignParameters> design = DesignFromFlags();
  if (!design.ok()) return design.status();
  if (design->has_numeric() && !range->has_value()) {
    return absl::InvalidArgumentError(
        "--range: a numeric metric needs the range of its values, --range=LO,HI (e.g. "
        "--range=0,120 --unit=years)");
  }
  *request.mutable_design() = *design;
  return request;
}

int CreateMetric() {
  absl::StatusOr<v1::CreateMetricRequest> request =
      CreateMetricRequestFromFlags(absl::GetFlag(FLAGS_name), /*once_by_default=*/false);
  if (!request.ok()) return FailUsage(std::string(request.status().message()));
  return Call("create-metric", &v1::QueryService::Stub::CreateMetric, *request, &FormatMetric);
}

int AddVersion() {
  v1::AddDesignVersionRequest request;
  request.set_metric(absl::GetFlag(FLAGS_metric));
  request.set_allow_no_privacy(absl::GetFlag(FLAGS_allow_no_privacy));
  absl::StatusOr<v1::DesignParameters> design = DesignFromFlags();
  if (!design.ok()) return FailUsage(std::string(design.status().message()));
  *request.mutable_design() = *design;
  return Call("add-version", &v1::QueryService::Stub::AddDesignVersion, request, &FormatMetric);
}

int DeleteMetric(const std::string& name) {
  const std::string yes = absl::GetFlag(FLAGS_yes);
  if (!yes.empty() && yes != "true") {
    return FailUsage("--yes: delete-metric takes --yes without a value, but got \"" + yes + "\"");
  }
  if (yes.empty()) {
    std::cerr << "This deletes metric \"" << name
              << "\" with all its design versions, reports and counts, for good.\n"
                 "Type the metric's name to confirm: "
              << std::flush;
    std::string typed;
    if (!std::getline(std::cin, typed) || typed != name) {
      return FailUsage("delete-metric: not confirmed (the typed name is not \"" + name +
                       "\"); nothing was deleted. Pass --yes to skip the question");
    }
  }
  v1::DeleteMetricRequest request;
  request.set_metric(name);
  return Call(
      "delete-metric", &v1::QueryService::Stub::DeleteMetric, request,
      +[](const v1::DeleteMetricResponse&) { return std::string("metric deleted\n"); });
}

int SetRetention(const std::string& name) {
  const int days = absl::GetFlag(FLAGS_days);
  if (days < 0) {
    return FailUsage("set-retention: --days=N is required (N >= 0 days; 0 keeps reports forever)");
  }
  absl::StatusOr<v1::RetentionPolicy> policy =
      ParseRetentionPolicy(absl::GetFlag(FLAGS_policy), "--policy");
  if (!policy.ok()) return FailUsage(std::string(policy.status().message()));
  v1::SetRetentionRequest request;
  request.set_metric(name);
  request.set_retention_days(static_cast<uint32_t>(days));
  request.set_retention_policy(*policy);
  return Call("set-retention", &v1::QueryService::Stub::SetRetention, request, &FormatMetric);
}

int ListMetrics() {
  return Call("list-metrics", &v1::QueryService::Stub::ListMetrics, v1::ListMetricsRequest(),
              &FormatMetricList);
}

int Alerts() {
  return Call("alerts", &v1::QueryService::Stub::ListAlerts, v1::ListAlertsRequest(),
              &FormatAlerts);
}

int Prevalence() {
  v1::GetPrevalenceRequest request;
  if (const std::string usage = SetMetricRangeLevel(&request); !usage.empty()) {
    return FailUsage(usage);
  }
  request.set_group_by(absl::GetFlag(FLAGS_group_by));
  absl::StatusOr<v1::IntervalMethod> method = MethodFromFlag();
  if (!method.ok()) return FailUsage(std::string(method.status().message()));
  request.set_method(*method);
  absl::StatusOr<v1::VersionCombination> combination = CombinationFromFlag();
  if (!combination.ok()) return FailUsage(std::string(combination.status().message()));
  request.set_combination(*combination);
  absl::StatusOr<v1::SimultaneousMethod> simultaneous =
      ParseSimultaneous(absl::GetFlag(FLAGS_simultaneous));
  if (!simultaneous.ok()) return FailUsage(std::string(simultaneous.status().message()));
  request.set_simultaneous(*simultaneous);
  absl::StatusOr<v1::IntervalKind> kind = ParseIntervalKind(absl::GetFlag(FLAGS_interval_kind));
  if (!kind.ok()) return FailUsage(std::string(kind.status().message()));
  request.set_interval(*kind);
  request.set_anytime_tuned_reports(absl::GetFlag(FLAGS_anytime_tuned_reports));
  absl::StatusOr<std::vector<double>> quantiles = QuantilesFromFlag(absl::GetFlag(FLAGS_quantiles));
  if (!quantiles.ok()) return FailUsage(std::string(quantiles.status().message()));
  for (double level : *quantiles) request.add_quantiles(level);
  request.set_manipulation_reports(absl::GetFlag(FLAGS_manipulation_reports));
  return Call("prevalence", &v1::QueryService::Stub::GetPrevalence, request, &FormatPrevalence);
}

int Series() {
  v1::GetSeriesRequest request;
  request.set_metric(absl::GetFlag(FLAGS_metric));
  absl::StatusOr<TimeWindow> window = SeriesWindow(TimeFlags(), absl::Now());
  if (!window.ok()) return FailUsage(std::string(window.status().message()));
  request.set_start_time_seconds(window->start_seconds);
  request.set_end_time_seconds(window->end_seconds);
  request.set_confidence_level(absl::GetFlag(FLAGS_level));
  const std::string bucket = absl::GetFlag(FLAGS_bucket);
  if (bucket == "hour") {
    request.set_bucket(v1::HOUR);
  } else if (bucket == "day") {
    request.set_bucket(v1::DAY);
  } else if (bucket == "week") {
    request.set_bucket(v1::WEEK);
  } else if (bucket == "month") {
    request.set_bucket(v1::MONTH);
  } else {
    return FailUsage("--bucket must be hour, day, week or month");
  }
  absl::StatusOr<v1::IntervalMethod> method = MethodFromFlag();
  if (!method.ok()) return FailUsage(std::string(method.status().message()));
  request.set_method(*method);
  absl::StatusOr<v1::VersionCombination> combination = CombinationFromFlag();
  if (!combination.ok()) return FailUsage(std::string(combination.status().message()));
  request.set_combination(*combination);
  absl::StatusOr<v1::SimultaneousMethod> simultaneous =
      ParseSimultaneous(absl::GetFlag(FLAGS_simultaneous));
  if (!simultaneous.ok()) return FailUsage(std::string(simultaneous.status().message()));
  request.set_simultaneous(*simultaneous);
  absl::StatusOr<v1::IntervalKind> kind = ParseIntervalKind(absl::GetFlag(FLAGS_interval_kind));
  if (!kind.ok()) return FailUsage(std::string(kind.status().message()));
  request.set_interval(*kind);
  request.set_anytime_tuned_reports(absl::GetFlag(FLAGS_anytime_tuned_reports));
  request.set_manipulation_reports(absl::GetFlag(FLAGS_manipulation_reports));
  const std::string plot = absl::GetFlag(FLAGS_plot);
  if (!plot.empty() && !absl::EndsWith(plot, ".svg") && !absl::EndsWith(plot, ".pdf")) {
    return FailUsage(absl::StrCat("--plot must name a .svg or .pdf file, but is \"", plot, "\""));
  }
  return Call("series", &v1::QueryService::Stub::GetSeries, request, &FormatSeries,
              std::function<int(const v1::Series&)>([plot](const v1::Series& series) {
                if (plot.empty()) return 0;
                if (std::any_of(series.buckets().begin(), series.buckets().end(),
                                [](const v1::Prevalence& b) { return IsCategorical(b); })) {
                  std::fprintf(
                      stderr,
                      "deniable: series: --plot draws yes/no and numeric metrics; use --json "
                      "for the shares of a metric with categories (the dashboard draws "
                      "them)\n");
                  return 2;
                }
                const absl::Status written = WriteSeriesPlot(series, plot);
                if (!written.ok()) {
                  std::fprintf(stderr, "deniable: series: %s\n", written.ToString().c_str());
                  return 1;
                }
                std::fprintf(stderr, "deniable: series: chart written to %s\n", plot.c_str());
                return 0;
              }));
}

int Difference() {
  v1::GetDifferenceRequest request;
  const std::string first = absl::GetFlag(FLAGS_metric);
  const std::string second =
      absl::GetFlag(FLAGS_metric2).empty() ? first : absl::GetFlag(FLAGS_metric2);
  absl::StatusOr<std::pair<TimeWindow, TimeWindow>> windows =
      DifferenceWindows(TimeFlags(), /*same_metric=*/first == second, absl::Now());
  if (!windows.ok()) return FailUsage(std::string(windows.status().message()));
  request.mutable_first()->set_metric(first);
  request.mutable_first()->set_start_time_seconds(windows->first.start_seconds);
  request.mutable_first()->set_end_time_seconds(windows->first.end_seconds);
  request.mutable_second()->set_metric(second);
  request.mutable_second()->set_start_time_seconds(windows->second.start_seconds);
  request.mutable_second()->set_end_time_seconds(windows->second.end_seconds);
  absl::StatusOr<v1::VersionCombination> combination = CombinationFromFlag();
  if (!combination.ok()) return FailUsage(std::string(combination.status().message()));
  request.mutable_first()->set_combination(*combination);
  request.mutable_second()->set_combination(*combination);
  request.set_confidence_level(absl::GetFlag(FLAGS_level));
  return Call("difference", &v1::QueryService::Stub::GetDifference, request, &FormatDifference);
}

// A categorical design's categories (--categories) and shares (--shares) into a DescribeDesign
// or PlanSurvey request; a usage error message, or empty.
template <typename Request>
std::string SetCategoricalFlags(Request* request,
                                google::protobuf::RepeatedField<double>* shares_field) {
  const bool categorical = request->design().has_categorical();
  if (!categorical) {
    if (!absl::GetFlag(FLAGS_shares).empty()) {
      return "--shares: only with a categorical design (--categories=...)";
    }
    return "";
  }
  absl::StatusOr<std::vector<std::string>> names =
      CategoriesFromFlag(absl::GetFlag(FLAGS_categories));
  if (!names.ok()) {
    return absl::StrCat(names.status().message(),
                        "; a categorical design needs the names of its categories");
  }
  for (const std::string& name : *names) request->add_categories(name);
  absl::StatusOr<std::vector<double>> shares = SharesFromFlag(absl::GetFlag(FLAGS_shares));
  if (!shares.ok()) return std::string(shares.status().message());
  for (double share : *shares) shares_field->Add(share);
  return "";
}

int DescribeDesign() {
  v1::DescribeDesignRequest request;
  if (!absl::GetFlag(FLAGS_metric).empty()) {
    request.set_metric(absl::GetFlag(FLAGS_metric));
    if (!absl::GetFlag(FLAGS_shares).empty()) {
      absl::StatusOr<std::vector<double>> shares = SharesFromFlag(absl::GetFlag(FLAGS_shares));
      if (!shares.ok()) return FailUsage(std::string(shares.status().message()));
      for (double share : *shares) request.add_category_prior(share);
    }
  } else {
    absl::StatusOr<v1::DesignParameters> design = DesignFromFlags();
    if (!design.ok()) return FailUsage(std::string(design.status().message()));
    *request.mutable_design() = *design;
    if (design->has_numeric()) {  // the values' range gives the bucket edges and the unit
      absl::StatusOr<std::optional<v1::NumericRange>> range = RangeFromFlagValues(NumericFlags());
      if (!range.ok()) return FailUsage(std::string(range.status().message()));
      if (!range->has_value()) {
        return FailUsage(
            "--range: a numeric design is described over its values' range, "
            "--range=LO,HI");
      }
      *request.mutable_range() = **range;
    } else {
      const std::string usage = SetCategoricalFlags(&request, request.mutable_category_prior());
      if (!usage.empty()) return FailUsage(usage);
    }
  }
  request.set_prior(absl::GetFlag(FLAGS_prior));
  if (absl::GetFlag(FLAGS_n) < 0 || absl::GetFlag(FLAGS_n) > kMaxDescribedReports) {
    return FailUsage(absl::StrCat("--n must be in [0, ", kMaxDescribedReports,
                                  "] (reports; 0 = not shown), but is ", absl::GetFlag(FLAGS_n)));
  }
  request.set_n(absl::GetFlag(FLAGS_n));
  auto format = +[](const v1::DesignDescription& d) { return FormatDesignDescription(d); };
  if (request.has_design()) {  // pure math (proto/convert/design_advice.h), without a server
    return PrintLocal("design", ::deniable::DescribeDesign(request), format);
  }
  return Call("design", &v1::QueryService::Stub::DescribeDesign, request, format);
}

namespace {

// `plan` for a numeric design (numeric_plan.h), computed locally; --json prints its fields.
int PlanNumericDesign(const v1::DesignParameters& design) {
  absl::StatusOr<std::optional<v1::NumericRange>> range = RangeFromFlagValues(NumericFlags());
  if (!range.ok()) return FailUsage(std::string(range.status().message()));
  if (!range->has_value()) {
    return FailUsage("--range: a numeric plan needs the values' range, --range=LO,HI");
  }
  if (!FlagGiven("half_width")) {
    return FailUsage(
        "--half_width: give the target, in the values' unit for a mean (one_bit_mean, e.g. "
        "--half_width=2 for +/- 2 years) or as a share for every bucket (d_bit_flip, e.g. 0.05)");
  }
  absl::StatusOr<v1::SimultaneousMethod> simultaneous =
      ParseSimultaneous(absl::GetFlag(FLAGS_simultaneous));
  if (!simultaneous.ok()) return FailUsage(std::string(simultaneous.status().message()));
  absl::StatusOr<NumericPlan> plan =
      PlanNumeric(design.numeric(), **range, absl::GetFlag(FLAGS_half_width),
                  absl::GetFlag(FLAGS_level), *simultaneous);
  if (!plan.ok()) return FailUsage(std::string(plan.status().message()));
  if (absl::GetFlag(FLAGS_json)) {
    google::protobuf::Struct out;
    auto& f = *out.mutable_fields();
    f["mechanism"].set_string_value(plan->mechanism);
    f["epsilon"].set_number_value(plan->epsilon);
    f["lo"].set_number_value(plan->lo);
    f["hi"].set_number_value(plan->hi);
    f["unit"].set_string_value(plan->unit);
    f["halfWidth"].set_number_value(plan->half_width);
    f["confidenceLevel"].set_number_value(plan->confidence_level);
    f["devicesNeeded"].set_number_value(static_cast<double>(plan->devices_needed));
    if (plan->mechanism == "d_bit_flip") {
      f["buckets"].set_number_value(plan->buckets);
      f["sampledBuckets"].set_number_value(plan->sampled_buckets);
      f["simultaneousMethod"].set_string_value(plan->simultaneous);
      f["perBucketLevel"].set_number_value(plan->per_bucket_level);
    }
    f["assumption"].set_string_value(plan->assumption);
    PrintJson(out);
  } else {
    std::cout << FormatNumericPlan(*plan);
  }
  return 0;
}

}  // namespace

int Plan() {
  v1::PlanSurveyRequest request;
  absl::StatusOr<v1::DesignParameters> design = DesignFromFlags();
  if (!design.ok()) return FailUsage(std::string(design.status().message()));
  if (design->has_numeric()) return PlanNumericDesign(*design);
  for (const CliKind& kind : CliKinds()) {  // the kinds of their own files (cli_kinds.h)
    if (!kind.plan) continue;
    if (std::optional<int> code = kind.plan(*design); code.has_value()) return *code;
  }
  *request.mutable_design() = *design;
  const std::string usage = SetCategoricalFlags(&request, request.mutable_assumed_shares());
  if (!usage.empty()) return FailUsage(usage);
  absl::StatusOr<v1::SimultaneousMethod> simultaneous =
      ParseSimultaneous(absl::GetFlag(FLAGS_simultaneous));
  if (!simultaneous.ok()) return FailUsage(std::string(simultaneous.status().message()));
  if (*simultaneous != v1::SIMULTANEOUS_METHOD_UNSPECIFIED && !design->has_categorical()) {
    return FailUsage("--simultaneous: only with a categorical design (--categories=...)");
  }
  request.set_simultaneous(*simultaneous);
  request.set_half_width(absl::GetFlag(FLAGS_half_width));
  request.set_confidence_level(absl::GetFlag(FLAGS_level));
  request.set_assumed_prevalence(absl::GetFlag(FLAGS_prior));
  request.set_window(absl::GetFlag(FLAGS_window));
  request.set_reports_per_device(absl::GetFlag(FLAGS_reports_per_device));
  // Pure math (proto/convert/design_advice.h): no server needed.
  return PrintLocal("plan", ::deniable::PlanSurvey(request), &FormatPlan);
}

}  // namespace deniable::tools
