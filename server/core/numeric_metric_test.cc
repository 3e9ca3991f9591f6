// Numeric metrics (issue 28) in the registry and the ingestor: creation with a range and a
// numeric design (resolved and stored), what a device fetches, new design versions, and the
// validation and counting of 1BitMean and dBitFlip reports.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/design_advisor.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace numeric_metric_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

v1::CreateMetricRequest Numeric(const std::string& name, double lo, double hi, double epsilon,
                                v1::NumericMechanism mechanism, int buckets = 0, int d = 0) {
  v1::CreateMetricRequest request;
  request.set_name(name);
  request.mutable_range()->set_lo(lo);
  request.mutable_range()->set_hi(hi);
  request.mutable_range()->set_unit("minutes");
  v1::Numeric* n = request.mutable_design()->mutable_numeric();
  n->set_mechanism(mechanism);
  n->set_epsilon(epsilon);
  n->set_buckets(static_cast<uint32_t>(buckets));
  n->set_sampled_buckets(static_cast<uint32_t>(d));
  return request;
}

class NumericMetricTest : public ::testing::Test {
 protected:
  NumericMetricTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}) {}

  void ExpectInvalid(const v1::CreateMetricRequest& request, const std::string& field) {
    absl::StatusOr<v1::Metric> metric = registry_.Create(request);
    ASSERT_FALSE(metric.ok()) << request.ShortDebugString();
    EXPECT_EQ(metric.status().code(), absl::StatusCode::kInvalidArgument) << metric.status();
    EXPECT_THAT(std::string(metric.status().message()), HasSubstr(field));
    EXPECT_FALSE(registry_.Find(request.name()).ok()) << "nothing may be stored";
  }

  static v1::Report Report(const std::string& metric, char id) {
    v1::Report r;
    r.set_metric(metric);
    r.set_design_version(1);
    r.set_report_id(std::string(16, id));
    r.set_event_time_seconds(kNow);
    return r;
  }

  static v1::Report Flip(const std::string& metric, char id, std::vector<uint32_t> buckets,
                         std::vector<bool> bits) {
    v1::Report r = Report(metric, id);
    for (uint32_t b : buckets) r.mutable_numeric()->add_buckets(b);
    for (bool b : bits) r.mutable_numeric()->add_bits(b);
    return r;
  }

  // Submits `bad` alone and expects it rejected, INVALID_ARGUMENT, permanent, naming `field`,
  // with nothing stored or counted.
  void ExpectRejected(const v1::Report& bad, const std::string& field) {
    v1::SubmitReportsRequest request;
    *request.add_reports() = bad;
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->accepted(), 0u);
    ASSERT_EQ(response->rejections_size(), 1) << bad.ShortDebugString();
    const v1::ReportRejection& r = response->rejections(0);
    EXPECT_EQ(r.code(), static_cast<int32_t>(absl::StatusCode::kInvalidArgument)) << r.reason();
    EXPECT_THAT(r.reason(), HasSubstr(field));
    EXPECT_TRUE(r.permanent());
    absl::StatusOr<std::shared_ptr<const MetricInfo>> info = registry_.Find(bad.metric());
    ASSERT_TRUE(info.ok());
    absl::StatusOr<std::vector<CountRow>> rows = storage_.ReadCounts((*info)->id, 0, kNow + 1);
    ASSERT_TRUE(rows.ok());
    EXPECT_TRUE(rows->empty()) << "nothing counted for " << bad.ShortDebugString();
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
};

