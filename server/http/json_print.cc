#include "server/http/json_print.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "server/log_fields.h"

namespace deniable::server::http {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr int64_t kMaxSafeInteger = (int64_t{1} << 53) - 1;

// A JSON string literal: the escaping of the log lines (server/log_fields.h), in quotes.
void AppendString(absl::string_view text, std::string* out) {
  out->push_back('"');
  AppendJsonEscaped(text, out);
  out->push_back('"');
}

void AppendDouble(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("\"NaN\"");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
  } else {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);  // shortest round trip
    out->append(buffer, ec == std::errc() ? end : buffer);
  }
}

void AppendInt64(int64_t v, std::string* out) {
  if (v >= -kMaxSafeInteger && v <= kMaxSafeInteger) {
    absl::StrAppend(out, v);
  } else {
    absl::StrAppend(out, "\"", v, "\"");
  }
}

void AppendUint64(uint64_t v, std::string* out) {
  if (v <= static_cast<uint64_t>(kMaxSafeInteger)) {
    absl::StrAppend(out, v);
  } else {
    absl::StrAppend(out, "\"", v, "\"");
  }
}

// The fields of a suppressed Prevalence that keep their value; the other scalars are null.
bool KeptWhenSuppressed(absl::string_view name) {
  static const auto* kept = new absl::flat_hash_set<std::string>{
      "metric", "n", "start_time_seconds", "end_time_seconds", "group_value", "suppressed"};
  return kept->contains(name);
}

// The yes/no fields a categorical Prevalence does not have (categorical_query.cc sets them 0).
bool YesNoOnly(absl::string_view name) {
  static const auto* fields = new absl::flat_hash_set<std::string>{
      "yes_count", "yes_share", "estimate_unbiased", "estimate_clipped",   "standard_error",
      "ci_lower",  "ci_upper",  "interval_clipped",  "estimated_yes_count"};
  return fields->contains(name);
}

// Whether `field` of `message` is printed as null: a value the server does not have.
bool IsMissing(const Message& message, const FieldDescriptor* field) {
  if (field->is_repeated() || field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) return false;
  const std::string& type = message.GetDescriptor()->full_name();
  const Reflection* r = message.GetReflection();
  const google::protobuf::Descriptor* d = message.GetDescriptor();
  if (type == "deniable.v1.Prevalence") {
    const FieldDescriptor* suppressed = d->FindFieldByName("suppressed");
    if (suppressed != nullptr && r->GetBool(message, suppressed)) {
      return !KeptWhenSuppressed(field->name());
    }
    const FieldDescriptor* shares = d->FindFieldByName("shares");
    if (shares != nullptr && r->FieldSize(message, shares) > 0) return YesNoOnly(field->name());
    // A numeric histogram (D_BIT_FLIP) has no yes/no figures either.
    const FieldDescriptor* numeric = d->FindFieldByName("numeric");
    if (numeric == nullptr || !r->HasField(message, numeric)) return false;
    const Message& n = r->GetMessage(message, numeric);
    const FieldDescriptor* buckets = n.GetDescriptor()->FindFieldByName("buckets");
    return buckets != nullptr && n.GetReflection()->FieldSize(n, buckets) > 0 &&
           YesNoOnly(field->name());
  }
  // Numeric estimates: a figure the server does not have (the mean of a histogram, a bucket
  // nobody sampled, a suppressed group) is NaN in the message and null here.
  if (type == "deniable.v1.NumericEstimate" || type == "deniable.v1.NumericBucket" ||
      type == "deniable.v1.NumericQuantile") {
    return field->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE &&
           std::isnan(r->GetDouble(message, field));
  }
  if (type == "deniable.v1.Difference") {
    const FieldDescriptor* shares = d->FindFieldByName("shares");
    const std::string& name = field->name();
    return shares != nullptr && r->FieldSize(message, shares) > 0 &&
           (name == "difference" || name == "standard_error" || name == "ci_lower" ||
            name == "ci_upper");
  }
  return false;
}

void AppendMessage(const Message& message, std::string* out);

// One value of `field` (element `index` when repeated, -1 otherwise).
void AppendValue(const Message& m, const FieldDescriptor* f, int index, std::string* out) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      absl::StrAppend(out, rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      absl::StrAppend(out, rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      AppendInt64(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      AppendUint64(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      AppendDouble(rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      AppendDouble(rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f), out);
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      out->append((rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f)) ? "true" : "false");
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int value = rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
      const google::protobuf::EnumValueDescriptor* e = f->enum_type()->FindValueByNumber(value);
      if (e != nullptr) {
        AppendString(e->name(), out);
      } else {
        absl::StrAppend(out, value);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
      if (f->type() == FieldDescriptor::TYPE_BYTES) {
        AppendString(absl::Base64Escape(s), out);
      } else {
        AppendString(s, out);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      AppendMessage(rep ? r->GetRepeatedMessage(m, f, index) : r->GetMessage(m, f), out);
      break;
  }
}

// A map field: {"key": value, ...} (keys as strings, as protobuf prints them).
void AppendMap(const Message& m, const FieldDescriptor* f, std::string* out) {
  const Reflection* r = m.GetReflection();
  out->push_back('{');
  for (int i = 0; i < r->FieldSize(m, f); ++i) {
    const Message& entry = r->GetRepeatedMessage(m, f, i);
    const FieldDescriptor* key = entry.GetDescriptor()->map_key();
    const FieldDescriptor* value = entry.GetDescriptor()->map_value();
    if (i > 0) out->push_back(',');
    std::string key_text;
    AppendValue(entry, key, -1, &key_text);
    if (key_text.empty() || key_text.front() != '"') key_text = absl::StrCat("\"", key_text, "\"");
    absl::StrAppend(out, key_text, ":");
    AppendValue(entry, value, -1, out);
  }
  out->push_back('}');
}

void AppendMessage(const Message& message, std::string* out) {
  const google::protobuf::Descriptor* d = message.GetDescriptor();
  const Reflection* r = message.GetReflection();
  out->push_back('{');
  bool first = true;
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    // Messages and oneof members only when set; proto3 scalars always (as always_print_primitive).
    const bool has_presence = f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE ||
                              f->real_containing_oneof() != nullptr || f->has_optional_keyword();
    if (!f->is_repeated() && has_presence && !r->HasField(message, f)) continue;
    if (!first) out->push_back(',');
    first = false;
    AppendString(f->json_name(), out);
    out->push_back(':');
    if (f->is_map()) {
      AppendMap(message, f, out);
    } else if (f->is_repeated()) {
      out->push_back('[');
      for (int j = 0; j < r->FieldSize(message, f); ++j) {
        if (j > 0) out->push_back(',');
        AppendValue(message, f, j, out);
      }
      out->push_back(']');
    } else if (IsMissing(message, f)) {
      out->append("null");
    } else {
      AppendValue(message, f, -1, out);
    }
  }
  out->push_back('}');
}

}  // namespace

std::string PrintApiJson(const Message& message) {
  std::string out;
  AppendMessage(message, &out);
  return out;
}

}  // namespace deniable::server::http
