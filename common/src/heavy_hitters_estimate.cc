#include "deniable/common/heavy_hitters_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/interval.h"

namespace deniable {
namespace {

double NormalCdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Phi^-1(1 - 1/256): the standard errors a prefix must reach when max_prefixes binds.
constexpr double kCapZ = 2.6601;

// In-place Walsh-Hadamard transform: y[c] = sum_l (-1)^popcount(c & l) x[l].
void WalshHadamard(std::span<int64_t> x) {
  for (size_t h = 1; h < x.size(); h <<= 1) {
    for (size_t i = 0; i < x.size(); i += 2 * h) {
      for (size_t j = i; j < i + h; ++j) {
        const int64_t u = x[j];
        const int64_t v = x[j + h];
        x[j] = u + v;
        x[j + h] = u - v;
      }
    }
  }
}

// The debiasing of heavy_hitters_estimate.h for a share f at N reports.
struct ShareModel {
  double a = 0;      // keep probability
  double width = 0;  // W
  double SharingScale() const { return width / (width - 1); }
  // lambda = P(a report agrees) at share f.
  double Lambda(double f) const { return 0.5 + (a - 0.5) * (f + (1 - f) / width); }
  double ShareFromAgreeing(double lambda_hat) const {
    const double q = (lambda_hat - 0.5) / (a - 0.5);
    return SharingScale() * (q - 1 / width);
  }
  double SamplingSd(double lambda, int64_t n) const {
    if (n <= 0) return INFINITY;
    return SharingScale() * std::sqrt(lambda * (1 - lambda) / static_cast<double>(n)) / (a - 0.5);
  }
};

ShareModel ModelOf(const HeavyHittersDesign& design) {
  return ShareModel{HeavyHittersKeepProbability(design), static_cast<double>(design.width)};
}

PrevalenceInterval ClippedInterval(double center, double half) {
  PrevalenceInterval interval;
  const double lo = center - half;
  const double hi = center + half;
  interval.lower = std::clamp(lo, 0.0, 1.0);
  interval.upper = std::clamp(hi, 0.0, 1.0);
  interval.clipped = lo < 0 || hi > 1;
  return interval;
}

// The quantile of a two-sided interval at `level` and of each of `m` Sidak intervals.
std::pair<double, double> Quantiles(double level, int64_t m) {
  const double per_value = std::pow(level, 1.0 / static_cast<double>(std::max<int64_t>(m, 1)));
  return {TwoSidedNormalQuantile(level), TwoSidedNormalQuantile(per_value)};
}

// A value whose share is known (estimated): its collisions are taken out of the others'.
struct KnownShare {
  std::string value;
  double share = 0;  // clipped to [0, 1]
};

// What one estimate is computed from.
struct EstimateContext {
  const HeavyHittersSketch* sketch = nullptr;
  ShareModel model;
  double threshold = 1;  // shares of the values not known are below it
  double z = 0;
  double z_simultaneous = 0;
};

// c_uv: the share of the pooled reports (groups `groups`) at rows where u's whole value hashes to
// v's cell.
double CollisionWeight(const HeavyHittersSketch& sketch, const std::vector<uint32_t>& groups,
                       int64_t pool_reports, const std::string& whole_v,
                       const std::string& whole_u) {
  const HeavyHittersDesign& d = sketch.design();
  int64_t colliding = 0;
  for (uint32_t g : groups) {
    for (int j = 0; j < d.rows; ++j) {
      if (HeavyHittersHash(d, g, j, whole_v) == HeavyHittersHash(d, g, j, whole_u)) {
        colliding += sketch.RowReports(g, j);
      }
    }
  }
  return static_cast<double>(colliding) / static_cast<double>(pool_reports);
}

// The estimate of `value` from the reports of `groups`, which carry its whole value:
//   f_hat = (q_hat - K - (1 - M) / W) W / (W - 1),  K = sum_u f_u c_uv,  M = sum_u f_u
// over the known values u != v (heavy_hitters_estimate.h); the undiscovered values' collisions
// enter the variance as (threshold (1 - M)) / (R W).
HeavyHitterEstimate EstimateOne(const EstimateContext& c, const std::string& value,
                                const std::vector<uint32_t>& groups,
                                const std::vector<KnownShare>& known) {
  const HeavyHittersSketch& sketch = *c.sketch;
  const HeavyHittersDesign& d = sketch.design();
  const std::string whole = HeavyHittersPrefix(value, kHeavyHittersEstimationGroup);
  HeavyHitterEstimate e;
  e.value = value;
  for (uint32_t g : groups) {
    const HeavyHittersSketch::Support s = sketch.SupportOf(g, whole);
    e.agreeing += s.agreeing;
    e.reports += s.reports;
  }
  double k = 0;
  double m = 0;
  for (const KnownShare& u : known) {
    if (u.value == value || u.share <= 0) continue;
    m += u.share;
    k +=
        u.share * CollisionWeight(sketch, groups, e.reports, whole, HeavyHittersPrefix(u.value, 0));
  }
  m = std::min(m, 1.0);
  const double lambda_hat = static_cast<double>(e.agreeing) / static_cast<double>(e.reports);
  const double q_hat = (lambda_hat - 0.5) / (c.model.a - 0.5);
  e.share = c.model.SharingScale() * (q_hat - k - (1 - m) / c.model.width);
  e.count = e.share * static_cast<double>(sketch.Devices());
  e.sampling_sd = c.model.SamplingSd(lambda_hat, e.reports);
  const double collision_variance = c.threshold * (1 - m) / (static_cast<double>(d.rows) * d.width);
  e.collision_sd = std::sqrt(collision_variance);
  e.standard_error = std::sqrt(e.sampling_sd * e.sampling_sd + collision_variance);
  e.interval = ClippedInterval(e.share, c.z * e.standard_error);
  e.simultaneous = ClippedInterval(e.share, c.z_simultaneous * e.standard_error);
  return e;
}

// Estimates `values` from group 0 with each other's collisions taken out: three rounds, each
// using the previous round's shares as the known ones (the first: none).
std::vector<HeavyHitterEstimate> EstimateTogether(const EstimateContext& c,
                                                  const std::vector<std::string>& values) {
  std::vector<HeavyHitterEstimate> out;
  std::vector<KnownShare> known;
  for (int round = 0; round < 3; ++round) {
    out.clear();
    for (const std::string& v : values) {
      out.push_back(EstimateOne(c, v, {kHeavyHittersEstimationGroup}, known));
    }
    known.clear();
    for (const HeavyHitterEstimate& e : out) {
      known.push_back({e.value, std::clamp(e.share, 0.0, 1.0)});
    }
  }
  return out;
}

// Benjamini-Hochberg at `alpha` over one-sided p-values: which hypotheses are rejected.
std::vector<bool> BenjaminiHochberg(const std::vector<double>& p, double alpha) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&p](size_t x, size_t y) { return p[x] < p[y]; });
  size_t cut = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (p[order[k]] <= alpha * static_cast<double>(k + 1) / static_cast<double>(p.size())) {
      cut = k + 1;
    }
  }
  std::vector<bool> rejected(p.size(), false);
  for (size_t k = 0; k < cut; ++k) rejected[order[k]] = true;
  return rejected;
}

