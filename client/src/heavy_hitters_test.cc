// Heavy-hitters metrics on the device: ReportString, the group drawn once per design and kept in
// the store, the memo per value (keyed by a hash, never the value), the ledger and its cap,
// periods, the wire form, and the errors for an answer of the wrong kind or a bad value. The
// value never reaches the store in clear, a log line or an error message.
#include "deniable/common/heavy_hitters.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/src/testing/fake_transport.h"
#include "client/src/testing/fault_injecting_transport.h"
#include "client/src/testing/reporter_file_fixture.h"
#include "deniable/client/device_store.h"
#include "deniable/client/reporter.h"
#include "deniable/common/mechanism.h"
#include "deniable/convert/mechanism_convert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace heavy_hitters_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNow = 1'700'001'234;
constexpr uint64_t kSalt = 0x0123456789abcdefULL;
// A value no other part of a report or the store could hold by chance.
constexpr char kSecret[] = "zq-secret-value";

HeavyHittersDesign SmallDesign(uint64_t salt = kSalt) {
  HeavyHittersDesign design;
  design.max_length = 16;
  design.rows = 4;
  design.width = 16;
  design.salt = salt;
  return design;
}

class HeavyHittersReportTest : public testing::ReporterFileFixture {
 protected:
  HeavyHittersReportTest() : ReporterFileFixture(absl::FromUnixSeconds(kNow), 23, "hh") {
    transport_->SetHeavyHitters(SmallDesign());
    options_.log = [this](LogLevel, absl::string_view message) {
      absl::MutexLock lock(&log_mu_);
      logs_.emplace_back(message);
    };
  }
  // Each ReportString stands for a report of a new period (the memo's tests).
  std::unique_ptr<Reporter> MakeMemo(std::unique_ptr<DeviceStore> store = nullptr) {
    options_.one_report_per_period = false;
    return Make(std::move(store));
  }
  MetricLedger LedgerOf(Reporter& reporter) {
    absl::StatusOr<std::map<std::string, MetricLedger>> ledger = reporter.Ledger();
    EXPECT_TRUE(ledger.ok()) << ledger.status();
    return ledger.ok() && ledger->contains("m") ? ledger->at("m") : MetricLedger{};
  }
  // Every byte of the device file and its WAL.
  std::string FileBytes() {
    std::string bytes;
    for (const char* suffix : {"", "-wal"}) {
      std::ifstream in(path_ + suffix, std::ios::binary);
      bytes.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    return bytes;
  }
  std::vector<std::string> Logs() {
    absl::MutexLock lock(&log_mu_);
    return logs_;
  }

  absl::Mutex log_mu_;
  std::vector<std::string> logs_;
};

TEST_F(HeavyHittersReportTest, SendsOneSketchBitTheCollectorAccepts) {
  transport_->fingerprint = 0x55aa55aa55aa55aaULL;
  auto reporter = Make();
  std::string id;
  ASSERT_TRUE(reporter->ReportString("m", "oom@render", &id).ok());
  EXPECT_EQ(id.size(), 16u);
  ASSERT_TRUE(reporter->Flush().ok());
  const std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 1u);
  const v1::Report& r = sent[0];
  ASSERT_TRUE(r.has_heavy_hitters());
  EXPECT_FALSE(r.has_categorical());
  EXPECT_FALSE(r.has_numeric());
  EXPECT_LE(r.bit(), 1u);
  EXPECT_LE(r.heavy_hitters().group(), 17u);  // L = max_length + 1
  EXPECT_LT(r.heavy_hitters().row(), 4u);
  EXPECT_LT(r.heavy_hitters().coefficient(), 16u);
  EXPECT_EQ(r.design_version(), 1u);
  EXPECT_EQ(r.design_fingerprint(), 0x55aa55aa55aa55aaULL);
  EXPECT_EQ(r.report_id(), id);
  EXPECT_EQ(r.event_time_seconds(), kNow - kNow % 3600);
  // The collector's own check of the report (server side of the mechanism).
  std::shared_ptr<const Mechanism> mechanism = MechanismFor(SmallDesign());
  EXPECT_TRUE(mechanism->Validate(WireAnswerFromProto(r), "reports[0]", "m").ok());
  const MetricLedger ledger = LedgerOf(*reporter);
  EXPECT_EQ(ledger.randomizations, 1);
  EXPECT_DOUBLE_EQ(ledger.epsilon_spent, SmallDesign().epsilon);
}

