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

constexpr char kPastTheChunk[] = "a counter past the chunk's ";
constexpr char kPastTheLayout[] = "a counter past the largest layout's ";

// One blob's cells in order, checked (DecodeCounterChunk's errors).
class CellReader {
 public:
  // `limit`: one past the largest offset allowed (kCounterChunkCounters for a chunk).
  explicit CellReader(absl::string_view blob, uint64_t limit = kCounterChunkCounters)
      : blob_(blob), limit_(limit) {}

  // Reads the next cell into offset() and sum(); false at the end or when the blob is malformed
  // (then error() says how).
  bool Next() {
    if (pos_ >= blob_.size()) return false;
    uint64_t step = 0;
    if (!ReadVarint(blob_, &pos_, &step) || !ReadVarint(blob_, &pos_, &sum_)) {
      error_ = "a truncated varint";
      return false;
    }
    if (!first_ && step == 0) {
      error_ = "a counter repeated";
      return false;
    }
    if (step >= limit_ || offset_ + step >= limit_) {
      error_ = limit_ == kCounterChunkCounters ? kPastTheChunk : kPastTheLayout;
      return false;
    }
    if (sum_ < 1 || sum_ > static_cast<uint64_t>(INT64_MAX)) {
      error_ = "a sum out of range";
      return false;
    }
    offset_ += step;
    first_ = false;
    return true;
  }
  uint64_t offset() const { return offset_; }
  uint64_t limit() const { return limit_; }
  uint64_t sum() const { return sum_; }
  const char* error() const { return error_; }

 private:
  absl::string_view blob_;
  uint64_t limit_;
  size_t pos_ = 0;
  uint64_t offset_ = 0;
  uint64_t sum_ = 0;
  bool first_ = true;
  const char* error_ = nullptr;
};

// DATA_LOSS naming `table` for the blob `r` found malformed.
absl::Status Malformed(const CellReader& r, absl::string_view table) {
  return absl::DataLossError(absl::StrCat(
      table, ": a stored chunk of counter sums is malformed: ", r.error(),
      r.error() == kPastTheChunk || r.error() == kPastTheLayout ? absl::StrCat(r.limit()) : ""));
}

// Writes `v` as a varint at `out`; returns the byte past it.
char* PutVarint(uint64_t v, char* out) {
  while (v >= 0x80) {
    *out++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

// The merge of `a` and `b` into `out` (room for a.size() + b.size() bytes: a cell of the merge
// takes no more bytes than the cells it comes from); returns the bytes written. One pass over
// both blobs, no allocation.
absl::StatusOr<size_t> MergeInto(absl::string_view a, absl::string_view b, absl::string_view table,
                                 char* out) {
  CellReader x(a);
  CellReader y(b);
  bool has_x = x.Next();
  bool has_y = y.Next();
  char* const begin = out;
  uint64_t previous = 0;
  bool first = true;
  auto put = [&](uint64_t offset, uint64_t sum) {
    out = PutVarint(first ? offset : offset - previous, out);
    out = PutVarint(sum, out);
    previous = offset;
    first = false;
  };
  while (has_x || has_y) {
    if (!has_y || (has_x && x.offset() < y.offset())) {
      put(x.offset(), x.sum());
      has_x = x.Next();
    } else if (!has_x || y.offset() < x.offset()) {
      put(y.offset(), y.sum());
      has_y = y.Next();
    } else {
      if (x.sum() > static_cast<uint64_t>(INT64_MAX) - y.sum()) {
        return absl::DataLossError(absl::StrCat(table, ": a counter's sum past 2^63 - 1"));
      }
      put(x.offset(), x.sum() + y.sum());
      has_x = x.Next();
      has_y = y.Next();
    }
  }
  for (const CellReader* r : {&x, &y}) {
    if (r->error() != nullptr) return Malformed(*r, table);
  }
  return static_cast<size_t>(out - begin);
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
  const absl::string_view stored = blob(argv[0]);
  const absl::string_view added = blob(argv[1]);
  // The result is written straight into the buffer SQLite takes over (no copy).
  char* out = static_cast<char*>(sqlite3_malloc64(stored.size() + added.size() + 1));
  if (out == nullptr) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  absl::StatusOr<size_t> merged = MergeInto(stored, added, "counter_chunks", out);
  if (!merged.ok()) {
    sqlite3_free(out);
    const std::string message(merged.status().message());
    sqlite3_result_error(ctx, message.c_str(), -1);
    sqlite3_result_error_code(ctx, SQLITE_CORRUPT);
    return;
  }
  sqlite3_result_blob64(ctx, out, *merged, sqlite3_free);
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
  CellReader r(blob);
  while (r.Next()) each(static_cast<uint32_t>(r.offset()), static_cast<int64_t>(r.sum()));
  if (r.error() != nullptr) return Malformed(r, table);
  return absl::OkStatus();
}

absl::Status DecodeCounterDelta(absl::string_view blob, absl::string_view table,
                                absl::FunctionRef<void(uint32_t counter, int64_t sum)> each) {
  CellReader r(blob, static_cast<uint64_t>(kMaxCounterLayoutLength));
  while (r.Next()) each(static_cast<uint32_t>(r.offset()), static_cast<int64_t>(r.sum()));
  if (r.error() != nullptr) return Malformed(r, table);
  return absl::OkStatus();
}

absl::StatusOr<std::string> MergeCounterChunks(absl::string_view a, absl::string_view b,
                                               absl::string_view table) {
  std::string out(a.size() + b.size(), '\0');
  DENIABLE_ASSIGN_OR_RETURN(size_t size, MergeInto(a, b, table, out.data()));
  out.resize(size);
  return out;
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
