#include "server/storage/sqlite/moved_ids_filter.h"

#include <random>

#include "gtest/gtest.h"
#include "server/storage/storage_test_util.h"

namespace deniable::server {
namespace {
namespace moved_ids_filter_test {

using testing_util::RandomReportId;

TEST(MovedIdsFilterTest, EmptyFilterRulesEverythingOut) {
  MovedIdsFilter filter;
  std::mt19937_64 gen(1);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(filter.MayContain(RandomReportId(gen)));
}

// 300 000 ids fill three segments (65 536, 131 072 and 262 144 ids): none is ever ruled out, and
// of 100 000 other ids fewer than 1 % pass (about 0.1 % per segment expected).
TEST(MovedIdsFilterTest, NeverRulesOutAnAddedIdAndPassesFewOthers) {
  MovedIdsFilter filter;
  std::mt19937_64 gen(25);  // seeded: the same ids every run
  std::vector<ReportId> added;
  for (int i = 0; i < 300'000; ++i) {
    added.push_back(RandomReportId(gen));
    filter.Add(added.back());
  }
  int missed = 0;
  for (const ReportId& id : added) missed += filter.MayContain(id) ? 0 : 1;
  EXPECT_EQ(missed, 0);
  int passed = 0;
  constexpr int kOthers = 100'000;
  for (int i = 0; i < kOthers; ++i) passed += filter.MayContain(RandomReportId(gen)) ? 1 : 0;
  EXPECT_LT(passed, kOthers / 100) << passed << " of " << kOthers << " other ids passed";
  EXPECT_LT(filter.bytes(), 300'000 * 4) << "more than 4 bytes per id";
}

}  // namespace moved_ids_filter_test
}  // namespace
}  // namespace deniable::server
