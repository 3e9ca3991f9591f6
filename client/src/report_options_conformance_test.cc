// The per-report options (labels, category by name or by index, a numeric value) against the
// shared table tests/conformance/report_options.json, which the C API, JVM, Python and JS SDKs
// run too (docs/sdk.md "Per-report options"): each case's call on a fresh reporter over a fake
// collector serving the table's three metrics, then its status and message, or the one report
// sent (its kind of answer, its labels, and for a category by index the very report the same
// call by name makes with the same seed).
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/src/testing/categorical_design.h"
#include "client/src/testing/numeric_design.h"
#include "deniable/client/reporter.h"
#include "deniable/common/clock.h"
#include "deniable/convert/design_convert.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace deniable::client {
namespace {
namespace report_options_conformance_test {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr int64_t kNow = 1795435200;  // 2026-11-23 12:00 UTC

const Value& Field(const Struct& s, const std::string& name) {
  static const Value kNull;
  auto it = s.fields().find(name);
  return it == s.fields().end() ? kNull : it->second;
}

bool Has(const Struct& s, const std::string& name) { return s.fields().contains(name); }

std::map<std::string, std::string> Labels(const Value& v) {
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : v.struct_value().fields()) out[key] = value.string_value();
  return out;
}

Struct LoadTable() {
  std::ifstream in(DENIABLE_REPORT_OPTIONS_TABLE);
  std::stringstream text;
  text << in.rdbuf();
  Struct root;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(text.str(), &root).ok())
      << DENIABLE_REPORT_OPTIONS_TABLE;
  return root;
}

// The GetDesignResponse of one metric of the table.
v1::GetDesignResponse Served(const std::string& name, const Struct& metric) {
  v1::GetDesignResponse response;
  response.set_metric(name);
  response.set_time_precision_seconds(3600);
  response.set_reporting_period_seconds(86400);
  const Struct& d = Field(metric, "design").struct_value();
  const std::string kind = Field(metric, "kind").string_value();
  if (kind == "yes_no") {
    DesignToProto(*Design::SymmetricEpsilon(Field(d, "epsilon").number_value()), /*version=*/1,
                  response.mutable_design());
    EXPECT_NEAR(response.design().a(), Field(d, "a").number_value(), 1e-12);
    EXPECT_NEAR(response.design().b(), Field(d, "b").number_value(), 1e-12);
  } else if (kind == "categorical") {
    EXPECT_EQ(Field(d, "mechanism").string_value(), "K_RR");
    const auto& names = Field(metric, "categories").list_value().values();
    for (const Value& c : names) response.add_categories(c.string_value());
    *response.mutable_design() = testing::CategoricalWireDesign(
        CategoricalMechanism::kDirectEncoding, static_cast<int>(names.size()),
        Field(d, "epsilon").number_value());
  } else {
    EXPECT_EQ(kind, "numeric");
    std::vector<double> edges;
    for (const Value& e : Field(d, "edges").list_value().values())
      edges.push_back(e.number_value());
    *response.mutable_design() = testing::NumericWireDesign(
        Field(d, "mechanism").string_value() == "D_BIT_FLIP" ? v1::D_BIT_FLIP : v1::ONE_BIT_MEAN,
        Field(d, "epsilon").number_value(), edges,
        static_cast<uint32_t>(Field(d, "sampled_buckets").number_value()));
    response.mutable_range()->set_lo(edges.front());
    response.mutable_range()->set_hi(edges.back());
    response.mutable_range()->set_unit("ms");
  }
  return response;
}

// Serves the table's metrics and keeps every report it is sent. Thread-safe.
class TableCollector : public ReportTransport {
 public:
  explicit TableCollector(const Struct& metrics) {
    for (const auto& [name, metric] : metrics.fields()) {
      designs_[name] = Served(name, metric.struct_value());
    }
  }

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    auto it = designs_.find(metric);
    if (it == designs_.end()) return absl::NotFoundError(absl::StrCat("metric: ", metric));
    return it->second;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    absl::MutexLock lock(&mu_);
    sent_.insert(sent_.end(), request.reports().begin(), request.reports().end());
    v1::SubmitReportsResponse response;
    response.set_accepted(request.reports_size());
    return response;
  }

  std::vector<v1::Report> Sent() {
    absl::MutexLock lock(&mu_);
    return sent_;
  }

 private:
  std::map<std::string, v1::GetDesignResponse> designs_;
  absl::Mutex mu_;
  std::vector<v1::Report> sent_ ABSL_GUARDED_BY(mu_);
};

struct Outcome {
  absl::Status status;
  std::vector<v1::Report> sent;
};

