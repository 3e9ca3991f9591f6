// Writes tests/golden/heavy_hitters_vectors.json from the C++ heavy-hitters randomizer
// (common/heavy_hitters.h on common/draws.h's UniformDraws): for several designs, the group draw,
// and for each value and group the prefix, the hash of every row and reports for given uniform
// numbers; and a table of raw HeavyHittersHash values. See tests/golden/README.md:
//   build/tests/deniable_heavy_hitters_vectors > tests/golden/heavy_hitters_vectors.json
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deniable/common/draws.h"
#include "deniable/common/heavy_hitters.h"

namespace deniable {
namespace {

// Uniform numbers (2 j + 1) / 2^21, as in generate_randomizer_vectors.cc: exact in every
// language's double, never equal to a probability they are compared with, u * n exact for
// n < 2^32.
std::vector<double> Stream(std::mt19937_64& gen, size_t count) {
  std::vector<double> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(static_cast<double>(2 * (gen() >> 44) + 1) / 2097152.0);
  }
  return out;
}

std::string Number(double x) { return absl::StrFormat("%.17g", x); }

std::string Numbers(const std::vector<double>& u) {
  std::vector<std::string> parts;
  for (double x : u) parts.push_back(Number(x));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

// The salt as a decimal string (a uint64 does not fit a JSON number's double; proto3 JSON writes
// fixed64 the same way).
std::string Salt(uint64_t salt) { return absl::StrCat("\"", salt, "\""); }

std::string Hex(const std::string& bytes) { return absl::BytesToHexString(bytes); }

// A JSON string of UTF-8 text: the bytes as they are, with '"' and '\\' escaped (no value below
// has a control character).
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) std::abort();
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string DesignJson(const HeavyHittersDesign& d) {
  return absl::StrCat("{\"epsilon\": ", Number(d.epsilon), ", \"max_length\": ", d.max_length,
                      ", \"rows\": ", d.rows, ", \"width\": ", d.width,
                      ", \"holdout_share\": ", Number(d.holdout_share),
                      ", \"salt\": ", Salt(d.salt),
                      ", \"keep_probability\": ", Number(HeavyHittersKeepProbability(d)), "}");
}

// The values of a design: ASCII, UTF-8 multibyte, empty and max_length bytes (ASCII and
// multibyte), those that fit.
std::vector<std::string> ValuesOf(const HeavyHittersDesign& d) {
  const std::vector<std::string> candidates = {"",
                                               "a",
                                               "GET /index.html",
                                               "h\xc3\xa9llo w\xc3\xb6rld",
                                               "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e",
                                               "\xf0\x9f\x98\x80!"};
  std::vector<std::string> out;
  const size_t max = static_cast<size_t>(d.max_length);
  for (const std::string& c : candidates) {
    if (c.size() <= max) out.push_back(c);
  }
  std::string ascii;
  for (size_t i = 0; i < max; ++i) ascii.push_back(static_cast<char>('a' + i % 26));
  if (ascii.size() > 1) out.push_back(ascii);
  if (max >= 2) {
    std::string multibyte;
    while (multibyte.size() + 2 <= max) multibyte += "\xc3\xa9";
    if (multibyte.size() < max) multibyte += "z";
    out.push_back(multibyte);
  }
  return out;
}

std::string GroupDraws(const HeavyHittersDesign& d, std::mt19937_64& gen) {
  std::vector<std::string> out;
  for (int stream = 0; stream < 8; ++stream) {
    const std::vector<double> pool = Stream(gen, 2);
    UniformDraws draws(pool);
    const uint32_t group = DrawHeavyHittersGroup(d, draws);
    const std::vector<double> used(pool.begin(),
                                   pool.begin() + static_cast<std::ptrdiff_t>(draws.used()));
    out.push_back(absl::StrCat("{\"uniforms\": ", Numbers(used), ", \"group\": ", group, "}"));
  }
  return absl::StrCat("[\n       ", absl::StrJoin(out, ",\n       "), "]");
}

std::string Groups(const HeavyHittersDesign& d, const std::string& value, std::mt19937_64& gen) {
  std::vector<std::string> out;
  for (uint32_t group = 0; group <= static_cast<uint32_t>(HeavyHittersLevels(d)); ++group) {
    const std::string prefix = HeavyHittersPrefix(value, group);
    std::vector<uint32_t> hashes;
    for (int row = 0; row < d.rows; ++row) {
      hashes.push_back(HeavyHittersHash(d, group, static_cast<uint32_t>(row), prefix));
    }
    std::vector<std::string> reports;
    for (int stream = 0; stream < 2; ++stream) {
      const std::vector<double> pool = Stream(gen, 3);
      UniformDraws draws(pool);
      const HeavyHittersReport r = RandomizeHeavyHitter(d, value, group, draws).value();
      if (draws.used() != 3 || draws.exhausted()) std::abort();
      reports.push_back(absl::StrCat("{\"uniforms\": ", Numbers(pool),
                                     ", \"report\": {\"group\": ", r.group, ", \"row\": ", r.row,
                                     ", \"coefficient\": ", r.coefficient,
                                     ", \"bit\": ", r.bit ? 1 : 0, "}}"));
    }
    out.push_back(absl::StrCat("{\"group\": ", group, ", \"prefix_hex\": \"", Hex(prefix),
                               "\", \"hashes\": [", absl::StrJoin(hashes, ", "),
                               "],\n          \"reports\": [",
                               absl::StrJoin(reports, ",\n                      "), "]}"));
  }
  return absl::StrCat("[\n         ", absl::StrJoin(out, ",\n         "), "]");
}

HeavyHittersDesign MakeDesign(double epsilon, int max_length, int rows, int width,
                              double holdout_share, uint64_t salt) {
  HeavyHittersDesign d;
  d.epsilon = epsilon;
  d.max_length = max_length;
  d.rows = rows;
  d.width = width;
  d.holdout_share = holdout_share;
  d.salt = salt;
  if (!ValidateHeavyHittersDesign(d).ok()) std::abort();
  return d;
}

// Raw hashes: salts at the extremes and with every byte set, widths 2 .. 65536, the largest
// group and row a design allows, prefixes empty, ASCII, with bytes >= 0x80 and a trailing NUL.
std::string HashTable() {
  const std::vector<uint64_t> salts = {0, 1, 0x0123456789abcdefull, 0x8000000000000000ull,
                                       0xffffffffffffffffull};
  const std::vector<int> widths = {2, 1024, 65536};
  const std::vector<std::pair<uint32_t, uint32_t>> places = {{0, 0}, {1, 0}, {7, 15}, {65, 63}};
  const std::vector<std::string> prefixes = {std::string(),
                                             std::string("a"),
                                             std::string("a\0", 2),
                                             std::string("\xff\x80\x7f"),
                                             std::string("h\xc3\xa9llo w\xc3\xb6rld"),
                                             std::string(64, 'x')};
  std::vector<std::string> out;
  for (uint64_t salt : salts) {
    for (int width : widths) {
      for (const auto& [group, row] : places) {
        for (const std::string& prefix : prefixes) {
          HeavyHittersDesign d;
          d.salt = salt;
          d.width = width;
          out.push_back(absl::StrCat(
              "{\"salt\": ", Salt(salt), ", \"width\": ", width, ", \"group\": ", group,
              ", \"row\": ", row, ", \"prefix_hex\": \"", Hex(prefix),
              "\", \"hash\": ", HeavyHittersHash(d, group, row, prefix), "}"));
        }
      }
    }
  }
  return absl::StrCat("[\n    ", absl::StrJoin(out, ",\n    "), "]");
}

int Main() {
  const std::vector<std::pair<std::string, HeavyHittersDesign>> designs = {
      {"defaults", MakeDesign(1.0986122886681098, 32, 16, 1024, 0.25, 0x0123456789abcdefull)},
      {"short, salt 0", MakeDesign(2.0, 8, 4, 64, 0.5, 0)},
      {"tiny, salt 2^64 - 1", MakeDesign(0.5, 3, 1, 2, 0.1, 0xffffffffffffffffull)},
      {"longest, widest", MakeDesign(4.0, 64, 3, 65536, 0.9, 0x9e3779b97f4a7c15ull)},
  };
  std::mt19937_64 gen(20261202);
  std::vector<std::string> vectors;
  for (const auto& [name, d] : designs) {
    std::vector<std::string> values;
    for (const std::string& value : ValuesOf(d)) {
      values.push_back(absl::StrCat("{\"value\": ", Quoted(value), ", \"value_hex\": \"",
                                    Hex(value), "\",\n        \"groups\": ", Groups(d, value, gen),
                                    "}"));
    }
    vectors.push_back(
        absl::StrCat("    {\"name\": \"", name, "\",\n     \"design\": ", DesignJson(d),
                     ",\n     \"group_draws\": ", GroupDraws(d, gen),
                     ",\n     \"values\": [\n      ", absl::StrJoin(values, ",\n      "), "]}"));
  }
  std::printf(
      "{\n  \"comment\": \"Golden heavy-hitters vectors: for each design the group draw, and for "
      "each value and group the prefix, the hash of every row and the report every SDK must "
      "produce from the given uniform numbers; then raw HeavyHittersHash values. Generated by "
      "tests/golden/generate_heavy_hitters_vectors.cc from common/heavy_hitters.h; see "
      "tests/golden/README.md.\",\n"
      "  \"vectors\": [\n%s\n  ],\n  \"hashes\": %s\n}\n",
      absl::StrJoin(vectors, ",\n").c_str(), HashTable().c_str());
  return 0;
}

}  // namespace
}  // namespace deniable

int main() { return deniable::Main(); }