TEST_F(NumericMetricTest, OneBitMeanIsStoredResolvedAndServedWithItsRange) {
  absl::StatusOr<v1::Metric> metric = registry_.Create(
      Numeric("minutes", 0, 120, std::log(3.0), v1::NUMERIC_MECHANISM_UNSPECIFIED));
  ASSERT_TRUE(metric.ok()) << metric.status();
  EXPECT_EQ(metric->range().lo(), 0);
  EXPECT_EQ(metric->range().hi(), 120);
  EXPECT_EQ(metric->range().unit(), "minutes");
  const v1::Numeric& n = metric->design().parameters().numeric();
  EXPECT_EQ(n.mechanism(), v1::ONE_BIT_MEAN);  // a mean: no buckets asked
  EXPECT_THAT(n.bucket_edges(), ElementsAre(0, 120));
  EXPECT_EQ(n.buckets(), 1u);
  EXPECT_EQ(n.sampled_buckets(), 0u);
  EXPECT_EQ(n.unit(), "minutes");
  // The bit's channel: symmetric randomized response at epsilon.
  EXPECT_NEAR(metric->design().a(), 3.0 / 4.0, 1e-12);
  EXPECT_NEAR(metric->design().b(), 1.0 / 4.0, 1e-12);
  EXPECT_NEAR(metric->design().epsilon(), std::log(3.0), 1e-12);
  // Stored as resolved: the parameters read back are the served ones.
  absl::StatusOr<StoredMetric> stored = storage_.GetMetric("minutes");
  ASSERT_TRUE(stored.ok());
  v1::DesignParameters parameters;
  ASSERT_TRUE(parameters.ParseFromString(stored->designs[0].parameters));
  EXPECT_EQ(parameters.SerializeAsString(), metric->design().parameters().SerializeAsString());
  EXPECT_TRUE(stored->categories.empty());
  // A device gets the range with the design and a fingerprint.
  absl::StatusOr<v1::GetDesignResponse> fetched = DesignForDevice(registry_, "minutes");
  ASSERT_TRUE(fetched.ok());
  EXPECT_EQ(fetched->range().hi(), 120);
  EXPECT_EQ(fetched->range().unit(), "minutes");
  EXPECT_NE(fetched->design_fingerprint(), 0u);
  EXPECT_EQ(fetched->design().parameters().numeric().mechanism(), v1::ONE_BIT_MEAN);
}

TEST_F(NumericMetricTest, DBitFlipGetsEqualWidthBucketsAndDefaultsToEveryBucketSampled) {
  absl::StatusOr<v1::Metric> metric = registry_.Create(
      Numeric("load", 0, 100, std::log(3.0), v1::NUMERIC_MECHANISM_UNSPECIFIED, 4));
  ASSERT_TRUE(metric.ok()) << metric.status();
  const v1::Numeric& n = metric->design().parameters().numeric();
  EXPECT_EQ(n.mechanism(), v1::D_BIT_FLIP);  // buckets asked: a histogram
  EXPECT_THAT(n.bucket_edges(), ElementsAre(0, 25, 50, 75, 100));
  EXPECT_EQ(n.buckets(), 4u);
  EXPECT_EQ(n.sampled_buckets(), 4u);  // 0 means k
  // One bucket's channel: a = e^(eps/2) = sqrt(3): a/(a+1) and 1/(a+1).
  const double a = std::sqrt(3.0);
  EXPECT_NEAR(metric->design().a(), a / (a + 1), 1e-12);
  EXPECT_NEAR(metric->design().b(), 1 / (a + 1), 1e-12);

  v1::CreateMetricRequest edges = Numeric("edges", 0, 1000, 1.0, v1::D_BIT_FLIP, 0, 2);
  for (double e : {0.0, 10.0, 100.0, 1000.0})
    edges.mutable_design()->mutable_numeric()->add_bucket_edges(e);
  absl::StatusOr<v1::Metric> given = registry_.Create(edges);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_THAT(given->design().parameters().numeric().bucket_edges(), ElementsAre(0, 10, 100, 1000));
  EXPECT_EQ(given->design().parameters().numeric().sampled_buckets(), 2u);
}

TEST_F(NumericMetricTest, BadRangesAndDesignsNameTheirField) {
  v1::CreateMetricRequest no_design = Numeric("m", 0, 1, 1.0, v1::ONE_BIT_MEAN);
  no_design.mutable_design()->mutable_two_coin();
  ExpectInvalid(no_design, "design.numeric");
  v1::CreateMetricRequest no_range = Numeric("m", 0, 1, 1.0, v1::ONE_BIT_MEAN);
  no_range.clear_range();
  ExpectInvalid(no_range, "range");
  ExpectInvalid(Numeric("m", std::nan(""), 1, 1.0, v1::ONE_BIT_MEAN), "range.lo");
  ExpectInvalid(Numeric("m", 0, HUGE_VAL, 1.0, v1::ONE_BIT_MEAN), "range.hi");
  ExpectInvalid(Numeric("m", 5, 5, 1.0, v1::ONE_BIT_MEAN), "range.hi");
  v1::CreateMetricRequest long_unit = Numeric("m", 0, 1, 1.0, v1::ONE_BIT_MEAN);
  long_unit.mutable_range()->set_unit(std::string(33, 'u'));
  ExpectInvalid(long_unit, "range.unit");
  v1::CreateMetricRequest both = Numeric("m", 0, 1, 1.0, v1::ONE_BIT_MEAN);
  both.add_categories("a");
  both.add_categories("b");
  ExpectInvalid(both, "range");
  ExpectInvalid(Numeric("m", 0, 1, 0.0, v1::ONE_BIT_MEAN), "design.numeric.epsilon");
  ExpectInvalid(Numeric("m", 0, 1, 1.0, v1::ONE_BIT_MEAN, 0, 2), "design.numeric.sampled_buckets");
  ExpectInvalid(Numeric("m", 0, 1, 1.0, v1::D_BIT_FLIP, 4, 5), "design.numeric.sampled_buckets");
  ExpectInvalid(Numeric("m", 0, 1, 1.0, static_cast<v1::NumericMechanism>(7)),
                "design.numeric.mechanism");
  v1::CreateMetricRequest off_range = Numeric("m", 0, 100, 1.0, v1::D_BIT_FLIP);
  for (double e : {0.0, 50.0, 90.0})
    off_range.mutable_design()->mutable_numeric()->add_bucket_edges(e);
  ExpectInvalid(off_range, "design.numeric.bucket_edges");
  v1::CreateMetricRequest unsorted = Numeric("m", 0, 100, 1.0, v1::D_BIT_FLIP);
  for (double e : {0.0, 60.0, 50.0, 100.0})
    unsorted.mutable_design()->mutable_numeric()->add_bucket_edges(e);
  ExpectInvalid(unsorted, "design.numeric.bucket_edges");
  // A numeric design is refused for a yes/no metric's new version, and the other way round.
  ASSERT_TRUE(registry_.Create(Numeric("mean", 0, 10, 1.0, v1::ONE_BIT_MEAN)).ok());
  v1::AddDesignVersionRequest yes_no;
  yes_no.set_metric("mean");
  yes_no.mutable_design()->mutable_two_coin();
  absl::StatusOr<v1::Metric> added = registry_.AddVersion(yes_no);
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(std::string(added.status().message()), HasSubstr("design.numeric"));
}

