// The delivery contract's shared table, tests/conformance/delivery_contract.json, run through the
// C++ Reporter (the engine of the C API and the JVM SDK too): for each case a scripted collector
// answers the SubmitReports calls, one Flush() is checked against the outcome the table expects,
// then the collector recovers and a second Flush() must deliver exactly the reports still queued.
// The Python and JS SDKs run the same file (client/python/tests/test_delivery_conformance.py,
// client/js/test/delivery_conformance.test.js).
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deniable/client/reporter.h"
#include "deniable/client/retry_policy.h"
#include "deniable/client/transport.h"
#include "deniable/common/clock.h"
#include "deniable/convert/design_convert.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace delivery_conformance_test {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr int64_t kNow = 1'795'435'200;  // 2026-11-23 12:00 UTC
constexpr int64_t kMaxReportAgeSeconds = 86400;

const Value& Field(const Struct& s, const std::string& name) {
  static const Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}
int64_t Int(const Struct& s, const std::string& name) {
  return static_cast<int64_t>(Field(s, name).number_value());
}
std::vector<int64_t> Ints(const Value& list) {
  std::vector<int64_t> out;
  for (const Value& v : list.list_value().values())
    out.push_back(static_cast<int64_t>(v.number_value()));
  return out;
}

// A code given by its canonical name ("INVALID_ARGUMENT") or, for a malformed answer, a number.
int CodeNumber(const Value& v) {
  if (v.kind_case() == Value::kNumberValue) return static_cast<int>(v.number_value());
  for (int code = 0; code <= 16; ++code) {
    if (absl::StatusCodeToString(static_cast<absl::StatusCode>(code)) == v.string_value()) {
      return code;
    }
  }
  ADD_FAILURE() << "no status code is named " << v.string_value();
  return 2;
}

// One row of the table; printed by its name when it fails.
struct Case {
  Struct fields;
};
void PrintTo(const Case& c, std::ostream* os) { *os << Field(c.fields, "name").string_value(); }

std::vector<Case> LoadCases() {
  std::ifstream in(DENIABLE_DELIVERY_CONTRACT);
  std::stringstream text;
  text << in.rdbuf();
  Struct root;
  if (!google::protobuf::util::JsonStringToMessage(text.str(), &root).ok()) {
    ADD_FAILURE() << "cannot parse " << DENIABLE_DELIVERY_CONTRACT;
    return {};
  }
  std::vector<Case> cases;
  for (const Value& c : Field(root, "cases").list_value().values()) {
    cases.push_back({c.struct_value()});
  }
  return cases;
}

