// Categorical randomized response: questions with k answers (statistics.md section 5).
//
// A respondent's true answer is a category x in {0, ..., k - 1}, 2 <= k <= kMaxCategories. Three
// epsilon-LDP mechanisms from Wang, Blocki, Li and Jha, "Locally Differentially Private Protocols
// for Frequency Estimation" (USENIX Security 2017; "WBLJ" below), all in their "pure" form: a
// report y supports a set of categories, and
//     p* = P(y supports v | x = v),      q* = P(y supports v | x != v)      (WBLJ def. 3)
//   kDirectEncoding (k-RR, generalized randomized response, WBLJ section 4.1): y is a category,
//     the true one with probability p = e^eps / (e^eps + k - 1), each other one with q =
//     1 / (e^eps + k - 1); y supports {y}. The k x k channel is this matrix; k = 2 is the
//     symmetric binary design (design.h).
//   kOptimizedUnaryEncoding (OUE, WBLJ section 4.3): y is k bits; bit x is 1 with p* = 1/2, every
//     other bit with q* = 1 / (e^eps + 1), independently; y supports {v : bit v = 1}.
//   kOptimizedLocalHashing (OLH, WBLJ section 4.4): a hash h from a universal family is drawn,
//     g = max(2, round(e^eps + 1)) buckets; k-RR over the g buckets is applied to h(x); y = (h, z)
//     supports {v : h(v) = z}. The family here is h(v) = ((a v + b) mod P) mod g with P = 2^31 - 1,
//     a uniform in [1, P - 1], b in [0, P - 1] (Carter and Wegman 1979): p* = e^eps / (e^eps + g -
//     1) and q* = c p* + (1 - c)(1 - p*) / (g - 1), c the family's exact collision probability
//     (1/g up to 1e-9), so the estimate has no bias from the hash.
// SupportChannel() = (a, b) = (p*, q*) is the binary channel of "y supports v" given "x = v": every
// binary tool (estimator.h, interval.h, coverage.h) applies to one category through it.
//
// Variance of one category's share estimate f_hat_v = (c_v / n - q*) / (p* - q*) from n reports
// (c_v reports supporting v): Var = lambda_v (1 - lambda_v) / (n (p* - q*)^2), lambda_v = q* + (p*
// - q*) f_v (statistics.md section 5; devices drawn from the population, as for bits). As f_v -> 0
// it is q* (1 - q*) / (n (p* - q*)^2), WBLJ's Var* (their eq. 5, 8, 11): (e^eps + k - 2) / (e^eps
// - 1)^2 / n for k-RR, 4 e^eps / (e^eps - 1)^2 / n for OUE and OLH (g = e^eps + 1). k-RR has the
// least variance when k < 3 e^eps + 2 (WBLJ section 5), OUE otherwise; OLH matches OUE up to the
// rounding of g and sends O(log k) bits instead of k.
//
// Example:
//   absl::StatusOr<deniable::CategoricalDesign> d =
//       deniable::CategoricalDesign::LeastVariance(/*k=*/4, /*epsilon=*/std::log(3.0));
//   d->mechanism();  // kDirectEncoding: 4 < 3 * 3 + 2
//   deniable::client::SecureBitGen gen;
//   absl::StatusOr<deniable::CategoricalReport> r = deniable::RandomizeCategory(*d, 2, gen);
//
// CategoricalDesign is an immutable value type; the functions are pure and thread-safe, except
// that a generator must not be shared between threads without locking (as in randomizer.h).
#ifndef DENIABLE_COMMON_CATEGORICAL_H_
#define DENIABLE_COMMON_CATEGORICAL_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/design.h"
#include "deniable/common/draws.h"

namespace deniable {

inline constexpr int kMinCategories = 2;
inline constexpr int kMaxCategories = 256;
// OLH's hash family modulus (a Mersenne prime) and the largest number of buckets g accepted
// (eps up to about ln 65535 = 11.1 nats; past that k-RR is the better mechanism for any k here).
inline constexpr uint32_t kLocalHashPrime = 2147483647u;
inline constexpr int kMaxHashBuckets = 65536;

enum class CategoricalMechanism {
  kDirectEncoding,          // "k_rr"
  kOptimizedUnaryEncoding,  // "oue"
  kOptimizedLocalHashing,   // "olh"
};

// "k_rr", "oue", "olh".
const char* CategoricalMechanismName(CategoricalMechanism mechanism);

// A categorical design. Immutable value type; thread-safe to share once constructed.
class CategoricalDesign {
 public:
  // `k` categories in [kMinCategories, kMaxCategories], `epsilon` in nats, finite, in (0,
  // kMaxSymmetricEpsilon], with p* - q* >= kMinChannelGap (the variance factor 1 / (p* - q*)^2
  // stays below 10^6; e.g. k-RR with k = 64 needs eps >= 0.062). OLH also needs g <=
  // kMaxHashBuckets. Errors: INVALID_ARGUMENT naming "k" or "epsilon".
  static absl::StatusOr<CategoricalDesign> Create(CategoricalMechanism mechanism, int k,
                                                  double epsilon);
  // The mechanism of least ApproximateVariance for (k, epsilon); ties (within a relative 1e-6,
  // e.g. OLH against OUE when e^eps + 1 is an integer) go to k-RR, then OUE.
  // Errors: as Create (for the chosen mechanism).
  static absl::StatusOr<CategoricalDesign> LeastVariance(int k, double epsilon);

