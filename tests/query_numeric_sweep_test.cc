// Issue 11: no QueryService handler may end in UNKNOWN (an exception escaping, e.g. Boost.Math's
// quantile at level 0.9999999999999999) or INTERNAL. A sweep of extreme numeric inputs over
// every RPC through the real gRPC service (in-process channel, real handlers, in-memory
// storage holding reports): each answer is OK or a client error, and INVALID_ARGUMENT names
// the field that was varied.
#include <grpcpp/grpcpp.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "deniable/v1/query_service.grpc.pb.h"
#include "deniable/v1/report_service.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/collector_server.h"
#include "server/storage/memory/memory_storage.h"

namespace deniable {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kNow = 1'700'000'000 - 1'700'000'000 % 86400;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The doubles every numeric field is tried with.
const std::vector<double>& ExtremeDoubles() {
  static const std::vector<double> values = {
      std::nan(""),
      kInf,
      -kInf,
      0.0,
      -0.0,
      std::numeric_limits<double>::denorm_min(),
      -std::numeric_limits<double>::denorm_min(),
      std::numeric_limits<double>::min(),
      1e-300,
      1e-16,
      0.5 - 1e-16,
      0.5,
      0.5 + 1e-16,
      0.9999999999999999,
      1.0 - 1e-12,
      1.0,
      1.0000000000000002,
      -1.0,
      2.0,
      40.0,
      1000.0,
      1e308,
      std::numeric_limits<double>::max(),
      -std::numeric_limits<double>::max(),
  };
  return values;
}

const std::vector<int64_t>& ExtremeTimes() {
  static const std::vector<int64_t> values = {std::numeric_limits<int64_t>::min(),
                                              -1,
                                              0,
                                              1,
                                              kNow,
                                              kNow + 3600,
                                              std::numeric_limits<int64_t>::max() - 1,
                                              std::numeric_limits<int64_t>::max()};
  return values;
}

// The design parameters with one numeric field set to `v` in each family.
std::vector<v1::DesignParameters> DesignsWith(double v) {
  std::vector<v1::DesignParameters> out(7);
  out[0].mutable_symmetric_epsilon()->set_epsilon(v);
  out[1].mutable_forced_response()->set_p(v);
  out[1].mutable_forced_response()->set_q(0.5);
  out[2].mutable_forced_response()->set_p(0.5);
  out[2].mutable_forced_response()->set_q(v);
  out[3].mutable_unrelated_question()->set_p(v);
  out[3].mutable_unrelated_question()->set_pi_b(0.3);
  out[4].mutable_unrelated_question()->set_p(0.7);
  out[4].mutable_unrelated_question()->set_pi_b(v);
  out[5].mutable_mirrored_question()->set_p(v);
  out[6].mutable_truth_with_gamma()->set_gamma(v);
  return out;
}

class QueryNumericSweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server::ServerOptions options;
    options.listen_address = "";  // in-process only
    options.query.default_min_reports = 1;
    auto server =
        server::CollectorServer::Start(std::make_unique<server::MemoryStorage>(), &clock_, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    queries_ = v1::QueryService::NewStub(server_->InProcessChannel());
    auto reports = v1::ReportService::NewStub(server_->InProcessChannel());
    v1::CreateMetricRequest create;
    create.set_name("m");
    create.mutable_design()->mutable_two_coin();
    v1::Metric metric;
    grpc::ClientContext context;
    ASSERT_TRUE(queries_->CreateMetric(&context, create, &metric).ok());
    // Reports, so that intervals are really computed (all "yes" bits and a mixed hour).
    v1::SubmitReportsRequest submit;
    for (int i = 0; i < 40; ++i) {
      v1::Report* r = submit.add_reports();
      r->set_metric("m");
      r->set_design_version(1);
      r->set_bit(i < 30 ? 1 : 0);
      r->set_report_id(std::string(15, 'x') + static_cast<char>(i));
      r->set_event_time_seconds(i < 20 ? kNow : kNow + 3600);
    }
    grpc::ClientContext submit_context;
    v1::SubmitReportsResponse response;
    ASSERT_TRUE(reports->SubmitReports(&submit_context, submit, &response).ok());
  }