// A collector that serves metric "m" (two coins, version 1), answers SubmitReports from a script,
// then is unreachable (UNAVAILABLE) until Recover(), after which it accepts every report.
class ScriptedCollector : public ReportTransport {
 public:
  ScriptedCollector() { DesignToProto(Design::TwoCoin(), 1, &design_); }

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    absl::MutexLock lock(&mu_);
    ++design_calls_;
    v1::GetDesignResponse response;
    response.set_metric(metric);
    *response.mutable_design() = design_;
    response.set_time_precision_seconds(3600);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> ids;
    for (const v1::Report& r : request.reports()) ids.push_back(r.report_id());
    calls_.push_back(ids);
    if (!script_.empty()) {
      absl::StatusOr<v1::SubmitReportsResponse> next = std::move(script_.front());
      script_.pop_front();
      return next;
    }
    if (!recovered_) return absl::UnavailableError("unreachable (the script ended)");
    v1::SubmitReportsResponse response;
    response.set_accepted(static_cast<uint32_t>(request.reports_size()));
    return response;
  }

  // The case's answers: {status} or {status: OK, duplicates, rejections, stale_metrics}, or
  // {transport_error, status}.
  void Script(const Value& answers) {
    absl::MutexLock lock(&mu_);
    for (const Value& a : answers.list_value().values()) {
      const Struct& answer = a.struct_value();
      const int code = CodeNumber(Field(answer, "status"));
      if (code != 0) {
        std::string what = Field(answer, "transport_error").string_value();
        script_.push_back(absl::Status(static_cast<absl::StatusCode>(code),
                                       what.empty() ? "scripted" : "transport: " + what));
        continue;
      }
      v1::SubmitReportsResponse response;
      response.set_duplicates(static_cast<uint32_t>(Int(answer, "duplicates")));
      for (const Value& r : Field(answer, "rejections").list_value().values()) {
        const Struct& rejection = r.struct_value();
        v1::ReportRejection* out = response.add_rejections();
        out->set_index(static_cast<uint32_t>(Field(rejection, "index").number_value()));
        out->set_code(CodeNumber(Field(rejection, "code")));
        out->set_permanent(Field(rejection, "permanent").bool_value());
        out->set_reason("reports[" + std::to_string(out->index()) + "]: scripted");
      }
      for (const Value& m : Field(answer, "stale_metrics").list_value().values()) {
        response.add_stale_metrics(m.string_value());
      }
      script_.push_back(response);
    }
  }
  void Recover() {
    absl::MutexLock lock(&mu_);
    recovered_ = true;
  }
  std::vector<std::vector<std::string>> calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  int design_calls() {
    absl::MutexLock lock(&mu_);
    return design_calls_;
  }

 private:
  absl::Mutex mu_;
  v1::Design design_ ABSL_GUARDED_BY(mu_);
  std::deque<absl::StatusOr<v1::SubmitReportsResponse>> script_ ABSL_GUARDED_BY(mu_);
  bool recovered_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::vector<std::string>> calls_ ABSL_GUARDED_BY(mu_);  // report ids per call
  int design_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

std::map<std::string, int64_t> Counters(const DeliveryStats& s) {
  return {{"acknowledged", s.counters.acknowledged},
          {"duplicates", s.counters.duplicates},
          {"dropped_rejected", s.counters.dropped_rejected},
          {"dropped_design_mismatch", s.counters.dropped_design_mismatch},
          {"dropped_too_old", s.counters.dropped_too_old},
          {"dropped_queue_full", s.counters.dropped_queue_full},
          {"send_attempts", s.send_attempts},
          {"failed_attempts", s.failed_attempts},
          {"batch_splits", s.batch_splits},
          {"kept_after_rejection", s.kept_after_rejection}};
}

class DeliveryConformanceTest : public ::testing::TestWithParam<Case> {};

