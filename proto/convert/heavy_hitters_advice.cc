#include "deniable/convert/heavy_hitters_advice.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/heavy_hitters.h"
#include "deniable/common/heavy_hitters_estimate.h"
#include "deniable/common/heavy_hitters_mechanism.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/shuffle.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/design_advice.h"
#include "deniable/convert/heavy_hitters_convert.h"

namespace deniable {

absl::StatusOr<v1::DesignDescription> DescribeHeavyHittersDesign(
    const v1::DescribeDesignRequest& request, const v1::Design& wire) {
  DENIABLE_RETURN_IF_ERROR(ValidateDescribeRequest(request));
  if (request.k() != 0 || request.categories_size() > 0) {
    return absl::InvalidArgumentError(
        "k, categories: only for a categorical design, but a heavy_hitters design is given");
  }
  if (request.category_prior_size() > 0) {
    return absl::InvalidArgumentError(
        "category_prior: only for a categorical design; a heavy_hitters design takes prior (the "
        "prior probability that a device holds a given value)");
  }
  if (request.has_range()) {
    return absl::InvalidArgumentError("range: only for a numeric design (design.numeric)");
  }
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign design, HeavyHittersDesignFromWire(wire));
  const HeavyHittersMechanism mechanism(design);
  v1::DesignDescription out;
  *out.mutable_design() = wire;
  absl::StatusOr<MechanismPrivacy> figures =
      mechanism.Privacy(PrivacyQuestion{request.prior(), {}});
  if (!figures.ok()) {
    return absl::Status(figures.status().code(),
                        absl::StrCat("prior: ", figures.status().message()));
  }
  out.set_prior(request.prior());
  out.set_posterior_given_yes(figures->binary.posterior_given_yes);
  out.set_posterior_given_no(figures->binary.posterior_given_no);
  out.set_entropy_bits(figures->binary.prior_entropy_bits);
  out.set_conditional_entropy_bits(figures->binary.conditional_entropy_bits);
  out.set_mutual_information_bits(figures->binary.mutual_information_bits);
  out.set_channel_note(
      "heavy hitters: x = \"the device holds the candidate value v\"; a report is (group, row, "
      "coefficient), drawn independently of the value, and one bit kept with probability a = "
      "e^eps / (1 + e^eps); posterior_given_yes is the largest P(x | report) (the bit equals v's "
      "Hadamard entry, every other value's differs), posterior_given_no the smallest; the "
      "figures are those of the channel (a, 1 - a), a bound for every report and value "
      "(docs/statistics.md section 11.6)");
  if (request.n() > 0) {
    absl::StatusOr<CentralPrivacy> c = AmplifiedEpsilon(
        figures->epsilon, figures->clone_probability, request.n(), kDefaultCentralDelta);
    if (!c.ok()) return absl::Status(c.status().code(), absl::StrCat("n: ", c.status().message()));
    out.set_central_epsilon(c->epsilon);
    out.set_central_delta(c->delta);
    out.set_central_n(c->n);
    out.set_central_method(c->method);
    out.set_central_note(
        c->amplified
            ? "against an analyst who sees only the sketch counts of these n reports, each "
              "device contributing one (a device that reports k distinct values contributes k; "
              "docs/privacy.md); clone probability e^-eps, not 2 / (e^eps + 1): two values can "
              "share a Hadamard entry"
            : c->note);
  }
  return out;
}

absl::StatusOr<HeavyHittersPlan> PlanHeavyHitters(const v1::DesignParameters& parameters,
                                                  double share, double probability, double level,
                                                  uint32_t max_prefixes) {
  DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign design,
                            HeavyHittersDesignFromProto(parameters, "design"));
  HeavyHittersQueryOptions options;
  if (level != 0) options.confidence_level = level;
  if (max_prefixes != 0) {
    options.max_prefixes = static_cast<int>(std::min<uint32_t>(max_prefixes, 1u << 20));
  }
  DENIABLE_RETURN_IF_ERROR(ValidateHeavyHittersQueryOptions(options));
  absl::StatusOr<int64_t> devices = HeavyHittersDevicesNeeded(design, share, probability, options);
  if (!devices.ok()) {
    if (devices.status().code() == absl::StatusCode::kOutOfRange) {
      return absl::OutOfRangeError(absl::StrCat("share: ", devices.status().message()));
    }
    return devices.status();
  }
  HeavyHittersPlan plan;
  plan.epsilon = design.epsilon;
  plan.max_length = design.max_length;
  plan.share = share;
  plan.probability = probability;
  plan.confidence_level = options.confidence_level;
  plan.max_prefixes = options.max_prefixes;
  plan.devices_needed = *devices;
  plan.assumption = absl::StrCat(
      "the smallest n at which a value of ", design.max_length,
      " bytes (the longest; shorter values are found a little sooner) held by that share is "
      "returned by `top` with that probability: every discovery level keeps its prefix and its "
      "held-out simultaneous interval lies above 0 (docs/statistics.md section 11.4), normal "
      "approximation, the expected group sizes, one value per device and at most ",
      options.max_prefixes, " prefixes kept per level");
  return plan;
}

}  // namespace deniable
