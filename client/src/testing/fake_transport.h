// A ReportTransport for the SDK's unit tests: serves one metric "m" (two coins unless changed;
// SetCategorical makes it a metric with categories, SetNumeric a numeric one, SetHeavyHitters a
// heavy-hitters one), records every call
// and fails the next `failures` submits with `failure`. Thread-safe.
#ifndef DENIABLE_CLIENT_SRC_TESTING_FAKE_TRANSPORT_H_
#define DENIABLE_CLIENT_SRC_TESTING_FAKE_TRANSPORT_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "client/src/testing/categorical_design.h"
#include "client/src/testing/numeric_design.h"
#include "deniable/client/transport.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/heavy_hitters_convert.h"

namespace deniable::client::testing {

class FakeTransport : public ReportTransport {
 public:
  FakeTransport() { DesignToProto(Design::TwoCoin(), 1, &design_); }

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    ++design_calls;
    if (!design_failure.ok()) return design_failure;
    if (metric != "m") return absl::NotFoundError("metric \"" + metric + "\" does not exist");
    v1::GetDesignResponse response;
    response.set_metric(metric);
    *response.mutable_design() = design_;
    response.set_time_precision_seconds(3600);
    response.set_reporting_period_seconds(reporting_period_seconds);
    response.set_randomization(randomization);
    response.set_design_fingerprint(fingerprint);
    for (const std::string& c : categories) response.add_categories(c);
    response.set_window_firsts_off(window_firsts_off);
    response.set_reporting_once(reporting_once);
    if (range.has_value()) *response.mutable_range() = *range;
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    submits.push_back(request);
    timeouts.push_back(timeout);
    if (down || failures > 0) {
      if (failures > 0) --failures;
      return failure;
    }
    v1::SubmitReportsResponse response;
    for (const v1::Report& r : request.reports()) {
      if (stored_ids.insert(r.report_id()).second) {
        response.set_accepted(response.accepted() + 1);
      } else {
        response.set_duplicates(response.duplicates() + 1);
      }
    }
    if (mark_stale) response.add_stale_metrics("m");
    return response;
  }

  // Makes "m" a metric with `names` as categories and the categorical design (mechanism,
  // epsilon) as a collector states it (a, b = p*, q*; categories; hash_buckets).
  void SetCategorical(const std::vector<std::string>& names, CategoricalMechanism mechanism,
                      double epsilon) {
    absl::MutexLock lock(&mu_);
    categories = names;
    design_ = CategoricalWireDesign(mechanism, static_cast<int>(names.size()), epsilon);
  }
  // Makes "m" a numeric metric with the range [edges.front(), edges.back()] and version 1 of the
  // numeric design (mechanism, epsilon, edges, d) as a collector states it (parameters.numeric).
  void SetNumeric(v1::NumericMechanism mechanism, double epsilon, const std::vector<double>& edges,
                  uint32_t sampled_buckets = 0) {
    absl::MutexLock lock(&mu_);
    design_ = NumericWireDesign(mechanism, epsilon, edges, sampled_buckets);
    range.emplace();
    range->set_lo(edges.front());
    range->set_hi(edges.back());
    range->set_unit("ms");
  }
  // Makes "m" a heavy-hitters metric with `design` (its salt included) as version `version`.
  // REQUIRES: ValidateHeavyHittersDesign(design).ok().
  void SetHeavyHitters(const HeavyHittersDesign& design, uint32_t version = 1) {
    absl::MutexLock lock(&mu_);
    categories.clear();
    range.reset();
    design_.Clear();
    HeavyHittersDesignToProto(design, version, &design_);
  }
  // Every report received, in the order sent.
  std::vector<v1::Report> SentReports() {
    absl::MutexLock lock(&mu_);
    std::vector<v1::Report> out;
    for (const auto& s : submits) out.insert(out.end(), s.reports().begin(), s.reports().end());
    return out;
  }

  int StoredCount() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(stored_ids.size());
  }
  int SubmitCount() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(submits.size());
  }
  void SetDown(bool is_down) {
    absl::MutexLock lock(&mu_);
    down = is_down;
  }

  absl::Mutex mu_;
  v1::Design design_;
  uint32_t reporting_period_seconds = 0;  // 0: what an older server sends (means a day)
  v1::Randomization randomization = v1::RANDOMIZATION_UNSPECIFIED;
  uint64_t fingerprint = 0;               // GetDesignResponse.design_fingerprint
  std::vector<std::string> categories;    // GetDesignResponse.categories
  bool window_firsts_off = false;         // GetDesignResponse.window_firsts_off
  bool reporting_once = false;            // GetDesignResponse.reporting_once
  std::optional<v1::NumericRange> range;  // GetDesignResponse.range (numeric metrics)
  int design_calls = 0;
  absl::Status design_failure;
  std::vector<v1::SubmitReportsRequest> submits;
  std::vector<absl::Duration> timeouts;
  std::set<std::string> stored_ids;
  int failures = 0;
  bool down = false;  // every submit fails with `failure` while set
  absl::Status failure = absl::UnavailableError("down");
  bool mark_stale = false;
};

}  // namespace deniable::client::testing

#endif  // DENIABLE_CLIENT_SRC_TESTING_FAKE_TRANSPORT_H_
