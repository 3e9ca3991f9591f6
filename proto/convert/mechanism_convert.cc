#include "deniable/convert/mechanism_convert.h"

#include <memory>

#include "deniable/common/status_macros.h"
#include "deniable/convert/categorical_convert.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/heavy_hitters_convert.h"
#include "deniable/convert/numeric_convert.h"

namespace deniable {

absl::StatusOr<std::shared_ptr<const Mechanism>> MechanismForParameters(
    const v1::DesignParameters& parameters, int k, absl::string_view field) {
  if (parameters.kind_case() == v1::DesignParameters::kCategorical) {
    DENIABLE_ASSIGN_OR_RETURN(CategoricalDesign design,
                              CategoricalDesignFromProto(parameters, k, field));
    return MechanismFor(design);
  }
  if (parameters.kind_case() == v1::DesignParameters::kNumeric) {
    DENIABLE_ASSIGN_OR_RETURN(NumericDesign design, NumericDesignFromProto(parameters, field));
    return MechanismFor(design);
  }
  if (parameters.kind_case() == v1::DesignParameters::kHeavyHitters) {
    DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign design,
                              HeavyHittersDesignFromProto(parameters, field));
    return MechanismFor(design);
  }
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromProto(parameters, field));
  return MechanismFor(design);
}

absl::StatusOr<std::shared_ptr<const Mechanism>> MechanismForWire(const v1::Design& wire) {
  if (wire.parameters().kind_case() == v1::DesignParameters::kCategorical) {
    DENIABLE_ASSIGN_OR_RETURN(CategoricalDesign design, CategoricalDesignFromWire(wire));
    return MechanismFor(design);
  }
  if (wire.parameters().kind_case() == v1::DesignParameters::kNumeric) {
    DENIABLE_ASSIGN_OR_RETURN(NumericDesign design, NumericDesignFromWire(wire));
    return MechanismFor(design);
  }
  if (wire.parameters().kind_case() == v1::DesignParameters::kHeavyHitters) {
    DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign design, HeavyHittersDesignFromWire(wire));
    return MechanismFor(design);
  }
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromWire(wire));
  return MechanismFor(design);
}

WireAnswer WireAnswerFromProto(const v1::Report& report) {
  WireAnswer out;
  out.bit = report.bit();
  out.has_categorical = report.has_categorical();
  if (out.has_categorical) {
    const v1::CategoricalReport& c = report.categorical();
    out.categorical.category = c.category();
    out.categorical.bits = c.bits();
    out.categorical.hash_a = c.hash_a();
    out.categorical.hash_b = c.hash_b();
    out.categorical.bucket = c.bucket();
  }
  out.has_numeric = report.has_numeric();
  if (out.has_numeric) {
    const v1::NumericReport& n = report.numeric();
    out.numeric.buckets.assign(n.buckets().begin(), n.buckets().end());
    out.numeric.bits.assign(n.bits().begin(), n.bits().end());
  }
  out.has_heavy_hitters = report.has_heavy_hitters();
  if (out.has_heavy_hitters) {
    out.heavy_hitters.group = report.heavy_hitters().group();
    out.heavy_hitters.row = report.heavy_hitters().row();
    out.heavy_hitters.coefficient = report.heavy_hitters().coefficient();
    out.heavy_hitters.bit = report.bit() == 1;
  }
  return out;
}

void WireAnswerToProto(const WireAnswer& answer, v1::Report* out) {
  out->set_bit(answer.bit);
  if (answer.has_numeric) {
    v1::NumericReport* n = out->mutable_numeric();
    n->clear_buckets();
    n->clear_bits();
    for (uint32_t j : answer.numeric.buckets) n->add_buckets(j);
    for (bool b : answer.numeric.bits) n->add_bits(b);
  } else {
    out->clear_numeric();
  }
  if (answer.has_heavy_hitters) {
    v1::HeavyHittersReport* h = out->mutable_heavy_hitters();
    h->set_group(answer.heavy_hitters.group);
    h->set_row(answer.heavy_hitters.row);
    h->set_coefficient(answer.heavy_hitters.coefficient);
  } else {
    out->clear_heavy_hitters();
  }
  if (!answer.has_categorical) {
    out->clear_categorical();
    return;
  }
  v1::CategoricalReport* c = out->mutable_categorical();
  c->set_category(answer.categorical.category);
  c->set_bits(answer.categorical.bits);
  c->set_hash_a(answer.categorical.hash_a);
  c->set_hash_b(answer.categorical.hash_b);
  c->set_bucket(answer.categorical.bucket);
}

}  // namespace deniable
