#include "tools/cli/output.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable::tools {
namespace {

std::string DesignKind(const v1::DesignParameters& p) {
  switch (p.kind_case()) {
    case v1::DesignParameters::kSymmetricEpsilon:
      return absl::StrFormat("symmetric_epsilon(epsilon=%g)", p.symmetric_epsilon().epsilon());
    case v1::DesignParameters::kForcedResponse:
      return absl::StrFormat("forced_response(p=%g, q=%g)", p.forced_response().p(),
                             p.forced_response().q());
    case v1::DesignParameters::kTwoCoin:
      return "two_coin";
    case v1::DesignParameters::kTailsSaysYes:
      return "tails_says_yes";
    case v1::DesignParameters::kUnrelatedQuestion:
      return absl::StrFormat("unrelated_question(P=%g, pi_B=%g)", p.unrelated_question().p(),
                             p.unrelated_question().pi_b());
    case v1::DesignParameters::kMirroredQuestion:
      return absl::StrFormat("mirrored_question(P=%g)", p.mirrored_question().p());
    case v1::DesignParameters::kTruthWithGamma:
      return absl::StrFormat("truth_with_gamma(gamma=%g)", p.truth_with_gamma().gamma());
    case v1::DesignParameters::KIND_NOT_SET:
      break;
  }
  return "unset";
}

std::string Percent(double share) { return absl::StrFormat("%.2f %%", 100.0 * share); }

}  // namespace

const char* StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      break;
  }
  return "UNKNOWN_CODE";
}

std::string FormatDesign(const v1::Design& design) {
  std::string out =
      absl::StrFormat("%s v%d (a = %g, b = %g), epsilon = ", DesignKind(design.parameters()),
                      design.version(), design.a(), design.b());
  if (design.epsilon_infinite()) {
    absl::StrAppend(&out, "infinite (", design.warning(), ")");
  } else {
    absl::StrAppend(&out, absl::StrFormat("%.4f nats", design.epsilon()));
  }
  return out;
}

std::string FormatMetric(const v1::Metric& metric) {
  return absl::StrFormat(
      "metric          %s\ndescription     %s\ndesign          %s\n"
      "time precision  %d s\n",
      metric.name(), metric.description(), FormatDesign(metric.design()),
      metric.time_precision_seconds());
}

std::string FormatMetricList(const v1::ListMetricsResponse& response) {
  std::string out = absl::StrFormat("%-32s %s\n", "METRIC", "DESIGN");
  for (const v1::Metric& m : response.metrics()) {
    absl::StrAppend(&out, absl::StrFormat("%-32s %s\n", m.name(), FormatDesign(m.design())));
  }
  return out;
}

std::string FormatPrevalence(const v1::Prevalence& p) {
  const char* method = v1::IntervalMethod_Name(p.method()).c_str();
  return absl::StrFormat(
      "metric               %s\n"
      "design               %s\n"
      "reports (n)          %d\n"
      "\"yes\" bits           %d (%s of reports)\n"
      "prevalence           %s unbiased, %s clipped to [0, 1]\n"
      "standard error       %s\n"
      "%-20s [%s, %s] (%s%s)\n"
      "estimated true yes   %.1f of %d\n",
      p.metric(), FormatDesign(p.design()), p.n(), p.yes_count(), Percent(p.yes_share()),
      Percent(p.estimate_unbiased()), Percent(p.estimate_clipped()), Percent(p.standard_error()),
      absl::StrFormat("%g %% interval", 100.0 * p.confidence_level()), Percent(p.ci_lower()),
      Percent(p.ci_upper()), method, p.interval_clipped() ? ", clipped to [0, 1]" : "",
      p.estimated_yes_count(), p.n());
}

std::string FormatReplay(const ReplayResult& result, const SurveySpec& spec,
                         const v1::Prevalence& p) {
  const double truth =
      result.devices > 0 ? static_cast<double>(result.true_yes) / result.devices : 0.0;
  const bool covered = p.ci_lower() <= truth && truth <= p.ci_upper();
  std::string out = absl::StrFormat(
      "replayed %d respondents of %s (%s == %s) as %d devices, one randomized report each\n\n",
      result.devices, spec.csv_path, spec.column, spec.yes_value, result.devices);
  absl::StrAppend(&out, FormatPrevalence(p), "\n");
  absl::StrAppend(
      &out,
      absl::StrFormat(
          "server estimate      %s  %g %% interval [%s, %s]\n"
          "true share           %s  (%d / %d, known only to this demo)\n"
          "the interval %s the true share; the estimate is off by %.2f "
          "percentage points (%.2f standard errors)\n",
          Percent(p.estimate_unbiased()), 100.0 * p.confidence_level(), Percent(p.ci_lower()),
          Percent(p.ci_upper()), Percent(truth), result.true_yes, result.devices,
          covered ? "covers" : "misses", 100.0 * (p.estimate_unbiased() - truth),
          p.standard_error() > 0 ? (p.estimate_unbiased() - truth) / p.standard_error() : 0.0));
  return out;
}

}  // namespace deniable::tools
