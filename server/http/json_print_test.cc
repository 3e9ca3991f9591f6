#include "server/http/json_print.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "deniable/v1/admin_service.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"

namespace deniable::server::http {
namespace {
namespace json_print_test {

using ::testing::HasSubstr;
using ::testing::Not;

v1::Prevalence YesNo() {
  v1::Prevalence p;
  p.set_metric("uses_drugs");
  p.set_n(2532);
  p.set_yes_count(1290);
  p.set_estimate_unbiased(0.3349);
  p.set_ci_lower(0.3);
  p.set_ci_upper(0.37);
  p.set_method(v1::WILSON);
  p.set_confidence_level(0.95);
  p.mutable_design()->set_a(0.75);
  p.mutable_design()->set_epsilon(std::numeric_limits<double>::infinity());
  return p;
}

TEST(PrintApiJsonTest, CountsAreNumbersWhereTheyFitIn2To53) {
  v1::Prevalence p = YesNo();
  p.set_periods((int64_t{1} << 53) - 1);
  p.set_central_n(int64_t{1} << 53);
  const std::string json = PrintApiJson(p);
  EXPECT_THAT(json, HasSubstr("\"n\":2532,"));
  EXPECT_THAT(json, HasSubstr("\"yesCount\":1290,"));
  EXPECT_THAT(json, HasSubstr("\"periods\":9007199254740991,"));
  EXPECT_THAT(json, HasSubstr("\"centralN\":\"9007199254740992\""));  // beyond: a string
  EXPECT_THAT(json, HasSubstr("\"estimateUnbiased\":0.3349,"));
  EXPECT_THAT(json, HasSubstr("\"method\":\"WILSON\""));
  EXPECT_THAT(json, HasSubstr("\"epsilon\":\"Infinity\""));
  EXPECT_THAT(json, HasSubstr("\"groupValue\":\"\""));  // defaults included
  EXPECT_THAT(json, HasSubstr("\"groups\":[]"));
}

// What the JSON API prints reads back through protobuf's own parser as the same message.
TEST(PrintApiJsonTest, RoundTripsThroughProtobufsParser) {
  v1::Series series;
  series.set_metric("m \"quoted\"\n\x01");
  series.set_bucket(v1::DAY);
  *series.add_buckets() = YesNo();
  v1::Series back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(PrintApiJson(series), &back).ok())
      << PrintApiJson(series);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(series, back));
  v1::ServerStats stats;
  stats.set_reports_accepted(uint64_t{1} << 60);
  v1::ServerStats stats_back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(PrintApiJson(stats), &stats_back).ok());
  EXPECT_EQ(stats_back.reports_accepted(), uint64_t{1} << 60);
}

// A bucket below min_reports: its size and range, never an estimate of 0 with
// INTERVAL_METHOD_UNSPECIFIED.
TEST(PrintApiJsonTest, SuppressedBucketsHaveNullEstimates) {
  v1::Prevalence p;
  p.set_metric("m");
  p.set_n(3);
  p.set_start_time_seconds(86400);
  p.set_end_time_seconds(2 * 86400);
  p.set_suppressed(true);
  const std::string json = PrintApiJson(p);
  EXPECT_THAT(json, HasSubstr("\"n\":3,"));
  EXPECT_THAT(json, HasSubstr("\"startTimeSeconds\":86400,"));
  EXPECT_THAT(json, HasSubstr("\"suppressed\":true"));
  EXPECT_THAT(json, HasSubstr("\"estimateUnbiased\":null,"));
  EXPECT_THAT(json, HasSubstr("\"ciLower\":null,"));
  EXPECT_THAT(json, HasSubstr("\"yesCount\":null,"));
  EXPECT_THAT(json, HasSubstr("\"method\":null,"));
  EXPECT_THAT(json, Not(HasSubstr("INTERVAL_METHOD_UNSPECIFIED")));
  EXPECT_THAT(PrintApiJson(YesNo()), Not(HasSubstr("null")));
}

TEST(PrintApiJsonTest, CategoricalResultsHaveNullYesNoFields) {
  v1::Difference d;
  v1::CategoryDifference* c = d.add_shares();
  c->set_category("Y");
  c->set_difference(0.0123);
  v1::CategoryShare* s = d.mutable_first()->add_shares();
  s->set_category("Y");
  s->set_estimate_unbiased(0.34);
  d.mutable_first()->set_n(100);
  const std::string json = PrintApiJson(d);
  EXPECT_THAT(json, HasSubstr("\"difference\":null,\"standardError\":null,\"ciLower\":null"));
  EXPECT_THAT(json, HasSubstr("\"shares\":[{\"category\":\"Y\",\"difference\":0.0123,"));
  EXPECT_THAT(json, HasSubstr("\"n\":100,\"yesCount\":null,"));
  EXPECT_THAT(json, HasSubstr("\"estimateUnbiased\":0.34"));  // the share's own figure
}

// Numeric metrics (issue 28): a histogram has no mean and no yes/no figures, a bucket nobody
// sampled no estimate; those NaNs print as null, the figures it has as numbers.
TEST(PrintApiJsonTest, NumericFiguresItDoesNotHaveAreNull) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  v1::Prevalence p;
  p.set_metric("load_ms");
  p.set_n(500);
  v1::NumericEstimate* num = p.mutable_numeric();
  num->set_lo(0);
  num->set_hi(100);
  num->set_unit("ms");
  num->set_mechanism("d_bit_flip");
  num->set_mean(kNaN);
  num->set_devices(500);
  v1::NumericBucket* b = num->add_buckets();
  b->set_upper(50);
  b->set_estimate_unbiased(0.25);
  v1::NumericBucket* empty = num->add_buckets();
  empty->set_lower(50);
  empty->set_upper(100);
  empty->set_estimate_unbiased(kNaN);
  const std::string json = PrintApiJson(p);
  EXPECT_THAT(json, HasSubstr("\"yesCount\":null,"));
  EXPECT_THAT(json, HasSubstr("\"mean\":null,"));
  EXPECT_THAT(json, HasSubstr("\"devices\":500,"));
  EXPECT_THAT(json, HasSubstr("\"upper\":50,"));
  EXPECT_THAT(json, HasSubstr("\"estimateUnbiased\":0.25,"));
  EXPECT_THAT(json, HasSubstr("\"lower\":50,\"upper\":100,\"sampled\":0,\"ones\":0,"
                              "\"estimateUnbiased\":null,"));
  EXPECT_THAT(json, Not(HasSubstr("NaN")));
  // A mean (ONE_BIT_MEAN) keeps its yes/no figures: those of the bit.
  v1::Prevalence mean = YesNo();
  mean.mutable_numeric()->set_mean(42.5);
  const std::string mean_json = PrintApiJson(mean);
  EXPECT_THAT(mean_json, HasSubstr("\"mean\":42.5,"));
  EXPECT_THAT(mean_json, HasSubstr("\"yesCount\":1290,"));
}

}  // namespace json_print_test
}  // namespace
}  // namespace deniable::server::http
