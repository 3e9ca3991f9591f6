// The SDK's numeric path (numeric_answer.h: clip, level, draw, the answer as a v1::Report; what
// Reporter::ReportValue runs) against the numeric rows of tests/golden/randomizer_vectors.json,
// which the Python and JS SDKs check too.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client/src/numeric_answer.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace numeric_golden_test {

using google::protobuf::Struct;
using google::protobuf::Value;

const Value& Field(const Struct& s, const std::string& name) {
  static const Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}

TEST(NumericGoldenTest, TheSdkPathProducesEveryNumericReport) {
  std::ifstream in(DENIABLE_GOLDEN_VECTORS);
  std::stringstream text;
  text << in.rdbuf();
  Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text.str(), &root).ok());
  int rows = 0;
  for (const Value& entry : Field(root, "vectors").list_value().values()) {
    const Struct& v = entry.struct_value();
    const Struct& d = Field(v, "design").struct_value();
    if (Field(d, "kind").string_value() != "numeric") continue;
    ++rows;
    SCOPED_TRACE(Field(v, "name").string_value());
    std::vector<double> edges;
    for (const Value& e : Field(d, "edges").list_value().values())
      edges.push_back(e.number_value());
    absl::StatusOr<NumericDesign> design = NumericDesign::Create(
        Field(d, "mechanism").string_value() == "ONE_BIT_MEAN" ? NumericMechanism::kOneBitMean
                                                               : NumericMechanism::kDBitFlip,
        Field(d, "epsilon").number_value(), edges, static_cast<int>(Field(d, "d").number_value()));
    ASSERT_TRUE(design.ok()) << design.status();
    const ValueLevel level =
        LevelOfValue(*design, Field(v, "value").number_value(), Field(v, "alpha").number_value());
    EXPECT_EQ(level.level, Field(v, "level").number_value());
    EXPECT_EQ(level.clipped, Field(v, "clipped").bool_value());
    std::vector<double> uniforms;
    for (const Value& u : Field(v, "uniforms").list_value().values()) {
      uniforms.push_back(u.number_value());
    }
    UniformDraws draws(uniforms);
    absl::StatusOr<v1::Report> answer =
        DrawNumericAnswer(*MechanismFor(*design), level.level, draws);
    ASSERT_TRUE(answer.ok()) << answer.status();
    EXPECT_EQ(draws.used(), uniforms.size());
    EXPECT_FALSE(draws.exhausted());
    const Struct& report = Field(v, "report").struct_value();
    EXPECT_EQ(answer->bit(), Field(report, "bit").number_value());
    ASSERT_EQ(answer->has_numeric(), Field(report, "numeric").has_struct_value());
    EXPECT_FALSE(answer->has_categorical());
    if (!answer->has_numeric()) continue;
    const Struct& numeric = Field(report, "numeric").struct_value();
    const auto& buckets = Field(numeric, "buckets").list_value().values();
    const auto& bits = Field(numeric, "bits").list_value().values();
    ASSERT_EQ(answer->numeric().buckets_size(), buckets.size());
    ASSERT_EQ(answer->numeric().bits_size(), bits.size());
    for (int i = 0; i < buckets.size(); ++i) {
      EXPECT_EQ(answer->numeric().buckets(i), buckets[i].number_value()) << i;
      EXPECT_EQ(answer->numeric().bits(i) ? 1 : 0, bits[i].number_value()) << i;
    }
  }
  EXPECT_GT(rows, 10);  // the numeric rows are there to check
}

}  // namespace numeric_golden_test
}  // namespace
}  // namespace deniable::client
