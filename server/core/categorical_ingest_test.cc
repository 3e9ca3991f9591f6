// Categorical metrics (issue 14): creation and validation by the registry, the design a device
// fetches and its fingerprint, and the ingestion of categorical reports per mechanism.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "deniable/common/categorical.h"
#include "deniable/convert/categorical_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/design_advisor.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace categorical_ingest_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

v1::CreateMetricRequest Categorical(
    const std::string& name, std::vector<std::string> categories, double epsilon,
    v1::CategoricalMechanism mechanism = v1::CATEGORICAL_MECHANISM_UNSPECIFIED) {
  v1::CreateMetricRequest request;
  request.set_name(name);
  for (const std::string& c : categories) request.add_categories(c);
  request.mutable_design()->mutable_categorical()->set_mechanism(mechanism);
  request.mutable_design()->mutable_categorical()->set_epsilon(epsilon);
  return request;
}

std::vector<std::string> Names(int k) {
  std::vector<std::string> names;
  for (int i = 0; i < k; ++i) names.push_back("c" + std::to_string(i));
  return names;
}

class CategoricalTest : public ::testing::Test {
 protected:
  CategoricalTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}) {}

  void ExpectInvalid(const v1::CreateMetricRequest& request, const std::string& field) {
    absl::StatusOr<v1::Metric> metric = registry_.Create(request);
    ASSERT_FALSE(metric.ok()) << request.ShortDebugString();
    EXPECT_EQ(metric.status().code(), absl::StatusCode::kInvalidArgument);
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

  // Submits `bad` after a valid report of `metric` and expects `bad` alone rejected,
  // INVALID_ARGUMENT, permanent, naming `field`.
  // "krr" (k = 4), "oue" (k = 10) and "olh" (k = 10, g = 4), one per mechanism.
  void CreateOneMetricPerMechanism() {
    ASSERT_TRUE(registry_.Create(Categorical("krr", Names(4), 1.0, v1::K_RR)).ok());
    ASSERT_TRUE(registry_.Create(Categorical("oue", Names(10), 1.0, v1::OUE)).ok());
    ASSERT_TRUE(registry_.Create(Categorical("olh", Names(10), std::log(3.0), v1::OLH)).ok());
  }

  // A valid report of "olh" (hash 12345 x + 678, bucket 3) with report id `id` x 16.
  v1::Report OlhReport(char id) {
    v1::Report olh = Report("olh", id);
    olh.mutable_categorical()->set_hash_a(12345);
    olh.mutable_categorical()->set_hash_b(678);
    olh.mutable_categorical()->set_bucket(3);
    return olh;
  }

  void ExpectRejected(const v1::Report& valid, const v1::Report& bad, const std::string& field) {
    v1::SubmitReportsRequest request;
    *request.add_reports() = valid;
    *request.add_reports() = bad;
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->rejections_size(), 1) << bad.ShortDebugString();
    const v1::ReportRejection& r = response->rejections(0);
    EXPECT_EQ(r.index(), 1u);
    EXPECT_EQ(r.code(), static_cast<int32_t>(absl::StatusCode::kInvalidArgument)) << r.reason();
    EXPECT_THAT(r.reason(), HasSubstr(field));
    EXPECT_TRUE(r.permanent());
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
};

