// Issue 17, end to end with the real SDK and two real collector cores: a device that cached
// "two_coin v1" of a metric from one collector and then talks to another whose v1 of that metric
// is "symmetric_epsilon 0.5" (another server, or a database the operator recreated) must not
// have its bits counted there. The collector rejects each such report alone, the SDK drops and
// counts them without randomizing their answers again, fetches the collector's design, and its
// next reports are stored.
#include <memory>
#include <random>
#include <string>

#include "absl/synchronization/mutex.h"
#include "deniable/client/reporter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/storage/memory/memory_storage.h"
#include "tests/support/direct_transport.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 3600;

// One collector: storage, registry and ingestor, with metric "m" of the given design.
struct Collector {
  explicit Collector(const Clock* clock, const v1::DesignParameters& design)
      : registry(&storage, clock),
        ingestor(&registry, &storage, clock, {}),
        transport(&registry, &ingestor) {
    v1::CreateMetricRequest create;
    create.set_name("m");
    *create.mutable_design() = design;
    EXPECT_TRUE(registry.Create(create).ok());
  }
  server::MemoryStorage storage;
  server::MetricRegistry registry;
  server::Ingestor ingestor;
  testing::DirectTransport transport;
};

// Forwards to whichever collector the test points it at (the app's target changed).
class SwitchableTransport : public client::ReportTransport {
 public:
  explicit SwitchableTransport(client::ReportTransport* target) : target_(target) {}
  void Point(client::ReportTransport* target) {
    absl::MutexLock lock(&mu_);
    target_ = target;
  }
  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration timeout) override {
    return Target()->GetDesign(metric, timeout);
  }
  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration timeout) override {
    return Target()->SubmitReports(request, timeout);
  }

 private:
  client::ReportTransport* Target() {
    absl::MutexLock lock(&mu_);
    return target_;
  }
  absl::Mutex mu_;
  client::ReportTransport* target_;
};

TEST(DesignFingerprintTest, ReportsRandomizedWithAnotherCollectorsDesignAreDroppedNotCounted) {
  FakeClock clock(absl::FromUnixSeconds(kNow));
  v1::DesignParameters two_coin, epsilon_half;
  two_coin.mutable_two_coin();
  epsilon_half.mutable_symmetric_epsilon()->set_epsilon(0.5);
  Collector a(&clock, two_coin);
  Collector b(&clock, epsilon_half);
  auto transport = std::make_shared<SwitchableTransport>(&a.transport);
  client::ReporterOptions options;
  options.background_sending = false;
  options.one_report_per_period = false;  // each Report() queues: the counts are exact
  std::mt19937_64 gen(17);
  auto reporter = client::Reporter::CreateForTesting(transport, options, gen, &clock);

  // Cached from A; three reports queued with A's design, then the app talks to B.
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  transport->Point(&b.transport);
  absl::Status flushed = reporter->Flush(absl::Seconds(30));
  EXPECT_EQ(flushed.code(), absl::StatusCode::kFailedPrecondition) << flushed;
  EXPECT_THAT(flushed.message(), HasSubstr("design_fingerprint"));
  EXPECT_EQ(b.storage.ReportCount(), 0) << "B counted bits drawn with A's design";
  absl::StatusOr<client::DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->counters.dropped_design_mismatch, 3);
  EXPECT_EQ(stats->counters.dropped_rejected, 0);
  EXPECT_EQ(stats->queued, 0);
  absl::StatusOr<std::map<std::string, client::MetricLedger>> ledger = reporter->Ledger();
  ASSERT_TRUE(ledger.ok());
  EXPECT_EQ((*ledger)["m"].randomizations, 1) << "the dropped answers were randomized again";

  // B's design is fetched again: the next reports carry B's fingerprint, draw anew with B's
  // design (A's memoized bit is forgotten) and are stored.
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  ASSERT_TRUE(reporter->Flush(absl::Seconds(30)).ok());
  EXPECT_EQ(b.storage.ReportCount(), 2);
  EXPECT_EQ(a.storage.ReportCount(), 0);
  ledger = reporter->Ledger();
  EXPECT_EQ((*ledger)["m"].randomizations, 2);
  EXPECT_EQ(reporter->Stats()->counters.acknowledged, 2);
}

}  // namespace
}  // namespace deniable
