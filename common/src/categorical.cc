#include "deniable/common/categorical.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/random/distributions.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deniable {
namespace {

// OLH's bucket count for epsilon (WBLJ section 4.4: g = e^eps + 1, rounded, at least 2).
double HashBucketsFor(double epsilon) { return std::max(2.0, std::round(std::exp(epsilon) + 1.0)); }

// The probability that two distinct categories share a bucket under h(v) = ((a v + b) mod P)
// mod g: (a u + b, a v + b) mod P is uniform over the pairs of distinct residues, so it is
// sum over r of c_r (c_r - 1) / (P (P - 1)), c_r the residues in [0, P) congruent to r mod g.
double HashCollisionProbability(int g) {
  const double big_p = kLocalHashPrime;
  const uint32_t base = kLocalHashPrime / static_cast<uint32_t>(g);
  const uint32_t extra = kLocalHashPrime % static_cast<uint32_t>(g);  // residues with base + 1
  const double hi = base + 1.0, lo = base;
  const double pairs = extra * hi * (hi - 1.0) + (g - extra) * lo * (lo - 1.0);
  return pairs / (big_p * (big_p - 1.0));
}

struct Support {
  double p = 0, q = 0;
  int g = 0;
};

Support SupportFor(CategoricalMechanism m, int k, double eps) {
  const double e = std::exp(eps);
  switch (m) {
    case CategoricalMechanism::kDirectEncoding:
      return {e / (e + k - 1.0), 1.0 / (e + k - 1.0), 0};
    case CategoricalMechanism::kOptimizedUnaryEncoding:
      return {0.5, 1.0 / (e + 1.0), 0};
    case CategoricalMechanism::kOptimizedLocalHashing: {
      const double g = HashBucketsFor(eps);
      if (g > kMaxHashBuckets) return {0, 0, 0};
      const double p = e / (e + g - 1.0);
      const double c = HashCollisionProbability(static_cast<int>(g));
      return {p, c * p + (1.0 - c) * (1.0 - p) / (g - 1.0), static_cast<int>(g)};
    }
  }
  return {};
}

}  // namespace

const char* CategoricalMechanismName(CategoricalMechanism m) {
  switch (m) {
    case CategoricalMechanism::kDirectEncoding:
      return "k_rr";
    case CategoricalMechanism::kOptimizedUnaryEncoding:
      return "oue";
    case CategoricalMechanism::kOptimizedLocalHashing:
      return "olh";
  }
  return "unknown";
}

double ApproximateVarianceFactor(CategoricalMechanism mechanism, int k, double epsilon) {
  const Support s = SupportFor(mechanism, k, epsilon);
  const double gap = s.p - s.q;
  if (!(gap > 0.0)) return std::numeric_limits<double>::infinity();
  return s.q * (1.0 - s.q) / (gap * gap);
}

absl::StatusOr<CategoricalDesign> CategoricalDesign::Create(CategoricalMechanism mechanism, int k,
                                                            double epsilon) {
  if (k < kMinCategories || k > kMaxCategories) {
    return absl::InvalidArgumentError(
        absl::StrCat("k must be in [", kMinCategories, ", ", kMaxCategories, "], but is ", k));
  }
  if (!(epsilon > 0.0 && epsilon <= kMaxSymmetricEpsilon)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "epsilon must be finite and in (0, ", kMaxSymmetricEpsilon, "] nats, but is ", epsilon));
  }
  if (mechanism == CategoricalMechanism::kOptimizedLocalHashing &&
      HashBucketsFor(epsilon) > kMaxHashBuckets) {
    return absl::InvalidArgumentError(absl::StrCat(
        "epsilon is too large for olh (g = e^eps + 1 would exceed ", kMaxHashBuckets,
        " buckets), but is ", epsilon, "; use k_rr, which has the least variance there"));
  }
  const Support s = SupportFor(mechanism, k, epsilon);
  if (!(s.p - s.q >= kMinChannelGap)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "epsilon is too small for %s with k = %d: p* - q* = %.3g < %g, so an estimate would "
        "need more than 10^6 times the reports of a direct question; epsilon is %g",
        CategoricalMechanismName(mechanism), k, s.p - s.q, kMinChannelGap, epsilon));
  }
  CategoricalDesign d;
  d.mechanism_ = mechanism;
  d.k_ = k;
  d.epsilon_ = epsilon;
  d.g_ = s.g;
  d.p_star_ = s.p;
  d.q_star_ = s.q;
  return d;
}

absl::StatusOr<CategoricalDesign> CategoricalDesign::LeastVariance(int k, double epsilon) {
  CategoricalMechanism best = CategoricalMechanism::kDirectEncoding;
  double best_var = std::numeric_limits<double>::infinity();
  for (CategoricalMechanism m :
       {CategoricalMechanism::kDirectEncoding, CategoricalMechanism::kOptimizedUnaryEncoding,
        CategoricalMechanism::kOptimizedLocalHashing}) {
    if (m == CategoricalMechanism::kOptimizedLocalHashing && k >= kMinCategories &&
        HashBucketsFor(epsilon) > kMaxHashBuckets) {
      continue;
    }
    const double v = ApproximateVarianceFactor(m, std::max(k, kMinCategories), epsilon);
    if (v < best_var * (1.0 - 1e-6)) {  // ties (within 1e-6) keep the earlier, simpler one
      best_var = v;
      best = m;
    }
  }
  return Create(best, k, epsilon);
}

std::vector<std::vector<double>> CategoricalDesign::SupportMatrix() const {
  std::vector<std::vector<double>> m(k_, std::vector<double>(k_, q_star_));
  for (int v = 0; v < k_; ++v) m[v][v] = p_star_;
  return m;
}

