#include "deniable/convert/categorical_convert.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/echo.h"
#include "deniable/common/wire_report.h"

namespace deniable {
namespace {

constexpr size_t kMaxCategoryNameLength = 32;

absl::Status Prefix(const absl::Status& s, absl::string_view field) {
  return absl::Status(s.code(), absl::StrCat(field, ": ", s.message()));
}

}  // namespace

v1::CategoricalMechanism MechanismToProto(CategoricalMechanism mechanism) {
  switch (mechanism) {
    case CategoricalMechanism::kDirectEncoding:
      return v1::K_RR;
    case CategoricalMechanism::kOptimizedUnaryEncoding:
      return v1::OUE;
    case CategoricalMechanism::kOptimizedLocalHashing:
      return v1::OLH;
  }
  return v1::CATEGORICAL_MECHANISM_UNSPECIFIED;
}

absl::StatusOr<CategoricalMechanism> MechanismFromProto(v1::CategoricalMechanism mechanism,
                                                        absl::string_view field) {
  switch (mechanism) {
    case v1::K_RR:
      return CategoricalMechanism::kDirectEncoding;
    case v1::OUE:
      return CategoricalMechanism::kOptimizedUnaryEncoding;
    case v1::OLH:
      return CategoricalMechanism::kOptimizedLocalHashing;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": must be K_RR, OUE or OLH, but is ", static_cast<int>(mechanism)));
}

absl::StatusOr<CategoricalDesign> CategoricalDesignFromProto(const v1::DesignParameters& parameters,
                                                             int k, absl::string_view field) {
  if (parameters.kind_case() != v1::DesignParameters::kCategorical) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": a metric with categories needs a categorical design (", field,
        ".categorical), but ",
        parameters.kind_case() == v1::DesignParameters::KIND_NOT_SET ? "none is set"
                                                                     : "a yes/no design is set"));
  }
  if (k < kMinCategories || k > kMaxCategories) {
    return absl::InvalidArgumentError(absl::StrCat("categories: must name between ", kMinCategories,
                                                   " and ", kMaxCategories,
                                                   " categories, but names ", k));
  }
  const v1::Categorical& c = parameters.categorical();
  const std::string cfield = absl::StrCat(field, ".categorical");
  absl::StatusOr<CategoricalDesign> design =
      absl::InvalidArgumentError("unreachable: no mechanism");
  if (c.mechanism() == v1::CATEGORICAL_MECHANISM_UNSPECIFIED) {
    design = CategoricalDesign::LeastVariance(k, c.epsilon());
  } else {
    absl::StatusOr<CategoricalMechanism> mechanism =
        MechanismFromProto(c.mechanism(), absl::StrCat(cfield, ".mechanism"));
    if (!mechanism.ok()) return mechanism.status();
    design = CategoricalDesign::Create(*mechanism, k, c.epsilon());
  }
  // Create names "k" or "epsilon"; k was checked above, so the parameter is epsilon.
  if (!design.ok()) return Prefix(design.status(), absl::StrCat(cfield, ".epsilon"));
  return design;
}

v1::DesignParameters CategoricalParameters(const CategoricalDesign& design) {
  v1::DesignParameters p;
  p.mutable_categorical()->set_mechanism(MechanismToProto(design.mechanism()));
  p.mutable_categorical()->set_epsilon(design.epsilon());
  return p;
}

void CategoricalDesignToProto(const CategoricalDesign& design, uint32_t version, v1::Design* out) {
  out->Clear();
  *out->mutable_parameters() = CategoricalParameters(design);
  out->set_version(version);
  out->set_a(design.p_star());
  out->set_b(design.q_star());
  out->set_epsilon(design.epsilon());
  out->set_epsilon_infinite(false);
  out->set_categories(static_cast<uint32_t>(design.k()));
  out->set_hash_buckets(static_cast<uint32_t>(design.hash_buckets()));
}

absl::StatusOr<CategoricalDesign> CategoricalDesignFromWire(const v1::Design& wire) {
  if (wire.parameters().categorical().mechanism() == v1::CATEGORICAL_MECHANISM_UNSPECIFIED &&
      wire.parameters().kind_case() == v1::DesignParameters::kCategorical) {
    return absl::InvalidArgumentError(
        "design.parameters.categorical.mechanism: a served design names its mechanism, but it is "
        "UNSPECIFIED");
  }
  absl::StatusOr<CategoricalDesign> d = CategoricalDesignFromProto(
      wire.parameters(), static_cast<int>(wire.categories()), "design.parameters");
  if (!d.ok()) return d.status();
  constexpr double kTolerance = 1e-12;
  if (std::fabs(d->p_star() - wire.a()) > kTolerance ||
      std::fabs(d->q_star() - wire.b()) > kTolerance) {
    return absl::InvalidArgumentError(
        absl::StrCat("design: (a = ", wire.a(), ", b = ", wire.b(), ") does not match ",
                     d->ToString(), " (p* = ", d->p_star(), ", q* = ", d->q_star(), ")"));
  }
  if (static_cast<int>(wire.hash_buckets()) != d->hash_buckets()) {
    return absl::InvalidArgumentError(absl::StrCat("design.hash_buckets: ", wire.hash_buckets(),
                                                   " does not match ", d->ToString(),
                                                   " (g = ", d->hash_buckets(), ")"));
  }
  return d;
}

v1::CategoricalReport CategoricalReportToProto(const CategoricalDesign& design,
                                               const CategoricalReport& report) {
  WireCategorical wire = CategoricalReportToWire(design, report);
  v1::CategoricalReport out;
  out.set_category(wire.category);
  out.set_bits(std::move(wire.bits));
  out.set_hash_a(wire.hash_a);
  out.set_hash_b(wire.hash_b);
  out.set_bucket(wire.bucket);
  return out;
}

absl::Status ValidateCategories(const google::protobuf::RepeatedPtrField<std::string>& categories) {
  const int k = categories.size();
  if (k < kMinCategories || k > kMaxCategories) {
    return absl::InvalidArgumentError(absl::StrCat("categories: a metric with categories names ",
                                                   kMinCategories, " to ", kMaxCategories,
                                                   " of them, but ", k, " are given"));
  }
  for (int i = 0; i < k; ++i) {
    const std::string& name = categories[i];
    bool ok = !name.empty() && name.size() <= kMaxCategoryNameLength;
    for (char c : name) {
      ok = ok && (absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-');
    }
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat(
          "categories[", i, "]: must match [A-Za-z0-9_.:-]{1,32}, but is ", EchoValue(name)));
    }
    for (int j = 0; j < i; ++j) {
      if (categories[j] == name) {
        return absl::InvalidArgumentError(absl::StrCat("categories[", i, "]: \"", name,
                                                       "\" is already categories[", j,
                                                       "]; category names must be distinct"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace deniable
