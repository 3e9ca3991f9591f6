#include "client/src/categorical_wire.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace deniable::client {

absl::StatusOr<CategoricalDesign> CategoricalDesignFromWire(const v1::Design& wire, int k) {
  if (!wire.parameters().has_categorical()) {
    return absl::InvalidArgumentError(
        "design.parameters.categorical: must be set for a metric with categories");
  }
  const v1::Categorical& parameters = wire.parameters().categorical();
  CategoricalMechanism mechanism;
  switch (parameters.mechanism()) {
    case v1::K_RR:
      mechanism = CategoricalMechanism::kDirectEncoding;
      break;
    case v1::OUE:
      mechanism = CategoricalMechanism::kOptimizedUnaryEncoding;
      break;
    case v1::OLH:
      mechanism = CategoricalMechanism::kOptimizedLocalHashing;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("design.parameters.categorical.mechanism: must be K_RR, OUE or OLH, but is ",
                       static_cast<int>(parameters.mechanism())));
  }
  if (wire.categories() != 0 && wire.categories() != static_cast<uint32_t>(k)) {
    return absl::InvalidArgumentError(absl::StrCat("design.categories: is ", wire.categories(),
                                                   " but the metric names ", k, " categories"));
  }
  absl::StatusOr<CategoricalDesign> design =
      CategoricalDesign::Create(mechanism, k, parameters.epsilon());
  if (!design.ok()) return design.status();
  constexpr double kTolerance = 1e-9;
  if (std::fabs(design->p_star() - wire.a()) > kTolerance ||
      std::fabs(design->q_star() - wire.b()) > kTolerance) {
    return absl::InvalidArgumentError(absl::StrCat(
        "design: channel (a = ", wire.a(), ", b = ", wire.b(), ") does not match ",
        design->ToString(), " (p* = ", design->p_star(), ", q* = ", design->q_star(), ")"));
  }
  return design;
}

v1::CategoricalReport CategoricalReportToWire(const CategoricalDesign& design,
                                              const CategoricalReport& report) {
  v1::CategoricalReport wire;
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      wire.set_category(static_cast<uint32_t>(report.category));
      break;
    case CategoricalMechanism::kOptimizedUnaryEncoding: {
      std::string bytes((report.bits.size() + 7) / 8, '\0');
      for (size_t v = 0; v < report.bits.size(); ++v) {
        if (report.bits[v] != 0) bytes[v / 8] = static_cast<char>(bytes[v / 8] | (1 << (v % 8)));
      }
      wire.set_bits(std::move(bytes));
      break;
    }
    case CategoricalMechanism::kOptimizedLocalHashing:
      wire.set_hash_a(report.hash_a);
      wire.set_hash_b(report.hash_b);
      wire.set_bucket(static_cast<uint32_t>(report.bucket));
      break;
  }
  return wire;
}

}  // namespace deniable::client
