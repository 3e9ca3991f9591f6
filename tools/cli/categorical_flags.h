// Flag values of the deniable tool for metrics with categories (issue 14), parsed without flags
// or network so that tests can check them.
//
// A categorical design is chosen like a yes/no one, by --design and --epsilon (docs/cli.md):
//   --design=k_rr --epsilon=E         generalized randomized response (direct encoding)
//   --design=oue  --epsilon=E         optimized unary encoding
//   --design=olh  --epsilon=E         optimized local hashing
//   --design=categorical --epsilon=E  the mechanism of least variance for (k, E), chosen by the
//                                     server (k-RR when k < 3 e^E + 2, else OUE) and stored
// (Wang, Blocki, Li and Jha, USENIX Security 2017; common/categorical.h). With --categories and
// no --design, --epsilon alone means --design=categorical.
#ifndef DENIABLE_TOOLS_CLI_CATEGORICAL_FLAGS_H_
#define DENIABLE_TOOLS_CLI_CATEGORICAL_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::tools {

// True for the --design names of categorical designs: k_rr, oue, olh, categorical.
bool IsCategoricalDesignName(absl::string_view design);

// The categorical design named by --design (see the file comment) with --epsilon (nats); the
// server checks epsilon's range and that the metric has categories (add-version takes them
// from the metric). `has_categories`: --categories was given, so an empty --design means
// "categorical". nullopt when --design names a yes/no design (or is empty without categories).
// Errors: INVALID_ARGUMENT naming "--epsilon" (not > 0) or "--categories" (given with a yes/no
// design).
absl::StatusOr<std::optional<v1::DesignParameters>> CategoricalDesignFromFlagValues(
    absl::string_view design, double epsilon, bool has_categories);

// --categories as given (comma-separated names); the server checks the names. Errors:
// INVALID_ARGUMENT naming "--categories" for fewer than 2 names or an empty one.
absl::StatusOr<std::vector<std::string>> CategoriesFromFlag(const std::vector<std::string>& names);

// --shares as given (comma-separated numbers); the server checks range, count and sum. Errors:
// INVALID_ARGUMENT naming "--shares" for a value that is not a number.
absl::StatusOr<std::vector<double>> SharesFromFlag(const std::vector<std::string>& values);

// --simultaneous: "sidak" | "bonferroni"; empty is SIMULTANEOUS_METHOD_UNSPECIFIED (the
// server's default, Sidak). Errors: INVALID_ARGUMENT naming "--simultaneous".
absl::StatusOr<v1::SimultaneousMethod> ParseSimultaneous(absl::string_view text);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_CATEGORICAL_FLAGS_H_
