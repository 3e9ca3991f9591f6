// Gauges read when /metrics is scraped: the group-commit queue, the database's size on disk, the
// process's resident memory, and the build.
//
//   deniable_commit_queue_calls        calls waiting for the group committer
//   deniable_database_bytes            the SQLite file plus its -wal file, in bytes
//   process_resident_memory_bytes      RSS from /proc/self/statm
//   deniable_build_info{version}       always 1
//
// Thread-safe (Update may run on several scrapes at once).
#ifndef DENIABLE_SERVER_METRICS_PROCESS_METRICS_H_
#define DENIABLE_SERVER_METRICS_PROCESS_METRICS_H_

#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <functional>
#include <string>

namespace deniable::server {

class ProcessMetrics {
 public:
  // `queue_depth` returns the calls waiting to be committed (null: the gauge stays 0);
  // `db_path` is the SQLite file ("" or ":memory:": the size gauge stays 0).
  ProcessMetrics(prometheus::Registry& registry, std::string db_path,
                 std::function<int()> queue_depth, const std::string& version);

  // Sets the gauges to their current values.
  void Update();

 private:
  const std::string db_path_;
  const std::function<int()> queue_depth_;
  prometheus::Gauge& queue_;
  prometheus::Gauge& db_bytes_;
  prometheus::Gauge& rss_;
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_METRICS_PROCESS_METRICS_H_
