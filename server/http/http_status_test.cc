#include "server/http/http_status.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::server::http {
namespace {
namespace http_status_test {

using ::testing::EndsWith;
using ::testing::HasSubstr;

TEST(ClipTextTest, KeepsShortTextAndCutsLongTextWithItsLength) {
  EXPECT_EQ(ClipText("abc", 3), "abc");
  EXPECT_EQ(ClipText("abcdef", 3), "abc... (6 bytes)");
}

TEST(ClipTextTest, NeverSplitsAUtf8Character) {
  // "é" is two bytes (C3 A9); a cut after its first byte backs off to before it.
  EXPECT_EQ(ClipText("ab\xC3\xA9z", 3), "ab... (5 bytes)");
}

TEST(ErrorBodyTest, ClipsAHugeMessageAndCarriesTheGivenHttpStatus) {
  const std::string body =
      ErrorBody(absl::InvalidArgumentError(std::string(1 << 20, 'x')), /*http_status=*/413);
  EXPECT_LT(body.size(), kMaxErrorMessageBytes + 200);
  EXPECT_THAT(body, HasSubstr("\"code\":413"));
  EXPECT_THAT(body, HasSubstr("(1048576 bytes)"));
  EXPECT_THAT(ErrorBody(absl::NotFoundError("m")), HasSubstr("\"code\":404"));
  EXPECT_THAT(ErrorBody(absl::NotFoundError("m")), EndsWith("}"));
}

}  // namespace http_status_test
}  // namespace
}  // namespace deniable::server::http