TEST_F(NumericMetricTest, NewVersionsKeepRangeMechanismAndBuckets) {
  ASSERT_TRUE(registry_.Create(Numeric("mean", 0, 10, 1.0, v1::ONE_BIT_MEAN)).ok());
  ASSERT_TRUE(registry_.Create(Numeric("hist", 0, 10, 1.0, v1::D_BIT_FLIP, 5)).ok());
  v1::AddDesignVersionRequest request;
  request.set_metric("mean");
  request.mutable_design()->mutable_numeric()->set_mechanism(v1::D_BIT_FLIP);
  request.mutable_design()->mutable_numeric()->set_epsilon(2.0);
  absl::StatusOr<v1::Metric> added = registry_.AddVersion(request);
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(added.status().message()), HasSubstr("design.numeric.mechanism"));
  request.mutable_design()->mutable_numeric()->set_mechanism(v1::ONE_BIT_MEAN);
  added = registry_.AddVersion(request);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->versions_size(), 2);
  EXPECT_EQ(added->range().hi(), 10);
  EXPECT_EQ(added->range().unit(), "minutes");
  EXPECT_NEAR(added->design().epsilon(), 2.0, 1e-12);

  request.set_metric("hist");
  request.mutable_design()->mutable_numeric()->set_mechanism(v1::D_BIT_FLIP);
  request.mutable_design()->mutable_numeric()->set_buckets(4);
  added = registry_.AddVersion(request);
  ASSERT_FALSE(added.ok());
  EXPECT_THAT(std::string(added.status().message()), HasSubstr("design.numeric.bucket_edges"));
  request.mutable_design()->mutable_numeric()->set_buckets(5);
  request.mutable_design()->mutable_numeric()->set_sampled_buckets(1);
  added = registry_.AddVersion(request);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->design().parameters().numeric().sampled_buckets(), 1u);
  // The fingerprint follows the numeric parameters: each version has its own.
  absl::StatusOr<std::shared_ptr<const MetricInfo>> info = registry_.Find("hist");
  ASSERT_TRUE(info.ok());
  EXPECT_NE((*info)->versions[0].fingerprint, (*info)->versions[1].fingerprint);
}

TEST_F(NumericMetricTest, DescribeGivesTheEpsilonOfANumericMetric) {
  ASSERT_TRUE(registry_.Create(Numeric("hist", 0, 10, std::log(3.0), v1::D_BIT_FLIP, 5)).ok());
  DesignAdvisor advisor(&registry_);
  v1::DescribeDesignRequest request;
  request.set_metric("hist");
  request.set_prior(0.5);
  request.set_n(1000);
  absl::StatusOr<v1::DesignDescription> d = advisor.Describe(request);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_NEAR(d->design().epsilon(), std::log(3.0), 1e-12);
  // The whole report (d = k = 5 buckets and bits, issue 38): its most telling report gives
  // e^eps / (1 + e^eps) = 3/4 at prior 1/2; one bucket's bit alone, at a = sqrt(3), a/(a+1),
  // named in the note.
  EXPECT_NEAR(d->posterior_given_yes(), 0.75, 1e-9);
  EXPECT_GT(d->central_n(), 0);
  EXPECT_THAT(d->channel_note(), HasSubstr("d_bit_flip"));
  EXPECT_THAT(d->channel_note(), HasSubstr("P(x = 1 | bit 1) = 0.6340"));
}

