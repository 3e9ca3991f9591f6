// `deniable plan` for a numeric design (issue 28), computed locally: the devices needed for the
// mean within +/- h (one_bit_mean, h in the values' unit) or for every bucket share within +/- h
// together (d_bit_flip, h a share), in the worst case over the values (docs/cli.md, "Numeric
// metrics"; Ding, Kulkarni and Yekhanin, NeurIPS 2017).
//
//   one_bit_mean: the bit is 1 with probability lambda in [1/(e^eps+1), e^eps/(e^eps+1)], the
//     mean is lo + m (lambda_hat (e^eps+1) - 1)/(e^eps-1), so Var(mean) = m^2 C^2 lambda
//     (1 - lambda) / n <= m^2 C^2 / (4 n), C = (e^eps+1)/(e^eps-1), m = hi - lo: the interval
//     z m C / (2 sqrt n) is within h when n >= z^2 m^2 C^2 / (4 h^2).
//   d_bit_flip: bucket j's share is estimated from the s_j ~ n d / k reports that sampled it,
//     through the binary channel (a/(a+1), 1/(a+1)), a = e^(eps/2): Var <= 1 / (4 s_j (p - q)^2),
//     p - q = (a-1)/(a+1). All k within h together (Sidak or Bonferroni, each at the per-bucket
//     level, z_k): n >= (k / d) z_k^2 / (4 h^2 (p - q)^2), counting the expected s_j.
#ifndef DENIABLE_TOOLS_CLI_NUMERIC_PLAN_H_
#define DENIABLE_TOOLS_CLI_NUMERIC_PLAN_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "deniable/v1/design.pb.h"
#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable::tools {

struct NumericPlan {
  std::string mechanism;  // "one_bit_mean" or "d_bit_flip" (the server's pick for "numeric")
  double epsilon = 0;
  double lo = 0;
  double hi = 0;
  std::string unit;
  int buckets = 1;          // k (d_bit_flip)
  int sampled_buckets = 0;  // d (d_bit_flip)
  double half_width = 0;    // one_bit_mean: in the unit; d_bit_flip: a share
  double confidence_level = 0;
  double per_bucket_level = 0;  // d_bit_flip: each bucket's level so that all k hold together
  std::string simultaneous;     // "sidak" or "bonferroni" (d_bit_flip)
  int64_t devices_needed = 0;   // worst case over the values, one report each
  std::string assumption;
};

// The plan for `design` (create-metric's numeric flags) over `range`. Errors: INVALID_ARGUMENT
// naming "--half_width" (not > 0; for d_bit_flip also not < 1), "--level" (not in (0, 1)),
// "--epsilon".
absl::StatusOr<NumericPlan> PlanNumeric(const v1::Numeric& design, const v1::NumericRange& range,
                                        double half_width, double confidence_level,
                                        v1::SimultaneousMethod simultaneous);

// The plan as lines, like the other plans of `deniable plan`.
std::string FormatNumericPlan(const NumericPlan& plan);

}  // namespace deniable::tools

#endif  // DENIABLE_TOOLS_CLI_NUMERIC_PLAN_H_
