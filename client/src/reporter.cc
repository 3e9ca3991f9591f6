#include "deniable/client/reporter.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/random/distributions.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/src/numeric_answer.h"
#include "deniable/common/calendar_windows.h"
#include "deniable/common/labels.h"
#include "deniable/common/randomizer.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/categorical_convert.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/heavy_hitters_convert.h"
#include "deniable/convert/mechanism_convert.h"
#include "deniable/convert/numeric_convert.h"

namespace deniable::client {
namespace {

// The numeric design a collector sent (GetDesignResponse.design with the metric's range), its
// channel and range checked, so that a device never randomizes with a design it cannot explain.
absl::StatusOr<NumericDesign> NumericDesignOf(const v1::GetDesignResponse& response) {
  if (!response.design().parameters().has_numeric()) {
    return absl::InvalidArgumentError(
        "design.parameters: the metric has a range (a numeric metric) but its design is not "
        "numeric");
  }
  if (!response.has_range()) {
    return absl::InvalidArgumentError("range: a numeric design needs the metric's range");
  }
  DENIABLE_ASSIGN_OR_RETURN(NumericDesign design, NumericDesignFromWire(response.design()));
  if (design.lo() != response.range().lo() || design.hi() != response.range().hi()) {
    return absl::InvalidArgumentError(
        absl::StrCat("design.parameters.numeric.bucket_edges: [", design.lo(), ", ", design.hi(),
                     "] does not match the metric's range [", response.range().lo(), ", ",
                     response.range().hi(), "]"));
  }
  return design;
}

// The call to make, in each SDK that binds this Reporter (the C API, and Java / Kotlin over it),
// so that a C or Java developer reads their own function's name.
constexpr char kCategoryCall[] =
    "Report(metric, category) (C: deniable_reporter_report_category; Java, Kotlin: "
    "reportCategory)";
constexpr char kValueCall[] =
    "ReportValue(metric, value) (C: deniable_reporter_report_value; Java, Kotlin: reportValue)";
constexpr char kBoolCall[] =
    "Report(metric, bool) (C: deniable_reporter_report; Java, Kotlin: report)";
constexpr char kStringCall[] =
    "ReportString(metric, value) (C: deniable_reporter_report_string; Java, Kotlin: "
    "reportString)";

// A string reported to a metric of another kind, or another kind of answer to a heavy-hitters
// metric. Never repeats the answer.
absl::Status StringKindError(const std::string& metric, bool heavy_hitters, const char* kind,
                             const char* call) {
  if (heavy_hitters) {
    return absl::FailedPreconditionError(
        absl::StrCat("metric \"", metric,
                     "\" is a heavy_hitters metric (its values are strings): report a string with ",
                     kStringCall));
  }
  return absl::FailedPreconditionError(absl::StrCat("metric \"", metric, "\" is a ", kind,
                                                    " metric, not heavy_hitters: report with ",
                                                    call, ", not a string"));
}

// A true answer of the wrong kind for the metric. Never repeats the answer.
absl::Status WrongKindError(const std::string& metric, const std::optional<NumericDesign>& numeric,
                            const std::vector<std::string>& categories) {
  if (numeric.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric: \"", metric, "\" is a numeric metric (values in [", numeric->lo(),
                     ", ", numeric->hi(), "]): report a number with ", kValueCall));
  }
  if (!categories.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("metric: \"", metric, "\" has categories (", absl::StrJoin(categories, ", "),
                     "): report one of them with ", kCategoryCall, ", not a number"));
  }
  return absl::InvalidArgumentError(absl::StrCat("metric: \"", metric,
                                                 "\" is a yes/no metric: report a bool with ",
                                                 kBoolCall, ", not a number"));
}

}  // namespace

