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
#include "deniable/common/randomizer.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

Struct LoadVectors() {
  std::ifstream in(DENIABLE_GOLDEN_VECTORS);
  std::stringstream text;
  text << in.rdbuf();
  Struct out;
  const auto status = google::protobuf::util::JsonStringToMessage(text.str(), &out);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

const Value& Field(const Struct& s, const std::string& name) {
  static const Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}

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

TEST(GoldenVectorsTest, TheCppRandomizersProduceEveryReport) {
  const Struct root = LoadVectors();
  const auto& vectors = Field(root, "vectors").list_value().values();
  ASSERT_GT(vectors.size(), 100);
  int yes_no = 0, categorical = 0;
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
    if (Field(design, "kind").string_value() == "yes_no") {
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
}

}  // namespace
}  // namespace deniable
