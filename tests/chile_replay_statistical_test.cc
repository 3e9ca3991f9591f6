// The Chile survey replayed 200 times through the SDK with seeded generators: the debiased
// estimate is centred on the truth and the 95 % Wilson intervals cover it about 95 % of the time.
#include <random>
#include <string>

#include "absl/random/bit_gen_ref.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"
#include "tests/support/direct_transport.h"
#include "tools/cli/survey_replay.h"

namespace deniable {
namespace {

constexpr int64_t kNow = 1'700'000'000;

TEST(ChileReplayStatisticalTest, MeanEstimateIsNearTruthAndIntervalsCoverIt) {
  tools::SurveySpec spec{DENIABLE_CHILE_CSV, "vote", "Y", {}};
  absl::StatusOr<std::vector<tools::SurveyRow>> rows = tools::ReadSurvey(spec);
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_EQ(rows->size(), 2532u);
  const double truth = 868.0 / 2532.0;

  constexpr int kRuns = 200;
  std::mt19937_64 engine(20261121);  // fixed seed: the outcome below is deterministic
  absl::BitGenRef gen(engine);
  FakeClock clock(absl::FromUnixSeconds(kNow));
  double sum = 0;
  int covered = 0;
  for (int run = 0; run < kRuns; ++run) {
    server::MemoryStorage storage;
    server::MetricRegistry registry(&storage, &clock);
    server::Ingestor ingestor(&registry, &storage, &clock, server::IngestOptions{});
    server::PrevalenceQuery query(&registry, &storage);
    v1::CreateMetricRequest create;
    create.set_name("chile_vote_yes");
    create.mutable_design()->mutable_two_coin();
    ASSERT_TRUE(registry.Create(create).ok());
    auto transport = std::make_shared<testing::DirectTransport>(&registry, &ingestor);

    absl::StatusOr<tools::ReplayResult> replay = tools::ReplaySurvey(
        *rows, "chile_vote_yes", transport, client::ReporterOptions{}, &gen, &clock);
    ASSERT_TRUE(replay.ok()) << replay.status();
    ASSERT_EQ(replay->true_yes, 868);

    v1::GetPrevalenceRequest request;
    request.set_metric("chile_vote_yes");
    absl::StatusOr<v1::Prevalence> p = query.Get(request);
    ASSERT_TRUE(p.ok()) << p.status();
    ASSERT_EQ(p->n(), 2532);
    sum += p->estimate_unbiased();
    covered += (p->ci_lower() <= truth && truth <= p->ci_upper()) ? 1 : 0;
  }
  const double mean = sum / kRuns;
  // SE of one estimate is about 2 points; of the mean of 200, about 0.14 points.
  EXPECT_NEAR(mean, truth, 0.01);
  EXPECT_GE(covered, 180);
  EXPECT_LE(covered, 198);
  RecordProperty("mean_estimate", std::to_string(mean));
  RecordProperty("covered_of_200", covered);
}

}  // namespace
}  // namespace deniable
