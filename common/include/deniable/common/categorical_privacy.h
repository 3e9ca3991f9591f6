// Privacy figures of one categorical report (issue 14): what seeing a report tells about the true
// category x in {0, ..., k - 1}, for a prior pi_j = P(x = j). The categorical counterpart of
// privacy.h (statistics.md sections 2 and 5; mechanisms in categorical.h).
//
// k-RR (direct encoding) reports one category r through the k x k channel
//     P(r | x = j) = p* if r = j, q* otherwise      (p* = e^eps / (e^eps + k - 1), q* = p* e^-eps)
// and the figures are exact for that channel (Bayes; Shannon entropies in bits):
//     P(r)                = sum_j pi_j P(r | j)
//     P(x = j | r)        = pi_j P(r | j) / P(r)
//     H(x)                = -sum_j pi_j log2 pi_j
//     I(x; r)             = sum_j sum_r pi_j P(r | j) log2(P(r | j) / P(r)),   H(x | r) = H(x) - I
// OUE and OLH report a set of categories (k bits; a hash and a bucket), with 2^k or g P distinct
// reports. The figures are then those of the per-category SUPPORT channel (WBLJ definition 3):
// the event s_r = "the report supports r" has P(s_r | x = j) = p* if j = r, q* otherwise, so
//     P(s_r) = q* + (p* - q*) pi_r,    P(x = j | s_r) = pi_j P(s_r | j) / P(s_r)
// and I(x; s_r) (the binary mutual information of the channel (p*, q*) at prior pi_r, privacy.h).
// No single "I(x; report)" is given for them: for OUE the bits are independent given x, so
// I(x; report) <= sum_r I(x; s_r); for OLH the supports share one hash and no such bound holds.
// For k-RR, s_r is "r is reported", and the same per-r figures are given too. k = 2 k-RR is the
// symmetric binary design with epsilon eps (design.h): its figures equal privacy.h's at
// pi = pi_1 (category 1 as "yes").
//
// Example:
//   auto d = deniable::CategoricalDesign::Create(deniable::CategoricalMechanism::kDirectEncoding,
//                                                4, std::log(3.0));
//   absl::StatusOr<deniable::CategoricalPrivacyFigures> f =
//       deniable::ComputeCategoricalPrivacyFigures(*d, deniable::UniformPrior(4));
//   f->reported[2].posterior[2];  // P(x = 2 | r = 2) = p* = 1/2 at a uniform prior
//
// Pure functions; thread-safe.
#ifndef DENIABLE_COMMON_CATEGORICAL_PRIVACY_H_
#define DENIABLE_COMMON_CATEGORICAL_PRIVACY_H_

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "deniable/common/categorical.h"

namespace deniable {

// The largest difference from 1 accepted for the sum of a prior or of assumed shares.
inline constexpr double kShareSumTolerance = 1e-6;

// Which channel the figures describe (see the file comment).
enum class CategoricalChannelKind {
  kReport,   // k-RR: the report is a category; the k x k channel is exact
  kSupport,  // OUE, OLH: the per-category support channel (p*, q*)
};

// "report", "support".
const char* CategoricalChannelKindName(CategoricalChannelKind kind);
// The channel whose figures ComputeCategoricalPrivacyFigures gives for `mechanism`.
CategoricalChannelKind ChannelKindOf(CategoricalMechanism mechanism);

// 1/k for each of k categories. REQUIRES: k >= 1.
std::vector<double> UniformPrior(int k);

// Checks shares over k categories: size k, each finite in [0, 1], summing to 1 within
// kShareSumTolerance. `field` names them in errors ("category_prior", "assumed_shares").
// Errors: INVALID_ARGUMENT naming "<field>" (size or sum) or "<field>[j]" (a value).
absl::Status ValidateShares(std::span<const double> shares, int k, absl::string_view field);

// The Shannon entropy -sum p_j log2 p_j of a distribution, in bits, with 0 log 0 = 0.
// REQUIRES: p_j in [0, 1] (not checked).
double EntropyBits(std::span<const double> distribution);

// What one reported (k-RR) or supported (OUE, OLH) category r reveals.
struct ReportedCategoryFigures {
  double probability = 0;              // P(r) (k-RR) or P(s_r) (OUE, OLH), in [0, 1]
  std::vector<double> posterior;       // P(x = j | r) or P(x = j | s_r), j = 0..k-1; sums to 1
  double mutual_information_bits = 0;  // I(x; [r reported]) or I(x; s_r), bits, >= 0
};

struct CategoricalPrivacyFigures {
  double epsilon = 0;  // the local epsilon of one report, nats (categorical.h)
  CategoricalChannelKind channel = CategoricalChannelKind::kReport;
  std::vector<double> prior;  // pi_j, as given
  double entropy_bits = 0;    // H(x)
  // kReport only (0 for kSupport): H(x | r) and I(x; r) of the k x k channel, bits.
  double conditional_entropy_bits = 0;
  double mutual_information_bits = 0;
  std::vector<ReportedCategoryFigures> reported;  // k entries, by r
};

// The figures above for `design` at prior `prior` (k shares).
// Errors: INVALID_ARGUMENT as ValidateShares with field "category_prior".
absl::StatusOr<CategoricalPrivacyFigures> ComputeCategoricalPrivacyFigures(
    const CategoricalDesign& design, std::span<const double> prior);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CATEGORICAL_PRIVACY_H_
