#include "server/storage/counter_chunks.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "server/storage/varint.h"

namespace deniable::server {
namespace {

absl::StatusOr<std::vector<ChunkCell>> Cells(absl::string_view blob, absl::string_view table) {
  std::vector<ChunkCell> cells;
  DENIABLE_RETURN_IF_ERROR(DecodeCounterChunk(
      blob, table, [&](uint32_t offset, int64_t sum) { cells.emplace_back(offset, sum); }));
  return cells;
}

void AddChunk(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  if (argc != 2) {
    sqlite3_result_error(ctx, "deniable_add_chunk takes 2 arguments", -1);
    return;
  }
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_value(ctx, argv[1]);
    return;
  }
  auto blob = [](sqlite3_value* v) {
    const void* data = sqlite3_value_blob(v);
    return absl::string_view(static_cast<const char*>(data),
                             static_cast<size_t>(sqlite3_value_bytes(v)));
  };
  absl::StatusOr<std::string> merged =
      MergeCounterChunks(blob(argv[0]), blob(argv[1]), "counter_chunks");
  if (!merged.ok()) {
    const std::string message(merged.status().message());
    sqlite3_result_error(ctx, message.c_str(), -1);
    sqlite3_result_error_code(ctx, SQLITE_CORRUPT);
    return;
  }
  sqlite3_result_blob64(ctx, merged->data(), merged->size(), SQLITE_TRANSIENT);
}

}  // namespace

std::string EncodeCounterChunk(absl::Span<const ChunkCell> cells) {
  std::string out;
  out.reserve(cells.size() * 3);
  uint32_t previous = 0;
  for (size_t i = 0; i < cells.size(); ++i) {
    AppendVarint(i == 0 ? cells[i].first : cells[i].first - previous, &out);
    AppendVarint(static_cast<uint64_t>(cells[i].second), &out);
    previous = cells[i].first;
  }
  return out;
}

absl::Status DecodeCounterChunk(absl::string_view blob, absl::string_view table,
                                absl::FunctionRef<void(uint32_t offset, int64_t sum)> each) {
  auto bad = [&](absl::string_view what) {
    return absl::DataLossError(
        absl::StrCat(table, ": a stored chunk of counter sums is malformed: ", what));
  };
  size_t pos = 0;
  uint64_t offset = 0;
  for (bool first = true; pos < blob.size(); first = false) {
    uint64_t step = 0;
    uint64_t sum = 0;
    if (!ReadVarint(blob, &pos, &step) || !ReadVarint(blob, &pos, &sum)) {
      return bad("a truncated varint");
    }
    if (!first && step == 0) return bad("a counter repeated");
    if (step >= kCounterChunkCounters || offset + step >= kCounterChunkCounters) {
      return bad(absl::StrCat("a counter past the chunk's ", kCounterChunkCounters));
    }
    offset += step;
    if (sum < 1 || sum > static_cast<uint64_t>(INT64_MAX)) return bad("a sum out of range");
    each(static_cast<uint32_t>(offset), static_cast<int64_t>(sum));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MergeCounterChunks(absl::string_view a, absl::string_view b,
                                               absl::string_view table) {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<ChunkCell> x, Cells(a, table));
  DENIABLE_ASSIGN_OR_RETURN(std::vector<ChunkCell> y, Cells(b, table));
  std::vector<ChunkCell> merged;
  merged.reserve(x.size() + y.size());
  size_t i = 0;
  size_t k = 0;
  while (i < x.size() || k < y.size()) {
    if (k == y.size() || (i < x.size() && x[i].first < y[k].first)) {
      merged.push_back(x[i++]);
    } else if (i == x.size() || y[k].first < x[i].first) {
      merged.push_back(y[k++]);
    } else {
      merged.emplace_back(x[i].first, x[i].second + y[k].second);
      ++i;
      ++k;
    }
  }
  return EncodeCounterChunk(merged);
}

absl::Status RegisterCounterChunkFunctions(sqlite3* db) {
  const int rc =
      sqlite3_create_function_v2(db, "deniable_add_chunk", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                                 nullptr, &AddChunk, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    return absl::InternalError(
        absl::StrCat("registering deniable_add_chunk: ", sqlite3_errstr(rc)));
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
