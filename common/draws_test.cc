#include "deniable/common/draws.h"

#include <random>
#include <vector>

#include "absl/random/distributions.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace draws_test {

TEST(UniformDrawsTest, FollowsTheGoldenVectorContract) {
  const std::vector<double> u = {0.25, 0.25, 0.999999, 0.5, 0.0};
  UniformDraws draws(u);
  EXPECT_FALSE(draws.Bernoulli(0.25));  // u < p, strictly
  EXPECT_TRUE(draws.Bernoulli(0.2500001));
  EXPECT_EQ(draws.Below(10), 9u);      // floor(9.99999)
  EXPECT_EQ(draws.Between(1, 4), 3u);  // 1 + floor(0.5 * 4)
  EXPECT_EQ(draws.Below(7), 0u);
  EXPECT_EQ(draws.used(), 5u);
  EXPECT_FALSE(draws.exhausted());
  EXPECT_EQ(draws.Below(3), 0u);  // past the end
  EXPECT_TRUE(draws.exhausted());
}

TEST(BitGenDrawsTest, MakesTheAbslDrawsOfTheSameGenerator) {
  std::mt19937_64 a(3), b(3);
  BitGenDraws draws(a);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(draws.Bernoulli(0.3), absl::Bernoulli(b, 0.3));
    EXPECT_EQ(draws.Below(17), absl::Uniform<uint32_t>(b, 0u, 17u));
    EXPECT_EQ(draws.Between(1, 2147483646u),
              absl::Uniform(absl::IntervalClosedClosed, b, 1u, 2147483646u));
  }
}

}  // namespace draws_test
}  // namespace
}  // namespace deniable
