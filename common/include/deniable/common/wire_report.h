// The answer fields of a report as they travel on the wire, without protobuf.
//
// A v1::Report (proto/deniable/v1/report_service.proto) carries its randomized answer in `bit`
// (yes/no designs) or in `categorical` (v1::CategoricalReport: category, OUE bits packed eight to
// a byte, OLH hash and bucket). `WireAnswer` holds exactly those fields, so that the one place a
// kind of report lives (mechanism.h) can validate and produce them without linking protobuf;
// proto/convert/mechanism_convert.h copies them from and to the message.
//
// All functions are pure and thread-safe.
#ifndef DENIABLE_COMMON_WIRE_REPORT_H_
#define DENIABLE_COMMON_WIRE_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/categorical.h"
#include "deniable/common/heavy_hitters.h"

namespace deniable {

// v1::CategoricalReport's fields, as sent.
struct WireCategorical {
  uint32_t category = 0;  // k-RR: the reported category
  std::string bits;       // OUE: bit v in byte v / 8 under mask 1 << (v % 8), ceil(k / 8) bytes
  uint32_t hash_a = 0;    // OLH
  uint32_t hash_b = 0;
  uint32_t bucket = 0;
};

// v1::NumericReport's fields, as sent (D_BIT_FLIP: d ascending buckets, one bit each).
struct WireNumeric {
  std::vector<uint32_t> buckets;
  std::vector<bool> bits;
};

// A report's answer: `bit` (0 or 1 for yes/no and ONE_BIT_MEAN designs, 0 for categorical and
// D_BIT_FLIP ones) and, when `has_categorical`, the categorical report, or when `has_numeric`,
// the dBitFlip report.
struct WireAnswer {
  uint32_t bit = 0;
  bool has_categorical = false;
  WireCategorical categorical;
  bool has_numeric = false;
  WireNumeric numeric;
  // A heavy-hitters report's place in the sketch (its entry is `bit`).
  bool has_heavy_hitters = false;
  HeavyHittersReport heavy_hitters;
};

// Unpacks a categorical report for `design`: only the mechanism's own fields may be set, OUE's
// bits must be exactly ceil(k / 8) bytes with the unused high bits 0. Does not check ranges
// (ValidateCategoricalReport does). `field` prefixes the messages ("reports[3].categorical").
// Errors: INVALID_ARGUMENT naming "<field>.category", "<field>.bits", "<field>.hash_a",
// "<field>.hash_b" or "<field>.bucket".
absl::StatusOr<CategoricalReport> CategoricalReportFromWire(const CategoricalDesign& design,
                                                            const WireCategorical& report,
                                                            absl::string_view field);

// Packs a report drawn by RandomizeCategory for the wire (only the mechanism's fields set).
WireCategorical CategoricalReportToWire(const CategoricalDesign& design,
                                        const CategoricalReport& report);

}  // namespace deniable

#endif  // DENIABLE_COMMON_WIRE_REPORT_H_
