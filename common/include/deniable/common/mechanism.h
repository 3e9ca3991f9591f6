// One kind of report, one implementation: the seam every kind of report goes through.
//
// A `Mechanism` is built from a design (MechanismFor) and answers, for that design, every question
// the rest of Deniable asks about a report (docs/architecture.md, "Adding a kind of report"):
//   - Randomize: a true value -> the wire answer (the SDKs mirror this, checked against
//     tests/golden/randomizer_vectors.json);
//   - Validate: a wire answer -> its counter increments (server side);
//   - Layout: the counter vector a report adds to, [n, y_0 .. y_{k-1}]: n counts reports, y_j the
//     reports that say "yes" to coordinate j (yes/no: k = 1, y_0 = the "yes" bits; k-RR, OUE,
//     OLH: k categories, y_j = the reports supporting j). Storage only sums these vectors;
//   - ChannelOf(j): the binary channel (a_j, b_j) of coordinate j, through which every binary tool
//     (estimator.h, interval.h, coverage.h, combine.h) applies;
//   - Privacy, Estimate, Plan, ExactCoverage: the figures, each delegating to the functions of
//     design.h / privacy.h / estimator.h / interval.h / planner.h / coverage.h (yes/no) or their
//     categorical_* twins, with the same results.
// The implementations are the only code here that knows a kind: yes/no designs (design.h) and
// the three categorical mechanisms (categorical.h). The design's `oneof` is mapped to its
// mechanism by MechanismFor (and proto/convert/mechanism_convert.h for the wire message).
//
// Example:
//   auto m = deniable::MechanismFor(deniable::Design::TwoCoin());
//   std::vector<int64_t> counters(m->Layout().length(), 0);  // [n, yes]
//   absl::StatusOr<deniable::CounterIncrements> inc =
//       m->Validate(answer, "reports[0]", "crash");
//   if (!inc.ok()) return inc.status();
//   inc->AddTo(counters);
//   absl::StatusOr<deniable::MechanismEstimate> e = m->Estimate(counters, {});
//
// Mechanisms are immutable; every method is const and thread-safe (a generator passed to
// Randomize must not be shared between threads without locking).
#ifndef DENIABLE_COMMON_MECHANISM_H_
#define DENIABLE_COMMON_MECHANISM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/random/bit_gen_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deniable/common/categorical.h"
#include "deniable/common/categorical_estimate.h"
#include "deniable/common/categorical_planner.h"
#include "deniable/common/categorical_privacy.h"
#include "deniable/common/combine.h"
#include "deniable/common/design.h"
#include "deniable/common/draws.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/common/interval.h"
#include "deniable/common/numeric.h"
#include "deniable/common/privacy.h"
#include "deniable/common/wire_report.h"