absl::Status Reporter::ValidateOptions(const ReporterOptions& o) {
  if (!(o.max_epsilon_per_metric >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_epsilon_per_metric: must be >= 0 nats, but is ", o.max_epsilon_per_metric));
  }
  if (o.rpc_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rpc_timeout: must be > 0");
  }
  if (o.max_batch_reports < 1) return absl::InvalidArgumentError("max_batch_reports: must be >= 1");
  if (o.max_attempts < 1) return absl::InvalidArgumentError("max_attempts: must be >= 1");
  if (o.max_queued_reports < 1) {
    return absl::InvalidArgumentError("max_queued_reports: must be >= 1");
  }
  if (o.send_interval <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("send_interval: must be > 0");
  }
  if (o.first_design_wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("first_design_wait: must be >= 0");
  }
  if (o.max_report_age <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("max_report_age: must be > 0 (InfiniteDuration: never)");
  }
  if (o.initial_backoff < absl::ZeroDuration() || o.max_backoff < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("initial_backoff, max_backoff: must be >= 0");
  }
  // The collector's rules, so that a label is refused here rather than after Report() said OK.
  return CanonicalLabels(o.labels, "labels").status();
}

absl::StatusOr<std::unique_ptr<Reporter>> Reporter::Open(std::shared_ptr<ReportTransport> transport,
                                                         std::unique_ptr<DeviceStore> store,
                                                         ReporterOptions options) {
  DENIABLE_RETURN_IF_ERROR(ValidateOptions(options));
  if (store == nullptr) return absl::InvalidArgumentError("store: must not be null");
  auto secure = std::make_unique<SecureBitGen>();
  SecureBitGen* raw = secure.get();
  return std::unique_ptr<Reporter>(
      new Reporter(std::move(transport), std::move(store), std::move(options), std::move(secure),
                   absl::BitGenRef(*raw), SystemClock::Default(), absl::OkStatus()));
}

std::unique_ptr<Reporter> Reporter::Create(std::shared_ptr<ReportTransport> transport,
                                           ReporterOptions options) {
  auto secure = std::make_unique<SecureBitGen>();
  SecureBitGen* raw = secure.get();
  absl::Status valid = ValidateOptions(options);
  return std::unique_ptr<Reporter>(new Reporter(
      std::move(transport), MakeMemoryDeviceStore(), std::move(options), std::move(secure),
      absl::BitGenRef(*raw), SystemClock::Default(), std::move(valid)));
}

std::unique_ptr<Reporter> Reporter::CreateForTesting(std::shared_ptr<ReportTransport> transport,
                                                     ReporterOptions options, absl::BitGenRef gen,
                                                     const Clock* clock,
                                                     std::unique_ptr<DeviceStore> store) {
  if (store == nullptr) store = MakeMemoryDeviceStore();
  absl::Status valid = ValidateOptions(options);
  return std::unique_ptr<Reporter>(new Reporter(std::move(transport), std::move(store),
                                                std::move(options), nullptr, gen, clock,
                                                std::move(valid)));
}

Reporter::Reporter(std::shared_ptr<ReportTransport> transport, std::unique_ptr<DeviceStore> store,
                   ReporterOptions options, std::unique_ptr<SecureBitGen> secure,
                   absl::BitGenRef gen, const Clock* clock, absl::Status options_status)
    : transport_(std::move(transport)),
      store_(std::move(store)),
      options_(std::move(options)),
      clock_(clock),
      options_status_(std::move(options_status)),
      secure_(std::move(secure)),
      gen_(gen),
      batch_limit_(options_.max_batch_reports),
      retry_prototype_(options_.retry_policy != nullptr
                           ? options_.retry_policy
                           : std::make_shared<LimitedErrorCountRetryPolicy>(
                                 std::max(0, options_.max_attempts - 1))),
      backoff_prototype_(options_.backoff_policy != nullptr
                             ? options_.backoff_policy
                             : std::make_shared<ExponentialBackoffPolicy>(options_.initial_backoff,
                                                                          options_.max_backoff)) {
  if (absl::StatusOr<DeliveryCounters> counters = store_->ReadCounters(); counters.ok()) {
    absl::MutexLock lock(&send_mu_);
    queue_full_logged_ = counters->dropped_queue_full;  // the drops to log start now
  }
  if (options_status_.ok() && options_.background_sending) {
    sender_ = std::thread([this] { SenderLoop(); });
  }
}

Reporter::~Reporter() {
  absl::Status closed = Close(options_.shutdown_drain_timeout);
  if (!closed.ok()) {
    Log(LogLevel::kWarning,
        absl::StrCat("shutdown: ", pending(),
                     " reports stay queued for the next start: ", closed.ToString()));
  }
}

absl::Status Reporter::Close(absl::Duration timeout) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::OkStatus();
    closed_ = true;
    stop_ = true;
  }
  if (sender_.joinable()) sender_.join();
  if (!options_status_.ok() || pending() == 0) return absl::OkStatus();
  return Drain(timeout, /*refresh_designs=*/false);
}

absl::Status Reporter::CheckOpen() const {
  DENIABLE_RETURN_IF_ERROR(options_status_);
  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  return absl::OkStatus();
}

absl::Status Reporter::ClosedError() {
  return absl::FailedPreconditionError("reporter: closed (Close() was called); nothing queued");
}

void Reporter::Log(LogLevel level, const std::string& message) const {
  if (options_.log) options_.log(level, message);
}

absl::StatusOr<Reporter::CachedDesign> Reporter::ParseDesign(
    const v1::GetDesignResponse& response) {
  CachedDesign cached;
  cached.version = response.design().version();
  cached.fingerprint = response.design_fingerprint();
  if (response.design().parameters().has_heavy_hitters()) {
    DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign heavy_hitters,
                              HeavyHittersDesignFromWire(response.design()));
    cached.heavy_hitters_mechanism = MechanismFor(heavy_hitters);
    cached.epsilon = cached.heavy_hitters_mechanism->Epsilon();  // a report's local epsilon
    cached.heavy_hitters = heavy_hitters;
  } else if (response.design().parameters().has_numeric() || response.has_range()) {
    DENIABLE_ASSIGN_OR_RETURN(NumericDesign numeric, NumericDesignOf(response));
    cached.numeric_mechanism = MechanismFor(numeric);
    cached.epsilon = cached.numeric_mechanism->Epsilon();  // a report's local epsilon
    cached.numeric = std::move(numeric);
  } else if (response.categories_size() > 0) {
    cached.categories.assign(response.categories().begin(), response.categories().end());
    DENIABLE_ASSIGN_OR_RETURN(CategoricalDesign categorical,
                              CategoricalDesignFromWire(response.design()));
    if (categorical.k() != response.categories_size()) {
      return absl::InvalidArgumentError(absl::StrCat("design.categories: is ", categorical.k(),
                                                     " but the metric names ",
                                                     response.categories_size(), " categories"));
    }
    cached.channel = categorical.SupportChannel();
    cached.epsilon = categorical.epsilon();
    cached.categorical = categorical;
  } else {
    DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromWire(response.design()));
    cached.channel = design.channel();
    cached.epsilon = Epsilon(cached.channel);
  }
  cached.time_precision_seconds =
      response.time_precision_seconds() == 0 ? 3600 : response.time_precision_seconds();
  // An older server sends no period (0): one day, what it documented.
  cached.period_seconds =
      response.reporting_period_seconds() == 0 ? 86400 : response.reporting_period_seconds();
  cached.window_firsts = !response.window_firsts_off();
  cached.reporting_once = response.reporting_once();
  switch (response.randomization()) {
    case v1::RANDOMIZATION_UNSPECIFIED:
    case v1::MEMOIZED:
      break;
    case v1::FRESH_PER_PERIOD:
      cached.fresh_per_period = true;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("randomization: unknown value ",
                                                     static_cast<int>(response.randomization())));
  }
  return cached;
}

