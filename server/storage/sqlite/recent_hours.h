// The in-memory half of SqliteStorage's recent reports: for each metric-hour that has rows in the
// `recent_reports` table, the exact set of their report ids, so that a new report is
// deduplicated by one hash lookup instead of an insert at a random place of a large B-tree.
//
// Invariant kept by SqliteStorage (docs/storage.md, invariant 6): for every metric-hour, ids
// holds exactly the report ids of that metric-hour's visible rows in `recent_reports` (a row a
// move has copied stays in the table, behind its hour's watermark, until the move's delete
// phase; its id left this set with the copy's commit); `may_have_sorted_rows` is true whenever
// the keyed `reports` table may hold rows of that metric-hour (then a new id is also looked up
// there). Every stored report is visible exactly once, in one of the two tables, so the two
// lookups together decide "already stored?" exactly (docs/performance.md, "Deduplication").
//
// Memory: about 16 bytes per id divided by the hash set's load factor (7/8 at most, 7/16 right
// after growing), plus ~1 control byte per slot: 20-40 bytes per recent report, measured ~29.
//
// Thread-compatible: SqliteStorage uses it under its write mutex.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_RECENT_HOURS_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_RECENT_HOURS_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/types/span.h"
#include "server/storage/sqlite/moved_ids_filter.h"
#include "server/storage/storage.h"

namespace deniable::server {

// One metric and one rounded event time (the key prefix of both report tables).
struct HourKey {
  int64_t metric_id = 0;
  int64_t event_time = 0;

  friend bool operator==(const HourKey& x, const HourKey& y) {
    return x.metric_id == y.metric_id && x.event_time == y.event_time;
  }
  template <typename H>
  friend H AbslHashValue(H h, const HourKey& k) {
    return H::combine(std::move(h), k.metric_id, k.event_time);
  }
};

class RecentHours {
 public:
  struct Hour {
    absl::flat_hash_set<ReportId> ids;  // seeded hash: ids come from clients
    bool may_have_sorted_rows = false;  // the keyed `reports` table may hold this metric-hour
    uint64_t last_write = 0;            // Tick() of the last transaction that added an id
    // The ids moves have put into `reports` for this metric-hour, when the entry has existed
    // since before the hour's first move (else null, and every new id is looked up there).
    std::unique_ptr<MovedIdsFilter> moved;
  };

  // The metric-hour's entry, or nullptr. The pointer stays valid until that entry is erased.
  Hour* Find(const HourKey& key);
  // Creates an empty entry (the key must be absent) and remembers it for Undo().
  Hour& Create(const HourKey& key, bool may_have_sorted_rows);
  // Adds a new id (absent from the hour's set) and remembers it for Undo().
  void Insert(const HourKey& key, Hour& hour, const ReportId& id);
  // Inserts `id` unless present (one probe); true if inserted, remembered for Undo().
  bool TryInsert(const HourKey& key, Hour& hour, const ReportId& id);
  // Takes back the id the last TryInsert inserted.
  void TakeBackLast(Hour& hour);

  // Starts a transaction: forgets the undo log and advances the clock used for last_write.
  void Begin();
  // The transaction committed: its ids stay.
  void Commit() { undo_ids_.clear(), undo_hours_.clear(); }
  // The transaction rolled back: removes the ids and the entries it added.
  void Undo();

  // Removes a metric-hour whose rows have moved to the keyed table.
  void Erase(const HourKey& key);
  // Removes ids whose rows are now in the keyed table (a chunk of a move) and adds them to the
  // hour's moved-ids filter, if it has one. Prefetches a few ids ahead: the recent set and the
  // filter are larger than the CPU's caches, and the caller holds the lock appends wait on.
  void MoveOut(Hour& hour, absl::Span<const ReportId> ids);
  // Hints the CPU to fetch the memory that TryInsert(_, hour, id) and then the hour's filter
  // will read; changes nothing.
  static void Prefetch(const Hour& hour, const ReportId& id) {
    hour.ids.prefetch(id);
    if (hour.moved != nullptr) hour.moved->Prefetch(id, /*for_add=*/false);
  }

  // Metric-hours to move so that at most `keep` ids remain, least recently written first.
  std::vector<HourKey> OldestBeyond(int64_t keep) const;
  // All metric-hours, for moving everything, in (metric_id, event_time) order.
  std::vector<HourKey> All() const;

  int64_t size() const { return size_; }           // ids over all metric-hours
  int64_t hours() const { return hours_.size(); }  // metric-hours held

 private:
  absl::node_hash_map<HourKey, Hour> hours_;  // node map: Hour pointers survive rehashing
  int64_t size_ = 0;
  uint64_t tick_ = 0;
  std::vector<std::pair<HourKey, ReportId>> undo_ids_;
  std::vector<HourKey> undo_hours_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_RECENT_HOURS_H_
