// A scripted collector for the delivery-contract tests: serves metric "m" (two coins unless
// SetCategorical, SetNumeric or SetHeavyHitters changed it) and answers
// SubmitReports from a script, then accepts. Like a real collector it stores each report id once
// (a re-sent id is a duplicate). Faults it can inject:
//   - `script`: whole-batch statuses answered in turn, one per call, before accepting;
//   - `max_batch`: batches larger than this fail whole with INVALID_ARGUMENT ("too large");
//   - `Reject(id, ...)`: a report judged invalid one by one, `times` times (-1: always), either
//     as a per-report rejection (a current collector) or, with `judge_whole`, by failing its
//     whole batch with INVALID_ARGUMENT (a collector that judges batches whole);
//   - `bad_index`: the next response names a rejection index outside the batch.
// Thread-safe.
#ifndef DENIABLE_CLIENT_SRC_TESTING_FAULT_INJECTING_TRANSPORT_H_
#define DENIABLE_CLIENT_SRC_TESTING_FAULT_INJECTING_TRANSPORT_H_

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "client/src/testing/categorical_design.h"
#include "client/src/testing/numeric_design.h"
#include "deniable/client/transport.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/heavy_hitters_convert.h"

namespace deniable::client::testing {

class FaultInjectingTransport : public ReportTransport {
 public:
  struct Rejection {
    absl::StatusCode code = absl::StatusCode::kInvalidArgument;
    bool permanent = true;
    int times = -1;  // answers left; -1: every time
  };

  FaultInjectingTransport() { DesignToProto(Design::TwoCoin(), 1, &design_); }

  absl::StatusOr<v1::GetDesignResponse> GetDesign(const std::string& metric,
                                                  absl::Duration) override {
    {
      absl::MutexLock lock(&mu_);
      ++design_calls_;
    }
    if (metric != "m") return absl::NotFoundError("metric \"" + metric + "\" does not exist");
    v1::GetDesignResponse response;
    response.set_metric(metric);
    absl::MutexLock lock(&mu_);
    *response.mutable_design() = design_;
    for (const std::string& c : categories_) response.add_categories(c);
    if (range_.has_value()) *response.mutable_range() = *range_;
    response.set_time_precision_seconds(3600);
    return response;
  }

  absl::StatusOr<v1::SubmitReportsResponse> SubmitReports(const v1::SubmitReportsRequest& request,
                                                          absl::Duration) override {
    absl::MutexLock lock(&mu_);
    ++calls_;
    for (const v1::Report& r : request.reports()) ++sends_[r.report_id()];
    batch_sizes_.push_back(request.reports_size());
    if (!script_.empty()) {
      absl::Status next = script_.front();
      script_.pop_front();
      return next;
    }
    if (max_batch_ > 0 && request.reports_size() > max_batch_) {
      return absl::InvalidArgumentError(absl::StrCat("reports: ", request.reports_size(),
                                                     " reports exceed the limit of ", max_batch_));
    }
    v1::SubmitReportsResponse response;
    std::vector<int> rejected;
    for (int i = 0; i < request.reports_size(); ++i) {
      auto it = rejections_.find(request.reports(i).report_id());
      if (it == rejections_.end() || it->second.times == 0) continue;
      if (judge_whole_) {
        if (it->second.times > 0) --it->second.times;
        return absl::InvalidArgumentError(absl::StrCat("reports[", i, "]: invalid"));
      }
      rejected.push_back(i);
    }
    for (int i : rejected) {  // judged one by one: the batch's other reports are stored
      Rejection& r = rejections_[request.reports(i).report_id()];
      if (r.times > 0) --r.times;
      v1::ReportRejection* out = response.add_rejections();
      out->set_index(static_cast<uint32_t>(i));
      out->set_code(static_cast<int>(r.code));
      out->set_reason(absl::StrCat("reports[", i, "]: scripted rejection"));
      out->set_permanent(r.permanent);
    }
    if (bad_index_) {
      bad_index_ = false;
      response.add_rejections()->set_index(static_cast<uint32_t>(request.reports_size()));
      return response;
    }
    size_t next = 0;
    for (int i = 0; i < request.reports_size(); ++i) {
      if (next < rejected.size() && rejected[next] == i) {
        ++next;
        continue;
      }
      if (++stored_[request.reports(i).report_id()] == 1) {
        response.set_accepted(response.accepted() + 1);
      } else {
        response.set_duplicates(response.duplicates() + 1);
      }
    }
    return response;
  }

