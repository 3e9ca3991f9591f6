// DescribeDesign and PlanSurvey for numeric designs (1BitMean, dBitFlip; common/numeric.h,
// issue 28), as the wire messages answer: the figures of a numeric metric's current design (the
// server's DesignAdvisor) or of numeric parameters with their range (design_advice.h's
// DescribeDesign and PlanSurvey, so the gRPC and HTTP APIs and the CLI's local `deniable design`
// and `deniable plan` answer alike). Pure functions, thread-safe.
#ifndef DENIABLE_CONVERT_NUMERIC_ADVICE_H_
#define DENIABLE_CONVERT_NUMERIC_ADVICE_H_

#include "absl/status/statusor.h"
#include "deniable/common/numeric.h"
#include "deniable/v1/query_service.pb.h"

namespace deniable {

// The figures of numeric design `design` whose wire form is `wire`: epsilon of one report, the
// binary figures at request.prior (1BitMean: the bit for a value at hi against lo; dBitFlip:
// the whole report for "in a given bucket" against "in another", DBitFlipReportPrivacy, with
// one sampled bucket's bit's figures in channel_note), and, for
// request.n > 0, the central (shuffle-amplified) epsilon of n reports. Errors: INVALID_ARGUMENT
// naming "prior", "n" or "category_prior" (only for categorical designs).
absl::StatusOr<v1::DesignDescription> DescribeNumericDesign(
    const v1::DescribeDesignRequest& request, const NumericDesign& design, const v1::Design& wire);

// DescribeDesign for request.design.numeric with request.range (the values' [lo, hi] and unit;
// without it the parameters must name the mechanism and all bucket_edges). Errors: those of
// numeric_convert.h NumericDesignFromProto (naming "design.numeric..." or "range") and of
// DescribeNumericDesign.
absl::StatusOr<v1::DesignDescription> DescribeNumericParameters(
    const v1::DescribeDesignRequest& request);

// PlanSurvey for request.design.numeric over request.range (required): the devices, one report
// each, for ONE_BIT_MEAN's mean within +/- half_width (in the values' unit, > 0) or for every
// D_BIT_FLIP bucket share within +/- half_width together (a share in (0, 1); simultaneous SIDAK
// or BONFERRONI; assumed_shares: k shares, or empty for the worst case). Worst case over the
// values: Var(mean) <= m^2 C^2 / (4 n), C = (e^eps + 1) / (e^eps - 1), m = hi - lo (DKY17
// Theorem 1); a bucket's share from the s_j reports that sample it, Var <= 1 / (4 s_j
// (p - q)^2), s_j ~ Binomial(n, d / k) reaching its need for every bucket with probability 95 %
// (numeric.h PlanHistogramSurvey). Errors: INVALID_ARGUMENT naming "range", "design.numeric...",
// "half_width", "confidence_level", "simultaneous", "assumed_shares" or "assumed_prevalence" (a
// numeric plan takes none: only 0 (unset) or -1); OUT_OF_RANGE naming "half_width" when n exceeds
// int64.
absl::StatusOr<v1::SurveyPlan> PlanNumericSurvey(const v1::PlanSurveyRequest& request);

}  // namespace deniable

#endif  // DENIABLE_CONVERT_NUMERIC_ADVICE_H_
