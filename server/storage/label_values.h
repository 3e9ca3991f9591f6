// The per-metric cap on the distinct values of each label key (deniable-server
// --max_label_values; docs/operations.md, "Labels").
//
// Labels are public and low-cardinality (region=N, app_version=4.2): they travel and are stored in
// the clear, beside the randomized answer. A label whose values identify a device (device=<hex>,
// ip=203.0.113.7) would undo what randomized response protects, so each backend keeps the set of
// (metric, key, value) it has stored (SQLite and PostgreSQL: table label_values, filled by the
// schema migration from the counts' label sets) and, in the append's own transaction, refuses a
// report that would bring a key of its metric past the cap: AppendResult::label_refusals. The
// check runs before deduplication: a report whose values are all stored already is never refused
// (so a re-sent report that was stored is still its duplicate), and a refused report is neither
// stored nor counted. The cap is a limit for new values only: values stored before it was lowered
// (or before it existed) stay accepted. The set lives as long as the metric (DeleteMetric empties
// it; retention keeps it, as it keeps the counts' labels).
//
// The distinct keys of a metric are capped the same way (--max_label_keys), so that an
// identifier cannot move from the value into the key.
//
// Example (inside one transaction):
//   LabelValueAdmission admission(max_values, max_keys, {.known = ..., .count = ..., .keys = ...});
//   DENIABLE_ASSIGN_OR_RETURN(std::optional<LabelCapRefusal> refused,
//                             admission.Admit(row.metric_id, row.labels));
//   if (refused) { ... row refused, refused->key is the label ... }
//   ... store admission.added() with the rows ...
#ifndef DENIABLE_SERVER_STORAGE_LABEL_VALUES_H_
#define DENIABLE_SERVER_STORAGE_LABEL_VALUES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace deniable::server {

// deniable-server --max_label_values's default; 0 means no cap.
inline constexpr int64_t kDefaultMaxLabelValues = 1000;
// deniable-server --max_label_keys's default: distinct label keys per metric (without it an
// identifier could move into the key, d41d8cd98f00=1, past the cap on values); 0 means no cap.
inline constexpr int64_t kDefaultMaxLabelKeys = 32;

// Why LabelValueAdmission refused a report.
struct LabelCapRefusal {
  std::string key;       // the report's label that would pass a cap
  bool new_key = false;  // true: the metric has max_keys keys and this is another one;
                         // false: the key has max_values values and this is another one
};

// The (key, value) pairs of canonical labels "k1=v1,k2=v2" (common/labels.h: keys and values
// never contain ',' or '='); "" gives none.
std::vector<std::pair<absl::string_view, absl::string_view>> SplitLabels(
    absl::string_view canonical);

// The cap's decisions within ONE transaction. Not thread-safe (one per transaction).
class LabelValueAdmission {
 public:
  using Value = std::tuple<int64_t, std::string, std::string>;  // metric, key, value
  // Reads of the transaction's state: whether (metric, key, value) is stored, how many values of
  // (metric, key) are stored, and how many distinct keys of `metric` are. Each is asked at most
  // once per argument.
  struct Lookup {
    std::function<absl::StatusOr<bool>(int64_t, absl::string_view, absl::string_view)> known;
    std::function<absl::StatusOr<int64_t>(int64_t, absl::string_view)> count;
    std::function<absl::StatusOr<int64_t>(int64_t)> keys;
  };
  // `max_values`, `max_keys` 0: no cap (new values are still recorded in added()).
  LabelValueAdmission(int64_t max_values, int64_t max_keys, Lookup lookup)
      : max_values_(max_values), max_keys_(max_keys), lookup_(std::move(lookup)) {}

  // Whether a report of `metric_id` with canonical `labels` may be stored: each of its values is
  // stored, or admitted earlier in this transaction, or its key has fewer than max_values values
  // (stored plus admitted) and, when the key has none, the metric has fewer than max_keys keys.
  // When every label passes, the report's new values are admitted (added()); otherwise nothing
  // is, and the first label (in key order) past a cap is returned.
  // Errors: those of the lookups.
  absl::StatusOr<std::optional<LabelCapRefusal>> Admit(int64_t metric_id, absl::string_view labels);

  // The values admitted in this transaction that were not stored: the caller stores them in the
  // same transaction.
  const std::vector<Value>& added() const { return added_; }
  int64_t max_values() const { return max_values_; }
  int64_t max_keys() const { return max_keys_; }

 private:
  absl::StatusOr<bool> Known(int64_t metric_id, absl::string_view key, absl::string_view value);
  absl::StatusOr<int64_t> Count(int64_t metric_id, absl::string_view key);
  absl::StatusOr<int64_t> Keys(int64_t metric_id);

  const int64_t max_values_;
  const int64_t max_keys_;
  const Lookup lookup_;
  std::map<Value, bool> known_;                               // stored or admitted
  std::map<std::pair<int64_t, std::string>, int64_t> count_;  // stored plus admitted
  std::map<int64_t, int64_t> keys_;                           // stored plus admitted
  std::vector<Value> added_;
};

// (metric, canonical labels) pairs whose values are all stored, so that appends skip the lookups
// for them: a pair is added only after the transaction that stored its values committed, and
// stays true (values leave only with their metric, whose id is never reused). Bounded: cleared
// when it would exceed kMaxEntries. Thread-safe.
class KnownLabelsets {
 public:
  static constexpr size_t kMaxEntries = 50'000;
  bool Contains(int64_t metric_id, const std::string& labels) const ABSL_LOCKS_EXCLUDED(mu_);
  void Add(const std::vector<std::pair<int64_t, std::string>>& labelsets) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_set<std::pair<int64_t, std::string>> set_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_LABEL_VALUES_H_