// Strings carry the window flags as every kind does (issue 40): the device's first report of the
// metric in its day, week and month, whatever the value, so a whole-window `top` counts each
// device once (docs/statistics.md section 11.7).
TEST_F(HeavyHittersReportTest, StringReportsCarryTheWindowFlags) {
  auto reporter = MakeMemo();
  ASSERT_TRUE(reporter->ReportString("m", "a").ok());  // Tue 2023-11-14 22:33 UTC
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(reporter->ReportString("m", "b").ok());  // the same day, another value
  clock_.Advance(absl::Hours(1));
  ASSERT_TRUE(reporter->ReportString("m", "a").ok());  // Wed 00:33: a new day, same week
  ASSERT_TRUE(reporter->Flush().ok());
  std::vector<std::string> flags;
  for (const v1::Report& r : transport_->SentReports()) {
    ASSERT_TRUE(r.has_window_firsts());
    flags.push_back(std::string(r.window_firsts().day() ? "d" : ".") +
                    (r.window_firsts().week() ? "w" : ".") +
                    (r.window_firsts().month() ? "m" : "."));
  }
  EXPECT_EQ(flags, (std::vector<std::string>{"dwm", "...", "d.."}));
}

TEST_F(HeavyHittersReportTest, GroupIsDrawnOncePerDesignAndSurvivesARestart) {
  std::optional<uint32_t> group;
  {
    auto reporter = MakeMemo(OpenFile());
    ASSERT_TRUE(reporter->ReportString("m", "a").ok());
    ASSERT_TRUE(reporter->Flush().ok());
    group = transport_->SentReports().back().heavy_hitters().group();
  }
  {
    auto store = OpenFile();
    EXPECT_EQ(*store->LoadHeavyHittersGroup("m", 1, kSalt), group);
  }
  // Another process (a generator in another state): every value reports the same group.
  gen_.seed(99);
  auto reporter = MakeMemo(OpenFile());
  for (const char* value : {"b", "c", "dd", "eee", "a"}) {
    ASSERT_TRUE(reporter->ReportString("m", value).ok()) << value;
  }
  ASSERT_TRUE(reporter->Flush().ok());
  const std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 6u);
  for (const v1::Report& r : sent) EXPECT_EQ(r.heavy_hitters().group(), *group);
}

TEST_F(HeavyHittersReportTest, ANewVersionOrSaltDrawsItsOwnGroupAndDrawsTheValueAgain) {
  {
    auto reporter = MakeMemo(OpenFile());
    ASSERT_TRUE(reporter->ReportString("m", "a").ok());
  }
  // Version 2 of the design: a group of its own, and "a" drawn again for it.
  transport_->SetHeavyHitters(SmallDesign(), 2);
  {
    auto reporter = MakeMemo(OpenFile());
    ASSERT_TRUE(reporter->Prefetch({"m"}, absl::Seconds(1)).ok());
    ASSERT_TRUE(reporter->ReportString("m", "a").ok());
    EXPECT_EQ(LedgerOf(*reporter).randomizations, 2);
  }
  // A recreated collector (version 2 again, a new salt): a new design, new state.
  transport_->SetHeavyHitters(SmallDesign(kSalt + 1), 2);
  {
    auto reporter = MakeMemo(OpenFile());
    ASSERT_TRUE(reporter->Prefetch({"m"}, absl::Seconds(1)).ok());
    ASSERT_TRUE(reporter->ReportString("m", "a").ok());
    EXPECT_EQ(LedgerOf(*reporter).randomizations, 3);
  }
  auto store = OpenFile();
  EXPECT_TRUE(store->LoadHeavyHittersGroup("m", 1, kSalt)->has_value());
  EXPECT_TRUE(store->LoadHeavyHittersGroup("m", 2, kSalt)->has_value());
  EXPECT_TRUE(store->LoadHeavyHittersGroup("m", 2, kSalt + 1)->has_value());
  EXPECT_TRUE(
      store->LookupStringMemo("m", 2, HeavyHittersValueKey("m", 2, kSalt + 1, "a"))->has_value());
}

