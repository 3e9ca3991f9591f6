// Helpers shared by the core (ingestion and query) tests.
#ifndef DENIABLE_SERVER_CORE_CORE_TEST_UTIL_H_
#define DENIABLE_SERVER_CORE_CORE_TEST_UTIL_H_

#include <cstdint>
#include <string>

#include "deniable/v1/query_service.pb.h"
#include "deniable/v1/report_service.pb.h"

namespace deniable::server::testing_util {

// A CreateMetricRequest for a yes/no metric `name` with the two-coin design.
inline v1::CreateMetricRequest TwoCoinMetric(const std::string& name) {
  v1::CreateMetricRequest create;
  create.set_name(name);
  create.mutable_design()->mutable_two_coin();
  return create;
}

// A batch of `yes` reports with bit 1 followed by `no` with bit 0 for `metric` and design
// `version` at `event_time` (seconds), labelled region = `region` unless it is empty. Report ids
// count up from `*next_id` (its low 4 bytes), which is advanced past them.
inline v1::SubmitReportsRequest CountedBatch(const std::string& metric, int yes, int no,
                                             int64_t event_time, uint32_t version,
                                             uint64_t* next_id, const std::string& region = "") {
  v1::SubmitReportsRequest request;
  for (int i = 0; i < yes + no; ++i) {
    v1::Report* r = request.add_reports();
    r->set_metric(metric);
    r->set_design_version(version);
    r->set_bit(i < yes ? 1 : 0);
    std::string id(16, '\0');
    for (int k = 0; k < 4; ++k) id[k] = static_cast<char>((*next_id >> (8 * k)) & 0xff);
    ++*next_id;
    r->set_report_id(id);
    r->set_event_time_seconds(event_time);
    if (!region.empty()) (*r->mutable_labels())["region"] = region;
  }
  return request;
}

}  // namespace deniable::server::testing_util

#endif  // DENIABLE_SERVER_CORE_CORE_TEST_UTIL_H_
