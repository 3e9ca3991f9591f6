#include "server/storage/postgres_counter_sums.h"

#include <map>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::Status AddPostgresCounterSums(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard) {
  // (metric, event time, version, labels, counter) -> its sum, in key order.
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string, int64_t>, int64_t> delta;
  for (const ReportRow* row : rows) {
    for (uint32_t j : row->counters) {
      if (j == 0) continue;  // counts.counter0
      ++delta[{row->metric_id, row->event_time_seconds, row->design_version, row->labels, j}];
    }
  }
  if (delta.empty()) return absl::OkStatus();
  std::vector<int64_t> metric, time, version, counter, total;
  std::vector<std::string> labels;
  for (const auto& [key, count] : delta) {
    metric.push_back(std::get<0>(key));
    time.push_back(std::get<1>(key));
    version.push_back(std::get<2>(key));
    labels.push_back(std::get<3>(key));
    counter.push_back(std::get<4>(key));
    total.push_back(count);
  }
  return conn
      .Exec(
          "INSERT INTO counter_sums(metric_id, event_time, version, labels, shard, counter, "
          "total) SELECT m, t, v, l, $7, c, s FROM unnest($1::bigint[], $2::bigint[], "
          "$3::integer[], $4::text[], $5::integer[], $6::bigint[]) AS u(m, t, v, l, c, s) "
          "ON CONFLICT (metric_id, event_time, version, labels, shard, counter) DO UPDATE "
          "SET total = counter_sums.total + EXCLUDED.total",
          {PgIntArray(metric), PgIntArray(time), PgIntArray(version), PgTextArray(labels),
           PgIntArray(counter), PgIntArray(total), absl::StrCat(shard)})
      .status();
}

absl::Status AddPostgresFirstCounts(PgConnection& conn, const std::vector<const ReportRow*>& rows,
                                    int shard) {
  // (metric, event time, version, labels, window, counter; -1: n) -> count, in key order.
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string, int64_t, int64_t>, int64_t> delta;
  for (const ReportRow* row : rows) {
    ForEachWindowFirst(row->window_firsts, row->counters, [&](int w, int counter) {
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

}  // namespace deniable::server
