#include "server/storage/postgres/postgres_counter_sums.h"

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/status_macros.h"
#include "server/storage/counter_chunks.h"

namespace deniable::server {
namespace {

// "{a,b,c}" of `values`.
template <typename T>
std::string ArrayText(const std::vector<T>& values) {
  std::string out = "{";
  for (size_t i = 0; i < values.size(); ++i) absl::StrAppend(&out, i ? "," : "", values[i]);
  out += "}";
  return out;
}

// The integers of PostgreSQL's text form of a one-dimensional integer array ("{1,2}", "{}").
bool ParseIntArray(absl::string_view text, std::vector<int64_t>* out) {
  out->clear();
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return false;
  text = text.substr(1, text.size() - 2);
  if (text.empty()) return true;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) return false;
    out->push_back(v);
  }
  return true;
}

}  // namespace

absl::Status AddPostgresCounterSums(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard) {
  // (metric, event time, version, labels, window, chunk) -> offset -> its sum, in key order.
  using Key = std::tuple<int64_t, int64_t, int64_t, std::string, int64_t, int64_t>;
  std::map<Key, std::map<uint32_t, int64_t>> delta;
  for (const ReportRow* row : rows) {
    auto add = [&](int64_t win, uint32_t j) {
      ++delta[{row->metric_id, row->event_time_seconds, int64_t{row->design_version}, row->labels,
               win, j / kCounterChunkCounters}][j % kCounterChunkCounters];
    };
    for (uint32_t j : row->counters) {
      if (j != 0) add(-1, j);  // counter 0: counts.counter0
    }
    ForEachWindowFirst(row->window_firsts, row->counters, [&](int w, int counter) {
      if (counter >= 1) add(w, static_cast<uint32_t>(counter));  // n and counter 0: first_counts
    });
  }
  if (delta.empty()) return absl::OkStatus();
  std::vector<int64_t> metric, time, version, win, chunk;
  std::vector<std::string> labels, offsets, sums;
  for (const auto& [key, cells] : delta) {
    metric.push_back(std::get<0>(key));
    time.push_back(std::get<1>(key));
    version.push_back(std::get<2>(key));
    labels.push_back(std::get<3>(key));
    win.push_back(std::get<4>(key));
    chunk.push_back(std::get<5>(key));
    std::vector<uint32_t> o;
    std::vector<int64_t> s;
    o.reserve(cells.size());
    s.reserve(cells.size());
    for (const auto& [offset, sum] : cells) {
      o.push_back(offset);
      s.push_back(sum);
    }
    offsets.push_back(ArrayText(o));
    sums.push_back(ArrayText(s));
  }
  return conn
      .ExecPrepared(
          "deniable_add_chunks",
          absl::StrCat(
              "INSERT INTO counter_chunks AS t(metric_id, event_time, version, labels, shard, win, "
              "chunk, offsets, sums) SELECT m, e, v, l, $9, w, c, o::integer[], s::bigint[] FROM "
              "unnest($1::bigint[], $2::bigint[], $3::integer[], $4::text[], $5::integer[], "
              "$6::integer[], $7::text[], $8::text[]) AS u(m, e, v, l, w, c, o, s) "
              "ON CONFLICT (metric_id, event_time, version, labels, shard, win, chunk) DO UPDATE "
              "SET ",
              kMergeCounterChunk),
          {PgIntArray(metric), PgIntArray(time), PgIntArray(version), PgTextArray(labels),
           PgIntArray(win), PgIntArray(chunk), PgTextArray(offsets), PgTextArray(sums),
           absl::StrCat(shard)})
      .status();
}

absl::Status AddPostgresFirstCounts(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard) {
  // (metric, event time, version, labels, window, counter; -1: n) -> count, in key order.
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string, int64_t, int64_t>, int64_t> delta;
  for (const ReportRow* row : rows) {
    ForEachWindowFirst(row->window_firsts, row->counters, [&](int w, int counter) {
      if (counter >= 1) return;  // counter_chunks
      ++delta[{row->metric_id, row->event_time_seconds, int64_t{row->design_version}, row->labels,
               w, counter}];
    });
  }
  if (delta.empty()) return absl::OkStatus();
  std::vector<int64_t> metric, time, version, win, counter, count;
  std::vector<std::string> labels;
  for (const auto& [key, n] : delta) {
    metric.push_back(std::get<0>(key));
    time.push_back(std::get<1>(key));
    version.push_back(std::get<2>(key));
    labels.push_back(std::get<3>(key));
    win.push_back(std::get<4>(key));
    counter.push_back(std::get<5>(key));
    count.push_back(n);
  }
  return conn
      .Exec(
          "INSERT INTO first_counts(metric_id, event_time, version, labels, shard, win, counter, "
          "count) SELECT m, t, v, l, $8, w, c, n FROM unnest($1::bigint[], $2::bigint[], "
          "$3::integer[], $4::text[], $5::integer[], $6::integer[], $7::bigint[]) AS u(m, t, v, "
          "l, w, c, n) ON CONFLICT (metric_id, event_time, version, labels, shard, win, counter) "
          "DO UPDATE SET count = first_counts.count + EXCLUDED.count",
          {PgIntArray(metric), PgIntArray(time), PgIntArray(version), PgTextArray(labels),
           PgIntArray(win), PgIntArray(counter), PgIntArray(count), absl::StrCat(shard)})
      .status();
}

absl::Status DecodePostgresChunk(int64_t metric_id, int64_t win, int64_t chunk,
                                 absl::string_view offsets, absl::string_view sums,
                                 absl::FunctionRef<void(uint32_t counter, int64_t sum)> each) {
  auto bad = [&](absl::string_view what) {
    return absl::DataLossError(absl::StrCat("counter_chunks: metric ", metric_id, ", window ", win,
                                            ", chunk ", chunk, ": ", what));
  };
  constexpr int64_t kChunks =
      (deniable::kMaxCounterLayoutLength + kCounterChunkCounters - 1) / kCounterChunkCounters;
  if (win < -1 || win > 2) return bad("window outside [-1, 2]");
  if (chunk < 0 || chunk >= kChunks) return bad("chunk past the largest layout");
  std::vector<int64_t> o, s;
  if (!ParseIntArray(offsets, &o) || !ParseIntArray(sums, &s) || o.size() != s.size()) {
    return bad("offsets and sums are not two integer arrays of one length");
  }
  for (size_t i = 0; i < o.size(); ++i) {
    if (o[i] < 0 || o[i] >= kCounterChunkCounters || (i > 0 && o[i] <= o[i - 1])) {
      return bad(absl::StrCat("offset ", o[i], " outside [0, ", kCounterChunkCounters,
                              ") or not ascending"));
    }
    const int64_t counter = chunk * kCounterChunkCounters + o[i];
    if (counter >= deniable::kMaxCounterLayoutLength)
      return bad("a counter past the largest layout");
    if (counter == 0 && win == -1) return bad("counter 0 (it is counts.counter0)");
    if (s[i] < 1) return bad(absl::StrCat("sum ", s[i], " of offset ", o[i], " below 1"));
  }
  for (size_t i = 0; i < o.size(); ++i) {
    each(static_cast<uint32_t>(chunk * kCounterChunkCounters + o[i]), s[i]);
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
