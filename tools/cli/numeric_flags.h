// Flag values of the deniable tool for numeric metrics (issue 28), parsed without flags or
// network so that tests can check them.
//
// A numeric metric declares the range its values are clipped to and a numeric design
// (docs/cli.md, "Numeric metrics"):
//   --range=LO,HI [--unit=U]            the values' range and unit (create-metric)
//   --design=numeric --epsilon=E        the server picks the mechanism: a histogram (--buckets
//                                       > 1 or --bucket_edges) gets d_bit_flip, else one_bit_mean
//   --mechanism=one_bit_mean|d_bit_flip chooses it instead
//   --buckets=K | --bucket_edges=e0,..  d_bit_flip's buckets (one_bit_mean's rounding grid)
//   --sampled_buckets=D                 d_bit_flip's d (default k)
// (Ding, Kulkarni and Yekhanin, NeurIPS 2017; common/numeric.h.) With --range and no --design,
// --epsilon alone means --design=numeric.
#ifndef DENIABLE_TOOLS_CLI_NUMERIC_FLAGS_H_
#define DENIABLE_TOOLS_CLI_NUMERIC_FLAGS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"

namespace deniable::tools {

// The flags of a numeric design as given (empty / 0 / {} when absent).
struct NumericFlagValues {
  std::string design{};                     // --design
  double epsilon = 0;                       // --epsilon, nats
  std::string range{};                      // --range, "LO,HI"
  std::string unit{};                       // --unit
  std::string mechanism{};                  // --mechanism
  int buckets = 0;                          // --buckets, 0: not given
  std::vector<std::string> bucket_edges{};  // --bucket_edges
  int sampled_buckets = 0;                  // --sampled_buckets, 0: not given
};

// True for the --design names of numeric designs: numeric, one_bit_mean, d_bit_flip.
bool IsNumericDesignName(absl::string_view design);

// --range ("LO,HI", both finite, LO < HI) and --unit (at most 32 characters). nullopt when
// --range is not given. Errors: INVALID_ARGUMENT naming "--range" or "--unit" (also a --unit
// without --range).
absl::StatusOr<std::optional<v1::NumericRange>> RangeFromFlagValues(const NumericFlagValues& flags);

// The numeric design named by the flags (file comment), or nullopt when none of them asks for
// one (no --range, --mechanism, --buckets, --bucket_edges, --sampled_buckets and --design not
// numeric). `range` is the metric's (create-metric) or nullopt (add-version: the server takes
// the metric's). Bucket edges, when given, must start at LO and end at HI of --range.
// Errors: INVALID_ARGUMENT naming the flag: "--epsilon" (not > 0), "--design" (a yes/no or
// categorical design with --range), "--mechanism" (not one_bit_mean or d_bit_flip),
// "--buckets" (outside [1, 256], or with --bucket_edges), "--bucket_edges" (not numbers, fewer
// than 2 or more than 257, not ascending, not from LO to HI), "--sampled_buckets" (negative,
// more than the buckets, or with one_bit_mean).
absl::StatusOr<std::optional<v1::DesignParameters>> NumericDesignFromFlagValues(
    const NumericFlagValues& flags, const std::optional<v1::NumericRange>& range);

// --quantiles as given (comma-separated levels in (0, 1), e.g. 0.5,0.9). Errors:
// INVALID_ARGUMENT naming "--quantiles" for a value that is not a number in (0, 1).
absl::StatusOr<std::vector<double>> QuantilesFromFlag(const std::vector<std::string>& values);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_NUMERIC_FLAGS_H_