HeavyHittersGroupSizes SizesOf(const HeavyHittersSketch& sketch) {
  HeavyHittersGroupSizes sizes;
  sizes.estimation = sketch.GroupReports(kHeavyHittersEstimationGroup);
  const int levels = HeavyHittersLevels(sketch.design());
  for (int g = 1; g <= levels; ++g) sizes.levels.push_back(sketch.GroupReports(g));
  return sizes;
}

// The candidates of level g: the kept prefixes of level g - 1 extended by one byte (NUL ends a
// value; at the last level only NUL is possible).
std::vector<std::string> Extensions(const std::vector<std::string>& prefixes, bool last_level) {
  std::vector<std::string> out;
  out.reserve(prefixes.size() * (last_level ? 1 : 256));
  for (const std::string& p : prefixes) {
    for (int b = 0; b < (last_level ? 1 : 256); ++b) {
      std::string c = p;
      c.push_back(static_cast<char>(b));
      out.push_back(std::move(c));
    }
  }
  return out;
}

// One level of discovery: the kept candidates (estimate above keep_z standard errors at share 0,
// at most max_prefixes, highest first).
std::vector<std::string> KeepAtLevel(const HeavyHittersSketch& sketch, uint32_t level,
                                     std::vector<std::string> candidates,
                                     const HeavyHittersQueryOptions& options) {
  const ShareModel model = ModelOf(sketch.design());
  const int64_t n = sketch.GroupReports(level);
  const double cut = options.keep_z * model.SamplingSd(model.Lambda(0), n);
  std::vector<std::pair<double, size_t>> kept;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const HeavyHittersSketch::Support s = sketch.SupportOf(level, candidates[i]);
    const double share = model.ShareFromAgreeing(static_cast<double>(s.agreeing) / n);
    if (share > cut) kept.emplace_back(share, i);
  }
  std::sort(kept.begin(), kept.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  if (kept.size() > static_cast<size_t>(options.max_prefixes)) kept.resize(options.max_prefixes);
  std::vector<std::string> out;
  for (const auto& [share, i] : kept) out.push_back(std::move(candidates[i]));
  return out;
}

}  // namespace

