#include "server/storage/postgres_categories.h"

#include <map>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {

absl::Status AddPostgresCategoryCounts(PgConnection& conn,
                                       const std::vector<const ReportRow*>& rows, int shard) {
  // (metric, event time, version, labels, category) -> support, in key order.
  std::map<std::tuple<int64_t, int64_t, int64_t, std::string, int64_t>, int64_t> delta;
  for (const ReportRow* row : rows) {
    for (uint16_t v : row->supported) {
      ++delta[{row->metric_id, row->event_time_seconds, row->design_version, row->labels, v}];
    }
  }
  if (delta.empty()) return absl::OkStatus();
  std::vector<int64_t> metric, time, version, category, support;
  std::vector<std::string> labels;
  for (const auto& [key, count] : delta) {
    metric.push_back(std::get<0>(key));
    time.push_back(std::get<1>(key));
    version.push_back(std::get<2>(key));
    labels.push_back(std::get<3>(key));
    category.push_back(std::get<4>(key));
    support.push_back(count);
  }
  return conn
      .Exec(
          "INSERT INTO category_counts(metric_id, event_time, version, labels, shard, category, "
          "support) SELECT m, t, v, l, $7, c, s FROM unnest($1::bigint[], $2::bigint[], "
          "$3::integer[], $4::text[], $5::integer[], $6::bigint[]) AS u(m, t, v, l, c, s) "
          "ON CONFLICT (metric_id, event_time, version, labels, shard, category) DO UPDATE "
          "SET support = category_counts.support + EXCLUDED.support",
          {PgIntArray(metric), PgIntArray(time), PgIntArray(version), PgTextArray(labels),
           PgIntArray(category), PgIntArray(support), absl::StrCat(shard)})
      .status();
}

absl::Status ReadPostgresCategoryCounts(PgConnection& conn, int64_t metric_id,
                                        int64_t start_seconds, int64_t end_seconds,
                                        std::vector<CountRow>* rows) {
  DENIABLE_ASSIGN_OR_RETURN(
      PgResult r,
      conn.Exec("SELECT version, event_time, labels, category, sum(support)::bigint FROM "
                "category_counts WHERE metric_id = $1 AND event_time >= $2 AND event_time < $3 "
                "GROUP BY event_time, version, labels, category",
                {absl::StrCat(metric_id), absl::StrCat(start_seconds), absl::StrCat(end_seconds)}));
  if (r.rows() == 0) return absl::OkStatus();
  std::map<std::tuple<uint32_t, int64_t, std::string>, size_t> index;
  for (size_t i = 0; i < rows->size(); ++i) {
    const CountRow& row = (*rows)[i];
    index[{row.design_version, row.event_time_seconds, row.labels}] = i;
  }
  for (int i = 0; i < r.rows(); ++i) {
    auto it = index.find({static_cast<uint32_t>(r.Int64(i, 0)), r.Int64(i, 1), r.Text(i, 2)});
    if (it == index.end()) {
      return absl::DataLossError(absl::StrCat(
          "metric ", metric_id, ": category counts without counts in the PostgreSQL database"));
    }
    AddCategorySupport(&(*rows)[it->second].support, static_cast<size_t>(r.Int64(i, 3)),
                       r.Int64(i, 4));
  }
  return absl::OkStatus();
}

}  // namespace deniable::server