absl::StatusOr<Reporter::CachedDesign> Reporter::FetchDesign(const std::string& metric,
                                                             absl::Duration timeout) {
  DENIABLE_ASSIGN_OR_RETURN(v1::GetDesignResponse response, transport_->GetDesign(metric, timeout));
  DENIABLE_ASSIGN_OR_RETURN(CachedDesign cached, ParseDesign(response));
  absl::Status saved = store_->SaveDesign(metric, response.SerializeAsString());
  if (!saved.ok()) Log(LogLevel::kWarning, absl::StrCat("cannot cache design: ", saved.message()));
  // The disowned check, the forgetting and the install under one lock: a disown that lands
  // while the design was being fetched or saved is seen here, never erased unseen.
  absl::MutexLock lock(&mu_);
  if (disowned_.contains(metric)) {
    // The bits memoized for this version were drawn with the design the collector disowned:
    // the next report of this version draws with the collector's design.
    DENIABLE_RETURN_IF_ERROR(store_->ForgetMemo(metric, cached.version));
  }
  cached.generation = ++design_generation_;
  designs_[metric] = cached;
  disowned_.erase(metric);
  return cached;
}

absl::StatusOr<Reporter::CachedDesign> Reporter::DesignFor(const std::string& metric) {
  bool disowned = false;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = designs_.find(metric); it != designs_.end()) return it->second;
    disowned = disowned_.contains(metric);
  }
  std::optional<std::string> stored;
  if (!disowned) {
    DENIABLE_ASSIGN_OR_RETURN(stored, store_->LoadDesign(metric));
  }
  if (stored.has_value()) {
    v1::GetDesignResponse response;
    if (response.ParseFromString(*stored)) {
      absl::StatusOr<CachedDesign> cached = ParseDesign(response);
      absl::MutexLock lock(&mu_);
      // Disowned while it was read: the stored copy is the design the collector refused.
      if (cached.ok() && !disowned_.contains(metric)) {
        cached->generation = ++design_generation_;
        designs_[metric] = *cached;
        return cached;
      }
    }
  }
  if (options_.first_design_wait == absl::ZeroDuration()) {
    absl::MutexLock lock(&mu_);
    missing_.push_back(metric);
    wake_ = true;
    return absl::UnavailableError(absl::StrCat("metric \"", metric,
                                               "\": design not known yet; fetching it in the "
                                               "background (or call Prefetch)"));
  }
  return FetchDesign(metric, std::min(options_.first_design_wait, options_.rpc_timeout));
}

absl::Status Reporter::Prefetch(const std::vector<std::string>& metrics, absl::Duration timeout) {
  DENIABLE_RETURN_IF_ERROR(CheckOpen());
  absl::Status first;
  for (const std::string& metric : metrics) first.Update(FetchDesign(metric, timeout).status());
  return first;
}

absl::Status Reporter::ReportValue(const std::string& metric, double value,
                                   std::string* report_id) {
  return ReportValue(metric, value, {}, report_id);
}

absl::Status Reporter::ReportValue(const std::string& metric, double value,
                                   const std::map<std::string, std::string>& labels,
                                   std::string* report_id) {
  if (std::isnan(value)) {
    if (report_id != nullptr) report_id->clear();
    return absl::InvalidArgumentError("value: must be a number, but is NaN");
  }
  return ReportAnswer(metric, TrueAnswer::Value(value), labels, report_id);
}

absl::Status Reporter::ReportString(const std::string& metric, absl::string_view value,
                                    std::string* report_id) {
  return ReportString(metric, value, {}, report_id);
}

absl::Status Reporter::ReportString(const std::string& metric, absl::string_view value,
                                    const std::map<std::string, std::string>& labels,
                                    std::string* report_id) {
  return ReportAnswer(metric, TrueAnswer::String(value), labels, report_id);
}

absl::Status Reporter::Report(const std::string& metric, bool answer, std::string* report_id) {
  return Report(metric, answer, {}, report_id);
}

absl::Status Reporter::Report(const std::string& metric, bool answer,
                              const std::map<std::string, std::string>& labels,
                              std::string* report_id) {
  return ReportAnswer(metric, TrueAnswer::YesNo(answer), labels, report_id);
}

absl::Status Reporter::Report(const std::string& metric, absl::string_view category,
                              std::string* report_id) {
  return Report(metric, category, {}, report_id);
}

absl::Status Reporter::Report(const std::string& metric, absl::string_view category,
                              const std::map<std::string, std::string>& labels,
                              std::string* report_id) {
  return ReportAnswer(metric, TrueAnswer::Name(category), labels, report_id);
}

absl::Status Reporter::Report(const std::string& metric, const char* category,
                              std::string* report_id) {
  return Report(metric, category, {}, report_id);
}

absl::Status Reporter::Report(const std::string& metric, const char* category,
                              const std::map<std::string, std::string>& labels,
                              std::string* report_id) {
  if (category == nullptr) {
    if (report_id != nullptr) report_id->clear();
    return absl::InvalidArgumentError("category: must not be null");
  }
  return Report(metric, absl::string_view(category), labels, report_id);
}

absl::Status Reporter::ReportCategoryIndex(const std::string& metric, int index,
                                           const std::map<std::string, std::string>& labels,
                                           std::string* report_id) {
  return ReportAnswer(metric, TrueAnswer::Index(index), labels, report_id);
}

absl::StatusOr<std::vector<std::string>> Reporter::Categories(const std::string& metric) {
  DENIABLE_RETURN_IF_ERROR(CheckOpen());
  DENIABLE_ASSIGN_OR_RETURN(CachedDesign design, DesignFor(metric));
  return design.categories;
}

absl::Status Reporter::ReportAnswer(const std::string& metric, const TrueAnswer& answer,
                                    const std::map<std::string, std::string>& extra_labels,
                                    std::string* report_id) {
  constexpr int kAttempts = 3;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    bool design_changed = false;
    absl::Status status =
        ReportAnswerOnce(metric, answer, extra_labels, report_id, &design_changed);
    if (!design_changed) return status;
  }
  return absl::UnavailableError(absl::StrCat("metric \"", metric, "\": its design changed ",
                                             kAttempts,
                                             " times while reporting; nothing queued, try again"));
}