  // Makes "m" a metric with categories `names` and the categorical design (mechanism, epsilon).
  void SetCategorical(const std::vector<std::string>& names, CategoricalMechanism mechanism,
                      double epsilon) {
    absl::MutexLock lock(&mu_);
    categories_ = names;
    design_ = CategoricalWireDesign(mechanism, static_cast<int>(names.size()), epsilon);
  }

  // Makes "m" a numeric metric (NumericWireDesign) with the range of its edges.
  void SetNumeric(v1::NumericMechanism mechanism, double epsilon, const std::vector<double>& edges,
                  uint32_t sampled_buckets = 0) {
    absl::MutexLock lock(&mu_);
    design_ = NumericWireDesign(mechanism, epsilon, edges, sampled_buckets);
    range_.emplace();
    range_->set_lo(edges.front());
    range_->set_hi(edges.back());
  }

  // Makes "m" a heavy-hitters metric with `design` (its salt included) as version 1.
  void SetHeavyHitters(const HeavyHittersDesign& design) {
    absl::MutexLock lock(&mu_);
    categories_.clear();
    range_.reset();
    design_.Clear();
    HeavyHittersDesignToProto(design, 1, &design_);
  }

  void Script(std::vector<absl::Status> statuses) {
    absl::MutexLock lock(&mu_);
    script_.insert(script_.end(), statuses.begin(), statuses.end());
  }
  void Reject(const std::string& id, Rejection rejection) {
    absl::MutexLock lock(&mu_);
    rejections_[id] = rejection;
  }
  void set_max_batch(int n) {
    absl::MutexLock lock(&mu_);
    max_batch_ = n;
  }
  void set_judge_whole(bool whole) {
    absl::MutexLock lock(&mu_);
    judge_whole_ = whole;
  }
  void set_bad_index() {
    absl::MutexLock lock(&mu_);
    bad_index_ = true;
  }

  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }
  int design_calls() {
    absl::MutexLock lock(&mu_);
    return design_calls_;
  }
  // Distinct report ids stored; each id is stored at most once, like the real collector.
  int stored() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(stored_.size());
  }
  bool IsStored(const std::string& id) {
    absl::MutexLock lock(&mu_);
    return stored_.count(id) > 0;
  }
  // How often report `id` was sent (0: never).
  int sends(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto it = sends_.find(id);
    return it == sends_.end() ? 0 : it->second;
  }
  std::vector<int> batch_sizes() {
    absl::MutexLock lock(&mu_);
    return batch_sizes_;
  }

 private:
  absl::Mutex mu_;
  v1::Design design_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> categories_ ABSL_GUARDED_BY(mu_);
  std::optional<v1::NumericRange> range_ ABSL_GUARDED_BY(mu_);
  std::deque<absl::Status> script_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Rejection> rejections_ ABSL_GUARDED_BY(mu_);
  int max_batch_ ABSL_GUARDED_BY(mu_) = 0;
  bool judge_whole_ ABSL_GUARDED_BY(mu_) = false;
  bool bad_index_ ABSL_GUARDED_BY(mu_) = false;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
  int design_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> sends_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> stored_ ABSL_GUARDED_BY(mu_);  // id -> times answered as stored
  std::vector<int> batch_sizes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deniable::client::testing

#endif  // DENIABLE_CLIENT_SRC_TESTING_FAULT_INJECTING_TRANSPORT_H_
