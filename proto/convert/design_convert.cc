#include "deniable/convert/design_convert.h"

#include <cmath>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deniable {
namespace {

absl::StatusOr<Design> Prefix(absl::StatusOr<Design> d, absl::string_view field) {
  if (d.ok()) return d;
  return absl::Status(d.status().code(), absl::StrCat(field, ": ", d.status().message()));
}

}  // namespace

absl::StatusOr<Design> DesignFromProto(const v1::DesignParameters& parameters,
                                       absl::string_view field) {
  switch (parameters.kind_case()) {
    case v1::DesignParameters::kSymmetricEpsilon:
      return Prefix(Design::SymmetricEpsilon(parameters.symmetric_epsilon().epsilon()),
                    absl::StrCat(field, ".symmetric_epsilon"));
    case v1::DesignParameters::kForcedResponse:
      return Prefix(Design::ForcedResponse(parameters.forced_response().p(),
                                           parameters.forced_response().q()),
                    absl::StrCat(field, ".forced_response"));
    case v1::DesignParameters::kTwoCoin:
      return Design::TwoCoin();
    case v1::DesignParameters::kTailsSaysYes:
      return Design::TailsSaysYes();
    case v1::DesignParameters::kUnrelatedQuestion:
      return Prefix(Design::UnrelatedQuestion(parameters.unrelated_question().p(),
                                              parameters.unrelated_question().pi_b()),
                    absl::StrCat(field, ".unrelated_question"));
    case v1::DesignParameters::kMirroredQuestion:
      return Prefix(Design::MirroredQuestion(parameters.mirrored_question().p()),
                    absl::StrCat(field, ".mirrored_question"));
    case v1::DesignParameters::kTruthWithGamma:
      return Prefix(Design::TruthWithGamma(parameters.truth_with_gamma().gamma()),
                    absl::StrCat(field, ".truth_with_gamma"));
    case v1::DesignParameters::kCategorical:
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".categorical: is a design for a metric with categories, not a yes/no design"));
    case v1::DesignParameters::kNumeric:
      return absl::InvalidArgumentError(absl::StrCat(
          field, ".numeric: is a design for a numeric metric (with a range), not a yes/no design"));
    case v1::DesignParameters::kHeavyHitters:
      return absl::InvalidArgumentError(absl::StrCat(
          field,
          ".heavy_hitters: is a design for string values (a new heavy-hitters metric), not "
          "a yes/no design"));
    case v1::DesignParameters::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field,
                   ": must set one design kind (symmetric_epsilon, forced_response, "
                   "two_coin, tails_says_yes, unrelated_question, mirrored_question, "
                   "truth_with_gamma)"));
}

void DesignToProto(const Design& design, uint32_t version, v1::Design* out) {
  out->Clear();
  v1::DesignParameters* p = out->mutable_parameters();
  switch (design.kind()) {
    case DesignKind::kSymmetricEpsilon:
      p->mutable_symmetric_epsilon()->set_epsilon(design.epsilon_parameter());
      break;
    case DesignKind::kForcedResponse:
      p->mutable_forced_response()->set_p(design.p());
      p->mutable_forced_response()->set_q(design.q());
      break;
    case DesignKind::kTwoCoin:
      p->mutable_two_coin();
      break;
    case DesignKind::kTailsSaysYes:
      p->mutable_tails_says_yes();
      break;
    case DesignKind::kUnrelatedQuestion:
      p->mutable_unrelated_question()->set_p(design.big_p());
      p->mutable_unrelated_question()->set_pi_b(design.pi_b());
      break;
    case DesignKind::kMirroredQuestion:
      p->mutable_mirrored_question()->set_p(design.big_p());
      break;
    case DesignKind::kTruthWithGamma:
      p->mutable_truth_with_gamma()->set_gamma(design.gamma());
      break;
  }
  out->set_version(version);
  out->set_a(design.channel().a);
  out->set_b(design.channel().b);
  const double eps = Epsilon(design.channel());
  out->set_epsilon(eps);
  out->set_epsilon_infinite(std::isinf(eps));
  if (RevealsEveryAnswer(design.channel())) {
    out->set_warning("every report reveals its true answer: this design has no privacy at all");
  } else if (std::isinf(eps)) {
    const Channel& c = design.channel();
    const bool yes_reveals = c.b == 0.0 || c.a == 0.0;
    out->set_warning(
        absl::StrCat("a \"", yes_reveals ? "yes" : "no", "\" report reveals the true answer"));
  }
}

absl::StatusOr<Design> DesignFromWire(const v1::Design& wire) {
  absl::StatusOr<Design> d = DesignFromProto(wire.parameters(), "design.parameters");
  if (!d.ok()) return d.status();
  constexpr double kTolerance = 1e-12;
  if (std::fabs(d->channel().a - wire.a()) > kTolerance ||
      std::fabs(d->channel().b - wire.b()) > kTolerance) {
    return absl::InvalidArgumentError(
        absl::StrCat("design: channel (a = ", wire.a(), ", b = ", wire.b(), ") does not match ",
                     d->ToString(), " (a = ", d->channel().a, ", b = ", d->channel().b, ")"));
  }
  return d;
}

}  // namespace deniable