absl::Status Reporter::ReportAnswerOnce(const std::string& metric, const TrueAnswer& answer,
                                        const std::map<std::string, std::string>& extra_labels,
                                        std::string* report_id, bool* design_changed) {
  if (report_id != nullptr) report_id->clear();
  DENIABLE_RETURN_IF_ERROR(CheckOpen());
  std::map<std::string, std::string> labels = extra_labels;
  labels.insert(options_.labels.begin(), options_.labels.end());  // per-report values win
  if (!extra_labels.empty()) {
    DENIABLE_RETURN_IF_ERROR(CanonicalLabels(labels, "labels").status());
  }
  DENIABLE_ASSIGN_OR_RETURN(CachedDesign design, DesignFor(metric));
  // Checked before anything is counted.
  DENIABLE_ASSIGN_OR_RETURN(const int32_t category, CategoryOf(metric, design, answer));
  const absl::Time now = clock_->Now();
  const int64_t period_seconds = design.period_seconds;
  const int64_t now_seconds = absl::ToUnixSeconds(now);
  ReportCommit commit;
  commit.period_start_seconds =
      now_seconds - ((now_seconds % period_seconds) + period_seconds) % period_seconds;
  commit.epsilon = design.epsilon;
  commit.max_queued_reports = options_.max_queued_reports;

  absl::MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  if (auto current = designs_.find(metric);
      current == designs_.end() || current->second.generation != design.generation) {
    // Disowned or replaced since it was looked up: a draw with it could be memoized after
    // the memo of its version was forgotten, then sent under the new design.
    *design_changed = true;
    return absl::OkStatus();
  }
  std::pair<int64_t, int64_t>* period = nullptr;
  std::pair<int64_t, bool>* history = nullptr;
  DENIABLE_RETURN_IF_ERROR(LoadLedgerCaches(metric, &period, &history));
  const int64_t in_period = period->first == commit.period_start_seconds ? period->second : 0;
  if ((options_.one_report_per_period && in_period > 0) ||
      (design.reporting_once && history->second)) {
    // The period's report (or the metric's only report) is queued already: nothing changes on
    // the wire. OK with report_id cleared, and said in the log, as the other SDKs say it.
    DENIABLE_RETURN_IF_ERROR(store_->CountRepeatedReport(metric));
    Log(LogLevel::kInfo,
        absl::StrCat("metric \"", metric, "\": ",
                     design.reporting_once ? "already reported (a metric reported once per device)"
                                           : "already reported this period",
                     "; nothing sent"));
    return absl::OkStatus();
  }
  // The only uses of `answer` / `category`: the memo key and the randomizer; only the
  // randomized report comes out.
  int32_t level = -1;
  if (design.numeric.has_value()) {
    DENIABLE_ASSIGN_OR_RETURN(level, NumericLevel(metric, design, answer.value, &commit));
  }
  uint32_t group = 0;
  std::string value_key;  // heavy hitters: the memo's key, a hash of the value
  if (design.heavy_hitters.has_value()) {
    DENIABLE_ASSIGN_OR_RETURN(group, HeavyHittersGroup(metric, design));
    value_key =
        HeavyHittersValueKey(metric, design.version, design.heavy_hitters->salt, answer.name);
  }
  DENIABLE_ASSIGN_OR_RETURN(Memos memos,
                            LookupMemos(metric, design, answer, category, level, value_key));
  if (!memos.any()) DENIABLE_RETURN_IF_ERROR(CheckEpsilonCap(metric, design));
  DENIABLE_RETURN_IF_ERROR(
      RandomizeInto(design, answer, category, level, group, value_key, std::move(memos), &commit));
  StampReport(metric, design, now, history->first, labels, &commit.report);
  commit.report_time_seconds = commit.report.event_time_seconds();
  DENIABLE_RETURN_IF_ERROR(store_->CommitReport(commit));
  *period = {commit.period_start_seconds, in_period + 1};
  *history = {commit.report_time_seconds, true};
  if (report_id != nullptr) *report_id = commit.report.report_id();
  return absl::OkStatus();
}

absl::StatusOr<int32_t> Reporter::CategoryOf(const std::string& metric, const CachedDesign& design,
                                             const TrueAnswer& answer) {
  // Messages never repeat the value passed: it may be a true answer.
  const bool has_categories = design.categorical.has_value();
  const bool numeric = design.numeric.has_value();
  const bool heavy_hitters = design.heavy_hitters.has_value();
  if (heavy_hitters != (answer.kind == TrueAnswer::Kind::kString)) {
    if (heavy_hitters) return StringKindError(metric, true, nullptr, nullptr);
    if (numeric) return StringKindError(metric, false, "numeric", kValueCall);
    if (has_categories) return StringKindError(metric, false, "categorical", kCategoryCall);
    return StringKindError(metric, false, "yes_no", kBoolCall);
  }
  if (heavy_hitters) {
    // INVALID_ARGUMENT naming "value": its length and the limit, or the NUL's offset.
    DENIABLE_RETURN_IF_ERROR(ValidateHeavyHitterValue(*design.heavy_hitters, answer.name));
    return -1;
  }
  if (numeric != (answer.kind == TrueAnswer::Kind::kValue)) {
    return WrongKindError(metric, design.numeric, design.categories);
  }
  if (numeric) return -1;  // the value is checked with its level (NumericLevel)
  if (answer.kind == TrueAnswer::Kind::kYesNo) {
    if (has_categories) {
      return absl::FailedPreconditionError(absl::StrCat(
          "metric \"", metric, "\" has categories (", absl::StrJoin(design.categories, ", "),
          "): report one of them with ", kCategoryCall, ", not a yes/no answer"));
    }
    return -1;
  }
  if (!has_categories) {
    return absl::FailedPreconditionError(
        absl::StrCat("metric \"", metric,
                     "\" is a yes/no metric without categories: report a bool with ", kBoolCall));
  }
  if (answer.kind == TrueAnswer::Kind::kCategoryName) {
    auto it = std::find(design.categories.begin(), design.categories.end(), answer.name);
    if (it == design.categories.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("category: not one of the categories of metric \"", metric, "\" (",
                       absl::StrJoin(design.categories, ", "), "; names are case sensitive)"));
    }
    return static_cast<int32_t>(it - design.categories.begin());
  }
  if (answer.index < 0 || answer.index >= static_cast<int>(design.categories.size())) {
    return absl::InvalidArgumentError(absl::StrCat("category: index must be in [0, ",
                                                   design.categories.size(), ") for metric \"",
                                                   metric, "\""));
  }
  return answer.index;
}