// Runs `call` (the table's call object) on a fresh reporter seeded with `seed` and flushes.
Outcome RunCall(const Struct& table, const std::string& metric, const Struct& call, uint64_t seed) {
  auto collector = std::make_shared<TableCollector>(Field(table, "metrics").struct_value());
  FakeClock clock(absl::FromUnixSeconds(kNow));
  std::mt19937_64 gen(seed);
  ReporterOptions options;
  options.background_sending = false;
  options.labels = Labels(Field(table, "reporter_labels"));
  auto reporter = Reporter::CreateForTesting(collector, options, gen, &clock);
  const std::map<std::string, std::string> labels = Labels(Field(call, "labels"));
  const bool labeled = Has(call, "labels");
  Outcome out;
  if (Has(call, "bool")) {
    const bool answer = Field(call, "bool").bool_value();
    out.status =
        labeled ? reporter->Report(metric, answer, labels) : reporter->Report(metric, answer);
  } else if (Has(call, "category")) {
    const std::string category = Field(call, "category").string_value();
    out.status = labeled ? reporter->Report(metric, category.c_str(), labels)
                         : reporter->Report(metric, category.c_str());
  } else if (Has(call, "category_index")) {
    const int index = static_cast<int>(Field(call, "category_index").number_value());
    out.status = labeled ? reporter->ReportCategoryIndex(metric, index, labels)
                         : reporter->ReportCategoryIndex(metric, index);
  } else {
    const Value& v = Field(call, "value");
    const double value =
        v.has_string_value() ? std::numeric_limits<double>::quiet_NaN() : v.number_value();
    out.status = labeled ? reporter->ReportValue(metric, value, labels)
                         : reporter->ReportValue(metric, value);
  }
  EXPECT_TRUE(reporter->Flush(absl::Seconds(10)).ok());
  reporter.reset();
  out.sent = collector->Sent();
  return out;
}

std::string WireKind(const v1::Report& r) {
  if (r.has_categorical()) return "categorical";
  if (r.has_numeric()) return "numeric";
  return "bit";
}

TEST(ReportOptionsConformanceTest, EveryCaseOfTheSharedTable) {
  const Struct table = LoadTable();
  const auto& cases = Field(table, "cases").list_value().values();
  ASSERT_GE(cases.size(), 20u);
  for (const Value& entry : cases) {
    const Struct& c = entry.struct_value();
    SCOPED_TRACE(Field(c, "name").string_value());
    const std::string metric = Field(c, "metric").string_value();
    const Struct& expect = Field(c, "expect").struct_value();
    const Outcome got = RunCall(table, metric, Field(c, "call").struct_value(), 11);
    if (Has(expect, "code")) {
      EXPECT_EQ(absl::StatusCodeToString(got.status.code()), Field(expect, "code").string_value())
          << got.status;
      for (const Value& word : Field(expect, "message_has").list_value().values()) {
        EXPECT_NE(got.status.message().find(word.string_value()), std::string::npos)
            << got.status << " lacks " << word.string_value();
      }
      for (const Value& word : Field(expect, "message_lacks").list_value().values()) {
        EXPECT_EQ(got.status.message().find(word.string_value()), std::string::npos)
            << got.status << " repeats " << word.string_value();
      }
      EXPECT_TRUE(got.sent.empty());
      continue;
    }
    ASSERT_TRUE(got.status.ok()) << got.status;
    ASSERT_EQ(got.sent.size(), 1u);
    const v1::Report& r = got.sent[0];
    EXPECT_EQ(r.metric(), metric);
    EXPECT_EQ(WireKind(r), Field(expect, "wire").string_value());
    const std::map<std::string, std::string> labels(r.labels().begin(), r.labels().end());
    EXPECT_EQ(labels, Labels(Field(expect, "labels")));
    if (Has(expect, "same_as")) {
      const Outcome by_name = RunCall(table, metric, Field(expect, "same_as").struct_value(), 11);
      ASSERT_TRUE(by_name.status.ok()) << by_name.status;
      ASSERT_EQ(by_name.sent.size(), 1u);
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(r, by_name.sent[0]))
          << r.DebugString() << " differs from " << by_name.sent[0].DebugString();
    }
  }
}

// The check above could pass by accident if every seed drew the same report: another seed
// gives another report id, so "the same report as by name" is a statement about the seed.
TEST(ReportOptionsConformanceTest, SameAsComparesReportsDrawnWithTheSameSeedOnly) {
  const Struct table = LoadTable();
  Struct call;
  (*call.mutable_fields())["category"].set_string_value("U");
  const Outcome a = RunCall(table, "vote", call, 11);
  const Outcome b = RunCall(table, "vote", call, 12);
  ASSERT_EQ(a.sent.size(), 1u);
  ASSERT_EQ(b.sent.size(), 1u);
  EXPECT_NE(a.sent[0].report_id(), b.sent[0].report_id());
}

}  // namespace report_options_conformance_test
}  // namespace
}  // namespace deniable::client