TEST_F(CategoricalTest, UnspecifiedMechanismIsStoredAsTheOneOfLeastVariance) {
  absl::StatusOr<v1::Metric> vote =
      registry_.Create(Categorical("vote", {"Y", "N", "U", "A"}, std::log(3.0)));
  ASSERT_TRUE(vote.ok()) << vote.status();
  EXPECT_THAT(vote->categories(), ElementsAre("Y", "N", "U", "A"));
  const v1::Design& d = vote->design();
  EXPECT_EQ(d.parameters().categorical().mechanism(), v1::K_RR);  // 4 < 3 e^eps + 2 = 11
  EXPECT_EQ(d.categories(), 4u);
  EXPECT_EQ(d.hash_buckets(), 0u);
  EXPECT_DOUBLE_EQ(d.a(), 3.0 / 6.0);  // p = e^eps / (e^eps + k - 1)
  EXPECT_DOUBLE_EQ(d.b(), 1.0 / 6.0);
  EXPECT_NEAR(d.epsilon(), std::log(3.0), 1e-12);
  // The stored parameters name the concrete mechanism.
  absl::StatusOr<StoredMetric> stored = storage_.GetMetric("vote");
  ASSERT_TRUE(stored.ok());
  v1::DesignParameters parameters;
  ASSERT_TRUE(parameters.ParseFromString(stored->designs[0].parameters));
  EXPECT_EQ(parameters.categorical().mechanism(), v1::K_RR);
  EXPECT_THAT(stored->categories, ElementsAre("Y", "N", "U", "A"));

  absl::StatusOr<v1::Metric> wide = registry_.Create(Categorical("wide", Names(64), std::log(3.0)));
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->design().parameters().categorical().mechanism(), v1::OUE);
  EXPECT_DOUBLE_EQ(wide->design().a(), 0.5);
  EXPECT_DOUBLE_EQ(wide->design().b(), 0.25);  // 1 / (e^eps + 1)

  absl::StatusOr<v1::Metric> olh =
      registry_.Create(Categorical("olh", Names(16), std::log(3.0), v1::OLH));
  ASSERT_TRUE(olh.ok()) << olh.status();
  EXPECT_EQ(olh->design().hash_buckets(), 4u);  // round(e^eps + 1)
  // What a device fetches: the design, its categories and a fingerprint it can check.
  absl::StatusOr<v1::GetDesignResponse> fetched = DesignForDevice(registry_, "olh");
  ASSERT_TRUE(fetched.ok());
  EXPECT_EQ(fetched->categories_size(), 16);
  EXPECT_NE(fetched->design_fingerprint(), 0u);
  absl::StatusOr<CategoricalDesign> rebuilt = CategoricalDesignFromWire(fetched->design());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  EXPECT_EQ(rebuilt->mechanism(), CategoricalMechanism::kOptimizedLocalHashing);
}

TEST_F(CategoricalTest, CreateRefusesBadCategoriesAndMismatchedDesignsNamingTheField) {
  ExpectInvalid(Categorical("m", {"only"}, 1.0), "categories:");
  ExpectInvalid(Categorical("m", Names(257), 1.0), "categories:");
  ExpectInvalid(Categorical("m", {"a", "b c"}, 1.0), "categories[1]");
  ExpectInvalid(Categorical("m", {"a", std::string(33, 'x')}, 1.0), "categories[1]");
  ExpectInvalid(Categorical("m", {"a", "b", "a"}, 1.0), "categories[2]");
  ExpectInvalid(Categorical("m", {"a", ""}, 1.0), "categories[1]");
  ExpectInvalid(Categorical("m", {"a", "b"}, -1.0), "design.categorical.epsilon");
  ExpectInvalid(Categorical("m", {"a", "b"}, 1.0, static_cast<v1::CategoricalMechanism>(9)),
                "design.categorical.mechanism");
  v1::CreateMetricRequest no_categories = Categorical("m", {}, 1.0);
  ExpectInvalid(no_categories, "categories");
  v1::CreateMetricRequest yes_no_design = Categorical("m", {"a", "b"}, 1.0);
  yes_no_design.mutable_design()->mutable_two_coin();
  ExpectInvalid(yes_no_design, "design.categorical");
  EXPECT_TRUE(registry_.Create(Categorical("m", {"Y", "N", "u:1", "a-b.c_D"}, 1.0)).ok());
}

TEST_F(CategoricalTest, AddVersionKeepsTheCategoriesAndRefusesTheOtherKind) {
  ASSERT_TRUE(registry_.Create(Categorical("vote", {"Y", "N", "U", "A"}, std::log(3.0))).ok());
  v1::AddDesignVersionRequest add;
  add.set_metric("vote");
  add.mutable_design()->mutable_categorical()->set_epsilon(std::log(3.0));
  add.mutable_design()->mutable_categorical()->set_mechanism(v1::OUE);
  absl::StatusOr<v1::Metric> two = registry_.AddVersion(add);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->design().version(), 2u);
  EXPECT_EQ(two->design().categories(), 4u);
  EXPECT_EQ(two->categories_size(), 4);
  add.mutable_design()->mutable_two_coin();
  EXPECT_THAT(registry_.AddVersion(add).status().message(), HasSubstr("categorical"));
  EXPECT_THAT(registry_.AddVersion(add).status().message(),
              HasSubstr("design: metric \"vote\" has 4 categories"));

  v1::CreateMetricRequest yes_no;
  yes_no.set_name("yn");
  yes_no.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(registry_.Create(yes_no).ok());
  add.set_metric("yn");
  add.mutable_design()->mutable_categorical()->set_epsilon(1.0);
  absl::StatusOr<v1::Metric> refused = registry_.AddVersion(add);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("categories"));
}

