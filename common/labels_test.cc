#include "deniable/common/labels.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace labels_test {

using ::testing::HasSubstr;

TEST(LabelsTest, CanonicalFormIsSortedByKey) {
  absl::StatusOr<std::string> c =
      CanonicalLabels({{"region", "N"}, {"app_version", "4.2"}}, "labels");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, "app_version=4.2,region=N");
  EXPECT_EQ(*CanonicalLabels({}, "labels"), "");
}

TEST(LabelsTest, RefusesMoreThanFourLabelsNamingTheField) {
  absl::StatusOr<std::string> c =
      CanonicalLabels({{"a", "1"}, {"b", "1"}, {"c", "1"}, {"d", "1"}, {"e", "1"}}, "labels");
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(c.status().message(), HasSubstr("labels: at most 4 labels, but has 5"));
}

TEST(LabelsTest, RefusesMalformedKeysAndFreeTextValuesWithABoundedEcho) {
  EXPECT_THAT(CanonicalLabels({{"Region", "N"}}, "labels").status().message(),
              HasSubstr("labels[\"Region\"]: key must match [a-z][a-z0-9_]{0,31}"));
  EXPECT_THAT(CanonicalLabels({{"city", "New York"}}, "reports[2].labels").status().message(),
              HasSubstr("reports[2].labels[\"city\"]: value must match"));
  const std::string junk(5000, '\x01');
  absl::Status s = CanonicalLabels({{"k", junk}}, "labels").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), 512u);
  EXPECT_FALSE(ValidLabelKey(std::string(33, 'a')));
  EXPECT_TRUE(ValidLabelKey(std::string(32, 'a')));
  EXPECT_FALSE(ValidLabelValue(""));
  EXPECT_TRUE(ValidLabelValue("A-z_0.9:x"));
}

}  // namespace labels_test
}  // namespace
}  // namespace deniable
