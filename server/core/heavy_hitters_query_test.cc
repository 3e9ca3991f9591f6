// Heavy-hitters metrics through the registry, the ingestor and the queries (issue 40): a metric
// of string values is created with a drawn salt (fixed in the fixture, so its statistical checks
// repeat exactly: each salt hashes its own collisions), reports randomized by its mechanism are
// validated and counted like any other kind, and GetTopValues / GetFrequencies answer from the
// summed sketch what common/heavy_hitters_estimate.h computes from the same counters.
#include "server/core/heavy_hitters_query.h"

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "deniable/common/draws.h"
#include "deniable/common/heavy_hitters_estimate.h"
#include "deniable/common/heavy_hitters_mechanism.h"
#include "deniable/convert/mechanism_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/core/ingestor.h"
#include "server/core/metric_registry.h"
#include "server/core/prevalence_query.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable::server {
namespace {
namespace heavy_hitters_query_test {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'006'400;
constexpr uint64_t kSalt = 41;  // MetricRegistry's heavy_hitters_salt: every run the same run

class HeavyHittersQueryTest : public ::testing::Test {
 protected:
  HeavyHittersQueryTest()
      : clock_(absl::FromUnixSeconds(kNow)),
        registry_(&storage_, &clock_, absl::InfiniteDuration(), kSalt),
        ingestor_(&registry_, &storage_, &clock_, IngestOptions{}),
        prevalence_(&registry_, &storage_, QueryOptions{}),
        query_(&registry_, &storage_) {}

  v1::Metric Create(const std::string& name) { return Create(name, &registry_); }
  static v1::Metric Create(const std::string& name, MetricRegistry* registry) {
    v1::CreateMetricRequest request;
    request.set_name(name);
    v1::HeavyHitters* h = request.mutable_design()->mutable_heavy_hitters();
    h->set_epsilon(4);
    h->set_max_length(8);
    h->set_salt(42);  // replaced by the server's draw (or its fixed salt)
    absl::StatusOr<v1::Metric> created = registry->Create(request);
    EXPECT_TRUE(created.ok()) << created.status();
    return *created;
  }

  // One report per device: `counts[i]` devices hold values[i]; every report through the metric's
  // own mechanism, as an SDK sends it.
  void Send(const v1::Metric& metric, const std::vector<std::string>& values,
            const std::vector<int>& counts, uint64_t seed) {
    std::shared_ptr<const Mechanism> mechanism = *MechanismForWire(metric.design());
    std::mt19937_64 gen(seed);
    BitGenDraws draws(gen);
    v1::SubmitReportsRequest request;
    for (size_t v = 0; v < values.size(); ++v) {
      for (int i = 0; i < counts[v]; ++i) {
        const uint32_t group = mechanism->DrawDeviceGroup(draws);
        v1::Report* r = request.add_reports();
        r->set_metric(metric.name());
        r->set_design_version(1);
        std::string id(16, '\0');
        for (int b = 0; b < 8; ++b) id[b] = static_cast<char>((next_id_ >> (8 * b)) & 0xff);
        ++next_id_;
        r->set_report_id(id);
        r->set_event_time_seconds(kNow - 3600);
        WireAnswerToProto(*mechanism->RandomizeString(values[v], group, draws), r);
        if (request.reports_size() == 1000) Submit(&request);
      }
    }
    Submit(&request);
  }

  void Submit(v1::SubmitReportsRequest* request) {
    if (request->reports_size() == 0) return;
    absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(*request);
    ASSERT_TRUE(response.ok()) << response.status();
    ASSERT_EQ(response->accepted(), static_cast<uint32_t>(request->reports_size()))
        << response->ShortDebugString();
    request->clear_reports();
  }

