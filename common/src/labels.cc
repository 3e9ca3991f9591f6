#include "deniable/common/labels.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deniable/common/echo.h"

namespace deniable {

bool ValidLabelKey(absl::string_view key) {
  if (key.empty() || key.size() > kMaxLabelKeyLength || !absl::ascii_islower(key[0])) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
  });
}

bool ValidLabelValue(absl::string_view value) {
  if (value.empty() || value.size() > kMaxLabelValueLength) return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == ':' || c == '-';
  });
}

absl::StatusOr<std::string> CanonicalLabels(const std::map<std::string, std::string>& labels,
                                            absl::string_view field) {
  if (labels.empty()) return std::string();
  if (labels.size() > kMaxLabels) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": at most ", kMaxLabels, " labels, but has ", labels.size()));
  }
  for (const auto& [key, value] : labels) {
    if (!ValidLabelKey(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", EchoValue(key), "]: key must match [a-z][a-z0-9_]{0,31}"));
    }
    if (!ValidLabelValue(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[\"", key, "\"]: value must match [A-Za-z0-9_.:-]{1,32}, but is ",
                       EchoValue(value)));
    }
  }
  return absl::StrJoin(labels, ",", absl::PairFormatter("="));
}

}  // namespace deniable