absl::StatusOr<HeavyHittersSketch> HeavyHittersSketch::FromCounters(
    const HeavyHittersDesign& design, std::span<const int64_t> counters) {
  if (absl::Status s = ValidateHeavyHittersDesign(design); !s.ok()) return s;
  if (static_cast<int64_t>(counters.size()) != HeavyHittersCounterCount(design)) {
    return absl::InvalidArgumentError(absl::StrCat("counters must hold ",
                                                   HeavyHittersCounterCount(design),
                                                   " sums for this design, got ", counters.size()));
  }
  HeavyHittersSketch sketch;
  sketch.design_ = design;
  const size_t w = static_cast<size_t>(design.width);
  const size_t group_rows = static_cast<size_t>(HeavyHittersGroups(design)) * design.rows;
  sketch.row_reports_.assign(group_rows, 0);
  sketch.transform_.assign(group_rows * w, 0);
  for (size_t gr = 0; gr < group_rows; ++gr) {
    std::span<int64_t> x(sketch.transform_.data() + gr * w, w);
    for (size_t l = 0; l < w; ++l) {
      const int64_t reports = counters[2 * (gr * w + l)];
      const int64_t ones = counters[2 * (gr * w + l) + 1];
      if (reports < 0 || ones < 0 || ones > reports) {
        return absl::InvalidArgumentError(absl::StrCat(
            "counters[", 2 * (gr * w + l), "]: a cell holds ", reports, " reports and ", ones,
            " bits 1; counts must be >= 0 with ones <= reports"));
      }
      x[l] = 2 * ones - reports;
      sketch.row_reports_[gr] += reports;
    }
    WalshHadamard(x);
    sketch.devices_ += sketch.row_reports_[gr];
  }
  return sketch;
}

int64_t HeavyHittersSketch::GroupReports(uint32_t group) const {
  int64_t n = 0;
  for (int j = 0; j < design_.rows; ++j) n += row_reports_[group * design_.rows + j];
  return n;
}

HeavyHittersSketch::Support HeavyHittersSketch::SupportOf(uint32_t group,
                                                          absl::string_view prefix) const {
  Support s;
  int64_t twice = 0;
  for (int j = 0; j < design_.rows; ++j) {
    const size_t gr = static_cast<size_t>(group) * design_.rows + j;
    const uint32_t cell = HeavyHittersHash(design_, group, j, prefix);
    // Agreeing reports of the row: (reports + sum_l H[cell][l] (2 ones - reports)) / 2.
    twice += row_reports_[gr] + transform_[gr * design_.width + cell];
    s.reports += row_reports_[gr];
  }
  s.agreeing = twice / 2;
  return s;
}

absl::Status ValidateHeavyHittersQueryOptions(const HeavyHittersQueryOptions& options) {
  if (!(options.confidence_level > 0 && options.confidence_level <= kMaxConfidenceLevel)) {
    return absl::InvalidArgumentError(
        absl::StrCat("confidence_level must be in (0, 1), got ", options.confidence_level));
  }
  if (options.max_prefixes < 1 || options.max_prefixes > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_prefixes must be in [1, 4096], got ", options.max_prefixes));
  }
  if (!(options.keep_z >= 0 && options.keep_z <= 10)) {
    return absl::InvalidArgumentError(
        absl::StrCat("keep_z must be in [0, 10], got ", options.keep_z));
  }
  if (!(options.detection_probability > 0 && options.detection_probability < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("detection_probability must be in (0, 1), got ",
                                                   options.detection_probability));
  }
  return absl::OkStatus();
}

