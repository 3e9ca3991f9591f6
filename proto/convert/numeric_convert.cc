#include "deniable/convert/numeric_convert.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/numeric_mechanism.h"

namespace deniable {
namespace {

constexpr size_t kMaxUnitLength = 32;

// "<prefix>.<name>: <rest>" from numeric.h's "<name> must ..." messages.
absl::Status Named(const absl::Status& s, absl::string_view prefix) {
  const absl::string_view message = s.message();
  const size_t space = message.find(' ');
  if (space == absl::string_view::npos) {
    return absl::Status(s.code(), absl::StrCat(prefix, ": ", message));
  }
  absl::string_view name = message.substr(0, space);
  if (!name.empty() && name.back() == ':') name.remove_suffix(1);
  if (name == "range") return absl::Status(s.code(), std::string(message));
  return absl::Status(s.code(), absl::StrCat(prefix, ".", name, ": ", message));
}

}  // namespace

v1::NumericMechanism NumericMechanismToProto(NumericMechanism mechanism) {
  switch (mechanism) {
    case NumericMechanism::kOneBitMean:
      return v1::ONE_BIT_MEAN;
    case NumericMechanism::kDBitFlip:
      return v1::D_BIT_FLIP;
  }
  return v1::NUMERIC_MECHANISM_UNSPECIFIED;
}

absl::StatusOr<NumericMechanism> NumericMechanismFromProto(v1::NumericMechanism mechanism,
                                                           absl::string_view field) {
  switch (mechanism) {
    case v1::ONE_BIT_MEAN:
      return NumericMechanism::kOneBitMean;
    case v1::D_BIT_FLIP:
      return NumericMechanism::kDBitFlip;
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": must be ONE_BIT_MEAN or D_BIT_FLIP, but is ", static_cast<int>(mechanism)));
}

absl::StatusOr<NumericDesign> NumericDesignFromProto(const v1::DesignParameters& parameters,
                                                     absl::string_view field,
                                                     const v1::NumericRange* range) {
  if (parameters.kind_case() != v1::DesignParameters::kNumeric) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": a numeric metric needs a numeric design (", field, ".numeric), but ",
        parameters.kind_case() == v1::DesignParameters::KIND_NOT_SET ? "none is set"
                                                                     : "another kind is set"));
  }
  const v1::Numeric& p = parameters.numeric();
  const std::string nfield = absl::StrCat(field, ".numeric");
  if (p.unit().size() > kMaxUnitLength) {
    return absl::InvalidArgumentError(absl::StrCat(nfield, ".unit: at most ", kMaxUnitLength,
                                                   " characters, but has ", p.unit().size()));
  }
  const std::vector<double> edges(p.bucket_edges().begin(), p.bucket_edges().end());
  NumericMechanism mechanism = NumericMechanism::kOneBitMean;
  if (p.mechanism() == v1::NUMERIC_MECHANISM_UNSPECIFIED && range != nullptr) {
    mechanism = (p.buckets() > 1 || !edges.empty()) ? NumericMechanism::kDBitFlip
                                                    : NumericMechanism::kOneBitMean;
  } else {
    absl::StatusOr<NumericMechanism> m =
        NumericMechanismFromProto(p.mechanism(), absl::StrCat(nfield, ".mechanism"));
    if (!m.ok()) return m.status();
    mechanism = *m;
  }
  if (p.buckets() > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat(nfield, ".buckets: must be at most 256, but is ", p.buckets()));
  }
  const int buckets = static_cast<int>(p.buckets());
  const int sampled = static_cast<int>(std::min<uint32_t>(p.sampled_buckets(), 1u << 20));
  absl::StatusOr<NumericDesign> design = absl::InvalidArgumentError("unreachable");
  if (edges.empty()) {
    if (range == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          nfield, ".bucket_edges: a stored numeric design lists its k + 1 edges, but none are"));
    }
    design = NumericDesign::EqualWidth(mechanism, p.epsilon(), range->lo(), range->hi(), buckets,
                                       sampled);
  } else {
    if (buckets != 0 && static_cast<size_t>(buckets) + 1 != edges.size()) {
      return absl::InvalidArgumentError(absl::StrCat(nfield, ".buckets: is ", buckets,
                                                     " but bucket_edges holds ", edges.size(),
                                                     " edges (k + 1 for k buckets)"));
    }
    if (range != nullptr && (edges.front() != range->lo() || edges.back() != range->hi())) {
      return absl::InvalidArgumentError(absl::StrCat(
          nfield, ".bucket_edges: must run from range.lo = ", range->lo(),
          " to range.hi = ", range->hi(), ", but run from ", edges.front(), " to ", edges.back()));
    }
    design = NumericDesign::Create(mechanism, p.epsilon(), edges, sampled);
  }
  if (!design.ok()) return Named(design.status(), nfield);
  return design;
}

v1::DesignParameters NumericParameters(const NumericDesign& design, absl::string_view unit) {
  v1::DesignParameters out;
  v1::Numeric* p = out.mutable_numeric();
  p->set_mechanism(NumericMechanismToProto(design.mechanism()));
  p->set_epsilon(design.epsilon());
  for (double e : design.edges()) p->add_bucket_edges(e);
  p->set_buckets(static_cast<uint32_t>(design.buckets()));
  p->set_sampled_buckets(static_cast<uint32_t>(design.sampled_buckets()));
  p->set_unit(std::string(unit));
  return out;
}

void NumericDesignToProto(const NumericDesign& design, uint32_t version, absl::string_view unit,
                          v1::Design* out) {
  out->Clear();
  *out->mutable_parameters() = NumericParameters(design, unit);
  const NumericReportMechanism mechanism(design);
  const Channel c = mechanism.ChannelOf(mechanism.Layout().coordinates - 1);
  out->set_version(version);
  out->set_a(c.a);
  out->set_b(c.b);
  out->set_epsilon(mechanism.Epsilon());
  out->set_epsilon_infinite(false);
  out->set_categories(0);
  out->set_hash_buckets(0);
}

absl::StatusOr<NumericDesign> NumericDesignFromWire(const v1::Design& wire) {
  absl::StatusOr<NumericDesign> d = NumericDesignFromProto(wire.parameters(), "design.parameters");
  if (!d.ok()) return d.status();
  const NumericReportMechanism mechanism(*d);
  const Channel c = mechanism.ChannelOf(mechanism.Layout().coordinates - 1);
  constexpr double kTolerance = 1e-12;
  if (std::fabs(c.a - wire.a()) > kTolerance || std::fabs(c.b - wire.b()) > kTolerance) {
    return absl::InvalidArgumentError(absl::StrCat("design: (a = ", wire.a(), ", b = ", wire.b(),
                                                   ") does not match ", d->ToString(),
                                                   " (a = ", c.a, ", b = ", c.b, ")"));
  }
  return d;
}

}  // namespace deniable
