// Gauges read when /metrics is scraped: the group-commit queue, the database's size on disk, the
// build, and the standard process collector's metrics (the names every Prometheus client library
// exports, so the usual dashboards and alerts work unchanged):
//
//   deniable_commit_queue_calls        calls waiting for the group committer
//   deniable_database_bytes            the SQLite file plus its -wal file, in bytes
//   deniable_build_info{version}       always 1
//   process_start_time_seconds         when the process started, Unix seconds
//   process_cpu_seconds_total          user + system CPU time (counter)
//   process_resident_memory_bytes      resident set size
//   process_virtual_memory_bytes       virtual memory size
//   process_open_fds                   open file descriptors
//   process_max_fds                    the soft limit on open file descriptors
//
// The process figures come from /proc (process_stats.h); where /proc cannot be read they stay 0.
// Thread-safe (Update may run on several scrapes at once).
#ifndef DENIABLE_SERVER_METRICS_PROCESS_METRICS_H_
#define DENIABLE_SERVER_METRICS_PROCESS_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <functional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace deniable::server {

class ProcessMetrics {
 public:
  // Registers the metrics above in `registry` (which must outlive this object) and reads the
  // process figures once. `queue_depth` returns the calls waiting to be committed (null: the
  // gauge stays 0); `db_path` is the SQLite file ("" or ":memory:": the size gauge stays 0).
  ProcessMetrics(prometheus::Registry& registry, std::string db_path,
                 std::function<int()> queue_depth, const std::string& version);

  // Sets the gauges to their current values.
  void Update();

 private:
  const std::string db_path_;
  const std::function<int()> queue_depth_;
  prometheus::Gauge& queue_;
  prometheus::Gauge& db_bytes_;
  prometheus::Gauge& start_time_;
  prometheus::Counter& cpu_;
  prometheus::Gauge& rss_;
  prometheus::Gauge& virtual_;
  prometheus::Gauge& open_fds_;
  prometheus::Gauge& max_fds_;
  absl::Mutex cpu_mu_;
  double cpu_seen_ ABSL_GUARDED_BY(cpu_mu_) = 0;  // what cpu_ has counted so far
};

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_METRICS_PROCESS_METRICS_H_
