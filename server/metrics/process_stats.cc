#include "server/metrics/process_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "deniable/common/status_macros.h"

namespace deniable::server {
namespace {

absl::StatusOr<std::string> ReadFile(const char* path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

absl::StatusOr<ProcessStats> ParseProcStat(absl::string_view stat, const ProcUnits& units) {
  const size_t name_end = stat.rfind(')');
  if (name_end == absl::string_view::npos) {
    return absl::InvalidArgumentError("proc stat: no \")\" closing the command name");
  }
  // Fields from 3 (state) on; fields[i] is field i + 3.
  const std::vector<absl::string_view> fields =
      absl::StrSplit(stat.substr(name_end + 1), ' ', absl::SkipEmpty());
  const auto field = [&fields](int number, int64_t* value) {
    const size_t i = static_cast<size_t>(number - 3);
    return i < fields.size() && absl::SimpleAtoi(absl::StripAsciiWhitespace(fields[i]), value);
  };
  int64_t utime = 0, stime = 0, start_ticks = 0, vsize = 0, rss = 0;
  if (!field(14, &utime) || !field(15, &stime) || !field(22, &start_ticks) || !field(23, &vsize) ||
      !field(24, &rss)) {
    return absl::InvalidArgumentError(
        absl::StrCat("proc stat: fields 14, 15, 22, 23 and 24 must be numbers, but ",
                     fields.size() + 2, " fields were read"));
  }
  const double ticks = static_cast<double>(units.ticks_per_second);
  ProcessStats s;
  s.cpu_seconds = static_cast<double>(utime + stime) / ticks;
  s.start_time_seconds =
      static_cast<double>(units.boot_time_seconds) + static_cast<double>(start_ticks) / ticks;
  s.virtual_bytes = static_cast<double>(vsize);
  s.resident_bytes = static_cast<double>(rss) * static_cast<double>(units.page_bytes);
  return s;
}

absl::StatusOr<int64_t> ParseBootTime(absl::string_view proc_stat) {
  for (absl::string_view line : absl::StrSplit(proc_stat, '\n')) {
    int64_t seconds = 0;
    if (absl::ConsumePrefix(&line, "btime ") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &seconds)) {
      return seconds;
    }
  }
  return absl::InvalidArgumentError("proc stat: no btime line");
}

absl::StatusOr<ProcessStats> ReadProcessStats() {
  DENIABLE_ASSIGN_OR_RETURN(const std::string self_stat, ReadFile("/proc/self/stat"));
  DENIABLE_ASSIGN_OR_RETURN(const std::string host_stat, ReadFile("/proc/stat"));
  ProcUnits units;
  units.ticks_per_second = sysconf(_SC_CLK_TCK);
  units.page_bytes = sysconf(_SC_PAGESIZE);
  DENIABLE_ASSIGN_OR_RETURN(units.boot_time_seconds, ParseBootTime(host_stat));
  DENIABLE_ASSIGN_OR_RETURN(ProcessStats s, ParseProcStat(self_stat, units));
  std::error_code error;
  int64_t open = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", error), end; !error && it != end;
       it.increment(error)) {
    ++open;
  }
  s.open_fds = static_cast<double>(open);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) s.max_fds = static_cast<double>(limit.rlim_cur);
  return s;
}

}  // namespace deniable::server