  // Runs `call`; fails the test on UNKNOWN or INTERNAL, or on an INVALID_ARGUMENT that does not
  // name `field`. Returns the code.
  grpc::StatusCode Check(const std::string& what, const std::string& field,
                         const std::function<grpc::Status(grpc::ClientContext*)>& call) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    const grpc::Status status = call(&context);
    ++calls_;
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNKNOWN)
        << what << ": " << status.error_message();
    EXPECT_NE(status.error_code(), grpc::StatusCode::INTERNAL)
        << what << ": " << status.error_message();
    if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT && !field.empty()) {
      EXPECT_THAT(status.error_message(), HasSubstr(field)) << what;
    }
    return status.error_code();
  }

  FakeClock clock_{absl::FromUnixSeconds(kNow + 7200)};
  std::unique_ptr<server::CollectorServer> server_;
  std::unique_ptr<v1::QueryService::Stub> queries_;
  int calls_ = 0;
};

TEST_F(QueryNumericSweepTest, PlanSurveyNeverEndsInUnknownOrInternal) {
  for (double v : ExtremeDoubles()) {
    const std::string at = "value " + std::to_string(v);
    v1::PlanSurveyRequest base;
    base.mutable_design()->mutable_two_coin();
    base.set_half_width(0.05);
    for (int field = 0; field < 3; ++field) {
      v1::PlanSurveyRequest request = base;
      const char* name[] = {"half_width", "confidence_level", "assumed_prevalence"};
      if (field == 0) request.set_half_width(v);
      if (field == 1) request.set_confidence_level(v);
      if (field == 2) request.set_assumed_prevalence(v);
      v1::SurveyPlan plan;
      Check(std::string("PlanSurvey ") + name[field] + " " + at, name[field],
            [&](grpc::ClientContext* c) { return queries_->PlanSurvey(c, request, &plan); });
    }
    for (const v1::DesignParameters& design : DesignsWith(v)) {
      v1::PlanSurveyRequest request = base;
      *request.mutable_design() = design;
      v1::SurveyPlan plan;
      Check("PlanSurvey " + design.ShortDebugString(), "design",
            [&](grpc::ClientContext* c) { return queries_->PlanSurvey(c, request, &plan); });
    }
  }
}

