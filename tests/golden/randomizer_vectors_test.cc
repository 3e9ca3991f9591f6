// The C++ randomizers (common/mechanism.h on common/draws.h's UniformDraws) against the golden
// vectors tests/golden/randomizer_vectors.json, which the Python and JS SDKs check too.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "deniable/common/categorical.h"
#include "deniable/common/design.h"
#include "deniable/common/draws.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/common/randomizer.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "json_struct.h"

namespace deniable {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

using golden::Field;

Struct LoadVectors() { return golden::LoadJsonStruct(DENIABLE_GOLDEN_VECTORS); }

// The categorical design of a vector (k-RR, OUE or OLH, k, epsilon).
CategoricalDesign CategoricalOf(const Struct& design) {
  const std::string& name = Field(design, "mechanism").string_value();
  const CategoricalMechanism m = name == "K_RR"  ? CategoricalMechanism::kDirectEncoding
                                 : name == "OUE" ? CategoricalMechanism::kOptimizedUnaryEncoding
                                                 : CategoricalMechanism::kOptimizedLocalHashing;
  return CategoricalDesign::Create(m, static_cast<int>(Field(design, "k").number_value()),
                                   Field(design, "epsilon").number_value())
      .value();
}

// The numeric design of a vector (mechanism, epsilon, edges, d).
NumericDesign NumericOf(const Struct& design) {
  std::vector<double> edges;
  for (const Value& e : Field(design, "edges").list_value().values()) {
    edges.push_back(e.number_value());
  }
  const NumericMechanism m = Field(design, "mechanism").string_value() == "ONE_BIT_MEAN"
                                 ? NumericMechanism::kOneBitMean
                                 : NumericMechanism::kDBitFlip;
  return NumericDesign::Create(m, Field(design, "epsilon").number_value(), std::move(edges),
                               static_cast<int>(Field(design, "d").number_value()))
      .value();
}

// A numeric vector: clip, level (alpha-point rounding or bucket), then the mechanism's draws.
void CheckNumeric(const Struct& v, const Struct& design, const Struct& report,
                  UniformDraws& draws) {
  const NumericDesign d = NumericOf(design);
  const std::shared_ptr<const Mechanism> m = MechanismFor(d);
  const Channel channel = m->ChannelOf(m->Layout().coordinates - 1);
  EXPECT_NEAR(channel.a, Field(design, "a").number_value(), 1e-15);
  EXPECT_NEAR(channel.b, Field(design, "b").number_value(), 1e-15);
  const ClippedValue clipped = ClipValue(d, Field(v, "value").number_value());
  EXPECT_EQ(clipped.clipped, Field(v, "clipped").bool_value());
  EXPECT_EQ(clipped.value, Field(v, "clipped_value").number_value());
  const int level = LevelOf(d, clipped.value, Field(v, "alpha").number_value());
  EXPECT_EQ(level, Field(v, "level").number_value());
  const WireAnswer w = m->Randomize(level, draws).value();
  EXPECT_EQ(w.bit, Field(report, "bit").number_value());
  EXPECT_EQ(w.has_numeric, Field(report, "numeric").has_struct_value());
  if (!w.has_numeric) return;
  const Struct& n = Field(report, "numeric").struct_value();
  const auto& buckets = Field(n, "buckets").list_value().values();
  const auto& bits = Field(n, "bits").list_value().values();
  ASSERT_EQ(w.numeric.buckets.size(), static_cast<size_t>(buckets.size()));
  ASSERT_EQ(w.numeric.bits.size(), static_cast<size_t>(bits.size()));
  for (size_t i = 0; i < w.numeric.buckets.size(); ++i) {
    const int j = static_cast<int>(i);
    EXPECT_EQ(w.numeric.buckets[i], buckets[j].number_value());
    EXPECT_EQ(w.numeric.bits[i] ? 1 : 0, bits[j].number_value());
  }
}

TEST(GoldenVectorsTest, TheCppRandomizersProduceEveryReport) {
  const Struct root = LoadVectors();
  const auto& vectors = Field(root, "vectors").list_value().values();
  ASSERT_GT(vectors.size(), 100);
  int yes_no = 0, categorical = 0, numeric = 0;
  for (const Value& entry : vectors) {
    const Struct& v = entry.struct_value();
    SCOPED_TRACE(Field(v, "name").string_value());
    const Struct& design = Field(v, "design").struct_value();
    const int value = static_cast<int>(Field(v, "value").number_value());
    std::vector<double> uniforms;
    for (const Value& u : Field(v, "uniforms").list_value().values()) {
      uniforms.push_back(u.number_value());
    }
    const Struct& report = Field(v, "report").struct_value();
    UniformDraws draws(uniforms);
    if (Field(design, "kind").string_value() == "numeric") {
      ++numeric;
      CheckNumeric(v, design, report, draws);
    } else if (Field(design, "kind").string_value() == "yes_no") {
      ++yes_no;
      const Channel channel{Field(design, "a").number_value(), Field(design, "b").number_value()};
      const bool bit = RandomizeAnswer(channel, value == 1, draws);
      EXPECT_EQ(bit ? 1 : 0, static_cast<int>(Field(report, "bit").number_value()));
    } else {
      ++categorical;
      const CategoricalDesign d = CategoricalOf(design);
      EXPECT_NEAR(d.p_star(), Field(design, "p_star").number_value(), 1e-15);
      EXPECT_NEAR(d.q_star(), Field(design, "q_star").number_value(), 1e-15);
      EXPECT_EQ(d.hash_buckets(), Field(design, "hash_buckets").number_value());
      const std::shared_ptr<const Mechanism> m = MechanismFor(d);
      const WireAnswer w = m->Randomize(value, draws).value();
      ASSERT_TRUE(w.has_categorical);
      EXPECT_EQ(w.bit, 0u);
      const Struct& c = Field(report, "categorical").struct_value();
      const std::string mechanism = Field(design, "mechanism").string_value();
      if (mechanism == "K_RR") {
        EXPECT_EQ(w.categorical.category, Field(c, "category").number_value());
      } else if (mechanism == "OUE") {
        EXPECT_EQ(absl::Base64Escape(w.categorical.bits), Field(c, "bits").string_value());
      } else {
        EXPECT_EQ(w.categorical.hash_a, Field(c, "hash_a").number_value());
        EXPECT_EQ(w.categorical.hash_b, Field(c, "hash_b").number_value());
        EXPECT_EQ(w.categorical.bucket, Field(c, "bucket").number_value());
      }
    }
    // Every number of the stream is used, and no more.
    EXPECT_EQ(draws.used(), uniforms.size());
    EXPECT_FALSE(draws.exhausted());
  }
  EXPECT_GT(yes_no, 0);
  EXPECT_GT(categorical, 0);
  EXPECT_GT(numeric, 0);
}

}  // namespace
}  // namespace deniable