  CategoricalMechanism mechanism() const { return mechanism_; }
  int k() const { return k_; }
  // The local DP epsilon of one report, in nats (exact: the ratio of report probabilities for two
  // answers is at most e^epsilon for every mechanism above).
  double epsilon() const { return epsilon_; }
  // OLH's number of hash buckets g (0 for the other mechanisms).
  int hash_buckets() const { return g_; }
  double p_star() const { return p_star_; }
  double q_star() const { return q_star_; }
  // (p*, q*): the binary channel of "report supports v" given "x = v" (see the file comment).
  Channel SupportChannel() const { return Channel{p_star_, q_star_}; }
  // The k x k matrix M[v][u] = P(report supports v | x = u): p* on the diagonal, q* elsewhere.
  // For k-RR it is the channel itself (its columns sum to 1).
  std::vector<std::vector<double>> SupportMatrix() const;
  // The clone probability for the shuffle bound (shuffle.h): 2 / (e^eps + 1) for k-RR (the largest
  // gamma with R(x) >= gamma/2 (R(x0) + R(x1)) for all x, x0, x1: the binding output is x1 with
  // x != x1, where q >= gamma/2 (p + q)); e^-eps for OUE (binding output: bit x = 0 and bits
  // x0 = x1 = 1, where R(x) / ((R(x0) + R(x1)) / 2) = (1/2) q*^2 / ((1 - q*) (1/2) q*) =
  // q* / (1 - q*) = e^-eps); e^-eps (the general bound, shuffle.h) for OLH.
  double CloneProbability() const;
  // "k_rr(k=4, eps=1.0986)" and the like, for logs and tables.
  std::string ToString() const;

 private:
  CategoricalDesign() = default;
  CategoricalMechanism mechanism_ = CategoricalMechanism::kDirectEncoding;
  int k_ = 0;
  double epsilon_ = 0;
  int g_ = 0;
  double p_star_ = 0;
  double q_star_ = 0;
};

// n times the variance of one category's share estimate at true share f in [0, 1]:
// lambda (1 - lambda) / (p* - q*)^2 with lambda = q* + (p* - q*) f (see the file comment).
double CategoryVarianceFactor(const CategoricalDesign& design, double share);
// WBLJ's Var* times n: the factor above at f = 0, q* (1 - q*) / (p* - q*)^2, for (k, epsilon)
// without building a design (used by LeastVariance). +infinity when p* = q*.
// REQUIRES: k >= 2, epsilon > 0.
double ApproximateVarianceFactor(CategoricalMechanism mechanism, int k, double epsilon);

// One randomized report. Only the fields of the design's mechanism are set.
struct CategoricalReport {
  int32_t category = -1;      // k-RR: the reported category in [0, k)
  std::vector<uint8_t> bits;  // OUE: k bits, 0 or 1
  uint32_t hash_a = 0;        // OLH: the hash h(v) = ((hash_a v + hash_b) mod P) mod g
  uint32_t hash_b = 0;
  int32_t bucket = -1;  // OLH: the reported bucket in [0, g)
};

// OLH's hash of category v: ((a v + b) mod kLocalHashPrime) mod g.
uint32_t LocalHash(uint32_t a, uint32_t b, uint32_t v, uint32_t g);

// Draws the report for the true category `category` with the design's mechanism; the true
// category goes no further. Production passes a secure generator (deniable::client::SecureBitGen,
// OpenSSL RAND_bytes), tests a seeded engine or absl::MockingBitGen.
// Errors: INVALID_ARGUMENT naming "category" (outside [0, k)).
absl::StatusOr<CategoricalReport> RandomizeCategory(const CategoricalDesign& design,
                                                    int32_t category, absl::BitGenRef gen);
// The same with explicit draws (draws.h), in this order: k-RR Bernoulli(p*), then Below(k - 1)
// when it fails; OUE Bernoulli(p* or q*) for v = 0 .. k - 1; OLH Between(1, P - 1) for hash_a,
// Between(0, P - 1) for hash_b, Bernoulli(e^eps / (e^eps + g - 1)), then Below(g - 1) when it
// fails. The generator form above is this on BitGenDraws; the SDKs draw in the same order
// (tests/golden/randomizer_vectors.json).
absl::StatusOr<CategoricalReport> RandomizeCategory(const CategoricalDesign& design,
                                                    int32_t category, Draws& draws);

// Checks a report's shape against the design (what a server must do before counting it).
// Errors: INVALID_ARGUMENT naming "category", "bits" (wrong length or a value other than 0/1),
// "hash_a" (0 or >= P), "hash_b" (>= P) or "bucket".
absl::Status ValidateCategoricalReport(const CategoricalDesign& design,
                                       const CategoricalReport& report);

// True when `report` supports category v. REQUIRES: ValidateCategoricalReport ok, 0 <= v < k.
bool Supports(const CategoricalDesign& design, const CategoricalReport& report, int v);

// Adds each category the report supports to `counts` (size k). REQUIRES: as Supports,
// counts->size() == k.
void AddSupport(const CategoricalDesign& design, const CategoricalReport& report,
                std::vector<int64_t>* counts);

}  // namespace deniable

#endif  // DENIABLE_COMMON_CATEGORICAL_H_
