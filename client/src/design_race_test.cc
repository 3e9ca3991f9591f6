// Issue 25: a design disowned by the collector while the SDK fetches or reports with it. Each
// test stops one thread at a gate (a store call, a clock read) and disowns the design from the
// test's thread meanwhile, so the interleaving is exact, not left to the scheduler.
#include <atomic>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "deniable/client/reporter.h"
#include "deniable/convert/design_convert.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace design_race_test {

constexpr int64_t kNow = 1'700'001'234;

// Serves metric "m" (two coins, version 1) with the fingerprint of the moment; rejects every
// report as randomized with another design (FAILED_PRECONDITION, permanent) while `mismatch`.
class DisowningTransport : public ReportTransport {
 public:
  DisowningTransport() { DesignToProto(Design::TwoCoin(), 1, &design_); }

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    absl::MutexLock lock(&mu_);
    if (designs_down) return absl::UnavailableError("designs down");
    v1::GetDesignResponse response;
    response.set_metric(metric);
    *response.mutable_design() = design_;
    response.set_time_precision_seconds(3600);
    response.set_design_fingerprint(fingerprint);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    absl::MutexLock lock(&mu_);
    v1::SubmitReportsResponse response;
    for (int i = 0; i < request.reports_size(); ++i) {
      if (mismatch) {
        v1::ReportRejection* r = response.add_rejections();
        r->set_index(static_cast<uint32_t>(i));
        r->set_code(static_cast<int>(absl::StatusCode::kFailedPrecondition));
        r->set_reason("design fingerprint differs");
        r->set_permanent(true);
      } else {
        sent.push_back(request.reports(i));
      }
    }
    return response;
  }

  void Set(bool is_mismatch, bool are_designs_down, uint64_t new_fingerprint) {
    absl::MutexLock lock(&mu_);
    mismatch = is_mismatch;
    designs_down = are_designs_down;
    fingerprint = new_fingerprint;
  }
  std::vector<v1::Report> Sent() {
    absl::MutexLock lock(&mu_);
    return sent;
  }

 private:
  absl::Mutex mu_;
  v1::Design design_;
  bool mismatch ABSL_GUARDED_BY(mu_) = false;
  bool designs_down ABSL_GUARDED_BY(mu_) = false;
  uint64_t fingerprint ABSL_GUARDED_BY(mu_) = 1;
  std::vector<v1::Report> sent ABSL_GUARDED_BY(mu_);
};

// One-shot gate: the armed call announces it has arrived, then waits to be released.
struct Gate {
  std::atomic<bool> armed{false};
  absl::Notification arrived;
  absl::Notification released;
  void PassOrWait() {
    if (!armed.exchange(false)) return;
    arrived.Notify();
    released.WaitForNotification();
  }
};

// A memory store whose next SaveDesign, once armed, stops at `save_gate`.
class GatedStore : public DeviceStore {
 public:
  explicit GatedStore(Gate* save_gate) : inner_(MakeMemoryDeviceStore()), gate_(save_gate) {}
  absl::StatusOr<std::optional<bool>> LookupMemo(const std::string& metric, uint32_t version,
                                                 bool value) override {
    return inner_->LookupMemo(metric, version, value);
  }
  absl::StatusOr<std::optional<v1::CategoricalReport>> LookupCategoryMemo(
      const std::string& metric, uint32_t version, int32_t category) override {
    return inner_->LookupCategoryMemo(metric, version, category);
  }
  absl::StatusOr<std::optional<v1::Report>> LookupNumericMemo(const std::string& metric,
                                                              uint32_t version,
                                                              int32_t level) override {
    return inner_->LookupNumericMemo(metric, version, level);
  }
  absl::StatusOr<std::optional<double>> LoadNumericAlpha(const std::string& metric) override {
    return inner_->LoadNumericAlpha(metric);
  }
  absl::Status SaveNumericAlpha(const std::string& metric, double alpha) override {
    return inner_->SaveNumericAlpha(metric, alpha);
  }
  absl::StatusOr<std::optional<v1::Report>> LookupStringMemo(const std::string& metric,
                                                             uint32_t version,
                                                             const std::string& key) override {
    return inner_->LookupStringMemo(metric, version, key);
  }
  absl::StatusOr<std::optional<uint32_t>> LoadHeavyHittersGroup(const std::string& metric,
                                                                uint32_t version,
                                                                uint64_t salt) override {
    return inner_->LoadHeavyHittersGroup(metric, version, salt);
  }
  absl::Status SaveHeavyHittersGroup(const std::string& metric, uint32_t version, uint64_t salt,
                                     uint32_t group) override {
    return inner_->SaveHeavyHittersGroup(metric, version, salt, group);
  }
  absl::Status CommitReport(const ReportCommit& commit) override {
    return inner_->CommitReport(commit);
  }
  absl::StatusOr<std::vector<QueuedReport>> PeekOldest(int64_t limit) override {
    return inner_->PeekOldest(limit);
  }
  absl::Status RemoveReports(const std::vector<int64_t>& sequences, bool acknowledged,
                             const DeliveryCounters& counters) override {
    return inner_->RemoveReports(sequences, acknowledged, counters);
  }
  absl::Status CountRepeatedReport(const std::string& metric) override {
    return inner_->CountRepeatedReport(metric);
  }
  absl::Status ForgetMemo(const std::string& metric, uint32_t version) override {
    return inner_->ForgetMemo(metric, version);
  }
  absl::StatusOr<int64_t> QueueSize() override { return inner_->QueueSize(); }
  absl::StatusOr<std::map<std::string, MetricLedger>> ReadLedger() override {
    return inner_->ReadLedger();
  }
  absl::StatusOr<DeliveryCounters> ReadCounters() override { return inner_->ReadCounters(); }
  absl::StatusOr<std::optional<std::string>> LoadDesign(const std::string& metric) override {
    return inner_->LoadDesign(metric);
  }
  absl::Status SaveDesign(const std::string& metric, const std::string& serialized) override {
    gate_->PassOrWait();
    return inner_->SaveDesign(metric, serialized);
  }

