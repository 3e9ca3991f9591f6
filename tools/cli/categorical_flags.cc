#include "tools/cli/categorical_flags.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace deniable::tools {

bool IsCategoricalDesignName(absl::string_view design) {
  return design == "k_rr" || design == "oue" || design == "olh" || design == "categorical";
}

absl::StatusOr<std::optional<v1::DesignParameters>> CategoricalDesignFromFlagValues(
    absl::string_view design, double epsilon, bool has_categories) {
  const bool categorical = IsCategoricalDesignName(design) || (design.empty() && has_categories);
  if (!categorical) {
    if (has_categories && !design.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--categories: a metric with categories needs --design=k_rr, oue, olh or categorical, "
          "but --design is ",
          design));
    }
    return std::nullopt;
  }
  if (!(epsilon > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--epsilon: a categorical design needs epsilon > 0 nats, but it is ", epsilon));
  }
  v1::DesignParameters parameters;
  v1::Categorical* c = parameters.mutable_categorical();
  c->set_epsilon(epsilon);
  if (design == "k_rr") {
    c->set_mechanism(v1::K_RR);
  } else if (design == "oue") {
    c->set_mechanism(v1::OUE);
  } else if (design == "olh") {
    c->set_mechanism(v1::OLH);
  } else {
    c->set_mechanism(v1::CATEGORICAL_MECHANISM_UNSPECIFIED);  // the server picks
  }
  return parameters;
}

absl::StatusOr<std::vector<std::string>> CategoriesFromFlag(const std::vector<std::string>& names) {
  if (names.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("--categories: a question with categories has at least 2, but ", names.size(),
                     " given (comma-separated, e.g. --categories=Y,N,U,A)"));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--categories: name ", i + 1, " of ", names.size(), " is empty"));
    }
  }
  return names;
}

absl::StatusOr<std::vector<double>> SharesFromFlag(const std::vector<std::string>& values) {
  std::vector<double> shares;
  for (size_t i = 0; i < values.size(); ++i) {
    double share = 0;
    if (!absl::SimpleAtod(values[i], &share)) {
      return absl::InvalidArgumentError(absl::StrCat("--shares: value ", i + 1, " of ",
                                                     values.size(), " is not a number: \"",
                                                     values[i], "\""));
    }
    shares.push_back(share);
  }
  return shares;
}

absl::StatusOr<v1::SimultaneousMethod> ParseSimultaneous(absl::string_view text) {
  if (text.empty()) return v1::SIMULTANEOUS_METHOD_UNSPECIFIED;
  if (text == "sidak") return v1::SIDAK;
  if (text == "bonferroni") return v1::BONFERRONI;
  return absl::InvalidArgumentError(
      absl::StrCat("--simultaneous must be sidak or bonferroni, but is \"", text, "\""));
}

}  // namespace deniable::tools
