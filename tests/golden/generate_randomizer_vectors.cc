// Writes tests/golden/randomizer_vectors.json from the C++ randomizers (common/mechanism.h on
// common/draws.h's UniformDraws): for each design, true value and seeded stream of uniform
// numbers, the wire report. See tests/golden/README.md:
//   build/tests/deniable_golden_vectors > tests/golden/randomizer_vectors.json
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deniable/common/categorical.h"
#include "deniable/common/design.h"
#include "deniable/common/draws.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"

namespace deniable {
namespace {

// Uniform numbers (2 j + 1) / 2^21: exact in every language's double, never equal to a
// probability a randomizer compares them with (none is an odd multiple of 2^-21), and u * n is
// exact for n < 2^32, so floor(u * n) agrees everywhere.
std::vector<double> Stream(std::mt19937_64& gen, size_t count) {
  std::vector<double> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(static_cast<double>(2 * (gen() >> 44) + 1) / 2097152.0);
  }
  return out;
}

std::string Number(double x) { return absl::StrFormat("%.17g", x); }

std::string Uniforms(const std::vector<double>& u) {
  std::vector<std::string> parts;
  for (double x : u) parts.push_back(Number(x));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

struct Case {
  std::string name;
  std::string design_json;
  std::shared_ptr<const Mechanism> mechanism;
  int k = 2;  // values 0 .. k - 1 (yes/no: 0, 1)
  std::string mechanism_name;
};

std::string Report(const Case& c, const WireAnswer& w) {
  if (!w.has_categorical) return absl::StrCat("{\"bit\": ", w.bit, "}");
  if (c.mechanism_name == "K_RR") {
    return absl::StrCat("{\"bit\": 0, \"categorical\": {\"category\": ", w.categorical.category,
                        "}}");
  }
  if (c.mechanism_name == "OUE") {
    return absl::StrCat("{\"bit\": 0, \"categorical\": {\"bits\": \"",
                        absl::Base64Escape(w.categorical.bits), "\"}}");
  }
  return absl::StrCat("{\"bit\": 0, \"categorical\": {\"hash_a\": ", w.categorical.hash_a,
                      ", \"hash_b\": ", w.categorical.hash_b,
                      ", \"bucket\": ", w.categorical.bucket, "}}");
}

Case YesNo(const std::string& name, const std::string& parameters, const Design& d) {
  return Case{name,
              absl::StrCat("{\"kind\": \"yes_no\", \"parameters\": ", parameters, ", \"a\": ",
                           Number(d.channel().a), ", \"b\": ", Number(d.channel().b), "}"),
              MechanismFor(d), 2, ""};
}

Case Categorical(CategoricalMechanism m, const std::string& wire_name, int k, double eps) {
  const CategoricalDesign d = CategoricalDesign::Create(m, k, eps).value();
  return Case{d.ToString(),
              absl::StrCat("{\"kind\": \"categorical\", \"mechanism\": \"", wire_name,
                           "\", \"k\": ", k, ", \"epsilon\": ", Number(eps), ", \"p_star\": ",
                           Number(d.p_star()), ", \"q_star\": ", Number(d.q_star()),
                           ", \"hash_buckets\": ", d.hash_buckets(), "}"),
              MechanismFor(d), k, wire_name};
}

std::string Numbers(const std::vector<double>& xs) { return Uniforms(xs); }

std::string NumericReport(const WireAnswer& w) {
  if (!w.has_numeric) return absl::StrCat("{\"bit\": ", w.bit, "}");
  std::vector<std::string> bits;
  for (bool b : w.numeric.bits) bits.push_back(b ? "1" : "0");
  return absl::StrCat("{\"bit\": 0, \"numeric\": {\"buckets\": [",
                      absl::StrJoin(w.numeric.buckets, ", "), "], \"bits\": [",
                      absl::StrJoin(bits, ", "), "]}}");
}

// Numeric rows (numeric.h): the device's whole path, clip, level (alpha-point rounding or the
// bucket) and the mechanism's draws. They come after the other rows, from their own generator,
// so that adding them left every earlier row as it was.
void AddNumericVectors(std::vector<std::string>& vectors) {
  struct NumericCase {
    NumericDesign design;
    std::vector<double> values;
  };
  const auto one_bit = [](double eps, std::vector<double> edges) {
    return NumericDesign::Create(NumericMechanism::kOneBitMean, eps, std::move(edges), 0).value();
  };
  const auto d_bit = [](double eps, std::vector<double> edges, int d) {
    return NumericDesign::Create(NumericMechanism::kDBitFlip, eps, std::move(edges), d).value();
  };
  const std::vector<NumericCase> cases = {
      {one_bit(std::log(3.0), {0.0, 100.0}), {-5.0, 0.0, 37.5, 100.0, 250.0}},
      {one_bit(1.0, {0.0, 25.0, 50.0, 100.0}), {10.0, 25.0, 60.0, 99.0}},
      {one_bit(0.5, {-1.0, 1.0}), {-0.25, 0.5}},
      {d_bit(std::log(3.0), {0.0, 10.0, 20.0, 30.0, 40.0}, 0), {-1.0, 5.0, 20.0, 40.0}},
      {d_bit(2.0, {0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0}, 2), {0.5, 3.0, 31.0, 100.0}},
      {d_bit(1.0, {0.0, 50.0, 100.0}, 1), {10.0, 75.0}},
  };
  std::mt19937_64 gen(20261128);
  for (const NumericCase& c : cases) {
    const NumericDesign& d = c.design;
    const std::shared_ptr<const Mechanism> m = MechanismFor(d);
    const Channel channel = m->ChannelOf(m->Layout().coordinates - 1);
    const bool mean = d.mechanism() == NumericMechanism::kOneBitMean;
    const std::string design_json =
        absl::StrCat("{\"kind\": \"numeric\", \"mechanism\": \"",
                     mean ? "ONE_BIT_MEAN" : "D_BIT_FLIP", "\", \"epsilon\": ", Number(d.epsilon()),
                     ", \"edges\": ", Numbers(d.edges()), ", \"d\": ", d.sampled_buckets(),
                     ", \"a\": ", Number(channel.a), ", \"b\": ", Number(channel.b), "}");
    for (double value : c.values) {
      for (int stream = 0; stream < 3; ++stream) {
        const double alpha = Stream(gen, 1)[0];
        const ClippedValue clipped = ClipValue(d, value);
        const int level = LevelOf(d, clipped.value, alpha);
        const std::vector<double> pool = Stream(gen, static_cast<size_t>(2 * d.buckets()) + 2);
        UniformDraws draws(pool);
        const WireAnswer w = m->Randomize(level, draws).value();
        const std::vector<double> used(pool.begin(),
                                       pool.begin() + static_cast<std::ptrdiff_t>(draws.used()));
        vectors.push_back(absl::StrCat(
            "    {\"name\": \"", d.ToString(), " value ", Number(value), " #", stream,
            "\",\n     \"design\": ", design_json, ",\n     \"value\": ", Number(value),
            ", \"alpha\": ", Number(alpha), ", \"clipped\": ", clipped.clipped ? "true" : "false",
            ", \"clipped_value\": ", Number(clipped.value), ", \"level\": ", level,
            ",\n     \"uniforms\": ", Uniforms(used), ",\n     \"report\": ", NumericReport(w),
            "}"));
      }
    }
  }
}

int Main() {
  std::vector<Case> cases = {
      YesNo("two_coin", "{\"two_coin\": {}}", Design::TwoCoin()),
      YesNo("tails_says_yes", "{\"tails_says_yes\": {}}", Design::TailsSaysYes()),
      YesNo("symmetric_epsilon(1.5)", "{\"symmetric_epsilon\": {\"epsilon\": 1.5}}",
            Design::SymmetricEpsilon(1.5).value()),
      YesNo("forced_response(0.6, 0.3)", "{\"forced_response\": {\"p\": 0.6, \"q\": 0.3}}",
            Design::ForcedResponse(0.6, 0.3).value()),
      YesNo("unrelated_question(0.7, 0.2)", "{\"unrelated_question\": {\"p\": 0.7, \"pi_b\": 0.2}}",
            Design::UnrelatedQuestion(0.7, 0.2).value()),
      YesNo("mirrored_question(0.8)", "{\"mirrored_question\": {\"p\": 0.8}}",
            Design::MirroredQuestion(0.8).value()),
      YesNo("truth_with_gamma(0.3)", "{\"truth_with_gamma\": {\"gamma\": 0.3}}",
            Design::TruthWithGamma(0.3).value()),
      Categorical(CategoricalMechanism::kDirectEncoding, "K_RR", 2, 1.0),
      Categorical(CategoricalMechanism::kDirectEncoding, "K_RR", 4, std::log(3.0)),
      Categorical(CategoricalMechanism::kDirectEncoding, "K_RR", 10, 0.5),
      Categorical(CategoricalMechanism::kOptimizedUnaryEncoding, "OUE", 8, 1.0),
      Categorical(CategoricalMechanism::kOptimizedUnaryEncoding, "OUE", 11, 2.5),
      Categorical(CategoricalMechanism::kOptimizedLocalHashing, "OLH", 16, 2.0),
      Categorical(CategoricalMechanism::kOptimizedLocalHashing, "OLH", 5, 0.7),
      Categorical(CategoricalMechanism::kOptimizedLocalHashing, "OLH", 256, 4.2),
  };
  std::mt19937_64 gen(20261126);
  std::vector<std::string> vectors;
  for (const Case& c : cases) {
    std::vector<int> values = {0, c.k - 1};
    if (c.k > 2) values.push_back(c.k / 2);
    for (int value : values) {
      for (int stream = 0; stream < 4; ++stream) {
        const std::vector<double> pool = Stream(gen, static_cast<size_t>(c.k) + 4);
        UniformDraws draws(pool);
        const WireAnswer w = c.mechanism->Randomize(value, draws).value();
        const std::vector<double> used(pool.begin(),
                                       pool.begin() + static_cast<std::ptrdiff_t>(draws.used()));
        vectors.push_back(absl::StrCat(
            "    {\"name\": \"", c.name, " value ", value, " #", stream,
            "\",\n     \"design\": ", c.design_json, ",\n     \"value\": ", value,
            ", \"uniforms\": ", Uniforms(used), ",\n     \"report\": ", Report(c, w), "}"));
      }
    }
  }
  AddNumericVectors(vectors);
  std::printf(
      "{\n  \"comment\": \"Golden randomizer vectors: for each design, true value and stream of "
      "uniform numbers, the wire report every SDK must produce. Generated by "
      "tests/golden/generate_randomizer_vectors.cc from the C++ randomizers; see "
      "tests/golden/README.md for the draw contract and how to regenerate.\",\n"
      "  \"vectors\": [\n%s\n  ]\n}\n",
      absl::StrJoin(vectors, ",\n").c_str());
  return 0;
}

}  // namespace
}  // namespace deniable

int main() { return deniable::Main(); }