absl::Status Reporter::LoadLedgerCaches(const std::string& metric,
                                        std::pair<int64_t, int64_t>** period,
                                        std::pair<int64_t, bool>** history) {
  auto p = periods_.find(metric);
  if (p == periods_.end()) {
    DENIABLE_ASSIGN_OR_RETURN(auto ledger, store_->ReadLedger());
    const MetricLedger& l = ledger[metric];
    p = periods_.emplace(metric, std::make_pair(l.period_start_seconds, l.reports_this_period))
            .first;
  }
  auto h = history_.find(metric);
  if (h == history_.end()) {
    DENIABLE_ASSIGN_OR_RETURN(auto ledger, store_->ReadLedger());
    const MetricLedger& l = ledger[metric];
    h = history_.emplace(metric, std::make_pair(l.last_report_seconds, l.reports_accepted > 0))
            .first;
  }
  *period = &p->second;
  *history = &h->second;
  return absl::OkStatus();
}

absl::StatusOr<int32_t> Reporter::NumericLevel(const std::string& metric,
                                               const CachedDesign& design, double value,
                                               ReportCommit* commit) {
  // A numeric value's level (numeric.h): clipped, then rounded with the metric's alpha, drawn
  // once and kept (ONE_BIT_MEAN) or put in its bucket (D_BIT_FLIP).
  double alpha = 0;
  if (design.numeric->mechanism() == NumericMechanism::kOneBitMean) {
    DENIABLE_ASSIGN_OR_RETURN(std::optional<double> kept, store_->LoadNumericAlpha(metric));
    if (kept.has_value()) {
      alpha = *kept;
    } else {
      alpha = absl::Uniform<double>(gen_, 0.0, 1.0);
      DENIABLE_RETURN_IF_ERROR(store_->SaveNumericAlpha(metric, alpha));
    }
  }
  const ValueLevel value_level = LevelOfValue(*design.numeric, value, alpha);
  commit->value_clipped = value_level.clipped;
  return value_level.level;
}

absl::StatusOr<uint32_t> Reporter::HeavyHittersGroup(const std::string& metric,
                                                     const CachedDesign& design) {
  const uint64_t salt = design.heavy_hitters->salt;
  DENIABLE_ASSIGN_OR_RETURN(std::optional<uint32_t> kept,
                            store_->LoadHeavyHittersGroup(metric, design.version, salt));
  if (kept.has_value()) return *kept;
  BitGenDraws draws(gen_);
  const uint32_t group = design.heavy_hitters_mechanism->DrawDeviceGroup(draws);
  DENIABLE_RETURN_IF_ERROR(store_->SaveHeavyHittersGroup(metric, design.version, salt, group));
  return group;
}

absl::StatusOr<Reporter::Memos> Reporter::LookupMemos(const std::string& metric,
                                                      const CachedDesign& design,
                                                      const TrueAnswer& answer, int32_t category,
                                                      int32_t level, const std::string& value_key) {
  Memos memos;
  if (design.fresh_per_period) {
    if (options_.max_epsilon_per_metric == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "max_epsilon_per_metric: metric \"", metric,
          "\" randomizes afresh each period (FRESH_PER_PERIOD), spending epsilon each period; "
          "set ReporterOptions::max_epsilon_per_metric to the most this device may spend on it"));
    }
    return memos;  // never memoized
  }
  if (design.heavy_hitters.has_value()) {
    DENIABLE_ASSIGN_OR_RETURN(memos.string,
                              store_->LookupStringMemo(metric, design.version, value_key));
  } else if (design.numeric.has_value()) {
    DENIABLE_ASSIGN_OR_RETURN(memos.numeric,
                              store_->LookupNumericMemo(metric, design.version, level));
  } else if (design.categorical.has_value()) {
    DENIABLE_ASSIGN_OR_RETURN(memos.category,
                              store_->LookupCategoryMemo(metric, design.version, category));
  } else {
    DENIABLE_ASSIGN_OR_RETURN(memos.yes_no, store_->LookupMemo(metric, design.version, answer.yes));
  }
  return memos;
}

absl::Status Reporter::CheckEpsilonCap(const std::string& metric, const CachedDesign& design) {
  if (!(options_.max_epsilon_per_metric > 0)) return absl::OkStatus();
  DENIABLE_ASSIGN_OR_RETURN(auto ledger, store_->ReadLedger());
  const double spent = ledger[metric].epsilon_spent;
  if (spent + design.epsilon > options_.max_epsilon_per_metric) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "metric \"", metric, "\": a new draw would spend ", design.epsilon, " nats on top of ",
        spent, ", above max_epsilon_per_metric = ", options_.max_epsilon_per_metric));
  }
  return absl::OkStatus();
}

