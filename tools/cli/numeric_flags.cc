#include "tools/cli/numeric_flags.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace deniable::tools {
namespace {

constexpr int kMaxBuckets = 256;  // NumericDesign: 1 <= k <= 256
constexpr size_t kMaxUnitLength = 32;

bool ParseFinite(absl::string_view text, double* value) {
  return absl::SimpleAtod(absl::StripAsciiWhitespace(text), value) && std::isfinite(*value);
}

bool AsksForNumeric(const NumericFlagValues& f) {
  return IsNumericDesignName(f.design) || !f.range.empty() || !f.mechanism.empty() ||
         f.buckets != 0 || !f.bucket_edges.empty() || f.sampled_buckets != 0;
}

}  // namespace

bool IsNumericDesignName(absl::string_view design) {
  return design == "numeric" || design == "one_bit_mean" || design == "d_bit_flip";
}

absl::StatusOr<std::optional<v1::NumericRange>> RangeFromFlagValues(const NumericFlagValues& f) {
  if (f.range.empty()) {
    if (!f.unit.empty()) {
      return absl::InvalidArgumentError(
          "--unit: the unit of a numeric metric's values goes with --range=LO,HI");
    }
    return std::nullopt;
  }
  const std::vector<absl::string_view> parts = absl::StrSplit(f.range, ',');
  double lo = 0;
  double hi = 0;
  if (parts.size() != 2 || !ParseFinite(parts[0], &lo) || !ParseFinite(parts[1], &hi)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--range: give the values' range as two finite numbers LO,HI (e.g. --range=0,120), but "
        "it is \"",
        f.range, "\""));
  }
  if (!(lo < hi)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--range: LO must be below HI, but the range is ", lo, ",", hi));
  }
  if (f.unit.size() > kMaxUnitLength) {
    return absl::InvalidArgumentError(absl::StrCat("--unit: at most ", kMaxUnitLength,
                                                   " characters, but it has ", f.unit.size()));
  }
  v1::NumericRange range;
  range.set_lo(lo);
  range.set_hi(hi);
  range.set_unit(f.unit);
  return range;
}

absl::StatusOr<std::optional<v1::DesignParameters>> NumericDesignFromFlagValues(
    const NumericFlagValues& f, const std::optional<v1::NumericRange>& range) {
  if (!AsksForNumeric(f)) return std::nullopt;
  if (!f.design.empty() && !IsNumericDesignName(f.design)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--design: a numeric metric (--range, --mechanism, --buckets, --bucket_edges, "
                     "--sampled_buckets) needs --design=numeric (or none), but --design is ",
                     f.design));
  }
  if (!(f.epsilon > 0) || !std::isfinite(f.epsilon)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--epsilon: a numeric design needs a finite epsilon > 0 nats, but it is ", f.epsilon));
  }
  v1::DesignParameters parameters;
  v1::Numeric* numeric = parameters.mutable_numeric();
  numeric->set_epsilon(f.epsilon);
  std::string mechanism = f.mechanism;
  if (f.design == "one_bit_mean" || f.design == "d_bit_flip") {
    if (!mechanism.empty() && mechanism != f.design) {
      return absl::InvalidArgumentError(
          absl::StrCat("--mechanism: is ", mechanism, " but --design is ", f.design));
    }
    mechanism = f.design;
  }
  if (mechanism == "one_bit_mean") {
    numeric->set_mechanism(v1::ONE_BIT_MEAN);
  } else if (mechanism == "d_bit_flip") {
    numeric->set_mechanism(v1::D_BIT_FLIP);
  } else if (mechanism.empty()) {
    numeric->set_mechanism(v1::NUMERIC_MECHANISM_UNSPECIFIED);  // the server picks
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "--mechanism must be one_bit_mean or d_bit_flip (or none: the server picks), but is \"",
        mechanism, "\""));
  }
  if (f.buckets != 0 && !f.bucket_edges.empty()) {
    return absl::InvalidArgumentError(
        "--buckets: give --buckets=K (equal widths) or --bucket_edges=e0,e1,..., not both");
  }
  if (f.buckets < 0 || f.buckets > kMaxBuckets) {
    return absl::InvalidArgumentError(
        absl::StrCat("--buckets must be in [1, ", kMaxBuckets, "], but is ", f.buckets));
  }
  numeric->set_buckets(static_cast<uint32_t>(f.buckets));
  if (!f.bucket_edges.empty()) {
    if (f.bucket_edges.size() < 2 || f.bucket_edges.size() > kMaxBuckets + 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--bucket_edges: give 2 to ", kMaxBuckets + 1,
          " ascending edges (k buckets need k + 1), but ", f.bucket_edges.size(), " given"));
    }
    for (size_t i = 0; i < f.bucket_edges.size(); ++i) {
      double edge = 0;
      if (!ParseFinite(f.bucket_edges[i], &edge)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--bucket_edges: edge ", i + 1, " of ", f.bucket_edges.size(),
                         " is not a finite number: \"", f.bucket_edges[i], "\""));
      }
      if (i > 0 && !(edge > numeric->bucket_edges(static_cast<int>(i) - 1))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--bucket_edges: the edges must ascend, but edge ", i + 1, " (", edge,
            ") is not above edge ", i, " (", numeric->bucket_edges(static_cast<int>(i) - 1), ")"));
      }
      numeric->add_bucket_edges(edge);
    }
    if (range.has_value() &&
        (numeric->bucket_edges(0) != range->lo() ||
         numeric->bucket_edges(numeric->bucket_edges_size() - 1) != range->hi())) {
      return absl::InvalidArgumentError(
          absl::StrCat("--bucket_edges: the first edge must be LO and the last HI of --range (",
                       range->lo(), ",", range->hi(), "), but they are ", numeric->bucket_edges(0),
                       " and ", numeric->bucket_edges(numeric->bucket_edges_size() - 1)));
    }
    numeric->set_buckets(static_cast<uint32_t>(numeric->bucket_edges_size() - 1));
  }
  if (f.sampled_buckets < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--sampled_buckets must be >= 1 (0: all buckets), but is ", f.sampled_buckets));
  }
  if (f.sampled_buckets > 0 && numeric->mechanism() == v1::ONE_BIT_MEAN) {
    return absl::InvalidArgumentError(
        "--sampled_buckets: only d_bit_flip samples buckets; one_bit_mean sends one bit");
  }
  if (f.sampled_buckets > 0 && numeric->buckets() > 0 &&
      static_cast<uint32_t>(f.sampled_buckets) > numeric->buckets()) {
    return absl::InvalidArgumentError(absl::StrCat("--sampled_buckets: d must be at most the ",
                                                   numeric->buckets(), " buckets, but is ",
                                                   f.sampled_buckets));
  }
  numeric->set_sampled_buckets(static_cast<uint32_t>(f.sampled_buckets));
  if (range.has_value()) numeric->set_unit(range->unit());
  return parameters;
}

absl::StatusOr<std::vector<double>> QuantilesFromFlag(const std::vector<std::string>& values) {
  std::vector<double> levels;
  for (size_t i = 0; i < values.size(); ++i) {
    double level = 0;
    if (!ParseFinite(values[i], &level) || !(level > 0 && level < 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--quantiles: level ", i + 1, " of ", values.size(),
          " must be a number in (0, 1) (e.g. --quantiles=0.5,0.9), but is \"", values[i], "\""));
    }
    levels.push_back(level);
  }
  return levels;
}

}  // namespace deniable::tools