double CategoricalDesign::CloneProbability() const {
  if (mechanism_ == CategoricalMechanism::kDirectEncoding) return 2.0 / (std::exp(epsilon_) + 1.0);
  return std::exp(-epsilon_);
}

std::string CategoricalDesign::ToString() const {
  std::string out =
      absl::StrFormat("%s(k=%d, eps=%.4g", CategoricalMechanismName(mechanism_), k_, epsilon_);
  if (g_ > 0) absl::StrAppend(&out, ", g=", g_);
  return out + ")";
}

double CategoryVarianceFactor(const CategoricalDesign& design, double share) {
  const double gap = design.p_star() - design.q_star();
  const double lambda = design.q_star() + gap * share;
  return lambda * (1.0 - lambda) / (gap * gap);
}

uint32_t LocalHash(uint32_t a, uint32_t b, uint32_t v, uint32_t g) {
  const uint64_t x = (static_cast<uint64_t>(a) * v + b) % kLocalHashPrime;
  return static_cast<uint32_t>(x % g);
}

absl::StatusOr<CategoricalReport> RandomizeCategory(const CategoricalDesign& design,
                                                    int32_t category, absl::BitGenRef gen) {
  BitGenDraws draws(gen);
  return RandomizeCategory(design, category, draws);
}

absl::StatusOr<CategoricalReport> RandomizeCategory(const CategoricalDesign& design,
                                                    int32_t category, Draws& draws) {
  const int k = design.k();
  if (category < 0 || category >= k) {
    return absl::InvalidArgumentError(
        absl::StrCat("category must be in [0, ", k, "), but is ", category));
  }
  CategoricalReport r;
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding: {
      if (draws.Bernoulli(design.p_star())) {
        r.category = category;
      } else {  // uniform over the k - 1 other categories
        const int32_t other = static_cast<int32_t>(draws.Below(static_cast<uint32_t>(k - 1)));
        r.category = other >= category ? other + 1 : other;
      }
      break;
    }
    case CategoricalMechanism::kOptimizedUnaryEncoding: {
      r.bits.resize(k);
      for (int v = 0; v < k; ++v) {
        r.bits[v] = draws.Bernoulli(v == category ? design.p_star() : design.q_star()) ? 1 : 0;
      }
      break;
    }
    case CategoricalMechanism::kOptimizedLocalHashing: {
      const uint32_t g = static_cast<uint32_t>(design.hash_buckets());
      r.hash_a = draws.Between(1u, kLocalHashPrime - 1);
      r.hash_b = draws.Between(0u, kLocalHashPrime - 1);
      const uint32_t h = LocalHash(r.hash_a, r.hash_b, static_cast<uint32_t>(category), g);
      const double e = std::exp(design.epsilon());
      if (draws.Bernoulli(e / (e + g - 1.0))) {
        r.bucket = static_cast<int32_t>(h);
      } else {  // uniform over the g - 1 other buckets
        const uint32_t other = draws.Below(g - 1);
        r.bucket = static_cast<int32_t>(other >= h ? other + 1 : other);
      }
      break;
    }
  }
  return r;
}

absl::Status ValidateCategoricalReport(const CategoricalDesign& design,
                                       const CategoricalReport& report) {
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      if (report.category < 0 || report.category >= design.k()) {
        return absl::InvalidArgumentError(
            absl::StrCat("category must be in [0, ", design.k(), "), but is ", report.category));
      }
      break;
    case CategoricalMechanism::kOptimizedUnaryEncoding:
      if (report.bits.size() != static_cast<size_t>(design.k())) {
        return absl::InvalidArgumentError(absl::StrCat("bits must hold k = ", design.k(),
                                                       " bits, but holds ", report.bits.size()));
      }
      for (size_t v = 0; v < report.bits.size(); ++v) {
        if (report.bits[v] > 1) {
          return absl::InvalidArgumentError(absl::StrCat("bits[", v, "] must be 0 or 1, but is ",
                                                         static_cast<int>(report.bits[v])));
        }
      }
      break;
    case CategoricalMechanism::kOptimizedLocalHashing:
      if (report.hash_a == 0 || report.hash_a >= kLocalHashPrime) {
        return absl::InvalidArgumentError(absl::StrCat(
            "hash_a must be in [1, ", kLocalHashPrime - 1, "], but is ", report.hash_a));
      }
      if (report.hash_b >= kLocalHashPrime) {
        return absl::InvalidArgumentError(absl::StrCat(
            "hash_b must be in [0, ", kLocalHashPrime - 1, "], but is ", report.hash_b));
      }
      if (report.bucket < 0 || report.bucket >= design.hash_buckets()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "bucket must be in [0, ", design.hash_buckets(), "), but is ", report.bucket));
      }
      break;
  }
  return absl::OkStatus();
}

bool Supports(const CategoricalDesign& design, const CategoricalReport& report, int v) {
  switch (design.mechanism()) {
    case CategoricalMechanism::kDirectEncoding:
      return report.category == v;
    case CategoricalMechanism::kOptimizedUnaryEncoding:
      return report.bits[v] == 1;
    case CategoricalMechanism::kOptimizedLocalHashing:
      return LocalHash(report.hash_a, report.hash_b, static_cast<uint32_t>(v),
                       static_cast<uint32_t>(design.hash_buckets())) ==
             static_cast<uint32_t>(report.bucket);
  }
  return false;
}

void AddSupport(const CategoricalDesign& design, const CategoricalReport& report,
                std::vector<int64_t>* counts) {
  if (design.mechanism() == CategoricalMechanism::kDirectEncoding) {
    ++(*counts)[report.category];
    return;
  }
  for (int v = 0; v < design.k(); ++v) {
    if (Supports(design, report, v)) ++(*counts)[v];
  }
}

}  // namespace deniable
