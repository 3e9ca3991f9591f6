#include "server/core/numeric_metric.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::Status ValidateNumericRange(const v1::NumericRange& range) {
  if (!std::isfinite(range.lo())) {
    return absl::InvalidArgumentError(
        absl::StrCat("range.lo: must be a finite number, but is ", range.lo()));
  }
  if (!std::isfinite(range.hi()) || !(range.hi() > range.lo())) {
    return absl::InvalidArgumentError(
        absl::StrCat("range.hi: must be a finite number above range.lo (", range.lo(), "), but is ",
                     range.hi()));
  }
  if (range.unit().size() > kMaxUnitBytes) {
    return absl::InvalidArgumentError(absl::StrCat("range.unit: must be at most ", kMaxUnitBytes,
                                                   " bytes, but is ", range.unit().size()));
  }
  return absl::OkStatus();
}

Design NumericChannelDesign(const NumericDesign& design) {
  // 1BitMean: the bit at the range's ends, e^eps/(e^eps + 1) against 1/(e^eps + 1).
  const Channel c = design.mechanism() == NumericMechanism::kDBitFlip
                        ? DBitFlipChannel(design)
                        : Channel{1.0 / (1.0 + std::exp(-design.epsilon())),
                                  1.0 / (1.0 + std::exp(design.epsilon()))};
  absl::StatusOr<Design> d = Design::ForcedResponse(c.a - c.b, c.b / (1.0 - (c.a - c.b)));
  return d.ok() ? *d : Design::TwoCoin();
}

v1::NumericRange RangeOf(const NumericDesign& design, absl::string_view unit) {
  v1::NumericRange range;
  range.set_lo(design.lo());
  range.set_hi(design.hi());
  range.set_unit(std::string(unit));
  return range;
}

}  // namespace deniable::server