absl::Status Reporter::RandomizeInto(const CachedDesign& design, const TrueAnswer& answer,
                                     int32_t category, int32_t level, uint32_t group,
                                     const std::string& value_key, Memos memos,
                                     ReportCommit* commit) {
  v1::Report& report = commit->report;
  if (design.heavy_hitters.has_value()) {
    if (memos.string.has_value()) {
      report.set_bit(memos.string->bit());
      *report.mutable_heavy_hitters() = memos.string->heavy_hitters();
      return absl::OkStatus();
    }
    BitGenDraws draws(gen_);
    DENIABLE_ASSIGN_OR_RETURN(WireAnswer drawn, design.heavy_hitters_mechanism->RandomizeString(
                                                    answer.name, group, draws));
    v1::Report randomized;
    WireAnswerToProto(drawn, &randomized);
    report.set_bit(randomized.bit());
    *report.mutable_heavy_hitters() = randomized.heavy_hitters();
    commit->randomized = true;
    if (!design.fresh_per_period) {
      commit->string_memo =
          ReportCommit::StringMemoEntry{design.version, value_key, std::move(randomized)};
    }
    return absl::OkStatus();
  }
  if (design.numeric.has_value()) {
    if (memos.numeric.has_value()) {
      report.set_bit(memos.numeric->bit());
      if (memos.numeric->has_numeric()) *report.mutable_numeric() = memos.numeric->numeric();
      return absl::OkStatus();
    }
    BitGenDraws draws(gen_);
    DENIABLE_ASSIGN_OR_RETURN(v1::Report drawn,
                              DrawNumericAnswer(*design.numeric_mechanism, level, draws));
    report.set_bit(drawn.bit());
    if (drawn.has_numeric()) *report.mutable_numeric() = drawn.numeric();
    commit->randomized = true;
    if (!design.fresh_per_period) {
      commit->numeric_memo =
          ReportCommit::NumericMemoEntry{design.version, level, std::move(drawn)};
    }
    return absl::OkStatus();
  }
  if (design.categorical.has_value()) {
    report.set_bit(0);
    if (memos.category.has_value()) {
      *report.mutable_categorical() = *std::move(memos.category);
      return absl::OkStatus();
    }
    DENIABLE_ASSIGN_OR_RETURN(CategoricalReport drawn,
                              RandomizeCategory(*design.categorical, category, gen_));
    *report.mutable_categorical() = CategoricalReportToProto(*design.categorical, drawn);
    commit->randomized = true;
    if (!design.fresh_per_period) {
      commit->category_memo =
          ReportCommit::CategoryMemoEntry{design.version, category, report.categorical()};
    }
    return absl::OkStatus();
  }
  bool bit = false;
  if (memos.yes_no.has_value()) {
    bit = *memos.yes_no;
  } else {
    bit = RandomizeAnswer(design.channel, answer.yes, gen_);
    commit->randomized = true;
    if (!design.fresh_per_period) {
      commit->memo = ReportCommit::MemoEntry{design.version, answer.yes, bit};
    }
  }
  report.set_bit(bit ? 1 : 0);
  return absl::OkStatus();
}

void Reporter::StampReport(const std::string& metric, const CachedDesign& design, absl::Time now,
                           int64_t last_report_seconds,
                           const std::map<std::string, std::string>& labels, v1::Report* report) {
  uint64_t id_words[2] = {absl::Uniform<uint64_t>(gen_), absl::Uniform<uint64_t>(gen_)};
  report->set_metric(metric);
  report->set_design_version(design.version);
  report->set_design_fingerprint(design.fingerprint);
  report->set_report_id(reinterpret_cast<const char*>(id_words), sizeof(id_words));
  report->set_event_time_seconds(RoundDownToPrecision(now, design.time_precision_seconds));
  if (design.window_firsts) {
    const uint8_t firsts = WindowFirsts(last_report_seconds, report->event_time_seconds());
    v1::WindowFirsts* flags = report->mutable_window_firsts();
    flags->set_day((firsts & kFirstInDay) != 0);
    flags->set_week((firsts & kFirstInWeek) != 0);
    flags->set_month((firsts & kFirstInMonth) != 0);
  }
  for (const auto& [key, value] : labels) (*report->mutable_labels())[key] = value;
}

void Reporter::DropReports(const std::vector<int64_t>& sequences, const DeliveryCounters& drops,
                           const std::string& reason) {
  absl::Status removed = store_->RemoveReports(sequences, /*acknowledged=*/false, drops);
  if (!removed.ok()) {  // still queued: they will be judged again
    Log(LogLevel::kWarning, absl::StrCat("cannot drop ", sequences.size(),
                                         " reports: ", removed.message(), " (", reason, ")"));
    return;
  }
  Log(LogLevel::kError, absl::StrCat("dropped ", sequences.size(), " reports: ", reason));
}

void Reporter::LogQueueFullDrops() {
  absl::StatusOr<DeliveryCounters> counters = store_->ReadCounters();
  if (!counters.ok()) return;
  if (queue_full_logged_ >= 0 && counters->dropped_queue_full > queue_full_logged_) {
    Log(LogLevel::kError,
        absl::StrCat("dropped ", counters->dropped_queue_full - queue_full_logged_,
                     " reports: queue full (max_queued_reports ", options_.max_queued_reports,
                     "), oldest first"));
  }
  queue_full_logged_ = counters->dropped_queue_full;
}

std::unique_ptr<BackoffPolicy> Reporter::NewBackoff() {
  std::unique_ptr<BackoffPolicy> backoff = backoff_prototype_->clone();
  absl::MutexLock lock(&mu_);
  backoff->Seed(absl::Uniform<uint64_t>(gen_));
  return backoff;
}