TEST_F(HeavyHittersReportTest, TheSameValueSendsTheSameReportAndEachNewValueSpendsOnce) {
  std::vector<v1::Report> first_run;
  {
    auto reporter = MakeMemo(OpenFile());
    for (const char* value : {"a", "a", "b", "a", "b"}) {
      ASSERT_TRUE(reporter->ReportString("m", value).ok()) << value;
    }
    ASSERT_TRUE(reporter->Flush().ok());
    const MetricLedger ledger = LedgerOf(*reporter);
    EXPECT_EQ(ledger.reports_accepted, 5);
    EXPECT_EQ(ledger.randomizations, 2);  // "a" and "b"
    EXPECT_DOUBLE_EQ(ledger.epsilon_spent, 2 * SmallDesign().epsilon);
    first_run = transport_->SentReports();
  }
  ASSERT_EQ(first_run.size(), 5u);
  auto same = [](const v1::Report& x, const v1::Report& y) {
    return x.bit() == y.bit() &&
           x.heavy_hitters().SerializeAsString() == y.heavy_hitters().SerializeAsString();
  };
  EXPECT_TRUE(same(first_run[0], first_run[1]));
  EXPECT_TRUE(same(first_run[0], first_run[3]));
  EXPECT_TRUE(same(first_run[2], first_run[4]));
  EXPECT_NE(first_run[0].report_id(), first_run[1].report_id());  // distinct reports
  // After a restart the memo answers "a" again, with no new draw.
  gen_.seed(1234);
  auto reporter = MakeMemo(OpenFile());
  ASSERT_TRUE(reporter->ReportString("m", "a").ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_TRUE(same(transport_->SentReports().back(), first_run[0]));
  EXPECT_EQ(LedgerOf(*reporter).randomizations, 2);
}

TEST_F(HeavyHittersReportTest, ValueNeverReachesTheFileALogLineOrAnError) {
  {
    auto reporter = Make(OpenFile());  // one report per period: the second call is logged
    ASSERT_TRUE(reporter->ReportString("m", kSecret).ok());
    ASSERT_TRUE(reporter->ReportString("m", kSecret).ok());
    ASSERT_TRUE(reporter->Flush().ok());
    ASSERT_TRUE(reporter->ReportString("m", kSecret).ok());  // the period's report is sent
    EXPECT_EQ(LedgerOf(*reporter).reports_repeated_in_period, 2);
  }
  const std::string bytes = FileBytes();
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes.find(kSecret), std::string::npos);
  EXPECT_EQ(bytes.find("zq-secret"), std::string::npos);
  ASSERT_FALSE(Logs().empty());
  for (const std::string& line : Logs()) EXPECT_THAT(line, Not(HasSubstr("zq-secret")));
  // The memo is there, under the value's key.
  auto store = OpenFile();
  EXPECT_TRUE(
      store->LookupStringMemo("m", 1, HeavyHittersValueKey("m", 1, kSalt, kSecret))->has_value());
}

TEST_F(HeavyHittersReportTest, BadValuesAreRefusedNamingValueWithoutRepeatingIt) {
  auto reporter = Make();
  std::string id = "stale";
  const std::string too_long = std::string("zq-secret-") + std::string(7, 'x');  // 17 > 16
  absl::Status s = reporter->ReportString("m", too_long, &id);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("value"));
  EXPECT_THAT(s.message(), HasSubstr("16"));
  EXPECT_THAT(s.message(), Not(HasSubstr("zq-secret")));
  EXPECT_TRUE(id.empty());
  s = reporter->ReportString("m", std::string("zq-secret\0x", 11));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("value"));
  EXPECT_THAT(s.message(), Not(HasSubstr("zq-secret")));
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(LedgerOf(*reporter).randomizations, 0);
  // The empty string is a value like any other.
  EXPECT_TRUE(reporter->ReportString("m", "").ok());
}

TEST_F(HeavyHittersReportTest, OtherAnswersOnAHeavyHittersMetricAreRefusedNamingTheKind) {
  auto reporter = Make();
  for (absl::Status s : {reporter->Report("m", true), reporter->Report("m", "U"),
                         reporter->ReportCategoryIndex("m", 0), reporter->ReportValue("m", 3.0)}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
    EXPECT_THAT(s.message(), HasSubstr("heavy_hitters"));
    EXPECT_THAT(s.message(), HasSubstr("ReportString"));
  }
  EXPECT_EQ(reporter->pending(), 0u);
  EXPECT_EQ(LedgerOf(*reporter).reports_accepted, 0);
}

