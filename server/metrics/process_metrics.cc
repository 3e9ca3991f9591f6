#include "server/metrics/process_metrics.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/status/statusor.h"
#include "server/metrics/process_stats.h"

namespace deniable::server {
namespace {

prometheus::Gauge& NewGauge(prometheus::Registry& registry, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add({});
}

double FileBytes(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  return error ? 0 : static_cast<double>(size);
}

}  // namespace

ProcessMetrics::ProcessMetrics(prometheus::Registry& registry, std::string db_path,
                               std::function<int()> queue_depth, const std::string& version)
    : db_path_(std::move(db_path)),
      queue_depth_(std::move(queue_depth)),
      queue_(NewGauge(registry, "deniable_commit_queue_calls",
                      "Report batches waiting for the group committer")),
      db_bytes_(NewGauge(registry, "deniable_database_bytes",
                         "Size of the SQLite database file and its write-ahead log, in bytes")),
      start_time_(NewGauge(registry, "process_start_time_seconds",
                           "Start time of the process since unix epoch in seconds")),
      cpu_(prometheus::BuildCounter()
               .Name("process_cpu_seconds_total")
               .Help("Total user and system CPU time spent in seconds")
               .Register(registry)
               .Add({})),
      rss_(NewGauge(registry, "process_resident_memory_bytes", "Resident memory size in bytes")),
      virtual_(NewGauge(registry, "process_virtual_memory_bytes", "Virtual memory size in bytes")),
      open_fds_(NewGauge(registry, "process_open_fds", "Number of open file descriptors")),
      max_fds_(NewGauge(registry, "process_max_fds", "Maximum number of open file descriptors")) {
  prometheus::BuildGauge()
      .Name("deniable_build_info")
      .Help("Always 1; the labels name the build")
      .Register(registry)
      .Add({{"version", version}})
      .Set(1);
  Update();
}

void ProcessMetrics::Update() {
  if (queue_depth_) queue_.Set(queue_depth_());
  if (!db_path_.empty() && db_path_ != ":memory:") {
    db_bytes_.Set(FileBytes(db_path_) + FileBytes(db_path_ + "-wal"));
  }
  const absl::StatusOr<ProcessStats> stats = ReadProcessStats();
  if (!stats.ok()) return;
  start_time_.Set(stats->start_time_seconds);
  rss_.Set(stats->resident_bytes);
  virtual_.Set(stats->virtual_bytes);
  open_fds_.Set(stats->open_fds);
  max_fds_.Set(stats->max_fds);
  absl::MutexLock lock(&cpu_mu_);  // a counter only grows: add what is new since the last read
  if (stats->cpu_seconds > cpu_seen_) {
    cpu_.Increment(stats->cpu_seconds - cpu_seen_);
    cpu_seen_ = stats->cpu_seconds;
  }
}

}  // namespace deniable::server
