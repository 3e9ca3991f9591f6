#include "server/metrics/process_metrics.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

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

double ResidentBytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  long pages = 0, resident = 0;
  const int read = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return read == 2 ? static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) : 0;
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
      rss_(NewGauge(registry, "process_resident_memory_bytes", "Resident memory size in bytes")) {
  prometheus::BuildGauge()
      .Name("deniable_build_info")
      .Help("Always 1; the labels name the build")
      .Register(registry)
      .Add({{"version", version}})
      .Set(1);
}

void ProcessMetrics::Update() {
  if (queue_depth_) queue_.Set(queue_depth_());
  if (!db_path_.empty() && db_path_ != ":memory:") {
    db_bytes_.Set(FileBytes(db_path_) + FileBytes(db_path_ + "-wal"));
  }
  rss_.Set(ResidentBytes());
}

}  // namespace deniable::server
