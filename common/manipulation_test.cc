// The manipulation bound (manipulation.h): exact values for the issue-41 example and the edges.
#include "deniable/common/manipulation.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace manipulation_test {

using ::testing::HasSubstr;

constexpr Channel kTwoCoin{0.75, 0.25};

TEST(ManipulationTest, DefaultIsOnePercentRoundedUp) {
  EXPECT_EQ(DefaultManipulationReports(0), 1);
  EXPECT_EQ(DefaultManipulationReports(1), 1);
  EXPECT_EQ(DefaultManipulationReports(100), 1);
  EXPECT_EQ(DefaultManipulationReports(101), 2);
  EXPECT_EQ(DefaultManipulationReports(400), 4);
}

// Issue 41: 200 honest reports (70 with bit 1: estimate 0.20) and 200 fakes with bit 1, so 400
// reports with 270 ones, estimate 0.85. Bounded for the 200 fakes, the honest estimate may be
// as low as 0.20: the bound finds the truth the fakes hid.
TEST(ManipulationTest, IssueExampleRecoversTheHonestEstimate) {
  auto s = BinaryManipulation(kTwoCoin, 400, 270, 200);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->fake_reports, 200);
  EXPECT_DOUBLE_EQ(s->shift_up, 0.65);
  EXPECT_DOUBLE_EQ(s->honest_lower, 0.20);
  EXPECT_DOUBLE_EQ(s->shift_down, 0.65);  // honest share 1: estimate 1.5
  EXPECT_DOUBLE_EQ(s->bound, 0.65);
  EXPECT_DOUBLE_EQ(s->uniform, 1.0);  // m / (n (a - b)) = 200 / (400 * 0.5)
  auto mean = MeanManipulation(0.85, 400, 200, -0.5, 1.5);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_DOUBLE_EQ(mean->shift_up, 0.65);
  EXPECT_DOUBLE_EQ(mean->shift_down, 0.65);  // capped: the honest mean stays <= 1.5
}

TEST(ManipulationTest, OnePercentOfTheExample) {
  auto s = BinaryManipulation(kTwoCoin, 400, 270, 4);
  ASSERT_TRUE(s.ok()) << s.status();
  // m (1 - lambda) / ((n - m)(a - b)) and m lambda / ((n - m)(a - b)), lambda = 0.675.
  EXPECT_NEAR(s->shift_up, 4 * 0.325 / (396 * 0.5), 1e-15);
  EXPECT_NEAR(s->shift_down, 4 * 0.675 / (396 * 0.5), 1e-15);
  EXPECT_DOUBLE_EQ(s->bound, s->shift_down);
  EXPECT_DOUBLE_EQ(s->uniform, 0.02);
  auto mean = MeanManipulation(0.85, 400, 4, -0.5, 1.5);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_NEAR(mean->shift_up, s->shift_up, 1e-15);
  EXPECT_NEAR(mean->shift_down, s->shift_down, 1e-15);
}

// Fewer ones than fakes: at most `yes` of the fakes carried bit 1, so the exact bound is below
// the mean form's uncapped figure.
TEST(ManipulationTest, ExactBoundCountsTheBitsPresent) {
  auto s = BinaryManipulation(Channel{1.0, 0.0}, 100, 3, 10);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->shift_up, 0.03);  // all 3 ones fake: honest share 0
  EXPECT_DOUBLE_EQ(s->shift_down, 3.0 / 90 - 0.03);
  EXPECT_DOUBLE_EQ(s->uniform, 0.1);
}

TEST(ManipulationTest, AllFakeLeavesTheWholeRange) {
  auto s = BinaryManipulation(kTwoCoin, 10, 5, 10);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_DOUBLE_EQ(s->honest_lower, -0.5);
  EXPECT_DOUBLE_EQ(s->honest_upper, 1.5);
  EXPECT_DOUBLE_EQ(s->uniform, 2.0);
  auto mean = MeanManipulation(0.5, 10, 50, 0.0, 1.0);
  ASSERT_TRUE(mean.ok()) << mean.status();
  EXPECT_DOUBLE_EQ(mean->honest_lower, 0.0);
  EXPECT_DOUBLE_EQ(mean->honest_upper, 1.0);
  EXPECT_DOUBLE_EQ(mean->uniform, 1.0);
}

TEST(ManipulationTest, MeanScalesWithTheRange) {
  // A ONE_BIT_MEAN mean in [0, 1000] ms: the bound is the bit's times hi - lo.
  auto bit = MeanManipulation(0.3, 1000, 10, -0.5, 1.5);
  auto ms = MeanManipulation(300.0, 1000, 10, -500.0, 1500.0);
  ASSERT_TRUE(bit.ok() && ms.ok());
  EXPECT_NEAR(ms->shift_up, 1000 * bit->shift_up, 1e-9);
  EXPECT_NEAR(ms->shift_down, 1000 * bit->shift_down, 1e-9);
  EXPECT_DOUBLE_EQ(bit->shift_up, 10 * 1.2 / 990);
}

TEST(ManipulationTest, NoFakesNoShift) {
  auto s = BinaryManipulation(kTwoCoin, 50, 20, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->bound, 0);
  EXPECT_EQ(s->uniform, 0);
}

TEST(ManipulationTest, BadInputNamesTheField) {
  EXPECT_THAT(BinaryManipulation(kTwoCoin, 0, 0, 1).status().message(), HasSubstr("n:"));
  EXPECT_THAT(BinaryManipulation(kTwoCoin, 10, 11, 1).status().message(), HasSubstr("yes:"));
  EXPECT_THAT(BinaryManipulation(kTwoCoin, 10, 1, -1).status().message(),
              HasSubstr("fake_reports:"));
  EXPECT_THAT(BinaryManipulation(Channel{0.3, 0.3}, 10, 1, 1).status().message(),
              HasSubstr("channel:"));
  EXPECT_THAT(MeanManipulation(0, 10, 1, 1.0, 1.0).status().message(), HasSubstr("lo:"));
  EXPECT_EQ(MeanManipulation(0, 10, -2, 0, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace manipulation_test
}  // namespace
}  // namespace deniable
