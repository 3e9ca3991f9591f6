#include "deniable/client/secure_bit_gen.h"

#include <set>

#include "absl/random/bit_gen_ref.h"
#include "absl/random/distributions.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace secure_bit_gen_test {

TEST(SecureBitGenTest, DrawsDoNotRepeatAcrossBufferRefills) {
  SecureBitGen gen;
  std::set<uint64_t> seen;
  for (int i = 0; i < 5000; ++i) seen.insert(gen());  // ten buffers
  // Any repeat among 5000 uniform 64-bit draws has probability below 1e-12.
  EXPECT_EQ(seen.size(), 5000u);
}

TEST(SecureBitGenTest, WorksAsBitGenRefForDistributions) {
  SecureBitGen gen;
  absl::BitGenRef ref(gen);
  EXPECT_FALSE(absl::Bernoulli(ref, 0.0));
  EXPECT_TRUE(absl::Bernoulli(ref, 1.0));
  const int x = absl::Uniform(ref, 3, 4);
  EXPECT_EQ(x, 3);
}

TEST(SecureBitGenTest, TwoGeneratorsDiffer) {
  SecureBitGen a, b;
  EXPECT_NE(a(), b());
}

}  // namespace secure_bit_gen_test
}  // namespace
}  // namespace deniable::client