  FakeClock clock_;
  MemoryStorage storage_;
  MetricRegistry registry_;
  Ingestor ingestor_;
  PrevalenceQuery prevalence_;
  HeavyHittersQuery query_;
  uint64_t next_id_ = 1;
};

TEST_F(HeavyHittersQueryTest, CreateDrawsTheSaltAndTheKindIsTheMechanisms) {
  MetricRegistry drawing(&storage_, &clock_);  // the default: every salt drawn
  const v1::Metric a = Create("sig_a", &drawing);
  const v1::Metric b = Create("sig_b", &drawing);
  EXPECT_TRUE(a.design().parameters().has_heavy_hitters());
  EXPECT_NE(a.design().parameters().heavy_hitters().salt(), 42u);
  EXPECT_NE(a.design().parameters().heavy_hitters().salt(),
            b.design().parameters().heavy_hitters().salt());
  EXPECT_EQ(a.design().parameters().heavy_hitters().width(), 1024u);  // defaults filled in
  EXPECT_TRUE((*drawing.Find("sig_a"))->current().mechanism->TakesStrings());
}

TEST_F(HeavyHittersQueryTest, AFixedSaltIsEveryDesignsSalt) {
  EXPECT_EQ(Create("sig_a").design().parameters().heavy_hitters().salt(), kSalt);
  EXPECT_EQ(Create("sig_b").design().parameters().heavy_hitters().salt(), kSalt);
}

TEST_F(HeavyHittersQueryTest, TopFindsTheCommonValuesAndMatchesTheSketch) {
  const v1::Metric metric = Create("sig");
  const std::vector<std::string> values = {"alpha", "beta", "gamma.x", "d"};
  std::vector<int> counts = {9000, 6000, 4000, 0};
  Send(metric, values, counts, 7);
  // A long tail of rare values.
  std::vector<std::string> tail;
  for (int i = 0; i < 2000; ++i) tail.push_back("t" + std::to_string(i));
  Send(metric, tail, std::vector<int>(tail.size(), 5), 8);

  v1::GetTopValuesRequest request;
  request.set_metric("sig");
  absl::StatusOr<v1::TopValues> top = query_.Top(request);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_EQ(top->devices(), 29000);
  ASSERT_GE(top->values_size(), 3);
  EXPECT_EQ(top->values(0).value(), "alpha");
  EXPECT_EQ(top->values(1).value(), "beta");
  EXPECT_EQ(top->values(2).value(), "gamma.x");
  for (int i = 0; i < 3; ++i) {
    const double truth = counts[i] / 29000.0;
    EXPECT_LE(top->values(i).simultaneous_lower(), truth) << i;
    EXPECT_GE(top->values(i).simultaneous_upper(), truth) << i;
  }
  EXPECT_GT(top->detection_threshold(), 0);
  EXPECT_LT(top->detection_threshold(), 0.3);

  // The same figures as common's discovery on the counters storage holds.
  std::vector<CountRow> rows = *storage_.ReadCounts((*registry_.Find("sig"))->id, 0, kNow);
  const auto& mechanism =
      static_cast<const HeavyHittersMechanism&>(*(*registry_.Find("sig"))->current().mechanism);
  std::vector<int64_t> sums(HeavyHittersCounterCount(mechanism.design()), 0);
  for (const CountRow& row : rows) {
    for (const auto& [j, c] : row.counters) sums[j] += c;
  }
  const HeavyHittersAnswer expected =
      *DiscoverHeavyHitters(*HeavyHittersSketch::FromCounters(mechanism.design(), sums), {});
  ASSERT_EQ(static_cast<size_t>(top->values_size()), expected.values.size());
  EXPECT_DOUBLE_EQ(top->values(0).share(), expected.values[0].share);
  EXPECT_DOUBLE_EQ(top->detection_threshold(), expected.detection_threshold);
}

TEST_F(HeavyHittersQueryTest, FrequenciesOfGivenValues) {
  const v1::Metric metric = Create("sig");
  Send(metric, {"alpha", "beta"}, {3000, 1000}, 9);
  v1::GetFrequenciesRequest request;
  request.set_metric("sig");
  request.add_values("beta");
  request.add_values("never");
  absl::StatusOr<v1::TopValues> f = query_.Frequencies(request);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->values_size(), 2);
  EXPECT_EQ(f->values(0).value(), "beta");
  EXPECT_NEAR(f->values(0).share(), 0.25, 4 * f->values(0).standard_error());
  EXPECT_NEAR(f->values(1).share(), 0.0, 4 * f->values(1).standard_error());
  // Pooled: "beta" (4 bytes) is carried whole by group 0 and levels 5 .. 9.
  request.set_estimation_group_only(true);
  const v1::TopValues held_out = *query_.Frequencies(request);
  EXPECT_LT(held_out.values(0).reports(), f->values(0).reports());
}

// A whole-day range reads the day's first reports (window flags, as GetPrevalence does): each
// device active in the day counted once, however often it sent its memoized report. Any other
// range sums every report, a device once per report.
TEST_F(HeavyHittersQueryTest, AWholeDayCountsEachDeviceOnce) {
  const v1::Metric metric = Create("sig");
  std::shared_ptr<const Mechanism> mechanism = *MechanismForWire(metric.design());
  std::mt19937_64 gen(11);
  BitGenDraws draws(gen);
  // 9000 devices hold "alpha" and send their report 3 times in the day (only the first flagged
  // first-in-day); 3000 hold "beta" and send it once. Devices: 12000, beta 25 %; reports: 30000,
  // beta 10 %.
  const std::vector<std::string> values = {"alpha", "beta"};
  const std::vector<int> devices = {9000, 3000};
  const std::vector<int> copies = {3, 1};
  v1::SubmitReportsRequest request;
  for (size_t v = 0; v < values.size(); ++v) {
    for (int i = 0; i < devices[v]; ++i) {
      const uint32_t group = mechanism->DrawDeviceGroup(draws);
      const WireAnswer answer = *mechanism->RandomizeString(values[v], group, draws);
      for (int c = 0; c < copies[v]; ++c) {
        v1::Report* r = request.add_reports();
        r->set_metric("sig");
        r->set_design_version(1);
        std::string id(16, '\0');
        for (int b = 0; b < 8; ++b) id[b] = static_cast<char>((next_id_ >> (8 * b)) & 0xff);
        ++next_id_;
        r->set_report_id(id);
        r->set_event_time_seconds(kNow - 3600);  // 23:00 UTC, the day before kNow
        r->mutable_window_firsts()->set_day(c == 0);
        WireAnswerToProto(answer, r);
        if (request.reports_size() == 1000) Submit(&request);
      }
    }
  }
  Submit(&request);

  v1::GetTopValuesRequest top;
  top.set_metric("sig");
  top.set_start_time_seconds(kNow - 86400);
  top.set_end_time_seconds(kNow);  // exactly one UTC day
  absl::StatusOr<v1::TopValues> day = query_.Top(top);
  ASSERT_TRUE(day.ok()) << day.status();
  EXPECT_EQ(day->devices(), 12000);
  top.set_end_time_seconds(kNow + 3600);  // not whole days: every report
  absl::StatusOr<v1::TopValues> reports = query_.Top(top);
  ASSERT_TRUE(reports.ok()) << reports.status();
  EXPECT_EQ(reports->devices(), 30000);

  // Both candidates, so that each one's collisions with the other are taken out (the salt is the
  // server's draw). The shares are 25 % against 10 %, many standard errors (about 1 point) apart.
  v1::GetFrequenciesRequest f;
  f.set_metric("sig");
  f.add_values("beta");
  f.add_values("alpha");
  f.set_start_time_seconds(kNow - 86400);
  f.set_end_time_seconds(kNow);
  absl::StatusOr<v1::TopValues> share = query_.Frequencies(f);
  ASSERT_TRUE(share.ok()) << share.status();
  EXPECT_EQ(share->devices(), 12000);
  auto beta = [](const v1::TopValues& t) {
    for (const v1::ValueShare& v : t.values()) {
      if (v.value() == "beta") return v;
    }
    return v1::ValueShare();
  };
  EXPECT_NEAR(beta(*share).share(), 0.25, 0.05) << share->ShortDebugString();
  // The period form weighs alpha's devices three times: beta is 3000 of 30000 reports.
  f.set_end_time_seconds(kNow + 3600);
  share = query_.Frequencies(f);
  ASSERT_TRUE(share.ok()) << share.status();
  EXPECT_EQ(share->devices(), 30000);
  EXPECT_NEAR(beta(*share).share(), 0.10, 0.05) << share->ShortDebugString();
  // A day with reports but none flagged first in it says why it has none to count.
  top.set_start_time_seconds(kNow);
  top.set_end_time_seconds(kNow + 86400);
  v1::SubmitReportsRequest unflagged;
  v1::Report* r = unflagged.add_reports();
  r->set_metric("sig");
  r->set_design_version(1);
  r->set_report_id(std::string(16, 'u'));
  r->set_event_time_seconds(kNow);  // 00:00 UTC of the next day, no window flags
  WireAnswerToProto(*mechanism->RandomizeString("alpha", 0, draws), r);
  Submit(&unflagged);
  EXPECT_THAT(query_.Top(top).status().message(), HasSubstr("reports without window flags do not"));
}

TEST_F(HeavyHittersQueryTest, RefusalsNameTheField) {
  Create("sig");
  v1::GetFrequenciesRequest f;
  f.set_metric("sig");
  EXPECT_THAT(query_.Frequencies(f).status().message(), HasSubstr("values"));
  f.add_values("far too long for eight");
  EXPECT_THAT(query_.Frequencies(f).status().message(), HasSubstr("values[0]"));
  v1::GetTopValuesRequest t;
  t.set_metric("sig");
  t.set_max_prefixes(5000);
  EXPECT_THAT(query_.Top(t).status().message(), HasSubstr("max_prefixes"));
  t.set_max_prefixes(0);
  EXPECT_EQ(query_.Top(t).status().code(), absl::StatusCode::kFailedPrecondition);  // no reports
  v1::GetPrevalenceRequest p;
  p.set_metric("sig");
  // The kind's refusal (HeavyHittersMechanism::AnsweredByPrevalence), word for word.
  const absl::Status refused = prevalence_.Get(p).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(refused.message(),
            "metric: \"sig\" is a heavy-hitters metric (its values are strings): ask for its top "
            "values (GetTopValues, `deniable top`) or the frequency of given values "
            "(GetFrequencies, `deniable frequency`)");

  v1::CreateMetricRequest yes_no;
  yes_no.set_name("crashed");
  yes_no.mutable_design()->mutable_two_coin();
  ASSERT_TRUE(registry_.Create(yes_no).ok());
  t.set_metric("crashed");
  EXPECT_THAT(query_.Top(t).status().message(), HasSubstr("yes_no metric"));
  // A yes/no design cannot be added to a metric of strings, nor the reverse.
  v1::AddDesignVersionRequest add;
  add.set_metric("sig");
  add.mutable_design()->mutable_two_coin();
  EXPECT_THAT(registry_.AddVersion(add).status().message(), HasSubstr("heavy_hitters design"));
}

TEST_F(HeavyHittersQueryTest, BadReportsAreRefusedByField) {
  Create("sig");
  v1::SubmitReportsRequest request;
  v1::Report* r = request.add_reports();
  r->set_metric("sig");
  r->set_design_version(1);
  r->set_report_id(std::string(16, 'x'));
  r->set_event_time_seconds(kNow - 3600);
  r->set_bit(1);  // no heavy_hitters place
  absl::StatusOr<v1::SubmitReportsResponse> response = ingestor_.Submit(request);
  ASSERT_TRUE(response.ok()) << response.status();
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_THAT(response->rejections(0).reason(), HasSubstr("reports[0].heavy_hitters"));
  r->mutable_heavy_hitters()->set_row(16);
  response = ingestor_.Submit(request);
  ASSERT_EQ(response->rejections_size(), 1);
  EXPECT_THAT(response->rejections(0).reason(), HasSubstr("reports[0].heavy_hitters.row"));
}

}  // namespace heavy_hitters_query_test
}  // namespace
}  // namespace deniable::server