namespace deniable {

enum class ReportKind {
  kYesNo,         // one randomized bit (design.h)
  kCategorical,   // k-RR, OUE or OLH over k categories (categorical.h)
  kNumeric,       // 1BitMean or dBitFlip over a value range (numeric.h)
  kHeavyHitters,  // strings: a Hadamard count-mean sketch with prefix levels (heavy_hitters.h)
};

// "yes_no", "categorical", "numeric", "heavy_hitters".
const char* ReportKindName(ReportKind kind);

// The longest counter layout (CounterLayout::length()) any mechanism may have: coordinates are
// indexed by uint32_t end to end (CounterIncrements::ones, storage's ReportRow::counters), and
// storage refuses (DATA_LOSS) a stored index at or past this bound. 2^24: room for a sketch of
// 33 prefix levels x 16 rows x 1024 coefficients x 2 counters (2^21) and more.
inline constexpr int64_t kMaxCounterLayoutLength = int64_t{1} << 24;

// The counter vector of one (metric, design version, time bucket, labels): [n, y_0 .. y_{k-1}].
struct CounterLayout {
  int coordinates = 1;  // k
  int length() const { return 1 + coordinates; }
  // Builds a layout of `coordinates` coordinates. Thread-safe (no state).
  // Errors: INVALID_ARGUMENT naming "layout" when coordinates < 1 or the length (1 +
  // coordinates) exceeds kMaxCounterLayoutLength.
  static absl::StatusOr<CounterLayout> Of(int64_t coordinates);
};

// What one valid report adds: 1 to n (index 0) and 1 to y_j (index 1 + j) for each j in `ones`.
struct CounterIncrements {
  // Ascending, distinct, each < Layout().coordinates. Inline for a few coordinates: a yes/no
  // report's increment costs no allocation on the ingestion path.
  absl::InlinedVector<uint32_t, 8> ones;
  // Adds the increments to `counters`. REQUIRES: counters.size() == Layout().length().
  void AddTo(std::span<int64_t> counters) const;
};

// What Privacy is asked: the prior of one coordinate ("yes", or one category against the rest)
// and, for categorical designs, the prior over the k categories (empty: uniform).
struct PrivacyQuestion {
  double prior = 0.5;
  std::vector<double> category_prior;
};

struct MechanismPrivacy {
  double epsilon = 0;            // local epsilon of one report, nats; +infinity when unbounded
  double clone_probability = 0;  // for the shuffle bound (shuffle.h)
  // Coordinate 0's channel at `prior` (yes/no: the design; categorical: one category against
  // the rest through the support channel (p*, q*), the same for every category).
  PrivacyFigures binary;
  std::optional<CategoricalPrivacyFigures> categorical;  // categorical designs only
};

struct MechanismEstimateOptions {
  double confidence_level = 0.95;
  std::optional<IntervalMethod> method;  // nullopt: the default for the coordinates' channel
  SimultaneousMethod simultaneous = SimultaneousMethod::kSidak;  // several coordinates only
};

// One estimated quantity (a prevalence, a category's share, a numeric share or bucket share).
// Estimate returns one per quantity: yes/no and ONE_BIT_MEAN 1, categorical k, D_BIT_FLIP k (the
// bucket shares; its counter layout has 2k coordinates, [s_j] and [y_j]).
struct CoordinateEstimate {
  int64_t successes = 0;            // y_j
  int64_t trials = 0;               // the reports y_j counts among: n, or D_BIT_FLIP's s_j
  double success_share = 0;         // y_j / trials
  double unbiased = 0;              // may fall outside [0, 1]
  double clipped = 0;               // yes/no: clipped to [0, 1]; categorical: Norm-Sub share
  double variance = 0;              // estimated variance of `unbiased`
  double standard_error = 0;        // sqrt(variance)
  PrevalenceInterval interval;      // this coordinate alone, at the confidence level
  PrevalenceInterval simultaneous;  // all coordinates at once (one coordinate: = interval)
};

struct MechanismEstimate {
  int64_t n = 0;
  double confidence_level = 0;
  IntervalMethod method = IntervalMethod::kWilson;
  double per_coordinate_level = 0;  // the level of each simultaneous interval
  std::vector<CoordinateEstimate> coordinates;
};

class Mechanism;

// One design version's summed counter vector, for EstimateVersions.
struct VersionCounters {
  std::shared_ptr<const Mechanism> mechanism;
  std::vector<int64_t> counters;  // [n, y_0 .. y_{k-1}]
};

struct PlanTarget {
  double half_width = 0.05;  // on the prevalence / share scale, in (0, 1]
  // ONE_BIT_MEAN only: when > 0, the mean's half-width in the value's units; the plan is then
  // for the share within +/- value_half_width / (hi - lo) and half_width is ignored.
  double value_half_width = 0;
  double confidence_level = 0.95;
  double assumed_prevalence = -1;      // yes/no: in [0, 1], or -1 for the worst case
  std::vector<double> assumed_shares;  // categorical: k shares, or empty for the worst case
  SimultaneousMethod simultaneous = SimultaneousMethod::kSidak;
};

struct MechanismPlan {
  int64_t reports_needed = 0;                  // at the assumption (or the worst case)
  int64_t reports_needed_worst_case = 0;       // worst case over prevalences / shares
  std::optional<double> variance_inflation;    // yes/no at an assumed prevalence in (0, 1)
  std::optional<CategoricalPlan> categorical;  // categorical designs: the full plan
};

class Mechanism {
 public:
  virtual ~Mechanism() = default;

  virtual ReportKind kind() const = 0;
  // The design, for logs and tables ("two_coin", "oue(k=8, eps=1.0986)", ...).
  virtual std::string ToString() const = 0;
  // What the estimated quantities are: versions combine (EstimateVersions) only when their keys
  // are equal (a D_BIT_FLIP design's bucket edges; "" for the other kinds: the layout decides).
  virtual std::string CoordinatesKey() const { return ""; }
  virtual CounterLayout Layout() const = 0;
  // The binary channel of coordinate j. REQUIRES: 0 <= j < Layout().coordinates.
  virtual Channel ChannelOf(int j) const = 0;
  // The local epsilon of one report, nats (+infinity when some report reveals the answer).
  virtual double Epsilon() const = 0;
  // The clone probability for the shuffle bound (shuffle.h).
  virtual double CloneProbability() const = 0;

  // Draws the wire answer for true value `value` (yes/no: 0 or 1; categorical: the category;
  // numeric: the level of numeric.h LevelOf). Errors: INVALID_ARGUMENT naming "value" (yes/no:
  // not 0 or 1), "category" (outside [0, k)) or "level" (numeric: outside its range).
  // The draws are made in the order draws.h and categorical.h give (the SDKs' contract).
  virtual absl::StatusOr<WireAnswer> Randomize(int32_t value, Draws& draws) const = 0;
  // The same on a generator (BitGenDraws).
  absl::StatusOr<WireAnswer> Randomize(int32_t value, absl::BitGenRef gen) const {
    BitGenDraws draws(gen);
    return Randomize(value, draws);
  }

