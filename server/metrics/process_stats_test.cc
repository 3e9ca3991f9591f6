#include "server/metrics/process_stats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace deniable::server {
namespace {
namespace process_stats_test {

using ::testing::HasSubstr;

// A /proc/<pid>/stat line (proc(5)) whose command name holds spaces and parentheses: utime 250,
// stime 150, starttime 12345, vsize 104857600, rss 2560.
constexpr char kStat[] =
    "4242 (deniable (x) y) S 1 4242 4242 0 -1 4194560 9000 0 0 0 250 150 0 0 20 0 33 0 12345 "
    "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 4096 1260 0 0 0 17 1 0 0 0 0 0\n";

TEST(ParseProcStatTest, ReadsTheCollectorFieldsInTheirUnits) {
  const ProcUnits units{.ticks_per_second = 100, .page_bytes = 4096, .boot_time_seconds = 1000};
  absl::StatusOr<ProcessStats> s = ParseProcStat(kStat, units);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->cpu_seconds, 4.0);  // (250 + 150) / 100
  EXPECT_DOUBLE_EQ(s->start_time_seconds, 1000 + 123.45);
  EXPECT_DOUBLE_EQ(s->virtual_bytes, 104857600);
  EXPECT_DOUBLE_EQ(s->resident_bytes, 2560.0 * 4096);
  EXPECT_EQ(s->open_fds, 0);  // not in the stat line
}

TEST(ParseProcStatTest, RefusesATruncatedLine) {
  absl::StatusOr<ProcessStats> s = ParseProcStat("4242 (x) S 1 2 3", ProcUnits());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("proc stat"));
  EXPECT_FALSE(ParseProcStat("no name at all", ProcUnits()).ok());
}

TEST(ParseBootTimeTest, FindsTheBtimeLine) {
  EXPECT_EQ(*ParseBootTime("cpu  1 2 3\nintr 5\nbtime 1793491200\nprocesses 9\n"), 1793491200);
  EXPECT_FALSE(ParseBootTime("cpu  1 2 3\n").ok());
}

TEST(ReadProcessStatsTest, ReadsThisProcess) {
  absl::StatusOr<ProcessStats> s = ReadProcessStats();
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(s->start_time_seconds, 1e9);  // after 2001: a Unix time, not ticks since boot
  EXPECT_GT(s->resident_bytes, 0);
  EXPECT_GE(s->virtual_bytes, s->resident_bytes);
  EXPECT_GE(s->open_fds, 3);  // stdin, stdout, stderr at least
  EXPECT_GE(s->max_fds, s->open_fds);
}

}  // namespace process_stats_test
}  // namespace
}  // namespace deniable::server
