// Reading the golden vector files (JSON) as google.protobuf.Struct, for the C++ checks of
// tests/golden/: randomizer_vectors_test.cc and heavy_hitters_vectors_test.cc. Test-only.
#ifndef DENIABLE_TESTS_GOLDEN_JSON_STRUCT_H_
#define DENIABLE_TESTS_GOLDEN_JSON_STRUCT_H_

#include <fstream>
#include <sstream>
#include <string>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace deniable::golden {

// The JSON file at `path` as a Struct; a file that does not parse fails the calling test
// (EXPECT) and gives an empty Struct.
inline google::protobuf::Struct LoadJsonStruct(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  google::protobuf::Struct out;
  const auto status = google::protobuf::util::JsonStringToMessage(text.str(), &out);
  EXPECT_TRUE(status.ok()) << path << ": " << status;
  return out;
}

// The field `name` of `s`, or a null Value when it is absent.
inline const google::protobuf::Value& Field(const google::protobuf::Struct& s,
                                            const std::string& name) {
  static const google::protobuf::Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}

}  // namespace deniable::golden

#endif  // DENIABLE_TESTS_GOLDEN_JSON_STRUCT_H_