HeavyHittersGroupSizes HeavyHittersGroupSizes::Expected(const HeavyHittersDesign& design,
                                                        int64_t devices) {
  HeavyHittersGroupSizes sizes;
  const double d = static_cast<double>(devices);
  sizes.estimation = static_cast<int64_t>(d * design.holdout_share);
  const int levels = HeavyHittersLevels(design);
  const auto per_level = static_cast<int64_t>(d * (1 - design.holdout_share) / levels);
  sizes.levels.assign(levels, per_level);
  return sizes;
}

double HeavyHittersDetectionProbability(const HeavyHittersDesign& design,
                                        const HeavyHittersGroupSizes& sizes,
                                        const HeavyHittersQueryOptions& options, int length,
                                        double share, int64_t tested) {
  const ShareModel model = ModelOf(design);
  // When the cap binds, 256 T candidates of share ~0 compete for T places: a prefix must then
  // beat the top 1/256 of the noise, z = Phi^-1(1 - 1/256) = 2.66 standard errors.
  const double keep_z = std::max(options.keep_z, kCapZ);
  double p = 1;
  for (int g = 1; g <= length + 1 && g <= static_cast<int>(sizes.levels.size()); ++g) {
    const int64_t n = sizes.levels[g - 1];
    const double cut = keep_z * model.SamplingSd(model.Lambda(0), n);
    const double sd = model.SamplingSd(model.Lambda(share), n);
    if (!std::isfinite(sd)) return 0;
    p *= NormalCdf((share - cut) / sd);
  }
  const double sd = model.SamplingSd(model.Lambda(share), sizes.estimation);
  if (!std::isfinite(sd)) return 0;
  const double z = Quantiles(options.confidence_level, tested).second;
  return p * NormalCdf((share - z * sd) / sd);
}

double HeavyHittersDetectionThreshold(const HeavyHittersDesign& design,
                                      const HeavyHittersGroupSizes& sizes,
                                      const HeavyHittersQueryOptions& options, int length,
                                      int64_t tested) {
  auto found = [&](double s) {
    return HeavyHittersDetectionProbability(design, sizes, options, length, s, tested) >=
           options.detection_probability;
  };
  if (!found(1.0)) return 1.0;
  double lo = 0;
  double hi = 1;
  while (hi - lo > 1e-6) {
    const double mid = (lo + hi) / 2;
    (found(mid) ? hi : lo) = mid;
  }
  return hi;
}

absl::StatusOr<HeavyHittersAnswer> EstimateFrequencies(const HeavyHittersSketch& sketch,
                                                       std::span<const std::string> candidates,
                                                       const HeavyHittersQueryOptions& options) {
  if (absl::Status s = ValidateHeavyHittersQueryOptions(options); !s.ok()) return s;
  const HeavyHittersDesign& design = sketch.design();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (absl::Status s = ValidateHeavyHitterValue(design, candidates[i]); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("candidates[", i, "]: ", s.message()));
    }
  }
  if (sketch.GroupReports(kHeavyHittersEstimationGroup) == 0) {
    return absl::FailedPreconditionError(
        "no reports of the estimation group (group 0) yet: no share can be estimated");
  }
  // The heavy values found by a discovery on the same sketch are the known collisions; without
  // one (a level has no reports yet) nothing is known and the threshold is 1 (the worst case).
  std::vector<KnownShare> known;
  double threshold = 1;
  if (absl::StatusOr<HeavyHittersAnswer> found = DiscoverHeavyHitters(sketch, options);
      found.ok()) {
    threshold = found->detection_threshold;
    for (const HeavyHitterEstimate& e : found->values) {
      known.push_back({e.value, std::clamp(e.share, 0.0, 1.0)});
    }
  }
  HeavyHittersAnswer answer;
  answer.devices = sketch.Devices();
  answer.estimation_reports = sketch.GroupReports(kHeavyHittersEstimationGroup);
  answer.confidence_level = options.confidence_level;
  answer.tested = static_cast<int64_t>(candidates.size());
  answer.detection_threshold = threshold;
  answer.per_value_level =
      std::pow(options.confidence_level, 1.0 / std::max<double>(1, candidates.size()));
  EstimateContext c{&sketch, ModelOf(design), threshold, 0, 0};
  std::tie(c.z, c.z_simultaneous) = Quantiles(options.confidence_level, answer.tested);
  for (const std::string& value : candidates) {
    std::vector<uint32_t> groups = {kHeavyHittersEstimationGroup};
    if (options.pooled) {
      for (int g = static_cast<int>(value.size()) + 1; g <= HeavyHittersLevels(design); ++g) {
        if (sketch.GroupReports(g) > 0) groups.push_back(g);
      }
    }
    answer.values.push_back(EstimateOne(c, value, groups, known));
  }
  return answer;
}

