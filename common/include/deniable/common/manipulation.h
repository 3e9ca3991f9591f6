// How far fake reports could have moved a debiased estimate (docs/security.md, "Manipulation
// bound"). Any device may send any bits, so m fake reports (a Sybil's, or a forger's) move an
// estimate whatever the randomization: every non-interactive local-DP protocol is manipulable
// this way (Cheu, Smith and Ullman, "Manipulation attacks in local differential privacy", 2021).
// These functions bound the move from the observed reports, counting that the m fakes are among
// the n reports observed (they also changed n).
//
// The form. An estimate that is the mean of n per-report values z_i, each in [lo, hi] (the
// debiased yes/no prevalence, z = (bit - b) / (a - b), lo = -b / (a - b), hi = (1 - b) / (a - b);
// a category's share through its support channel; a D_BIT_FLIP bucket over the reports that
// sampled it; a ONE_BIT_MEAN mean scaled by hi - lo). If m of the n are fake with sum F in
// [m lo, m hi], the honest reports' mean is (n mean - F) / (n - m), so
//   shift_up   = mean - min honest = m (hi - mean) / (n - m)   (the fakes were all hi),
//   shift_down = max honest - mean = m (mean - lo) / (n - m)   (the fakes were all lo),
// each capped so that the honest mean stays in [lo, hi] (m >= n: nothing honest is left, so the
// honest mean may be anywhere in [lo, hi]). Whatever the reports (a bound known before looking),
// the move is at most uniform = min(m, n) (hi - lo) / n: for one binary channel m / (n (a - b)).
//
// Thread-safe (pure functions).
#ifndef DENIABLE_COMMON_MANIPULATION_H_
#define DENIABLE_COMMON_MANIPULATION_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "deniable/common/design.h"

namespace deniable {

// The bound for m fake reports, on the estimate's own scale (a share for shares, the values'
// unit for a mean).
struct ManipulationShift {
  int64_t fake_reports = 0;  // m
  double shift_up = 0;       // the most the m fakes could have raised the estimate
  double shift_down = 0;     // the most they could have lowered it
  double bound = 0;          // max(shift_up, shift_down)
  double uniform = 0;        // min(m, n) (hi - lo) / n: the bound whatever the reports
  // The range the honest reports' estimate lies in: [estimate - shift_up, estimate + shift_down].
  double honest_lower = 0;
  double honest_upper = 0;
};

// The default number of fake reports a served estimate is bounded for: 1 % of n, rounded up, at
// least 1. REQUIRES: n >= 0.
int64_t DefaultManipulationReports(int64_t n);

// The bound for an estimate `mean` that is the mean of `n` per-report values, each in [lo, hi],
// of which up to `m` may be fake (see the top of this file). `mean` is clamped into [lo, hi]
// (rounding). Errors: INVALID_ARGUMENT naming "n" (< 1), "fake_reports" (< 0) or "lo" (not
// finite, or not below hi).
absl::StatusOr<ManipulationShift> MeanManipulation(double mean, int64_t n, int64_t m, double lo,
                                                   double hi);

// The exact bound for one binary channel (a, b) and n observed reports of which `yes` carry bit
// 1, up to m of them fake: the honest reports' observed share is in
// [max(0, yes - m) / (n - m), min(yes, n - m) / (n - m)] (all of [0, 1] when m >= n), mapped
// through (lambda - b) / (a - b). At most MeanManipulation's bound (equal when at least m
// reports carry each bit); uniform = min(m, n) / (n (a - b)).
// Errors: INVALID_ARGUMENT naming "n" (< 1), "yes" (outside [0, n]), "fake_reports" (< 0) or
// "channel" (a <= b).
absl::StatusOr<ManipulationShift> BinaryManipulation(Channel channel, int64_t n, int64_t yes,
                                                     int64_t m);

}  // namespace deniable

#endif  // DENIABLE_COMMON_MANIPULATION_H_
