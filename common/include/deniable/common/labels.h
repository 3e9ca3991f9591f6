// Report labels: the rules the collector enforces and the SDK checks before a report is queued,
// in one place (so a label the SDK accepts is never rejected by the server for its form).
//
// A report carries at most kMaxLabels public, low-cardinality labels (for example region=N or
// app_version=4.2). Keys match [a-z][a-z0-9_]{0,31}; values match [A-Za-z0-9_.:-]{1,32}. Free
// text (spaces, other punctuation, longer values) is refused: labels travel and are stored in the
// clear, so they must never identify a device or carry an answer.
//
// Example:
//   absl::StatusOr<std::string> canonical = CanonicalLabels({{"region", "N"}}, "labels");
//   // *canonical == "region=N"
//
// Thread-safe (pure functions).
#ifndef DENIABLE_COMMON_LABELS_H_
#define DENIABLE_COMMON_LABELS_H_

#include <cstddef>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deniable {

inline constexpr size_t kMaxLabels = 4;
inline constexpr size_t kMaxLabelKeyLength = 32;
inline constexpr size_t kMaxLabelValueLength = 32;

// True when `key` matches [a-z][a-z0-9_]{0,31}.
bool ValidLabelKey(absl::string_view key);
// True when `value` matches [A-Za-z0-9_.:-]{1,32}.
bool ValidLabelValue(absl::string_view value);

// Checks `labels` and returns their canonical form "k1=v1,k2=v2", sorted by key ("" for none).
// `field` names them in errors ("reports[3].labels", "labels"). Errors: INVALID_ARGUMENT
// "<field>: at most 4 labels, but has N", "<field>[<key>]: key must match ...", or
// "<field>["<key>"]: value must match ..., but is <value>"; offending keys and values are echoed
// bounded and escaped (EchoValue).
absl::StatusOr<std::string> CanonicalLabels(const std::map<std::string, std::string>& labels,
                                            absl::string_view field);

}  // namespace deniable

#endif  // DENIABLE_COMMON_LABELS_H_
