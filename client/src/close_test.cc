// Reporter::Close(): the exit path of a reporter that lives until the process ends (issue 25).
#include <memory>
#include <random>

#include "client/src/testing/fake_transport.h"
#include "deniable/client/reporter.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {

using ::deniable::client::testing::FakeTransport;
using ::testing::HasSubstr;

class CloseTest : public ::testing::Test {
 protected:
  CloseTest() : clock_(absl::FromUnixSeconds(1'700'001'234)), gen_(5) {
    options_.background_sending = false;
    options_.one_report_per_period = false;
    options_.initial_backoff = absl::Microseconds(10);
    options_.max_backoff = absl::Microseconds(100);
  }
  std::unique_ptr<Reporter> Make() {
    return Reporter::CreateForTesting(transport_, options_, gen_, &clock_);
  }

  std::shared_ptr<FakeTransport> transport_ = std::make_shared<FakeTransport>();
  ReporterOptions options_;
  FakeClock clock_;
  std::mt19937_64 gen_;
};

TEST_F(CloseTest, CloseSendsWhatIsQueuedThenRefusesEveryCall) {
  auto reporter = Make();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(reporter->Report("m", true).ok());
  EXPECT_TRUE(reporter->Close(absl::Seconds(10)).ok());
  EXPECT_EQ(transport_->StoredCount(), 3);
  EXPECT_EQ(reporter->pending(), 0u);

  std::string id = "stale";
  absl::Status report = reporter->Report("m", true, &id);
  EXPECT_EQ(report.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(report.message(), HasSubstr("closed"));
  EXPECT_TRUE(id.empty());
  EXPECT_EQ(reporter->Report("m", "Y").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Prefetch({"m"}, absl::Seconds(1)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Categories("m").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(reporter->Ledger()->at("m").reports_accepted, 3) << "the ledger is still readable";

  EXPECT_TRUE(reporter->Close(absl::Seconds(10)).ok()) << "a second Close is a no-op";
  const int submits = transport_->SubmitCount();
  reporter.reset();
  EXPECT_EQ(transport_->SubmitCount(), submits) << "the destructor sent after Close";
}

TEST_F(CloseTest, CloseWithTheCollectorDownReturnsTheFailureAndKeepsTheReports) {
  auto reporter = Make();
  ASSERT_TRUE(reporter->Report("m", true).ok());
  transport_->SetDown(true);
  absl::Status closed = reporter->Close(absl::Seconds(10));
  EXPECT_EQ(closed.code(), absl::StatusCode::kUnavailable) << closed;
  EXPECT_EQ(reporter->pending(), 1u) << "an unsent report stays in the store";
  const int submits = transport_->SubmitCount();
  EXPECT_GE(submits, 1);
  reporter.reset();
  EXPECT_EQ(transport_->SubmitCount(), submits) << "the destructor tried again after Close";
}

TEST_F(CloseTest, CloseWithNothingQueuedMakesNoCall) {
  options_.background_sending = true;
  options_.send_interval = absl::Hours(1);
  auto reporter = Make();
  EXPECT_TRUE(reporter->Close(absl::Seconds(10)).ok());  // joins the sender
  EXPECT_EQ(transport_->SubmitCount(), 0);
  EXPECT_EQ(transport_->design_calls, 0);
}

}  // namespace
}  // namespace deniable::client