absl::StatusOr<HeavyHittersAnswer> DiscoverHeavyHitters(const HeavyHittersSketch& sketch,
                                                        const HeavyHittersQueryOptions& options) {
  if (absl::Status s = ValidateHeavyHittersQueryOptions(options); !s.ok()) return s;
  const HeavyHittersDesign& design = sketch.design();
  const int levels = HeavyHittersLevels(design);
  for (int g = 0; g <= levels; ++g) {
    if (sketch.GroupReports(g) == 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("discovery needs reports in every group; group ", g, " has none yet (",
                       sketch.Devices(), " reports in all)"));
    }
  }
  HeavyHittersAnswer answer;
  answer.devices = sketch.Devices();
  answer.estimation_reports = sketch.GroupReports(kHeavyHittersEstimationGroup);
  answer.confidence_level = options.confidence_level;

  // Prefix extending: complete candidates (ending in NUL) are found values.
  std::vector<std::string> prefixes = {""};
  std::vector<std::string> found;
  for (int g = 1; g <= levels && !prefixes.empty(); ++g) {
    std::vector<std::string> kept =
        KeepAtLevel(sketch, g, Extensions(prefixes, g == levels), options);
    answer.prefixes_per_level.push_back(static_cast<int64_t>(kept.size()));
    prefixes.clear();
    for (std::string& p : kept) {
      if (!p.empty() && p.back() == '\0') {
        p.pop_back();
        found.push_back(std::move(p));
      } else {
        prefixes.push_back(std::move(p));
      }
    }
  }

  // The held-out estimates, simultaneous over every value found.
  answer.tested = static_cast<int64_t>(found.size());
  answer.detection_threshold = HeavyHittersDetectionThreshold(
      design, SizesOf(sketch), options, design.max_length, std::max<int64_t>(answer.tested, 1));
  answer.per_value_level =
      std::pow(options.confidence_level, 1.0 / std::max<double>(1, found.size()));
  EstimateContext c{&sketch, ModelOf(design), answer.detection_threshold, 0, 0};
  std::tie(c.z, c.z_simultaneous) = Quantiles(options.confidence_level, answer.tested);
  std::vector<HeavyHitterEstimate> tested = EstimateTogether(c, found);
  std::vector<double> p_values;
  for (const HeavyHitterEstimate& e : tested) {
    p_values.push_back(1 - NormalCdf((e.share - answer.detection_threshold) / e.standard_error));
  }
  const std::vector<bool> above = BenjaminiHochberg(p_values, 1 - options.confidence_level);
  for (size_t i = 0; i < tested.size(); ++i) {
    tested[i].above_threshold = above[i];
    if (tested[i].simultaneous.lower > 0) answer.values.push_back(std::move(tested[i]));
  }
  std::sort(answer.values.begin(), answer.values.end(),
            [](const HeavyHitterEstimate& x, const HeavyHitterEstimate& y) {
              return x.share != y.share ? x.share > y.share : x.value < y.value;
            });
  return answer;
}

absl::StatusOr<int64_t> HeavyHittersDevicesNeeded(const HeavyHittersDesign& design, double share,
                                                  double probability,
                                                  const HeavyHittersQueryOptions& options) {
  if (absl::Status s = ValidateHeavyHittersDesign(design); !s.ok()) return s;
  if (absl::Status s = ValidateHeavyHittersQueryOptions(options); !s.ok()) return s;
  if (!(share > 0 && share < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("share must be in (0, 1), got ", share));
  }
  if (!(probability > 0 && probability < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("probability must be in (0, 1), got ", probability));
  }
  auto enough = [&](int64_t devices) {
    return HeavyHittersDetectionProbability(
               design, HeavyHittersGroupSizes::Expected(design, devices), options,
               design.max_length, share, options.max_prefixes) >= probability;
  };
  constexpr int64_t kMax = 1'000'000'000'000'000;
  int64_t hi = 1024;
  while (!enough(hi)) {
    if (hi > kMax / 2) {
      return absl::OutOfRangeError(
          absl::StrCat("finding a share of ", share, " would need more than 10^15 devices"));
    }
    hi *= 2;
  }
  int64_t lo = hi / 2;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (enough(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace deniable