Reporter::SendOutcome Reporter::SendOneBatch(absl::Duration timeout, absl::Status* error) {
  absl::StatusOr<std::vector<QueuedReport>> batch = store_->PeekOldest(batch_limit_);
  if (!batch.ok()) {
    *error = batch.status();
    return SendOutcome::kTransient;
  }
  if (batch->empty()) return SendOutcome::kEmpty;
  v1::SubmitReportsRequest request;
  std::vector<int64_t> sequences;
  if (DropTooOld(*std::move(batch), &request, &sequences)) {
    return SendOutcome::kSent;  // the next call assembles a batch of live reports
  }

  {
    absl::MutexLock lock(&stats_mu_);
    ++session_.send_attempts;
  }
  absl::StatusOr<v1::SubmitReportsResponse> response = transport_->SubmitReports(request, timeout);
  if (!response.ok()) {
    *error = response.status();
    return OnBatchFailed(request.reports_size(), sequences, error);
  }
  batch_limit_ =
      static_cast<int>(std::min<int64_t>(options_.max_batch_reports, int64_t{batch_limit_} * 2));

  absl::StatusOr<BatchVerdicts> verdicts = JudgeReports(request, sequences, *response);
  if (!verdicts.ok()) {
    *error = verdicts.status();
    Log(LogLevel::kWarning, error->ToString());
    return SendOutcome::kTransient;
  }
  DeliveryCounters counters;
  counters.acknowledged = static_cast<int64_t>(verdicts->acknowledged.size());
  counters.duplicates = response->duplicates();
  absl::Status removed =
      store_->RemoveReports(verdicts->acknowledged, /*acknowledged=*/true, counters);
  if (!removed.ok()) {  // they will be re-sent; the server counts each id once
    Log(LogLevel::kWarning,
        absl::StrCat("cannot delete acknowledged reports: ", removed.message()));
  }
  if (response->stale_metrics_size() > 0) {
    absl::MutexLock lock(&mu_);
    for (const std::string& metric : response->stale_metrics()) stale_.push_back(metric);
  }
  return ActOnRejections(*verdicts, error);
}

bool Reporter::DropTooOld(std::vector<QueuedReport> batch, v1::SubmitReportsRequest* request,
                          std::vector<int64_t>* sequences) {
  // Contract (c): reports past max_report_age are dropped instead of sent.
  const int64_t now_seconds = absl::ToUnixSeconds(clock_->Now());
  const int64_t max_age_seconds = options_.max_report_age == absl::InfiniteDuration()
                                      ? INT64_MAX
                                      : absl::ToInt64Seconds(options_.max_report_age);
  std::vector<int64_t> too_old;
  for (QueuedReport& q : batch) {
    if (now_seconds - q.report.event_time_seconds() > max_age_seconds) {
      too_old.push_back(q.sequence);
      continue;
    }
    sequences->push_back(q.sequence);
    *request->add_reports() = std::move(q.report);
  }
  if (too_old.empty()) return false;
  DeliveryCounters drops;
  drops.dropped_too_old = static_cast<int64_t>(too_old.size());
  DropReports(too_old, drops,
              absl::StrCat("older than max_report_age (",
                           absl::FormatDuration(options_.max_report_age), ")"));
  return true;
}

Reporter::SendOutcome Reporter::OnBatchFailed(int size, const std::vector<int64_t>& sequences,
                                              absl::Status* error) {
  {
    absl::MutexLock lock(&stats_mu_);
    ++session_.failed_attempts;
  }
  if (!retry_prototype_->IsPermanentFailure(*error)) {
    Log(LogLevel::kInfo,
        absl::StrCat("batch of ", size, " reports not delivered, will retry: ", error->ToString()));
    return SendOutcome::kTransient;
  }
  if (size > 1) {  // too large for this server, or one bad report in it: halve, never drop
    batch_limit_ = size / 2;
    {
      absl::MutexLock lock(&stats_mu_);
      ++session_.batch_splits;
    }
    Log(LogLevel::kWarning,
        absl::StrCat("batch of ", size, " reports rejected whole (", error->ToString(),
                     "); re-sending in batches of ", batch_limit_));
    return SendOutcome::kSplit;
  }
  DeliveryCounters drops;
  drops.dropped_rejected = 1;
  const std::string reason =
      absl::StrCat("rejected by the collector for good: ", error->ToString());
  DropReports(sequences, drops, reason);
  *error = absl::Status(error->code(), absl::StrCat("dropped 1 report: ", reason));
  return SendOutcome::kPermanent;
}

absl::StatusOr<Reporter::BatchVerdicts> Reporter::JudgeReports(
    const v1::SubmitReportsRequest& request, const std::vector<int64_t>& sequences,
    const v1::SubmitReportsResponse& response) {
  // Per-report results: acknowledged, rejected for good (dropped), rejected for now (kept).
  const int size = request.reports_size();
  BatchVerdicts v;
  std::vector<bool> rejected(size, false);
  for (const v1::ReportRejection& r : response.rejections()) {
    if (r.index() >= static_cast<uint32_t>(size) || rejected[r.index()]) {
      return absl::UnavailableError(absl::StrCat("malformed response: rejection index ", r.index(),
                                                 " in a batch of ", size,
                                                 "; nothing removed, will retry"));
    }
    rejected[r.index()] = true;
    const int code = r.code() <= 0 || r.code() > 16 ? 2 : r.code();  // 2: UNKNOWN
    const std::string reason = absl::StrCat(
        absl::StatusCodeToString(static_cast<absl::StatusCode>(code)), ": ", r.reason());
    if (code == static_cast<int>(absl::StatusCode::kFailedPrecondition)) {
      // Randomized with a design the collector does not have under that version: drop it
      // (never randomize its answer again) and fetch the design anew.
      v.mismatched.push_back(sequences[r.index()]);
      v.disowned.push_back(request.reports(static_cast<int>(r.index())).metric());
      if (v.first_mismatch.empty()) v.first_mismatch = reason;
    } else if (r.permanent()) {
      v.dropped.push_back(sequences[r.index()]);
      if (v.first_drop.empty()) {
        v.first_drop = reason;
        v.drop_code = static_cast<absl::StatusCode>(code);
      }
    } else {
      v.kept.push_back(sequences[r.index()]);
      if (v.first_kept.empty()) v.first_kept = reason;
    }
  }
  for (int i = 0; i < size; ++i) {
    if (!rejected[i]) v.acknowledged.push_back(sequences[i]);
  }
  return v;
}