TEST_F(NumericMetricTest, ReportsAreCountedAsTheirMechanismSays) {
  ASSERT_TRUE(registry_.Create(Numeric("mean", 0, 10, 1.0, v1::ONE_BIT_MEAN)).ok());
  ASSERT_TRUE(registry_.Create(Numeric("hist", 0, 10, 1.0, v1::D_BIT_FLIP, 4, 2)).ok());
  v1::SubmitReportsRequest request;
  v1::Report one = Report("mean", 1);
  one.set_bit(1);
  *request.add_reports() = one;
  *request.add_reports() = Report("mean", 2);  // bit 0
  *request.add_reports() = Flip("hist", 3, {0, 2}, {true, false});
  *request.add_reports() = Flip("hist", 4, {2, 3}, {true, true});
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 4u);
  EXPECT_EQ(response->rejections_size(), 0);
  absl::StatusOr<std::shared_ptr<const MetricInfo>> mean = registry_.Find("mean");
  ASSERT_TRUE(mean.ok());
  absl::StatusOr<std::vector<CountRow>> rows = storage_.ReadCounts((*mean)->id, 0, kNow + 1);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].n, 2);
  EXPECT_THAT((*rows)[0].counters.Dense(), ElementsAre(1));  // the bit's count is counter 0
  // dBitFlip: [n, s_0..s_3, y_0..y_3] with s and y kept as counters j and 4 + j.
  absl::StatusOr<std::shared_ptr<const MetricInfo>> hist = registry_.Find("hist");
  ASSERT_TRUE(hist.ok());
  rows = storage_.ReadCounts((*hist)->id, 0, kNow + 1);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].n, 2);
  EXPECT_THAT((*rows)[0].counters.Dense(), ElementsAre(1, 0, 2, 1, 1, 0, 1, 1));
}

TEST_F(NumericMetricTest, BadReportsAreRejectedNamingTheirFieldAndNothingIsStored) {
  ASSERT_TRUE(registry_.Create(Numeric("mean", 0, 10, 1.0, v1::ONE_BIT_MEAN)).ok());
  ASSERT_TRUE(registry_.Create(Numeric("hist", 0, 10, 1.0, v1::D_BIT_FLIP, 4, 2)).ok());
  ASSERT_TRUE(registry_
                  .Create(v1::CreateMetricRequest([] {
                    v1::CreateMetricRequest r;
                    r.set_name("crash");
                    r.mutable_design()->mutable_two_coin();
                    return r;
                  }()))
                  .ok());
  // A dBitFlip report to a 1BitMean metric, and the other way round.
  ExpectRejected(Flip("mean", 1, {0, 1}, {true, false}), "reports[0].numeric");
  ExpectRejected(Report("hist", 2), "reports[0].numeric");
  // A bit set beside a dBitFlip report.
  v1::Report with_bit = Flip("hist", 3, {0, 1}, {true, false});
  with_bit.set_bit(1);
  ExpectRejected(with_bit, "reports[0].bit");
  // Wrong d, unsorted or repeated buckets, a bucket out of range, bits not one per bucket.
  ExpectRejected(Flip("hist", 4, {0, 1, 2}, {true, false, true}), "reports[0].numeric");
  ExpectRejected(Flip("hist", 5, {2, 1}, {true, false}), "reports[0].numeric");
  ExpectRejected(Flip("hist", 6, {1, 1}, {true, false}), "reports[0].numeric");
  ExpectRejected(Flip("hist", 7, {0, 4}, {true, false}), "reports[0].numeric");
  ExpectRejected(Flip("hist", 8, {0, 1}, {true}), "reports[0].numeric");
  // A 1BitMean bit other than 0 or 1; a categorical report to a numeric metric; a numeric report
  // to a yes/no metric.
  v1::Report two = Report("mean", 9);
  two.set_bit(2);
  ExpectRejected(two, "reports[0].bit");
  v1::Report categorical = Report("mean", 10);
  categorical.mutable_categorical()->set_category(1);
  ExpectRejected(categorical, "reports[0].categorical");
  ExpectRejected(Flip("crash", 11, {0, 1}, {true, false}), "reports[0].numeric");
}

}  // namespace numeric_metric_test
}  // namespace
}  // namespace deniable::server
