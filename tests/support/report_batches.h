// Report batches for the collector tests that submit through the real server: metric "m"
// (design version 1, created by the test), one metric-hour, alternating bits.
#ifndef DENIABLE_TESTS_SUPPORT_REPORT_BATCHES_H_
#define DENIABLE_TESTS_SUPPORT_REPORT_BATCHES_H_

#include <cstdint>
#include <string>

#include "deniable/v1/report_service.pb.h"

namespace deniable::testing {

// The start of an hour (seconds since the epoch) the batches' reports fall in.
inline constexpr int64_t kBatchHour = 1'700'000'000 - 1'700'000'000 % 3600;

// `n` (at most 26) reports with ids made of 15 bytes `first` and a letter, so batches with
// distinct `first` never share an id and a batch sent again is all duplicates.
inline v1::SubmitReportsRequest Batch(char first, int n) {
  v1::SubmitReportsRequest request;
  for (int i = 0; i < n; ++i) {
    v1::Report* r = request.add_reports();
    r->set_metric("m");
    r->set_design_version(1);
    r->set_bit(static_cast<uint32_t>(i % 2));
    r->set_report_id(std::string(15, first) + static_cast<char>('a' + i));
    r->set_event_time_seconds(kBatchHour);
  }
  return request;
}

}  // namespace deniable::testing

#endif  // DENIABLE_TESTS_SUPPORT_REPORT_BATCHES_H_