Reporter::SendOutcome Reporter::ActOnRejections(const BatchVerdicts& v, absl::Status* error) {
  SendOutcome outcome = SendOutcome::kSent;
  if (!v.mismatched.empty()) {
    {
      absl::MutexLock lock(&mu_);
      for (const std::string& metric : v.disowned) {
        designs_.erase(metric);
        disowned_.insert(metric);
        stale_.push_back(metric);
      }
      wake_ = true;
    }
    DeliveryCounters drops;
    drops.dropped_design_mismatch = static_cast<int64_t>(v.mismatched.size());
    const std::string reason = absl::StrCat(
        "randomized with a design the collector does not have; fetching the design again, "
        "first: ",
        v.first_mismatch);
    DropReports(v.mismatched, drops, reason);
    *error = absl::FailedPreconditionError(
        absl::StrCat("dropped ", v.mismatched.size(), " reports: ", reason));
    outcome = SendOutcome::kPermanent;
  }
  if (!v.dropped.empty()) {
    DeliveryCounters drops;
    drops.dropped_rejected = static_cast<int64_t>(v.dropped.size());
    const std::string reason =
        absl::StrCat("rejected by the collector for good, first: ", v.first_drop);
    DropReports(v.dropped, drops, reason);
    *error =
        absl::Status(v.drop_code, absl::StrCat("dropped ", v.dropped.size(), " reports: ", reason));
    outcome = SendOutcome::kPermanent;
  }
  if (!v.kept.empty()) {
    {
      absl::MutexLock lock(&stats_mu_);
      session_.kept_after_rejection += static_cast<int64_t>(v.kept.size());
    }
    // UNAVAILABLE: the collector may accept them later, whatever code it gave.
    *error = absl::UnavailableError(absl::StrCat(
        v.kept.size(), " reports rejected for now, kept for retry, first: ", v.first_kept));
    Log(LogLevel::kInfo, error->ToString());
    outcome = SendOutcome::kTransient;
  }
  return outcome;
}

void Reporter::RefreshStaleDesigns() {
  std::vector<std::string> metrics;
  {
    absl::MutexLock lock(&mu_);
    metrics.swap(stale_);
    metrics.insert(metrics.end(), missing_.begin(), missing_.end());
    missing_.clear();
  }
  std::sort(metrics.begin(), metrics.end());
  metrics.erase(std::unique(metrics.begin(), metrics.end()), metrics.end());
  for (const std::string& metric : metrics) {
    absl::Status fetched = FetchDesign(metric, options_.rpc_timeout).status();
    if (!fetched.ok()) {
      Log(LogLevel::kWarning,
          absl::StrCat("design of \"", metric, "\" not refreshed: ", fetched.ToString()));
    }
  }
}

absl::Status Reporter::Flush(absl::Duration timeout) {
  DENIABLE_RETURN_IF_ERROR(CheckOpen());
  return Drain(timeout, /*refresh_designs=*/true);
}

absl::Status Reporter::Drain(absl::Duration timeout, bool refresh_designs) {
  const absl::Time deadline = absl::Now() + timeout;
  absl::Status first_drop;
  std::unique_ptr<RetryPolicy> retry = retry_prototype_->clone();
  std::unique_ptr<BackoffPolicy> backoff;
  absl::MutexLock send_lock(&send_mu_);
  LogQueueFullDrops();
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("flush: ", pending(), " reports still queued at the deadline"));
    }
    absl::Status error;
    switch (SendOneBatch(std::min(left, options_.rpc_timeout), &error)) {
      case SendOutcome::kEmpty:
        if (refresh_designs) RefreshStaleDesigns();
        return first_drop;
      case SendOutcome::kSent:
      case SendOutcome::kSplit:
        retry = retry_prototype_->clone();
        backoff.reset();
        break;
      case SendOutcome::kPermanent:
        retry = retry_prototype_->clone();
        backoff.reset();
        first_drop.Update(error);
        break;
      case SendOutcome::kTransient:
        // Only the sending loop gives up here; the reports stay queued.
        if (!retry->OnFailure(error) || retry->IsExhausted()) return error;
        if (backoff == nullptr) backoff = NewBackoff();
        absl::SleepFor(std::min(backoff->OnCompletion(), deadline - absl::Now()));
        break;
    }
  }
}

void Reporter::SenderLoop() {
  std::unique_ptr<BackoffPolicy> backoff;  // set while failures last
  absl::Duration wait = options_.send_interval;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || wake_; };
      mu_.AwaitWithTimeout(absl::Condition(&woken), wait);
      if (stop_) return;
      wake_ = false;
    }
    RefreshStaleDesigns();
    absl::MutexLock send_lock(&send_mu_);
    LogQueueFullDrops();
    wait = options_.send_interval;
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        if (stop_) return;
      }
      absl::Status error;
      const SendOutcome outcome = SendOneBatch(options_.rpc_timeout, &error);
      if (outcome == SendOutcome::kEmpty) {
        backoff.reset();
        break;
      }
      if (outcome == SendOutcome::kTransient) {  // never gives up: the reports are durable
        if (backoff == nullptr) backoff = NewBackoff();
        wait = backoff->OnCompletion();
        break;
      }
      backoff.reset();
    }
  }
}

size_t Reporter::pending() const {
  absl::StatusOr<int64_t> size = store_->QueueSize();
  return size.ok() ? static_cast<size_t>(*size) : 0;
}

absl::StatusOr<std::map<std::string, MetricLedger>> Reporter::Ledger() const {
  return store_->ReadLedger();
}

absl::StatusOr<DeliveryStats> Reporter::Stats() const {
  DeliveryStats stats;
  DENIABLE_ASSIGN_OR_RETURN(stats.queued, store_->QueueSize());
  DENIABLE_ASSIGN_OR_RETURN(stats.counters, store_->ReadCounters());
  DENIABLE_ASSIGN_OR_RETURN(auto ledger, store_->ReadLedger());
  int64_t values_clipped = 0;
  for (const auto& [metric, l] : ledger) values_clipped += l.values_clipped;
  absl::MutexLock lock(&stats_mu_);
  stats.send_attempts = session_.send_attempts;
  stats.failed_attempts = session_.failed_attempts;
  stats.batch_splits = session_.batch_splits;
  stats.kept_after_rejection = session_.kept_after_rejection;
  stats.values_clipped = values_clipped;
  return stats;
}

}  // namespace deniable::client