// DescribeDesign for a categorical metric: one category against the rest through (p*, q*).
TEST_F(CategoricalTest, DescribeGivesThePosteriorOfAReportedCategory) {
  ASSERT_TRUE(registry_.Create(Categorical("vote", {"Y", "N", "U", "A"}, std::log(3.0))).ok());
  DesignAdvisor advisor(&registry_);
  v1::DescribeDesignRequest request;
  request.set_metric("vote");
  request.set_prior(0.25);
  absl::StatusOr<v1::DesignDescription> d = advisor.Describe(request);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->design().categories(), 4u);
  // p* pi / (p* pi + q* (1 - pi)) = (1/2)(1/4) / ((1/2)(1/4) + (1/6)(3/4)) = 1/2.
  EXPECT_NEAR(d->posterior_given_yes(), 0.5, 1e-12);
  // (1 - p*) pi / ((1 - p*) pi + (1 - q*)(1 - pi)) = (1/8) / (1/8 + 5/8) = 1/6.
  EXPECT_NEAR(d->posterior_given_no(), 1.0 / 6.0, 1e-12);
  EXPECT_GT(d->mutual_information_bits(), 0.0);
  // The metric's categories name the per-category figures (categorical_design_advisor_test.cc).
  ASSERT_EQ(d->reported_size(), 4);
  EXPECT_EQ(d->reported(3).category(), "A");
  EXPECT_EQ(d->channel(), "report");
}

TEST_F(CategoricalTest, TheFingerprintCoversTheCategoryNames) {
  // Two collectors whose metric has the same id, name, times and design but other names.
  MemoryStorage other_storage, same_storage;
  MetricRegistry other(&other_storage, &clock_), same(&same_storage, &clock_);
  ASSERT_TRUE(registry_.Create(Categorical("vote", {"Y", "N", "U", "A"}, 1.0)).ok());
  ASSERT_TRUE(same.Create(Categorical("vote", {"Y", "N", "U", "A"}, 1.0)).ok());
  ASSERT_TRUE(other.Create(Categorical("vote", {"Y", "N", "A", "U"}, 1.0)).ok());
  const uint64_t mine = (*registry_.Find("vote"))->current().fingerprint;
  EXPECT_EQ((*same.Find("vote"))->current().fingerprint, mine);
  EXPECT_NE((*other.Find("vote"))->current().fingerprint, mine);
}

// Valid reports of each mechanism, drawn with a seeded generator, are stored with the support
// that common's Supports() gives them.
TEST_F(CategoricalTest, StoresValidReportsOfEachMechanismWithTheirSupport) {
  std::mt19937_64 gen(14);
  for (v1::CategoricalMechanism mechanism : {v1::K_RR, v1::OUE, v1::OLH}) {
    const std::string name = "m" + std::to_string(static_cast<int>(mechanism));
    absl::StatusOr<v1::Metric> metric =
        registry_.Create(Categorical(name, Names(10), 1.5, mechanism));
    ASSERT_TRUE(metric.ok()) << metric.status();
    absl::StatusOr<CategoricalDesign> design = CategoricalDesignFromWire(metric->design());
    ASSERT_TRUE(design.ok()) << design.status();
    v1::SubmitReportsRequest request;
    std::vector<int64_t> want(10, 0);
    for (int i = 0; i < 40; ++i) {
      absl::StatusOr<CategoricalReport> r = RandomizeCategory(*design, i % 10, gen);
      ASSERT_TRUE(r.ok());
      AddSupport(*design, *r, &want);
      v1::Report report = Report(name, static_cast<char>('A' + i));
      *report.mutable_categorical() = CategoricalReportToProto(*design, *r);
      *request.add_reports() = report;
    }
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->accepted(), 40u);
    EXPECT_EQ(response->rejections_size(), 0);
    absl::StatusOr<std::vector<CountRow>> counts =
        storage_.ReadCounts((*registry_.Find(name))->id, 0, kNow + 1);
    ASSERT_TRUE(counts.ok());
    ASSERT_EQ(counts->size(), 1u);
    EXPECT_EQ((*counts)[0].n, 40);
    std::vector<int64_t> got = (*counts)[0].counters.Dense();
    got.resize(10, 0);
    EXPECT_EQ(got, want) << name;
  }
}

