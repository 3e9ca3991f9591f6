// Two collectors on one database (here two registries on one MemoryStorage): a design version
// added through one is seen by the other's GetDesign within the cache age, and accepted in its
// reports at once.
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace shared_database_metrics_test {

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

class SharedDatabaseMetricsTest : public ::testing::Test {
 protected:
  SharedDatabaseMetricsTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        first_(&storage_, &clock_, absl::Seconds(5)),
        second_(&storage_, &clock_, absl::Seconds(5)) {}

  void SetUp() override {
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    ASSERT_TRUE(first_.Create(create).ok());
    // The second collector has the metric cached at version 1.
    ASSERT_EQ((*second_.Find("m"))->current().version, 1u);
    v1::AddDesignVersionRequest add;
    add.set_metric("m");
    add.mutable_design()->mutable_forced_response()->set_p(0.5);
    add.mutable_design()->mutable_forced_response()->set_q(0.5);
    absl::StatusOr<v1::Metric> added = first_.AddVersion(add);
    ASSERT_TRUE(added.ok()) << added.status();
  }

  MemoryStorage storage_;
  FakeClock clock_;
  MetricRegistry first_;
  MetricRegistry second_;
};

TEST_F(SharedDatabaseMetricsTest, CachedMetricIsReadAgainOnceOlderThanTheCacheAge) {
  clock_.Advance(absl::Seconds(4));
  EXPECT_EQ((*second_.Find("m"))->current().version, 1u) << "within the bound: cached";
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ((*second_.Find("m"))->current().version, 2u) << "after 5 s: read again";
}

TEST_F(SharedDatabaseMetricsTest, InfiniteCacheAgeNeverReadsAgain) {
  MetricRegistry only_writer(&storage_, &clock_);
  clock_.Advance(absl::Hours(1));
  ASSERT_EQ((*only_writer.Find("m"))->current().version, 2u);  // first read
}

TEST_F(SharedDatabaseMetricsTest, ReportOfAVersionAddedElsewhereIsAcceptedAtOnce) {
  Ingestor ingestor(&second_, &storage_, &clock_, IngestOptions{});
  v1::SubmitReportsRequest request;
  for (char id : {'a', 'b'}) {
    v1::Report* r = request.add_reports();
    r->set_metric("m");
    r->set_design_version(2);  // not in second_'s cache
    r->set_bit(1);
    r->set_report_id(std::string(16, id));
    r->set_event_time_seconds(kNow);
  }
  v1::Report* bogus = request.add_reports();
  *bogus = request.reports(0);
  bogus->set_design_version(9);
  bogus->set_report_id(std::string(16, 'c'));
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->accepted(), 2u);
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_EQ(response->rejections(0).index(), 2u);
  EXPECT_EQ(storage_.ReportCount(), 2);
}

}  // namespace shared_database_metrics_test
}  // namespace
}  // namespace deniable::server