TEST_P(DeliveryConformanceTest, TheCppReporterFollowsTheTable) {
  const Struct& c = GetParam().fields;
  const Struct& expect = Field(c, "expect").struct_value();
  const int reports = static_cast<int>(Int(c, "reports"));
  const int too_old = static_cast<int>(Int(c, "too_old"));

  auto collector = std::make_shared<ScriptedCollector>();
  FakeClock clock(absl::FromUnixSeconds(kNow - 2 * kMaxReportAgeSeconds));
  std::mt19937_64 gen(7);
  absl::Mutex log_mu;
  int errors_logged = 0;
  ReporterOptions options;
  options.background_sending = false;
  options.one_report_per_period = false;
  options.max_batch_reports = reports;
  options.max_report_age = absl::Seconds(kMaxReportAgeSeconds);
  if (Int(c, "max_queued_reports") > 0) options.max_queued_reports = Int(c, "max_queued_reports");
  options.retry_policy = std::make_shared<LimitedErrorCountRetryPolicy>(0);
  options.initial_backoff = absl::Microseconds(10);
  options.max_backoff = absl::Microseconds(100);
  options.shutdown_drain_timeout = absl::ZeroDuration();
  options.log = [&](LogLevel level, absl::string_view) {
    absl::MutexLock lock(&log_mu);
    if (level == LogLevel::kError) ++errors_logged;
  };
  std::unique_ptr<Reporter> reporter = Reporter::CreateForTesting(collector, options, gen, &clock);
  std::vector<std::string> ids(reports);
  for (int i = 0; i < reports; ++i) {
    if (i == too_old) clock.Set(absl::FromUnixSeconds(kNow));
    ASSERT_TRUE(reporter->Report("m", i % 2 == 0, &ids[i]).ok());
  }
  clock.Set(absl::FromUnixSeconds(kNow));
  const int design_calls = collector->design_calls();

  collector->Script(Field(c, "answers"));
  const absl::Status flushed = reporter->Flush(absl::Seconds(30));
  EXPECT_EQ(absl::StatusCodeToString(flushed.code()), Field(expect, "flush").string_value())
      << flushed;

  std::vector<int64_t> sizes;
  for (const auto& call : collector->calls()) sizes.push_back(static_cast<int64_t>(call.size()));
  EXPECT_EQ(sizes, Ints(Field(expect, "batch_sizes")));
  const std::vector<int64_t> queued = Ints(Field(expect, "queued"));
  EXPECT_EQ(reporter->pending(), queued.size());
  absl::StatusOr<DeliveryStats> stats = reporter->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::map<std::string, int64_t> want = Counters(DeliveryStats{});
  for (const auto& [name, value] : Field(expect, "counters").struct_value().fields()) {
    ASSERT_TRUE(want.count(name)) << "no such counter: " << name;
    want[name] = static_cast<int64_t>(value.number_value());
  }
  EXPECT_EQ(Counters(*stats), want);
  {
    absl::MutexLock lock(&log_mu);
    EXPECT_EQ(errors_logged, Int(expect, "errors_logged"));
  }

  // next_step, as the calls show it.
  const std::string next = Field(expect, "next_step").string_value();
  const size_t answers = Field(c, "answers").list_value().values_size();
  if (next == "retry_with_backoff") {
    EXPECT_EQ(sizes.size(), answers) << "the flush went on after a transient failure";
    EXPECT_FALSE(queued.empty());
  } else if (next == "halve_and_resend") {
    ASSERT_EQ(sizes.size(), answers + 1);
    EXPECT_EQ(sizes[answers], sizes[answers - 1] / 2);
  } else if (next == "send_next_batch") {
    EXPECT_EQ(sizes.size(), answers + 1);
  } else {
    ASSERT_EQ(next, "done");
    EXPECT_EQ(sizes.size(), answers);
    EXPECT_TRUE(queued.empty());
  }

  // Recovery: exactly the reports still queued are sent, oldest first, with their ids.
  collector->Recover();
  const size_t calls_before = collector->calls().size();
  const absl::Status recovered = reporter->Flush(absl::Seconds(30));
  EXPECT_TRUE(recovered.ok()) << recovered;
  std::vector<std::string> resent, want_resent;
  const auto calls = collector->calls();
  for (size_t i = calls_before; i < calls.size(); ++i) {
    resent.insert(resent.end(), calls[i].begin(), calls[i].end());
  }
  for (int64_t i : queued) want_resent.push_back(ids[static_cast<size_t>(i)]);
  EXPECT_EQ(resent, want_resent);
  EXPECT_EQ(reporter->pending(), 0u);
  stats = reporter->Stats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->counters.acknowledged,
            want["acknowledged"] + static_cast<int64_t>(queued.size()));
  EXPECT_EQ(stats->counters.dropped_rejected, want["dropped_rejected"]);
  EXPECT_EQ(stats->counters.dropped_design_mismatch, want["dropped_design_mismatch"]);
  EXPECT_EQ(collector->design_calls() - design_calls,
            Field(expect, "design_refetched").bool_value() ? 1 : 0);
}

INSTANTIATE_TEST_SUITE_P(Table, DeliveryConformanceTest, ::testing::ValuesIn(LoadCases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return Field(param_info.param.fields, "name").string_value();
                         });

}  // namespace delivery_conformance_test
}  // namespace
}  // namespace deniable::client