  // Whether the values of this kind are strings (RandomizeString) rather than numbers.
  virtual bool TakesStrings() const { return false; }
  // The group a device of this design belongs to, drawn once and kept with the device's state
  // (heavy hitters: heavy_hitters.h DrawHeavyHittersGroup); 0 for the kinds without groups.
  virtual uint32_t DrawDeviceGroup(Draws& draws) const { return 0; }
  // Draws the wire answer for the string `value` of a device of `group`. The default (the kinds
  // whose values are numbers) fails with FAILED_PRECONDITION naming "value".
  // Errors (heavy hitters): INVALID_ARGUMENT naming "value" or "group".
  virtual absl::StatusOr<WireAnswer> RandomizeString(absl::string_view value, uint32_t group,
                                                     Draws& draws) const;

  // Whether a prevalence query (GetPrevalence, series, difference: Estimate over the counters)
  // answers a metric of this design, named `metric`. OK (the default) for the kinds estimated
  // per coordinate. Errors: FAILED_PRECONDITION naming "metric" and the queries that do answer
  // it (heavy hitters: GetTopValues, GetFrequencies).
  virtual absl::Status AnsweredByPrevalence(absl::string_view metric) const {
    return absl::OkStatus();
  }

  // Checks a wire answer and returns what it adds to the counters. `field` prefixes the messages
  // ("reports[3]"), `metric` is the name of the metric whose design it is (messages say
  // 'metric "<metric>"'). The seam refuses, for every kind whose values are numbers
  // (!TakesStrings()), an answer carrying a string kind's place (WireAnswer::has_heavy_hitters),
  // then asks the kind (ValidateKind).
  // Errors: INVALID_ARGUMENT naming "<field>.heavy_hitters" (a string kind's place on a metric of
  // numbers), "<field>.bit" or "<field>.categorical..." (the other kind's fields, a bit other
  // than 0/1, a malformed or out-of-range categorical report).
  absl::StatusOr<CounterIncrements> Validate(const WireAnswer& answer, absl::string_view field,
                                             absl::string_view metric) const;

  // Errors: INVALID_ARGUMENT naming "pi" (prior outside [0, 1]) or "category_prior...".
  virtual absl::StatusOr<MechanismPrivacy> Privacy(const PrivacyQuestion& question) const = 0;

  // The estimate from one summed counter vector (one design version).
  // Errors: INVALID_ARGUMENT naming "counters" (wrong length), "n", "yes_count",
  // "support_counts[v]" or "confidence_level".
  virtual absl::StatusOr<MechanismEstimate> Estimate(
      std::span<const int64_t> counters, const MechanismEstimateOptions& options) const = 0;

  // Reports needed for `target`.
  // Errors: INVALID_ARGUMENT naming "half_width", "confidence_level", "pi" or "assumed_shares";
  // OUT_OF_RANGE when n exceeds int64.
  virtual absl::StatusOr<MechanismPlan> Plan(const PlanTarget& target) const = 0;

  // Exact probability that every coordinate's interval (simultaneous ones when there are several
  // coordinates and options.simultaneous applies) covers its true value, for n reports at the
  // truth `truth` (yes/no: {pi}; categorical: k shares).
  // Errors: INVALID_ARGUMENT naming "n", "pi", "shares" or "confidence_level";
  // FAILED_PRECONDITION where no exact computation exists (OUE, OLH, dBitFlip with d < k:
  // simulate instead).
  virtual absl::StatusOr<double> ExactCoverage(int64_t n, std::span<const double> truth,
                                               const MechanismEstimateOptions& options) const = 0;

 protected:
  // The kind's own check of a wire answer, called by Validate once the seam's check passed (a
  // kind of numbers never sees a string kind's place). Same contract and errors as Validate.
  virtual absl::StatusOr<CounterIncrements> ValidateKind(const WireAnswer& answer,
                                                         absl::string_view field,
                                                         absl::string_view metric) const = 0;
};

// The registry: the one mechanism for each design kind.
std::shared_ptr<const Mechanism> MechanismFor(const Design& design);
std::shared_ptr<const Mechanism> MechanismFor(const CategoricalDesign& design);
std::shared_ptr<const Mechanism> MechanismFor(const NumericDesign& design);
std::shared_ptr<const Mechanism> MechanismFor(const HeavyHittersDesign& design);

// Combines several design versions' vectors of the same layout and CoordinatesKey, estimated
// quantity by quantity (combine.h; statistics.md section 4). One part: its Estimate. Several: per
// estimated quantity (CoordinateEstimate; each part's binary estimate on its `trials` reports,
// so D_BIT_FLIP's buckets combine on their s_j) the parts' binary estimates combined by
// `combination`, with a Wald interval at the level (and, for
// several coordinates, the simultaneous level) of `options`, clipped to [0, 1].
// Errors: INVALID_ARGUMENT naming "parts" (empty, or layouts that differ) and those of Estimate
// and CombineVersions.
absl::StatusOr<MechanismEstimate> EstimateVersions(std::span<const VersionCounters> parts,
                                                   const MechanismEstimateOptions& options,
                                                   VersionCombination combination);

}  // namespace deniable

#endif  // DENIABLE_COMMON_MECHANISM_H_