// The reproduction of issue 11: `deniable plan --level=0.9999999999999999` gave UNKNOWN.
TEST_F(QueryNumericSweepTest, PlanAtLevelOneMinusAnUlpIsAnInvalidArgument) {
  v1::PlanSurveyRequest request;
  request.mutable_design()->mutable_two_coin();
  request.set_half_width(0.05);
  request.set_confidence_level(0.9999999999999999);
  v1::SurveyPlan plan;
  EXPECT_EQ(Check("plan", "confidence_level",
                  [&](grpc::ClientContext* c) { return queries_->PlanSurvey(c, request, &plan); }),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(QueryNumericSweepTest, DescribeDesignNeverEndsInUnknownOrInternal) {
  for (double v : ExtremeDoubles()) {
    v1::DescribeDesignRequest request;
    request.set_metric("m");
    request.set_prior(v);
    v1::DesignDescription out;
    Check("Describe prior", "prior",
          [&](grpc::ClientContext* c) { return queries_->DescribeDesign(c, request, &out); });
    for (const v1::DesignParameters& design : DesignsWith(v)) {
      v1::DescribeDesignRequest by_design;
      *by_design.mutable_design() = design;
      by_design.set_prior(0.3);
      Check("Describe " + design.ShortDebugString(), "design",
            [&](grpc::ClientContext* c) { return queries_->DescribeDesign(c, by_design, &out); });
    }
  }
}

TEST_F(QueryNumericSweepTest, CreateMetricAndAddVersionNeverEndInUnknownOrInternal) {
  int created = 0;
  for (double v : ExtremeDoubles()) {
    for (const v1::DesignParameters& design : DesignsWith(v)) {
      v1::CreateMetricRequest create;
      create.set_name("c" + std::to_string(created++));
      *create.mutable_design() = design;
      v1::Metric metric;
      Check("Create " + design.ShortDebugString(), "design",
            [&](grpc::ClientContext* c) { return queries_->CreateMetric(c, create, &metric); });
      v1::AddDesignVersionRequest add;
      add.set_metric("m");
      *add.mutable_design() = design;
      Check("AddVersion " + design.ShortDebugString(), "design",
            [&](grpc::ClientContext* c) { return queries_->AddDesignVersion(c, add, &metric); });
    }
  }
  for (uint32_t v : {1u, 59u, 60u, 3599u, 86399u, 86401u, 4294967295u}) {
    v1::CreateMetricRequest create;
    create.set_name("p" + std::to_string(created++));
    create.mutable_design()->mutable_two_coin();
    create.set_reporting_period_seconds(v);
    v1::Metric metric;
    Check("Create period", "reporting_period_seconds",
          [&](grpc::ClientContext* c) { return queries_->CreateMetric(c, create, &metric); });
    create.set_name("t" + std::to_string(created++));
    create.set_reporting_period_seconds(0);
    create.set_time_precision_seconds(v);
    Check("Create precision", "time_precision_seconds",
          [&](grpc::ClientContext* c) { return queries_->CreateMetric(c, create, &metric); });
  }
}

TEST_F(QueryNumericSweepTest, PrevalenceSeriesAndDifferenceNeverEndInUnknownOrInternal) {
  for (double v : ExtremeDoubles()) {
    for (int method = 0; method <= 6; ++method) {
      v1::GetPrevalenceRequest request;
      request.set_metric("m");
      request.set_confidence_level(v);
      request.set_method(static_cast<v1::IntervalMethod>(method));
      v1::Prevalence out;
      Check("Prevalence level", "",
            [&](grpc::ClientContext* c) { return queries_->GetPrevalence(c, request, &out); });
      v1::GetSeriesRequest series;
      series.set_metric("m");
      series.set_start_time_seconds(kNow);
      series.set_end_time_seconds(kNow + 7200);
      series.set_bucket(v1::HOUR);
      series.set_confidence_level(v);
      series.set_method(static_cast<v1::IntervalMethod>(method));
      v1::Series series_out;
      Check("Series level", "",
            [&](grpc::ClientContext* c) { return queries_->GetSeries(c, series, &series_out); });
    }
    v1::GetDifferenceRequest difference;
    difference.mutable_first()->set_metric("m");
    difference.mutable_second()->set_metric("m");
    difference.mutable_second()->set_start_time_seconds(kNow);
    difference.mutable_second()->set_end_time_seconds(kNow + 3600);
    difference.set_confidence_level(v);
    v1::Difference difference_out;
    Check("Difference level", "", [&](grpc::ClientContext* c) {
      return queries_->GetDifference(c, difference, &difference_out);
    });
    if (v > 0.0 && v < 1.0 && v > 1.0 - 1e-12) {
      v1::GetPrevalenceRequest request;
      request.set_metric("m");
      request.set_confidence_level(v);
      v1::Prevalence out;
      EXPECT_EQ(
          Check("Prevalence level", "confidence_level",
                [&](grpc::ClientContext* c) { return queries_->GetPrevalence(c, request, &out); }),
          grpc::StatusCode::INVALID_ARGUMENT);
    }
  }
  for (int64_t start : ExtremeTimes()) {
    for (int64_t end : ExtremeTimes()) {
      v1::GetPrevalenceRequest request;
      request.set_metric("m");
      request.set_start_time_seconds(start);
      request.set_end_time_seconds(end);
      v1::Prevalence out;
      Check("Prevalence times", "",
            [&](grpc::ClientContext* c) { return queries_->GetPrevalence(c, request, &out); });
      for (int bucket = 0; bucket <= 4; ++bucket) {
        v1::GetSeriesRequest series;
        series.set_metric("m");
        series.set_start_time_seconds(start);
        series.set_end_time_seconds(end);
        series.set_bucket(static_cast<v1::BucketWidth>(bucket));
        v1::Series series_out;
        Check("Series times", "",
              [&](grpc::ClientContext* c) { return queries_->GetSeries(c, series, &series_out); });
      }
      v1::GetDifferenceRequest difference;
      difference.mutable_first()->set_metric("m");
      difference.mutable_first()->set_start_time_seconds(start);
      difference.mutable_first()->set_end_time_seconds(end);
      difference.mutable_second()->set_metric("m");
      difference.mutable_second()->set_start_time_seconds(kNow);
      difference.mutable_second()->set_end_time_seconds(kNow + 3600);
      v1::Difference difference_out;
      Check("Difference times", "", [&](grpc::ClientContext* c) {
        return queries_->GetDifference(c, difference, &difference_out);
      });
    }
  }
  EXPECT_GT(calls_, 500);
}

// Issue 14: the same for categorical designs given by parameters (k, epsilon, category_prior,
// assumed_shares, n, half_width, level): each answer OK or a client error naming the field.
TEST_F(QueryNumericSweepTest, CategoricalDescribeAndPlanNeverEndInUnknownOrInternal) {
  const v1::CategoricalMechanism mechanisms[] = {v1::CATEGORICAL_MECHANISM_UNSPECIFIED, v1::K_RR,
                                                 v1::OUE, v1::OLH};
  for (double v : ExtremeDoubles()) {
    for (v1::CategoricalMechanism mechanism : mechanisms) {
      const std::string at =
          "value " + std::to_string(v) + " mechanism " + v1::CategoricalMechanism_Name(mechanism);
      v1::DescribeDesignRequest describe;
      describe.mutable_design()->mutable_categorical()->set_mechanism(mechanism);
      describe.mutable_design()->mutable_categorical()->set_epsilon(1.0);
      describe.set_k(3);
      describe.set_n(1000);
      v1::PlanSurveyRequest plan;
      *plan.mutable_design() = describe.design();
      plan.set_k(3);
      plan.set_half_width(0.05);
      for (int field = 0; field < 5; ++field) {
        const char* name[] = {"design.categorical.epsilon", "category_prior[1]", "half_width",
                              "confidence_level", "assumed_shares[1]"};
        v1::DescribeDesignRequest d = describe;
        v1::PlanSurveyRequest p = plan;
        if (field == 0) {
          d.mutable_design()->mutable_categorical()->set_epsilon(v);
          p.mutable_design()->mutable_categorical()->set_epsilon(v);
        }
        if (field == 1) {
          for (double share : {0.5, v, 0.5 - v}) d.add_category_prior(share);
        }
        if (field == 2) p.set_half_width(v);
        if (field == 3) p.set_confidence_level(v);
        if (field == 4) {
          for (double share : {0.5, v, 0.5 - v}) p.add_assumed_shares(share);
        }
        // A prior or shares may fail on their sum, named without an index.
        const std::string field_name = field == 1   ? "category_prior"
                                       : field == 4 ? "assumed_shares"
                                                    : name[field];
        v1::DesignDescription description;
        Check(std::string("Describe ") + name[field] + " " + at, field_name,
              [&](grpc::ClientContext* c) { return queries_->DescribeDesign(c, d, &description); });
        v1::SurveyPlan survey;
        Check(std::string("Plan ") + name[field] + " " + at, field_name,
              [&](grpc::ClientContext* c) { return queries_->PlanSurvey(c, p, &survey); });
      }
    }
  }
  for (int64_t n :
       {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{1}, int64_t{1'000'000'000},
        int64_t{1'000'000'001}, std::numeric_limits<int64_t>::max()}) {
    v1::DescribeDesignRequest d;
    d.mutable_design()->mutable_categorical()->set_epsilon(1.0);
    d.set_k(3);
    d.set_n(n);
    v1::DesignDescription description;
    Check("Describe n " + std::to_string(n), "n",
          [&](grpc::ClientContext* c) { return queries_->DescribeDesign(c, d, &description); });
  }
}

}  // namespace
}  // namespace deniable
