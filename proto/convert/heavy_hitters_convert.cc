#include "deniable/convert/heavy_hitters_convert.h"

#include <cmath>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace deniable {

absl::StatusOr<HeavyHittersDesign> HeavyHittersDesignFromProto(
    const v1::DesignParameters& parameters, absl::string_view field) {
  if (parameters.kind_case() != v1::DesignParameters::kHeavyHitters) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ".heavy_hitters: a heavy-hitters metric needs a heavy_hitters design"));
  }
  const v1::HeavyHitters& p = parameters.heavy_hitters();
  HeavyHittersDesign d;
  if (p.epsilon() != 0) d.epsilon = p.epsilon();
  if (p.max_length() != 0)
    d.max_length = static_cast<int>(std::min<uint32_t>(p.max_length(), 1000));
  if (p.rows() != 0) d.rows = static_cast<int>(std::min<uint32_t>(p.rows(), 1000));
  if (p.width() != 0) d.width = static_cast<int>(std::min<uint32_t>(p.width(), 1u << 20));
  if (p.holdout_share() != 0) d.holdout_share = p.holdout_share();
  d.salt = p.salt();
  if (absl::Status s = ValidateHeavyHittersDesign(d); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".heavy_hitters.", s.message()));
  }
  return d;
}

v1::DesignParameters HeavyHittersParameters(const HeavyHittersDesign& design) {
  v1::DesignParameters out;
  v1::HeavyHitters* p = out.mutable_heavy_hitters();
  p->set_epsilon(design.epsilon);
  p->set_max_length(static_cast<uint32_t>(design.max_length));
  p->set_rows(static_cast<uint32_t>(design.rows));
  p->set_width(static_cast<uint32_t>(design.width));
  p->set_holdout_share(design.holdout_share);
  p->set_salt(design.salt);
  return out;
}

void HeavyHittersDesignToProto(const HeavyHittersDesign& design, uint32_t version,
                               v1::Design* out) {
  out->Clear();
  *out->mutable_parameters() = HeavyHittersParameters(design);
  out->set_version(version);
  out->set_a(HeavyHittersKeepProbability(design));
  out->set_b(1 - HeavyHittersKeepProbability(design));
  out->set_epsilon(design.epsilon);
  out->set_epsilon_infinite(false);
}

absl::StatusOr<HeavyHittersDesign> HeavyHittersDesignFromWire(const v1::Design& wire) {
  return HeavyHittersDesignFromProto(wire.parameters(), "design.parameters");
}

}  // namespace deniable
