#include "deniable/convert/categorical_convert.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {
namespace {

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

namespace {

// A report carries only its mechanism's fields: a k-RR report with a hash or bits (or an OUE
// report with a category) was made for another design, and reading only the mechanism's own
// fields would count it (as category 0, say).
absl::Status RejectForeignFields(const CategoricalDesign& design,
                                 const v1::CategoricalReport& report, absl::string_view field) {
  const CategoricalMechanism mechanism = design.mechanism();
  const absl::string_view name = CategoricalMechanismName(mechanism);
  auto foreign = [&](absl::string_view member) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".", member, ": must be unset in a ",
                                                   name,
                                                   " report (it belongs to another "
                                                   "mechanism's report)"));
  };
  if (mechanism != CategoricalMechanism::kDirectEncoding && report.category() != 0) {
    return foreign("category");
  }
  if (mechanism != CategoricalMechanism::kOptimizedUnaryEncoding && !report.bits().empty()) {
    return foreign("bits");
  }
  if (mechanism != CategoricalMechanism::kOptimizedLocalHashing) {
    if (report.hash_a() != 0) return foreign("hash_a");
    if (report.hash_b() != 0) return foreign("hash_b");
    if (report.bucket() != 0) return foreign("bucket");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CategoricalReport> CategoricalReportFromProto(const CategoricalDesign& design,
                                                             const v1::CategoricalReport& report,
                                                             absl::string_view field) {
  CategoricalReport out;
  constexpr uint32_t kMaxInt = static_cast<uint32_t>(std::numeric_limits<int32_t>::max());
  if (absl::Status foreign = RejectForeignFields(design, report, field); !foreign.ok()) {
    return foreign;
  }
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      if (report.category() > kMaxInt) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, ".category: must be in [0, ", design.k(), "), but is ", report.category()));
      }
      out.category = static_cast<int32_t>(report.category());
      break;
    case CategoricalMechanism::kOptimizedUnaryEncoding: {
      const size_t k = static_cast<size_t>(design.k());
      const size_t want = (k + 7) / 8;
      const std::string& bytes = report.bits();
      if (bytes.size() != want) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".bits: must be exactly ", want,
                                                       " bytes for k = ", k, " categories, but is ",
                                                       bytes.size(), " bytes"));
      }
      out.bits.resize(k);
      for (size_t v = 0; v < want * 8; ++v) {
        const int bit = (static_cast<uint8_t>(bytes[v / 8]) >> (v % 8)) & 1;
        if (v < k) {
          out.bits[v] = static_cast<uint8_t>(bit);
        } else if (bit != 0) {
          return absl::InvalidArgumentError(
              absl::StrCat(field, ".bits: bit ", v, " is set, but only the first ", k,
                           " bits may be (the unused high bits of the last byte must be 0)"));
        }
      }
      break;
    }
    case CategoricalMechanism::kOptimizedLocalHashing:
      if (report.bucket() > kMaxInt) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".bucket: must be in [0, ",
                                                       design.hash_buckets(), "), but is ",
                                                       report.bucket()));
      }
      out.hash_a = report.hash_a();
      out.hash_b = report.hash_b();
      out.bucket = static_cast<int32_t>(report.bucket());
      break;
  }
  return out;
}

v1::CategoricalReport CategoricalReportToProto(const CategoricalDesign& design,
                                               const CategoricalReport& report) {
  v1::CategoricalReport out;
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      out.set_category(static_cast<uint32_t>(report.category));
      break;
    case CategoricalMechanism::kOptimizedUnaryEncoding: {
      std::string bytes((report.bits.size() + 7) / 8, '\0');
      for (size_t v = 0; v < report.bits.size(); ++v) {
        if (report.bits[v] != 0) {
          bytes[v / 8] = static_cast<char>(static_cast<uint8_t>(bytes[v / 8]) | (1u << (v % 8)));
        }
      }
      out.set_bits(std::move(bytes));
      break;
    }
    case CategoricalMechanism::kOptimizedLocalHashing:
      out.set_hash_a(report.hash_a);
      out.set_hash_b(report.hash_b);
      out.set_bucket(static_cast<uint32_t>(report.bucket));
      break;
  }
  return out;
}

}  // namespace deniable
