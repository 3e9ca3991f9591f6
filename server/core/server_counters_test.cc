#include "server/core/server_counters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <string>

namespace deniable::server {
namespace {
namespace server_counters_test {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Scrape(const ServerCounters& counters) {
  return prometheus::TextSerializer().Serialize(counters.registry()->Collect());
}

TEST(ServerCountersTest, UnattributedSeriesExistAtZeroFromTheStart) {
  ServerCounters counters(/*start_time_seconds=*/1);
  const std::string text = Scrape(counters);
  EXPECT_THAT(text, HasSubstr("deniable_reports_total{metric=\"\",outcome=\"accepted\"} 0"));
  EXPECT_THAT(text, HasSubstr("deniable_reports_rejected_total{code=\"INVALID_ARGUMENT\","
                              "metric=\"\"} 0"));
  EXPECT_THAT(text, HasSubstr("deniable_reports_rejected_total{code=\"NOT_FOUND\",metric=\"\"} 0"));
  EXPECT_THAT(text, HasSubstr("deniable_report_batches_rejected_total{reason=\"invalid\"} 0"));
  // The HELP line says what metric="" holds.
  EXPECT_THAT(text, HasSubstr("metric=\"\" counts reports that name no metric of this server"));
}

TEST(ServerCountersTest, AddMetricMakesItsSeriesExistAtZero) {
  ServerCounters counters(1);
  EXPECT_THAT(Scrape(counters), Not(HasSubstr("metric=\"smoking\"")));
  counters.AddMetric("smoking");
  counters.AddMetric("smoking");  // idempotent
  const std::string text = Scrape(counters);
  for (const char* series :
       {"deniable_reports_total{metric=\"smoking\",outcome=\"accepted\"} 0",
        "deniable_reports_total{metric=\"smoking\",outcome=\"duplicate\"} 0",
        "deniable_reports_total{metric=\"smoking\",outcome=\"rejected\"} 0",
        "deniable_reports_rejected_total{code=\"FAILED_PRECONDITION\",metric=\"smoking\"} 0",
        "deniable_imported_reports_total{metric=\"smoking\",outcome=\"accepted\"} 0",
        "deniable_imported_reports_total{metric=\"smoking\",outcome=\"duplicate\"} 0",
        "deniable_retention_reports_dropped_total{metric=\"smoking\"} 0"}) {
    EXPECT_THAT(text, HasSubstr(series));
  }
  counters.RecordStored("smoking", 3, 1);
  EXPECT_EQ(counters.Snapshot().reports_accepted(), 3u);
  EXPECT_THAT(Scrape(counters),
              HasSubstr("deniable_reports_total{metric=\"smoking\",outcome=\"accepted\"} 3"));
}

TEST(ServerCountersTest, SnapshotCountsReportsByMetricSortedWithoutTheUnattributed) {
  ServerCounters counters(1);
  counters.AddMetric("zeta");
  counters.RecordStored("smoking", 3, 1);
  counters.RecordReportRejected("smoking", absl::StatusCode::kInvalidArgument);
  counters.RecordStored("", 0, 0);
  counters.RecordRejected(absl::StatusCode::kUnauthenticated, 5, false);  // metric=""
  const v1::ServerStats stats = counters.Snapshot();
  ASSERT_EQ(stats.per_metric_size(), 2);
  EXPECT_EQ(stats.per_metric(0).metric(), "smoking");
  EXPECT_EQ(stats.per_metric(0).reports_accepted(), 3u);
  EXPECT_EQ(stats.per_metric(0).reports_duplicate(), 1u);
  EXPECT_EQ(stats.per_metric(0).reports_rejected(), 1u);
  EXPECT_EQ(stats.per_metric(1).metric(), "zeta");
  EXPECT_EQ(stats.per_metric(1).reports_accepted(), 0u);
  EXPECT_EQ(stats.reports_rejected(), 6u);  // the totals keep the unattributed
}

TEST(ServerCountersTest, RetentionRunsAreCountedEvenWhenNothingIsDropped) {
  ServerCounters counters(1);
  EXPECT_THAT(Scrape(counters), HasSubstr("deniable_retention_runs_total{outcome=\"applied\"} 0"));
  EXPECT_THAT(Scrape(counters), HasSubstr("deniable_retention_runs_total{outcome=\"failed\"} 0"));
  counters.RecordRetention(RetentionResult{});  // a run that dropped nothing
  RetentionResult dropped;
  dropped.per_metric.push_back({1, "smoking", 4});
  counters.RecordRetention(dropped);
  counters.RecordRetentionFailed();
  const std::string text = Scrape(counters);
  EXPECT_THAT(text, HasSubstr("deniable_retention_runs_total{outcome=\"applied\"} 2"));
  EXPECT_THAT(text, HasSubstr("deniable_retention_runs_total{outcome=\"failed\"} 1"));
  EXPECT_THAT(text, HasSubstr("deniable_retention_reports_dropped_total{metric=\"smoking\"} 4"));
  EXPECT_EQ(counters.Snapshot().reports_dropped_by_retention(), 4u);
}

TEST(ServerCountersTest, AddMethodShowsItsOkSeriesBeforeTheFirstCall) {
  ServerCounters counters(1);
  counters.AddMethod("grpc", "deniable.v1.QueryService/ListMetrics");
  const std::string text = Scrape(counters);
  EXPECT_THAT(text, HasSubstr("deniable_calls_total{code=\"OK\",method=\"deniable.v1."
                              "QueryService/ListMetrics\",transport=\"grpc\"} 0"));
  EXPECT_THAT(text, HasSubstr("deniable_request_duration_seconds_count{code=\"OK\",method=\""
                              "deniable.v1.QueryService/ListMetrics\",transport=\"grpc\"} 0"));
}

TEST(ServerCountersTest, TimedCallsFillTheHistogramByMethodAndCode) {
  ServerCounters counters(1);
  const char* kMethod = "deniable.v1.QueryService/GetPrevalence";
  counters.RecordCall("grpc", kMethod, absl::StatusCode::kOk, absl::Milliseconds(3));
  counters.RecordCall("grpc", kMethod, absl::StatusCode::kOk, absl::Milliseconds(30));
  counters.RecordCall("grpc", kMethod, absl::StatusCode::kNotFound, absl::Seconds(20));
  counters.RecordCall("http", kMethod, absl::StatusCode::kOk);  // untimed: counted only
  const std::string text = Scrape(counters);
  const std::string ok = "code=\"OK\",method=\"deniable.v1.QueryService/GetPrevalence\"";
  EXPECT_THAT(
      text, HasSubstr("deniable_request_duration_seconds_count{" + ok + ",transport=\"grpc\"} 2"));
  EXPECT_THAT(text, HasSubstr("deniable_request_duration_seconds_sum{" + ok +
                              ",transport=\"grpc\"} 0.033"));
  EXPECT_THAT(text, HasSubstr("deniable_request_duration_seconds_bucket{" + ok +
                              ",transport=\"grpc\",le=\"0.005\"} 1"));
  EXPECT_THAT(text, HasSubstr("deniable_request_duration_seconds_bucket{" + ok +
                              ",transport=\"grpc\",le=\"0.05\"} 2"));
  EXPECT_THAT(text, HasSubstr("deniable_request_duration_seconds_bucket{code=\"NOT_FOUND\","
                              "method=\"deniable.v1.QueryService/GetPrevalence\",transport="
                              "\"grpc\",le=\"10\"} 0"));
  EXPECT_THAT(text, HasSubstr("deniable_calls_total{" + ok + ",transport=\"http\"} 1"));
  EXPECT_THAT(
      text, HasSubstr("deniable_request_duration_seconds_count{" + ok + ",transport=\"http\"} 0"));
}

}  // namespace server_counters_test
}  // namespace
}  // namespace deniable::server
