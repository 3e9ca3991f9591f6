#include "server/storage/sqlite/recent_hours.h"

#include <memory>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace recent_hours_test {

using testing_util::RandomReportId;

// A move's chunk leaves the recent set and enters the hour's moved-ids filter, every id of it
// (more ids than the prefetch distance, and a last few within it); the other ids stay.
TEST(RecentHoursTest, MoveOutErasesTheIdsAndAddsThemToTheFilter) {
  RecentHours recent;
  const HourKey key{7, 3600};
  RecentHours::Hour& hour = recent.Create(key, /*may_have_sorted_rows=*/false);
  hour.moved = std::make_unique<MovedIdsFilter>();
  std::mt19937_64 gen(25);  // seeded: the same ids every run
  std::vector<ReportId> ids;
  for (int i = 0; i < 1000; ++i) {
    ids.push_back(RandomReportId(gen));
    RecentHours::Prefetch(hour, ids.back());  // a hint only: the id is still absent
    ASSERT_TRUE(recent.TryInsert(key, hour, ids.back()));
  }
  recent.Commit();
  const std::vector<ReportId> moved(ids.begin(), ids.begin() + 603);
  recent.MoveOut(hour, moved);
  EXPECT_EQ(recent.size(), 397);
  EXPECT_EQ(hour.ids.size(), 397u);
  for (const ReportId& id : moved) {
    EXPECT_FALSE(hour.ids.contains(id));
    EXPECT_TRUE(hour.moved->MayContain(id));
  }
  for (size_t i = moved.size(); i < ids.size(); ++i) EXPECT_TRUE(hour.ids.contains(ids[i]));
  EXPECT_FALSE(recent.TryInsert(key, hour, ids.back())) << "a recent id is still a duplicate";
}

// An hour without a filter (it had rows in the keyed table before this process saw it): the ids
// only leave the recent set.
TEST(RecentHoursTest, MoveOutWithoutAFilterOnlyErases) {
  RecentHours recent;
  const HourKey key{7, 7200};
  RecentHours::Hour& hour = recent.Create(key, /*may_have_sorted_rows=*/true);
  std::mt19937_64 gen(26);
  std::vector<ReportId> ids;
  for (int i = 0; i < 20; ++i) {
    ids.push_back(RandomReportId(gen));
    ASSERT_TRUE(recent.TryInsert(key, hour, ids.back()));
  }
  recent.MoveOut(hour, ids);
  EXPECT_EQ(recent.size(), 0);
  EXPECT_TRUE(hour.ids.empty());
  EXPECT_EQ(hour.moved, nullptr);
}

}  // namespace recent_hours_test
}  // namespace
}  // namespace deniable::server
