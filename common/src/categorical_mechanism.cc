#include "deniable/common/categorical_mechanism.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/categorical_coverage.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/categorical_planner.h"
#include "deniable/common/categorical_privacy.h"
#include "deniable/common/privacy.h"
#include "deniable/common/status_macros.h"

namespace deniable {
namespace {

// "reports[i].categorical.bucket: must be ..." from categorical.h's "bucket must be ..." (it names
// the field first).
absl::Status InCategorical(const absl::Status& status, absl::string_view field) {
  const absl::string_view message = status.message();
  const size_t space = message.find(' ');
  if (space == absl::string_view::npos) {
    return absl::Status(status.code(), absl::StrCat(field, ".categorical: ", message));
  }
  return absl::Status(status.code(), absl::StrCat(field, ".categorical.", message.substr(0, space),
                                                  ":", message.substr(space)));
}

}  // namespace

absl::StatusOr<WireAnswer> CategoricalReportMechanism::Randomize(int32_t value,
                                                                 Draws& draws) const {
  DENIABLE_ASSIGN_OR_RETURN(CategoricalReport drawn, RandomizeCategory(design_, value, draws));
  WireAnswer out;
  out.has_categorical = true;
  out.categorical = CategoricalReportToWire(design_, drawn);
  return out;
}

absl::StatusOr<CounterIncrements> CategoricalReportMechanism::ValidateKind(
    const WireAnswer& answer, absl::string_view field, absl::string_view metric) const {
  if (answer.has_numeric) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".numeric: metric \"", metric,
                     "\" is not numeric (it has no range); send a bit or a categorical report"));
  }
  if (!answer.has_categorical) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".categorical: metric \"", metric, "\" has ", design_.k(),
                     " categories: a report must carry its categorical report (and bit 0)"));
  }
  if (answer.bit != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".bit: must be 0 in a report of categorical metric \"", metric,
                     "\" (the answer is in ", field, ".categorical)"));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      CategoricalReport parsed,
      CategoricalReportFromWire(design_, answer.categorical, absl::StrCat(field, ".categorical")));
  if (absl::Status valid = ValidateCategoricalReport(design_, parsed); !valid.ok()) {
    return InCategorical(valid, field);
  }
  CounterIncrements out;
  for (int v = 0; v < design_.k(); ++v) {
    if (Supports(design_, parsed, v)) out.ones.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

absl::StatusOr<MechanismPrivacy> CategoricalReportMechanism::Privacy(
    const PrivacyQuestion& question) const {
  MechanismPrivacy out;
  out.epsilon = Epsilon();
  out.clone_probability = CloneProbability();
  DENIABLE_ASSIGN_OR_RETURN(out.binary,
                            ComputePrivacyFigures(design_.SupportChannel(), question.prior));
  const std::vector<double> prior =
      question.category_prior.empty() ? UniformPrior(design_.k()) : question.category_prior;
  DENIABLE_ASSIGN_OR_RETURN(out.categorical, ComputeCategoricalPrivacyFigures(design_, prior));
  return out;
}

absl::StatusOr<MechanismEstimate> CategoricalReportMechanism::Estimate(
    std::span<const int64_t> counters, const MechanismEstimateOptions& options) const {
  const size_t length = static_cast<size_t>(Layout().length());
  if (counters.size() != length) {
    return absl::InvalidArgumentError(absl::StrCat(
        "counters: a design with k = ", design_.k(), " categories has ", length,
        " counters [n, support_0 .. support_k-1], but ", counters.size(), " are given"));
  }
  DENIABLE_ASSIGN_OR_RETURN(
      CategoricalEstimate e,
      EstimateCategories(design_, counters.subspan(1), counters[0], options.confidence_level,
                         options.method, options.simultaneous));
  MechanismEstimate out;
  out.n = e.n;
  out.confidence_level = e.confidence_level;
  out.method = e.method;
  out.per_coordinate_level = e.per_category_level;
  for (const CategoryEstimate& c : e.categories) {
    CoordinateEstimate o;
    o.successes = c.support_count;
    o.trials = e.n;
    o.success_share = c.support_share;
    o.unbiased = c.unbiased;
    o.clipped = c.consistent;
    o.variance = c.variance;
    o.standard_error = c.standard_error;
    o.interval = c.interval;
    o.simultaneous = c.simultaneous;
    out.coordinates.push_back(o);
  }
  return out;
}

absl::StatusOr<MechanismPlan> CategoricalReportMechanism::Plan(const PlanTarget& target) const {
  DENIABLE_ASSIGN_OR_RETURN(
      CategoricalPlan plan,
      PlanCategoricalSurvey(design_, target.half_width, target.confidence_level,
                            target.simultaneous, target.assumed_shares));
  MechanismPlan out;
  out.reports_needed = plan.reports_needed;
  out.reports_needed_worst_case = plan.reports_needed_worst_case;
  out.categorical = std::move(plan);
  return out;
}

absl::StatusOr<double> CategoricalReportMechanism::ExactCoverage(
    int64_t n, std::span<const double> truth, const MechanismEstimateOptions& options) const {
  return ExactSimultaneousCoverage(design_, n, truth, options.confidence_level, options.method,
                                   options.simultaneous);
}

}  // namespace deniable
