// MovedIdsFilter: a Bloom filter of the report ids that moves have put into the keyed `reports`
// table for one metric-hour, so that a new report of a hot metric-hour (one still written while
// earlier parts of it have moved) skips the B-tree lookup in `reports` when the filter rules the
// id out. The filter never rules out an id it was given (no false negatives); about 0.1 % of
// other ids per segment pass it and pay the lookup, which still decides (docs/performance.md,
// "Deduplication").
//
//   MovedIdsFilter filter;
//   filter.Add(id);                    // after the move's transaction committed, or before
//   if (filter.MayContain(other)) ...  // then look `other` up in `reports`
//
// Grows by segments (the first 128 KiB), each twice as large as the one before (a scalable
// Bloom filter, Almeida et al., "Scalable Bloom Filters", IPL 101(6), 2007): 16 bits per id and 8
// probes, 2 to 4 bytes per id (a hot metric-hour's 16 M moved ids fill 8 segments, and every new
// id of the hour is checked against each: 1 % false positives per segment sent about one new id
// in ten to a B-tree lookup in the keyed file). Each segment is blocked (Putze, Sanders and
// Singler, "Cache-, Hash- and Space-Efficient Bloom Filters", WEA 2007): an id's 8 bits lie in one
// 512-bit block, so a lookup reads one cache line per segment instead of eight (a hot metric-hour's
// appends check every segment for every new id).
//
// Thread-compatible: SqliteStorage uses it under its write mutex.
#ifndef DENIABLE_SERVER_STORAGE_SQLITE_MOVED_IDS_FILTER_H_
#define DENIABLE_SERVER_STORAGE_SQLITE_MOVED_IDS_FILTER_H_

#include <cstdint>
#include <vector>

#include "server/storage/storage.h"

namespace deniable::server {

class MovedIdsFilter {
 public:
  // Adds an id.
  void Add(const ReportId& id);
  // Hints the CPU to fetch the blocks that Add(id) will write (`for_add`: the last segment's) or
  // that MayContain(id) will read (one in each segment); changes nothing.
  void Prefetch(const ReportId& id, bool for_add) const;
  // False only if `id` was never added.
  bool MayContain(const ReportId& id) const;
  // Bytes held by the filter's bits.
  int64_t bytes() const;

 private:
  struct Segment {
    std::vector<uint64_t> words;  // a power of two of them
    int64_t capacity = 0;         // ids it takes at kBitsPerId (16) bits each
    int64_t count = 0;
  };
  std::vector<Segment> segments_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_SQLITE_MOVED_IDS_FILTER_H_
