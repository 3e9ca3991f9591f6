#include "deniable/common/categorical_privacy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "deniable/common/privacy.h"

namespace deniable {
namespace {

// p log2(p / q), with 0 log 0 = 0. REQUIRES: q > 0 when p > 0.
double Term(double p, double q) { return p > 0.0 ? p * std::log2(p / q) : 0.0; }

}  // namespace

const char* CategoricalChannelKindName(CategoricalChannelKind kind) {
  return kind == CategoricalChannelKind::kReport ? "report" : "support";
}

CategoricalChannelKind ChannelKindOf(CategoricalMechanism mechanism) {
  return mechanism == CategoricalMechanism::kDirectEncoding ? CategoricalChannelKind::kReport
                                                            : CategoricalChannelKind::kSupport;
}

std::vector<double> UniformPrior(int k) {
  return std::vector<double>(static_cast<size_t>(k), 1.0 / static_cast<double>(k));
}

absl::Status ValidateShares(std::span<const double> shares, int k, absl::string_view field) {
  if (shares.size() != static_cast<size_t>(k)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": must hold one share for each of the ",
                                                   k, " categories, but holds ", shares.size()));
  }
  double sum = 0;
  for (size_t j = 0; j < shares.size(); ++j) {
    if (!(shares[j] >= 0.0 && shares[j] <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", j, "]: must be in [0, 1], but is ", shares[j]));
    }
    sum += shares[j];
  }
  if (!(std::fabs(sum - 1.0) <= kShareSumTolerance)) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": the shares must sum to 1 (within ",
                                                   kShareSumTolerance, "), but sum to ", sum));
  }
  return absl::OkStatus();
}

double EntropyBits(std::span<const double> distribution) {
  double h = 0;
  for (double p : distribution) {
    if (p > 0.0) h -= p * std::log2(p);
  }
  return h;
}

absl::StatusOr<CategoricalPrivacyFigures> ComputeCategoricalPrivacyFigures(
    const CategoricalDesign& design, std::span<const double> prior) {
  const int k = design.k();
  if (absl::Status s = ValidateShares(prior, k, "category_prior"); !s.ok()) return s;
  const double p = design.p_star();
  const double q = design.q_star();
  CategoricalPrivacyFigures out;
  out.epsilon = design.epsilon();
  out.channel = ChannelKindOf(design.mechanism());
  out.prior.assign(prior.begin(), prior.end());
  out.entropy_bits = EntropyBits(prior);
  out.reported.resize(static_cast<size_t>(k));
  double information = 0;  // I(x; r), k-RR
  for (int r = 0; r < k; ++r) {
    ReportedCategoryFigures& f = out.reported[static_cast<size_t>(r)];
    const double pi_r = prior[static_cast<size_t>(r)];
    // P(r) = q* + (p* - q*) pi_r, whether r is reported (k-RR) or supported (OUE, OLH).
    f.probability = q + (p - q) * pi_r;
    f.posterior.resize(static_cast<size_t>(k));
    for (int j = 0; j < k; ++j) {
      const double likelihood = j == r ? p : q;
      const double pi_j = prior[static_cast<size_t>(j)];
      f.posterior[static_cast<size_t>(j)] = pi_j * likelihood / f.probability;
      information += Term(pi_j * likelihood, pi_j * f.probability);
    }
    // I(x; s_r) depends on x only through [x = r]: the binary channel (p*, q*) at pi_r.
    absl::StatusOr<double> mi = MutualInformationBits(Channel{p, q}, pi_r);
    if (!mi.ok()) return mi.status();
    f.mutual_information_bits = *mi;
  }
  if (out.channel == CategoricalChannelKind::kReport) {
    out.mutual_information_bits = std::max(0.0, information);
    out.conditional_entropy_bits = std::max(0.0, out.entropy_bits - out.mutual_information_bits);
  }
  return out;
}

}  // namespace deniable
