// SQLite's counter sums (tables counter_chunks, schema version 10, and counter_deltas, 11;
// sqlite_schema.h): the counters 1 and up of a count key (metric, event time, version, label set)
// and window (win: -1 every report, 0 day, 1 week, 2 month first reports), kCounterChunkCounters
// counters to a row, each row one compact blob of the chunk's non-zero sums. A report that touches
// 2 counters of a 2^21-counter sketch updates at most 2 rows, and a read of an hour reads at most
// ceil(layout / kCounterChunkCounters) rows per key and window, not one row per counter.
//
// The blob: for each non-zero counter of the chunk, ascending, two LEB128 varints: the counter's
// offset in the chunk (the first one) or its difference to the previous offset (>= 1; the
// others), then its sum (>= 1). Counter j lives in chunk j / kCounterChunkCounters at offset
// j % kCounterChunkCounters.
//
// The append merges a batch's chunk into the stored one inside the same upsert, by the SQL
// function deniable_add_chunk(stored, added) (RegisterCounterChunkFunctions), so counting stays
// in the transaction that deduplicates.
//
// Between folds the append does not upsert chunks: it appends one row per key and window per
// transaction to counter_deltas (schema version 12), that transaction's increments of counters
// 1 and up as one blob of the same encoding over the whole layout (counter indices j, not
// offsets; DecodeCounterDelta). When a key and window reaches kCounterDeltaFold rows, the
// transaction that would write the next one sums them (and its own increments) into the chunks
// instead and deletes them, so a read of a key and window reads at most kCounterDeltaFold - 1
// delta rows beside its chunks (docs/storage.md, "Counters").
//
// All functions are thread-safe (no state).
#ifndef DENIABLE_SERVER_STORAGE_COUNTER_CHUNKS_H_
#define DENIABLE_SERVER_STORAGE_COUNTER_CHUNKS_H_

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deniable/common/mechanism.h"

namespace deniable::server {

inline constexpr uint32_t kCounterChunkCounters = 1024;
// The number of counter_deltas rows of one key and window at which the append folds them into
// counter_chunks: at most kCounterDeltaFold - 1 remain after any transaction.
inline constexpr int kCounterDeltaFold = 16;

// One counter of a chunk: (offset in the chunk, sum).
using ChunkCell = std::pair<uint32_t, int64_t>;

// The blob of `cells` (offsets ascending, distinct, < kCounterChunkCounters; sums >= 1). Also a
// counter_deltas blob, with counter indices for offsets (DecodeCounterDelta).
std::string EncodeCounterChunk(absl::Span<const ChunkCell> cells);

// Calls each(offset, sum) for the cells of `blob`, ascending. Errors: DATA_LOSS naming `table`
// when the blob is malformed (truncated, an offset repeated or >= kCounterChunkCounters, a sum
// < 1).
absl::Status DecodeCounterChunk(absl::string_view blob, absl::string_view table,
                                absl::FunctionRef<void(uint32_t offset, int64_t sum)> each);

// Calls each(counter, sum) for the cells of a counter_deltas blob (EncodeCounterChunk of cells
// whose first members are counter indices j, ascending, 1 <= j < kMaxCounterLayoutLength).
// Errors: DATA_LOSS naming `table` when the blob is malformed (truncated, a counter repeated or
// >= kMaxCounterLayoutLength, a sum < 1).
absl::Status DecodeCounterDelta(absl::string_view blob, absl::string_view table,
                                absl::FunctionRef<void(uint32_t counter, int64_t sum)> each);

// The blob of the cell-wise sums of `a` and `b`, in one pass over both (no cell vectors; the
// result is at most a.size() + b.size() bytes). Errors: DATA_LOSS naming `table` when either
// blob is malformed (as DecodeCounterChunk) or a merged sum would pass 2^63 - 1.
absl::StatusOr<std::string> MergeCounterChunks(absl::string_view a, absl::string_view b,
                                               absl::string_view table);

// Registers deniable_add_chunk(stored, added) on `db`: MergeCounterChunks of two blobs (NULL
// stored: added), written straight into the buffer SQLite takes over. A malformed blob or a sum
// past 2^63 - 1 fails the statement with SQLITE_CORRUPT (DATA_LOSS through SqliteError), naming
// counter_chunks. Errors: INTERNAL when SQLite refuses the function.
absl::Status RegisterCounterChunkFunctions(sqlite3* db);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_COUNTER_CHUNKS_H_
