// Numeric designs on the wire (numeric_convert.h): requests resolved, stored designs round-trip,
// and the dBitFlip report through v1::Report (mechanism_convert.h).
#include "deniable/convert/numeric_convert.h"

#include <memory>

#include "deniable/common/numeric_mechanism.h"
#include "deniable/convert/mechanism_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable {
namespace {
namespace numeric_convert_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::NumericRange Range(double lo, double hi) {
  v1::NumericRange r;
  r.set_lo(lo);
  r.set_hi(hi);
  return r;
}

v1::DesignParameters Request(v1::NumericMechanism m, double eps, uint32_t buckets) {
  v1::DesignParameters p;
  p.mutable_numeric()->set_mechanism(m);
  p.mutable_numeric()->set_epsilon(eps);
  p.mutable_numeric()->set_buckets(buckets);
  return p;
}

TEST(NumericConvertTest, UnspecifiedPicksByTheQuestion) {
  const v1::NumericRange range = Range(0, 100);
  const NumericDesign mean =
      NumericDesignFromProto(Request(v1::NUMERIC_MECHANISM_UNSPECIFIED, 1.0, 0), "design", &range)
          .value();
  EXPECT_EQ(mean.mechanism(), NumericMechanism::kOneBitMean);
  EXPECT_THAT(mean.edges(), ElementsAre(0.0, 100.0));
  const NumericDesign histogram =
      NumericDesignFromProto(Request(v1::NUMERIC_MECHANISM_UNSPECIFIED, 1.0, 4), "design", &range)
          .value();
  EXPECT_EQ(histogram.mechanism(), NumericMechanism::kDBitFlip);
  EXPECT_THAT(histogram.edges(), ElementsAre(0.0, 25.0, 50.0, 75.0, 100.0));
  EXPECT_EQ(histogram.sampled_buckets(), 4);  // 0 means k
  v1::DesignParameters edges = Request(v1::NUMERIC_MECHANISM_UNSPECIFIED, 1.0, 0);
  for (double e : {0.0, 10.0, 100.0}) edges.mutable_numeric()->add_bucket_edges(e);
  EXPECT_EQ(NumericDesignFromProto(edges, "design", &range).value().mechanism(),
            NumericMechanism::kDBitFlip);
  const NumericDesign flip_default =
      NumericDesignFromProto(Request(v1::D_BIT_FLIP, 1.0, 0), "design", &range).value();
  EXPECT_EQ(flip_default.buckets(), 10);
}

TEST(NumericConvertTest, RefusalsNameTheField) {
  const v1::NumericRange range = Range(0, 100);
  const auto refuse = [&](const v1::DesignParameters& p, const v1::NumericRange* r) {
    return std::string(NumericDesignFromProto(p, "design", r).status().message());
  };
  EXPECT_THAT(refuse(Request(v1::ONE_BIT_MEAN, -1.0, 0), &range),
              HasSubstr("design.numeric.epsilon"));
  EXPECT_THAT(refuse(Request(v1::D_BIT_FLIP, 1.0, 300), &range),
              HasSubstr("design.numeric.buckets"));
  v1::DesignParameters d = Request(v1::D_BIT_FLIP, 1.0, 4);
  d.mutable_numeric()->set_sampled_buckets(5);
  EXPECT_THAT(refuse(d, &range), HasSubstr("design.numeric.sampled_buckets"));
  v1::DesignParameters off = Request(v1::D_BIT_FLIP, 1.0, 0);
  for (double e : {0.0, 10.0, 90.0}) off.mutable_numeric()->add_bucket_edges(e);
  EXPECT_THAT(refuse(off, &range), HasSubstr("design.numeric.bucket_edges"));
  v1::DesignParameters unordered = Request(v1::D_BIT_FLIP, 1.0, 0);
  for (double e : {0.0, 50.0, 20.0, 100.0}) unordered.mutable_numeric()->add_bucket_edges(e);
  EXPECT_THAT(refuse(unordered, &range), HasSubstr("design.numeric.bucket_edges[2]"));
  EXPECT_THAT(refuse(Request(v1::ONE_BIT_MEAN, 1.0, 0), nullptr),
              HasSubstr("design.numeric.bucket_edges"));
  EXPECT_THAT(refuse(Request(v1::NUMERIC_MECHANISM_UNSPECIFIED, 1.0, 0), nullptr),
              HasSubstr("design.numeric.mechanism"));
  const v1::NumericRange empty = Range(5, 5);
  EXPECT_THAT(refuse(Request(v1::ONE_BIT_MEAN, 1.0, 0), &empty), HasSubstr("range"));
  v1::DesignParameters yes_no;
  yes_no.mutable_symmetric_epsilon()->set_epsilon(1.0);
  EXPECT_THAT(refuse(yes_no, &range), HasSubstr("design: a numeric metric"));
}

TEST(NumericConvertTest, StoredDesignsRoundTrip) {
  const NumericDesign d =
      NumericDesign::Create(NumericMechanism::kDBitFlip, 2.0, {0, 1, 5, 10}, 2).value();
  v1::Design wire;
  NumericDesignToProto(d, 3, "ms", &wire);
  EXPECT_EQ(wire.version(), 3u);
  EXPECT_EQ(wire.parameters().numeric().unit(), "ms");
  EXPECT_EQ(wire.parameters().numeric().buckets(), 3u);
  EXPECT_EQ(wire.parameters().numeric().sampled_buckets(), 2u);
  EXPECT_DOUBLE_EQ(wire.a(), DBitFlipChannel(d).a);
  EXPECT_DOUBLE_EQ(wire.epsilon(), 2.0);
  const NumericDesign back = NumericDesignFromWire(wire).value();
  EXPECT_EQ(back.edges(), d.edges());
  EXPECT_EQ(back.sampled_buckets(), 2);
  EXPECT_EQ(back.ToString(), d.ToString());
  const auto m = MechanismForWire(wire).value();
  EXPECT_EQ(m->kind(), ReportKind::kNumeric);
  EXPECT_EQ(m->Layout().coordinates, 6);
  wire.set_a(0.9);
  EXPECT_THAT(NumericDesignFromWire(wire).status().message(), HasSubstr("does not match"));

  const NumericDesign mean =
      NumericDesign::Create(NumericMechanism::kOneBitMean, 1.0, {0, 100}, 0).value();
  NumericDesignToProto(mean, 1, "", &wire);
  EXPECT_EQ(MechanismForParameters(wire.parameters(), 0, "design").value()->ToString(),
            mean.ToString());
}

TEST(NumericConvertTest, DBitFlipReportThroughTheProto) {
  WireAnswer w;
  w.has_numeric = true;
  w.numeric.buckets = {1, 4};
  w.numeric.bits = {true, false};
  v1::Report report;
  WireAnswerToProto(w, &report);
  EXPECT_THAT(report.numeric().buckets(), ElementsAre(1u, 4u));
  const WireAnswer back = WireAnswerFromProto(report);
  EXPECT_TRUE(back.has_numeric);
  EXPECT_EQ(back.numeric.buckets, w.numeric.buckets);
  EXPECT_EQ(back.numeric.bits, w.numeric.bits);
  WireAnswer bit;
  bit.bit = 1;
  WireAnswerToProto(bit, &report);
  EXPECT_FALSE(report.has_numeric());
  EXPECT_FALSE(WireAnswerFromProto(report).has_numeric);
}

}  // namespace numeric_convert_test
}  // namespace
}  // namespace deniable
