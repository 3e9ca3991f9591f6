// The C++ heavy-hitters randomizer (common/heavy_hitters.h on common/draws.h's UniformDraws)
// against the golden vectors tests/golden/heavy_hitters_vectors.json, which the Python and JS
// SDKs check too.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "deniable/common/draws.h"
#include "deniable/common/heavy_hitters.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "json_struct.h"

namespace deniable {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

using golden::Field;

Struct LoadVectors() { return golden::LoadJsonStruct(DENIABLE_HEAVY_HITTERS_VECTORS); }

uint32_t Int(const Struct& s, const std::string& name) {
  return static_cast<uint32_t>(Field(s, name).number_value());
}

uint64_t SaltOf(const Struct& s) {
  uint64_t salt = 0;
  EXPECT_TRUE(absl::SimpleAtoi(Field(s, "salt").string_value(), &salt));
  return salt;
}

std::string Bytes(const Struct& s, const std::string& name) {
  return absl::HexStringToBytes(Field(s, name).string_value());
}

std::vector<double> Uniforms(const Struct& s) {
  std::vector<double> out;
  for (const Value& u : Field(s, "uniforms").list_value().values()) out.push_back(u.number_value());
  return out;
}

HeavyHittersDesign DesignOf(const Struct& s) {
  HeavyHittersDesign d;
  d.epsilon = Field(s, "epsilon").number_value();
  d.max_length = static_cast<int>(Int(s, "max_length"));
  d.rows = static_cast<int>(Int(s, "rows"));
  d.width = static_cast<int>(Int(s, "width"));
  d.holdout_share = Field(s, "holdout_share").number_value();
  d.salt = SaltOf(s);
  return d;
}

TEST(HeavyHittersVectorsTest, TheCppRandomizerProducesEveryReport) {
  const Struct root = LoadVectors();
  const auto& vectors = Field(root, "vectors").list_value().values();
  ASSERT_GE(vectors.size(), 4);
  int values = 0, reports = 0, multibyte = 0, empty = 0, longest = 0;
  for (const Value& entry : vectors) {
    const Struct& v = entry.struct_value();
    SCOPED_TRACE(Field(v, "name").string_value());
    const Struct& design = Field(v, "design").struct_value();
    const HeavyHittersDesign d = DesignOf(design);
    ASSERT_TRUE(ValidateHeavyHittersDesign(d).ok());
    EXPECT_NEAR(HeavyHittersKeepProbability(d), Field(design, "keep_probability").number_value(),
                1e-15);
    for (const Value& g : Field(v, "group_draws").list_value().values()) {
      const std::vector<double> u = Uniforms(g.struct_value());
      UniformDraws draws(u);
      EXPECT_EQ(DrawHeavyHittersGroup(d, draws), Int(g.struct_value(), "group"));
      EXPECT_EQ(draws.used(), u.size());
      EXPECT_FALSE(draws.exhausted());
    }
    for (const Value& ve : Field(v, "values").list_value().values()) {
      const Struct& value_entry = ve.struct_value();
      const std::string value = Bytes(value_entry, "value_hex");
      EXPECT_EQ(value, Field(value_entry, "value").string_value());
      ASSERT_TRUE(ValidateHeavyHitterValue(d, value).ok());
      ++values;
      if (value.empty()) ++empty;
      if (value.size() == static_cast<size_t>(d.max_length)) ++longest;
      for (char c : value) {
        if (static_cast<unsigned char>(c) >= 0x80) {
          ++multibyte;
          break;
        }
      }
      const auto& groups = Field(value_entry, "groups").list_value().values();
      ASSERT_EQ(groups.size(), HeavyHittersGroups(d));
      for (const Value& ge : groups) {
        const Struct& g = ge.struct_value();
        const uint32_t group = Int(g, "group");
        SCOPED_TRACE(group);
        const std::string prefix = HeavyHittersPrefix(value, group);
        EXPECT_EQ(prefix, Bytes(g, "prefix_hex"));
        const auto& hashes = Field(g, "hashes").list_value().values();
        ASSERT_EQ(hashes.size(), d.rows);
        for (int row = 0; row < d.rows; ++row) {
          EXPECT_EQ(HeavyHittersHash(d, group, static_cast<uint32_t>(row), prefix),
                    hashes[row].number_value());
        }
        for (const Value& re : Field(g, "reports").list_value().values()) {
          const std::vector<double> u = Uniforms(re.struct_value());
          const Struct& want = Field(re.struct_value(), "report").struct_value();
          UniformDraws draws(u);
          const HeavyHittersReport r = RandomizeHeavyHitter(d, value, group, draws).value();
          EXPECT_EQ(r.group, Int(want, "group"));
          EXPECT_EQ(r.row, Int(want, "row"));
          EXPECT_EQ(r.coefficient, Int(want, "coefficient"));
          EXPECT_EQ(r.bit ? 1u : 0u, Int(want, "bit"));
          EXPECT_EQ(draws.used(), 3u);
          EXPECT_FALSE(draws.exhausted());
          ++reports;
        }
      }
    }
  }
  EXPECT_GT(values, 10);
  EXPECT_GT(reports, 100);
  EXPECT_GT(multibyte, 0);
  EXPECT_EQ(empty, static_cast<int>(vectors.size()));
  EXPECT_GE(longest, static_cast<int>(vectors.size()));
}

TEST(HeavyHittersVectorsTest, TheRawHashTableMatches) {
  const Struct root = LoadVectors();
  const auto& hashes = Field(root, "hashes").list_value().values();
  ASSERT_GT(hashes.size(), 100);
  for (const Value& entry : hashes) {
    const Struct& h = entry.struct_value();
    HeavyHittersDesign d;
    d.salt = SaltOf(h);
    d.width = static_cast<int>(Int(h, "width"));
    EXPECT_EQ(HeavyHittersHash(d, Int(h, "group"), Int(h, "row"), Bytes(h, "prefix_hex")),
              Int(h, "hash"))
        << Field(h, "salt").string_value() << " " << d.width << " " << Int(h, "group") << " "
        << Int(h, "row") << " " << Field(h, "prefix_hex").string_value();
  }
}

}  // namespace
}  // namespace deniable
