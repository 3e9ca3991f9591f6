// The figures of the standard Prometheus process collector (the `process_*` metrics every
// Prometheus client library exports), read from Linux's /proc for this process.
//
// Example:
//   absl::StatusOr<ProcessStats> stats = ReadProcessStats();
//   if (stats.ok()) cpu.Set(stats->cpu_seconds);
//
// Free functions; thread-safe (each read opens its own files).
#ifndef DENIABLE_SERVER_METRICS_PROCESS_STATS_H_
#define DENIABLE_SERVER_METRICS_PROCESS_STATS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deniable::server {

// The process's figures, with the units of their Prometheus names.
struct ProcessStats {
  double cpu_seconds = 0;         // user + system CPU time since the process started
  double start_time_seconds = 0;  // when the process started, Unix seconds
  double virtual_bytes = 0;       // virtual memory size
  double resident_bytes = 0;      // resident set size
  double open_fds = 0;            // open file descriptors
  double max_fds = 0;             // the soft limit on open file descriptors (RLIMIT_NOFILE)
};

// What the host's constants turn /proc/self/stat's fields into.
struct ProcUnits {
  int64_t ticks_per_second = 100;  // sysconf(_SC_CLK_TCK)
  int64_t page_bytes = 4096;       // sysconf(_SC_PAGESIZE)
  int64_t boot_time_seconds = 0;   // "btime" of /proc/stat, Unix seconds
};

// Parses the text of /proc/<pid>/stat (proc(5)): utime (field 14) + stime (15) in ticks,
// starttime (22) in ticks since boot, vsize (23) in bytes, rss (24) in pages. The command name
// (field 2) is read up to its last ")", so a name holding spaces or parentheses is no trouble.
// Sets cpu_seconds, start_time_seconds, virtual_bytes and resident_bytes; leaves the others 0.
// Errors: INVALID_ARGUMENT "proc stat: ..." when a field is missing or not a number.
absl::StatusOr<ProcessStats> ParseProcStat(absl::string_view stat, const ProcUnits& units);

// The "btime" line of /proc/stat (boot time, Unix seconds). Errors: INVALID_ARGUMENT when absent.
absl::StatusOr<int64_t> ParseBootTime(absl::string_view proc_stat);

// Reads this process's figures from /proc/self/stat, /proc/stat, /proc/self/fd and getrlimit.
// Errors: NOT_FOUND when /proc is not mounted (not Linux); those of the parsers.
absl::StatusOr<ProcessStats> ReadProcessStats();

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_METRICS_PROCESS_STATS_H_
