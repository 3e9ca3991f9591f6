#include "bench/figures_json.h"

#include <fstream>

#include "absl/strings/str_format.h"
#include "google/protobuf/util/json_util.h"

namespace deniable::bench {

double Ratio(const Figure& f) { return f.limit > 0 ? f.value / f.limit : 0; }

void AddFigure(google::protobuf::Struct* json, const Figure& f) {
  google::protobuf::Value& list = (*json->mutable_fields())["figures"];
  auto& item = *list.mutable_list_value()->add_values()->mutable_struct_value()->mutable_fields();
  item["name"].set_string_value(f.name);
  item["unit"].set_string_value(f.unit);
  item["value"].set_number_value(f.value);
  item["limit_name"].set_string_value(f.limit_name);
  item["limit"].set_number_value(f.limit);
  item["ratio"].set_number_value(Ratio(f));
  item["target"].set_string_value(f.target);
}

void WriteJson(const google::protobuf::Struct& json, const std::string& path) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  (void)google::protobuf::util::MessageToJsonString(json, &text, options);
  std::ofstream(path) << text;
  absl::PrintF("wrote %s\n", path);
}

}  // namespace deniable::bench