TEST_F(HeavyHittersReportTest, AStringOnAnotherKindIsRefusedNamingItsKind) {
  {
    v1::Design two_coin;
    DesignToProto(Design::TwoCoin(), 1, &two_coin);
    absl::MutexLock lock(&transport_->mu_);
    transport_->design_ = two_coin;
  }
  auto yes_no = Make();
  absl::Status s = yes_no->ReportString("m", kSecret);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("yes_no"));
  EXPECT_THAT(s.message(), Not(HasSubstr("zq-secret")));

  transport_->SetCategorical({"Y", "N", "U"}, CategoricalMechanism::kDirectEncoding, 1.0);
  auto categorical = Make();
  s = categorical->ReportString("m", "U");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("categorical"));

  {
    absl::MutexLock lock(&transport_->mu_);
    transport_->categories.clear();
  }
  transport_->SetNumeric(v1::ONE_BIT_MEAN, 1.0, {0, 100});
  auto numeric = Make();
  s = numeric->ReportString("m", "42");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(s.message(), HasSubstr("numeric"));
  EXPECT_EQ(numeric->pending(), 0u);
}

TEST_F(HeavyHittersReportTest, FreshPerPeriodDrawsEachPeriodUnderTheCap) {
  transport_->randomization = v1::FRESH_PER_PERIOD;
  auto uncapped = Make();
  EXPECT_EQ(uncapped->ReportString("m", "a").code(), absl::StatusCode::kFailedPrecondition);
  options_.max_epsilon_per_metric = 2.5 * SmallDesign().epsilon;
  auto reporter = MakeMemo();
  EXPECT_TRUE(reporter->ReportString("m", "a").ok());
  EXPECT_TRUE(reporter->ReportString("m", "a").ok());
  EXPECT_EQ(reporter->ReportString("m", "a").code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(LedgerOf(*reporter).randomizations, 2);
}

TEST_F(HeavyHittersReportTest, OneReportPerPeriodHoldsForStrings) {
  auto reporter = Make();
  std::string id;
  ASSERT_TRUE(reporter->ReportString("m", "a", &id).ok());
  EXPECT_FALSE(id.empty());
  ASSERT_TRUE(reporter->ReportString("m", "b", &id).ok());
  EXPECT_TRUE(id.empty());  // nothing queued: the period's report is the first
  clock_.Advance(absl::Hours(24));
  ASSERT_TRUE(reporter->ReportString("m", "b", {{"app_version", "4.2"}}, &id).ok());
  EXPECT_FALSE(id.empty());
  ASSERT_TRUE(reporter->Flush().ok());
  const std::vector<v1::Report> sent = transport_->SentReports();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].labels().at("app_version"), "4.2");
}

// The delivery contract applies unchanged: a report the collector rejects as randomized with
// another design (FAILED_PRECONDITION) is dropped, the string memo of that version is
// forgotten, and the next report of the same value draws again with the design fetched anew;
// the group stays (it is kept per design and salt, and depends on no value).
TEST(HeavyHittersDeliveryTest, DesignMismatchForgetsTheStringMemoAndRefetches) {
  auto transport = std::make_shared<testing::FaultInjectingTransport>();
  transport->SetHeavyHitters(SmallDesign());
  FakeClock clock(absl::FromUnixSeconds(kNow));
  std::mt19937_64 gen(3);
  ReporterOptions options;
  options.background_sending = false;
  options.one_report_per_period = false;
  auto store = MakeMemoryDeviceStore();
  DeviceStore* raw = store.get();
  auto reporter = Reporter::CreateForTesting(transport, options, gen, &clock, std::move(store));
  std::string id;
  ASSERT_TRUE(reporter->ReportString("m", "oom", &id).ok());
  const std::string key = HeavyHittersValueKey("m", 1, kSalt, "oom");
  EXPECT_TRUE(raw->LookupStringMemo("m", 1, key)->has_value());
  const std::optional<uint32_t> group = *raw->LoadHeavyHittersGroup("m", 1, kSalt);
  transport->Reject(id, {.code = absl::StatusCode::kFailedPrecondition, .permanent = true});
  EXPECT_EQ(reporter->Flush().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(reporter->Stats()->counters.dropped_design_mismatch, 1);
  EXPECT_EQ(transport->design_calls(), 2);
  EXPECT_FALSE(raw->LookupStringMemo("m", 1, key)->has_value());
  ASSERT_TRUE(reporter->ReportString("m", "oom").ok());
  ASSERT_TRUE(reporter->Flush().ok());
  EXPECT_EQ(reporter->Ledger()->at("m").randomizations, 2);
  EXPECT_EQ(transport->stored(), 1);
  EXPECT_EQ(*raw->LoadHeavyHittersGroup("m", 1, kSalt), group);
}

}  // namespace heavy_hitters_test
}  // namespace
}  // namespace deniable::client
