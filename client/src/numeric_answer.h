// The device side of a numeric report as Reporter::ReportValue runs it (common/numeric.h's
// path), private to the SDK: the value's level, then the randomized answer for a level. Split in
// two because the memo sits between them (a memoized level is not drawn again). Pure functions;
// tested against tests/golden/randomizer_vectors.json (numeric_golden_test.cc).
#ifndef DENIABLE_CLIENT_SRC_NUMERIC_ANSWER_H_
#define DENIABLE_CLIENT_SRC_NUMERIC_ANSWER_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "deniable/common/draws.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/convert/mechanism_convert.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable::client {

struct ValueLevel {
  int32_t level = 0;     // numeric.h LevelOf of the clipped value
  bool clipped = false;  // the value was outside [lo, hi]
};

// Clips `value` to the design's range and rounds it to its level with `alpha` (in [0, 1); used
// by ONE_BIT_MEAN only). REQUIRES: value is not NaN.
inline ValueLevel LevelOfValue(const NumericDesign& design, double value, double alpha) {
  const ClippedValue clipped = ClipValue(design, value);
  return {LevelOf(design, clipped.value, alpha), clipped.clipped};
}

// The randomized answer for `level` drawn by the design's mechanism: a v1::Report holding only
// `bit` (ONE_BIT_MEAN) or `numeric` with `bit` 0 (D_BIT_FLIP). Errors: the mechanism's
// (INVALID_ARGUMENT for a level out of range).
inline absl::StatusOr<v1::Report> DrawNumericAnswer(const Mechanism& mechanism, int32_t level,
                                                    Draws& draws) {
  absl::StatusOr<WireAnswer> drawn = mechanism.Randomize(level, draws);
  if (!drawn.ok()) return drawn.status();
  v1::Report answer;
  WireAnswerToProto(*drawn, &answer);
  return answer;
}

}  // namespace deniable::client

#endif  // DENIABLE_CLIENT_SRC_NUMERIC_ANSWER_H_
