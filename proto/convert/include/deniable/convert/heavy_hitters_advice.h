// The privacy figures and the planner of a heavy-hitters design (heavy_hitters.h,
// docs/statistics.md section 11.6): what `deniable design`, DescribeDesign and `deniable plan`
// answer for the kind. Pure arithmetic over HeavyHittersMechanism and HeavyHittersDevicesNeeded;
// no server state. Pure functions, thread-safe.
#ifndef DENIABLE_CONVERT_HEAVY_HITTERS_ADVICE_H_
#define DENIABLE_CONVERT_HEAVY_HITTERS_ADVICE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable {

// The description of the heavy-hitters design `wire` (a v1::Design whose parameters are
// heavy_hitters) at request.prior, the prior probability that a device holds a given candidate
// value v:
//   - design: `wire`; its epsilon is the local epsilon of one report, in nats;
//   - posterior_given_yes = prior a / (prior a + (1 - prior)(1 - a)), a = e^eps / (1 + e^eps):
//     the largest P(device holds v | one report), reached when the report's bit equals v's
//     Hadamard entry at the report's (group, row, coefficient) and every other value's differs;
//   - posterior_given_no = prior (1 - a) / (prior (1 - a) + (1 - prior) a): the smallest;
//   - the entropies of that binary channel (a, 1 - a) at the prior, in bits;
//   - channel_note: what the figures are of, in words;
//   - with request.n > 0: the shuffle-amplified central epsilon of n reports (common/shuffle.h)
//     with the clone probability e^-eps (HeavyHittersMechanism::CloneProbability).
// Errors: those of ValidateDescribeRequest (design_advice.h, naming "prior" or "n");
// INVALID_ARGUMENT naming "design.parameters.heavy_hitters..." (a bad design), "k",
// "categories" or "category_prior" (given for this kind) and "range".
absl::StatusOr<v1::DesignDescription> DescribeHeavyHittersDesign(
    const v1::DescribeDesignRequest& request, const v1::Design& wire);

// `deniable plan` for a heavy-hitters design: the devices needed so that a value of max_length
// bytes held by a share `share` of the devices is returned by `top` with probability
// `probability` (HeavyHittersDevicesNeeded, docs/statistics.md section 11.4).
struct HeavyHittersPlan {
  double epsilon = 0;  // nats per report
  int max_length = 0;  // bytes
  double share = 0;
  double probability = 0;
  double confidence_level = 0;  // of the simultaneous intervals `top` serves
  int max_prefixes = 0;
  int64_t devices_needed = 0;  // one report (one value) each
  std::string assumption;      // the model, in words
};

// `design` as given to create-metric (0 fields: the defaults); `level` 0 means 0.95 and
// `max_prefixes` 0 means 64, as in GetTopValuesRequest. Errors: INVALID_ARGUMENT naming
// "design.heavy_hitters..." (a bad design), "share" or "probability" (each in (0, 1)),
// "confidence_level" or "max_prefixes"; OUT_OF_RANGE naming "share" when more than 10^15 devices
// would be needed.
absl::StatusOr<HeavyHittersPlan> PlanHeavyHitters(const v1::DesignParameters& design, double share,
                                                  double probability, double level,
                                                  uint32_t max_prefixes);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_HEAVY_HITTERS_ADVICE_H_