 private:
  std::unique_ptr<DeviceStore> inner_;
  Gate* gate_;
};

// A fixed clock whose next Now(), once armed, stops at `gate`.
class GatedClock : public Clock {
 public:
  explicit GatedClock(Gate* gate) : gate_(gate) {}
  absl::Time Now() const override {
    gate_->PassOrWait();
    return absl::FromUnixSeconds(kNow);
  }

 private:
  Gate* gate_;
};

class DesignRaceTest : public ::testing::Test {
 protected:
  DesignRaceTest() : clock_(&clock_gate_), gen_(11) {
    options_.background_sending = false;
    options_.one_report_per_period = false;
    auto store = std::make_unique<GatedStore>(&save_gate_);
    store_ = store.get();
    reporter_ = Reporter::CreateForTesting(transport_, options_, gen_, &clock_, std::move(store));
  }

  // The collector disowns the design of every queued report: Flush drops them, marks "m"
  // disowned, and (designs down) cannot fetch it again.
  void DisownFromTheCollector() {
    transport_->Set(/*is_mismatch=*/true, /*are_designs_down=*/true, /*new_fingerprint=*/2);
    EXPECT_EQ(reporter_->Flush().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(reporter_->Stats()->counters.dropped_design_mismatch, 1);
  }

  std::shared_ptr<DisowningTransport> transport_ = std::make_shared<DisowningTransport>();
  Gate save_gate_;
  Gate clock_gate_;
  GatedClock clock_;
  std::mt19937_64 gen_;
  ReporterOptions options_;
  GatedStore* store_ = nullptr;
  std::unique_ptr<Reporter> reporter_;
};

// The race of issue 25: a fetch read "not disowned", the collector disowned the design, and the
// fetch then cleared the mark without forgetting the memo, so the bit drawn with the disowned
// design went out under the new fingerprint.
TEST_F(DesignRaceTest, ADisownDuringAFetchForgetsTheMemoOfThatVersion) {
  ASSERT_TRUE(reporter_->Report("m", true).ok());  // memoizes a bit drawn with fingerprint 1
  ASSERT_TRUE(store_->LookupMemo("m", 1, true)->has_value());

  save_gate_.armed = true;  // the next fetch stops after GetDesign, before it installs
  std::thread fetcher([&] {
    transport_->Set(false, false, 2);
    EXPECT_TRUE(reporter_->Prefetch({"m"}, absl::Seconds(5)).ok());
  });
  save_gate_.arrived.WaitForNotification();
  DisownFromTheCollector();
  save_gate_.released.Notify();
  fetcher.join();

  EXPECT_FALSE(store_->LookupMemo("m", 1, true)->has_value())
      << "the memo drawn with the disowned design survived the fetch";
  transport_->Set(false, false, 2);
  ASSERT_TRUE(reporter_->Report("m", true).ok());
  ASSERT_TRUE(reporter_->Flush().ok());
  ASSERT_EQ(transport_->Sent().size(), 1u);
  EXPECT_EQ(transport_->Sent()[0].design_fingerprint(), 2u);
  EXPECT_EQ(reporter_->Ledger()->at("m").randomizations, 2) << "the bit was not drawn again";
}

// The same race on the reporting side: Report() looked the design up, the collector disowned
// it and a fetch installed the new one, then Report() drew and memoized with the old copy.
TEST_F(DesignRaceTest, AReportWhoseDesignIsReplacedMeanwhileDrawsWithTheNewOne) {
  ASSERT_TRUE(reporter_->Report("m", true).ok());

  clock_gate_.armed = true;  // the next Report() stops between its lookup and its draw
  std::thread reporting([&] { EXPECT_TRUE(reporter_->Report("m", true).ok()); });
  clock_gate_.arrived.WaitForNotification();
  DisownFromTheCollector();
  transport_->Set(false, false, 2);
  ASSERT_TRUE(reporter_->Prefetch({"m"}, absl::Seconds(5)).ok());  // installs fingerprint 2
  clock_gate_.released.Notify();
  reporting.join();

  ASSERT_TRUE(reporter_->Flush().ok());
  ASSERT_EQ(transport_->Sent().size(), 1u);
  EXPECT_EQ(transport_->Sent()[0].design_fingerprint(), 2u)
      << "drawn with the design the collector disowned";
}

}  // namespace design_race_test
}  // namespace
}  // namespace deniable::client
