// Counters 1 and up of the counter vectors in PostgreSQL (table counter_chunks, schema version 8;
// postgres_schema.h; counter 0 is counts.counter0) and the window-first counts (first_counts:
// each window's n and counter 0; its counters 1 and up live in counter_chunks): kept apart from
// postgres_storage.cc's append path, which writes n and counter 0.
// PostgresStorage::ReadCounts reads them with the counts, in one statement.
//
// counter_chunks(metric_id, event_time, version, labels, shard, win, chunk, offsets, sums): one
// row per count key, shard, window (win -1: every report; 0, 1, 2: the day's, week's, month's
// first reports) and chunk of kCounterChunkCounters (1024) counters. Counter j lives in chunk
// j / 1024 at offset j % 1024; offsets (integer[]) holds the chunk's non-zero counters'
// offsets, ascending and distinct, sums (bigint[]) their sums (>= 1), element by element. A
// report touching 2 counters of a 2^21-counter sketch updates at most 2 rows, and a read of an
// hour reads at most ceil(layout / 1024) rows per key, shard and window.
//
// The append merges its chunk into the stored one inside its INSERT ... ON CONFLICT DO UPDATE
// (kMergeCounterChunk, a function of schema version 9), so counting stays in the transaction that
// deduplicates, and concurrent collectors adding to one chunk serialise on its row lock (the update
// re-reads the row's latest version).
//
// Thread-compatible: the caller holds the connection's mutex.
#ifndef DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_COUNTER_SUMS_H_
#define DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_COUNTER_SUMS_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/storage.h"

namespace deniable::server {

// The SET clause of an upsert into counter_chunks AS t: the stored chunk (t.offsets, t.sums)
// plus EXCLUDED's, cell by cell, ascending, through deniable_merge_chunk (schema version 9): each
// added cell found by binary search, its sum added in place or the cell spliced in; more than 16
// added cells merge in one pass. It runs on the row the upsert locked, so concurrent appends to
// one chunk serialise on that lock and each merges into the latest version.
inline constexpr char kMergeCounterChunk[] =
    "(offsets, sums) = (SELECT o, s FROM deniable_merge_chunk(t.offsets, t.sums, "
    "EXCLUDED.offsets, EXCLUDED.sums))";

// Adds counters 1 and up of `rows` (newly stored reports), both every report's (win -1) and
// the window firsts' (ReportRow::window_firsts), to counter_chunks under `shard`, inside the
// caller's open transaction (the one that stored the rows and their counts): one row per chunk
// touched, in key order so that concurrent collectors lock rows in the same order. No counters:
// no statement. Errors: from PostgreSQL (the caller's transaction then rolls back).
absl::Status AddPostgresCounterSums(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard);

// Adds the window-first n (counter -1) and counter 0 of `rows` (newly stored reports with
// ReportRow::window_firsts set) to first_counts (schema version 6) under `shard`, in the
// caller's transaction and in key order, as above. Errors: from PostgreSQL.
absl::Status AddPostgresFirstCounts(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard);

// Calls each(counter, sum) for the cells of one counter_chunks row read as text (`offsets` and
// `sums`: PostgreSQL's text form of integer[] and bigint[], e.g. "{3,1000}"), counter =
// chunk * 1024 + offset. Errors: DATA_LOSS naming counter_chunks and `metric_id` when the row
// is malformed: arrays of different lengths or not integers, an offset outside [0, 1024) or
// not ascending, a chunk outside the largest layout, counter 0 in window -1 (it is
// counts.counter0), a window outside [-1, 2], a sum < 1.
absl::Status DecodePostgresChunk(int64_t metric_id, int64_t win, int64_t chunk,
                                 absl::string_view offsets, absl::string_view sums,
                                 absl::FunctionRef<void(uint32_t counter, int64_t sum)> each);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_STORAGE_POSTGRES_POSTGRES_COUNTER_SUMS_H_
