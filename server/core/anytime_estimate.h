// Anytime-valid intervals on a served estimate (docs/statistics.md section 10.4).
//
// A query with interval = ANYTIME is estimated as usual (prevalence_query.h), then its intervals
// are replaced by confidence sequences (common/confidence_sequence.h) built from the same counts:
// every estimated quantity (the prevalence, each category's share, the 1BitMean share and so its
// mean and total, each dBitFlip bucket on its s_j reports) gets the normal-mixture CS of the
// reports of all design versions present, each report debiased through its own version's channel
// (the BY_REPORTS combination: S_t / t, V_t = sum of the reports' sigma^2), with rho tuned at
// `tuned_reports` reports of the metric's newest design version. Several quantities (k > 1) also
// get simultaneous intervals at level 1 - alpha / k (Bonferroni).
//
// Thread-safe (pure).
#ifndef DENIABLE_SERVER_CORE_ANYTIME_ESTIMATE_H_
#define DENIABLE_SERVER_CORE_ANYTIME_ESTIMATE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deniable/common/combine.h"
#include "deniable/v1/query_service.pb.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"

namespace deniable::server {

// How to build the anytime intervals of one selection.
struct AnytimeRequest {
  double level = 0.95;            // in (0, 1)
  int64_t tuned_reports = 10000;  // > 0
  VersionCombination combination = VersionCombination::kByReports;
};

// The request's anytime_tuned_reports, or the default (10000) for 0.
// Errors: INVALID_ARGUMENT naming "anytime_tuned_reports" when negative.
absl::StatusOr<int64_t> AnytimeTunedReportsOrDefault(int64_t requested);

// Replaces the intervals of `p`, estimated from `counts` (and, for layouts of several
// coordinates, `support`, null otherwise) of one selection of `metric`, by anytime ones, and sets
// interval_kind = ANYTIME, anytime_tuned_reports, interval_construction and method_reason (which
// says the fixed-n `method` was not used). Suppressed estimates
// are left alone.
// Errors: FAILED_PRECONDITION naming "interval" when `counts` spans several reporting periods or
// calendar windows (the reports are then not independent), or "combination" for
// INVERSE_VARIANCE; DATA_LOSS naming a design version the metric does not have; those of
// AnytimePrevalenceInterval.
absl::Status ApplyAnytimeIntervals(const MetricInfo& metric, const PeriodCounts& counts,
                                   const PeriodSupport* support, const AnytimeRequest& request,
                                   v1::Prevalence* p);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_ANYTIME_ESTIMATE_H_