TEST_F(CategoricalTest, RejectsInvalidReportsPerMechanismNamingTheField) {
  CreateOneMetricPerMechanism();
  v1::CreateMetricRequest yes_no;
  yes_no.set_name("yn");
  yes_no.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(registry_.Create(yes_no).ok());

  v1::Report krr = Report("krr", 'a');
  krr.mutable_categorical()->set_category(3);
  v1::Report bad = krr;
  bad.set_report_id(std::string(16, 'b'));
  bad.mutable_categorical()->set_category(4);
  ExpectRejected(krr, bad, "reports[1].categorical.category: must be in [0, 4)");
  bad.mutable_categorical()->set_category(0);
  bad.set_bit(1);
  ExpectRejected(krr, bad, "reports[1].bit: must be 0");
  bad.set_bit(0);
  bad.clear_categorical();
  ExpectRejected(krr, bad, "reports[1].categorical: metric \"krr\" has 4 categories");

  v1::Report oue = Report("oue", 'c');
  oue.mutable_categorical()->set_bits(std::string("\x05\x02", 2));
  bad = oue;
  bad.set_report_id(std::string(16, 'd'));
  bad.mutable_categorical()->set_bits(std::string("\x05", 1));
  ExpectRejected(oue, bad, "reports[1].categorical.bits: must be exactly 2 bytes");
  bad.mutable_categorical()->set_bits(std::string("\x05\x04", 2));  // bit 10 of k = 10
  ExpectRejected(oue, bad, "reports[1].categorical.bits: bit 10 is set");

  v1::Report olh = OlhReport('e');
  bad = olh;
  bad.set_report_id(std::string(16, 'f'));
  bad.mutable_categorical()->set_hash_a(0);
  ExpectRejected(olh, bad, "reports[1].categorical.hash_a: must be in [1, ");
  bad.mutable_categorical()->set_hash_a(1);
  bad.mutable_categorical()->set_bucket(4);
  ExpectRejected(olh, bad, "reports[1].categorical.bucket: must be in [0, 4)");

  v1::Report yn = Report("yn", 'g');
  yn.set_bit(1);
  bad = yn;
  bad.set_report_id(std::string(16, 'h'));
  bad.mutable_categorical()->set_category(1);
  ExpectRejected(yn, bad, "reports[1].categorical: metric \"yn\" is a yes/no metric");
}

// A report carrying another mechanism's fields was made for another design: reading only the
// mechanism's own fields would count it (a k-RR metric would count an OLH report as category 0).
TEST_F(CategoricalTest, RejectsReportsCarryingAnotherMechanismsFields) {
  CreateOneMetricPerMechanism();

  v1::Report krr = Report("krr", 'a');
  krr.mutable_categorical()->set_category(2);
  v1::Report bad = krr;
  bad.set_report_id(std::string(16, 'b'));
  bad.mutable_categorical()->set_category(0);
  bad.mutable_categorical()->set_hash_a(12345);
  bad.mutable_categorical()->set_bucket(1);
  ExpectRejected(krr, bad, "reports[1].categorical.hash_a: must be unset in a k_rr report");
  bad.mutable_categorical()->set_hash_a(0);
  ExpectRejected(krr, bad, "reports[1].categorical.bucket: must be unset");
  bad.mutable_categorical()->set_bucket(0);
  bad.mutable_categorical()->set_bits(std::string("\x01", 1));
  ExpectRejected(krr, bad, "reports[1].categorical.bits: must be unset");

  v1::Report oue = Report("oue", 'c');
  oue.mutable_categorical()->set_bits(std::string("\x05\x02", 2));
  bad = oue;
  bad.set_report_id(std::string(16, 'd'));
  bad.mutable_categorical()->set_category(3);
  ExpectRejected(oue, bad, "reports[1].categorical.category: must be unset");

  v1::Report olh = OlhReport('e');
  bad = olh;
  bad.set_report_id(std::string(16, 'f'));
  bad.mutable_categorical()->set_category(1);
  ExpectRejected(olh, bad, "reports[1].categorical.category: must be unset");
}

}  // namespace categorical_ingest_test
}  // namespace
}  // namespace deniable::server
