// Metrics and their design versions: creation, listing and a cached lookup by name.
//
// A metric's design never changes under existing reports: each design is an immutable version.
//
// Thread-safe: all methods may be called concurrently. Does not own `storage` or `clock`, which
// must outlive it.
#ifndef DENIABLE_SERVER_CORE_METRIC_REGISTRY_H_
#define DENIABLE_SERVER_CORE_METRIC_REGISTRY_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deniable/common/categorical.h"
#include "deniable/common/clock.h"
#include "deniable/common/design.h"
#include "deniable/common/mechanism.h"
#include "deniable/common/numeric.h"
#include "deniable/convert/categorical_convert.h"
#include "deniable/v1/metric.pb.h"
#include "deniable/v1/query_service.pb.h"
#include "deniable/v1/report_service.pb.h"
#include "server/storage/storage.h"

namespace deniable::server {

// One design version of a metric, in both forms.
struct MetricVersion {
  uint32_t version = 0;
  // Yes/no metrics: the design. Categorical metrics: the support channel (p*, q*) of
  // `categorical` as a binary design (forced response p = p* - q*, q = q* / (1 - p)), for the
  // per-category binary machinery; never shown as the metric's design.
  Design design;
  v1::Design wire;  // parameters, version, a, b, epsilon, warning (categories, hash_buckets)
  // DesignFingerprint of this version on this collector (design_fingerprint.h); never 0.
  uint64_t fingerprint = 0;
  // Categorical metrics only: the design (its concrete mechanism, k and epsilon).
  std::optional<CategoricalDesign> categorical = std::nullopt;
  // Numeric metrics only: the design (mechanism, epsilon, edges, d). `design` is then the binary
  // channel of one coordinate (numeric_metric.h: NumericChannelDesign).
  std::optional<NumericDesign> numeric = std::nullopt;
  // The mechanism of this version's design (common/mechanism.h): how a report is validated and
  // what it adds to the counters. Set by the registry for every version it loads.
  std::shared_ptr<const Mechanism> mechanism = nullptr;
};

// An immutable snapshot of a metric.
struct MetricInfo {
  int64_t id = 0;
  v1::Metric proto;                     // with the current (newest) design
  std::vector<MetricVersion> versions;  // ascending by version, never empty

  const MetricVersion& current() const { return versions.back(); }
  // True for a metric with categories (proto.categories not empty).
  bool categorical() const { return proto.categories_size() > 0; }
  // True for a numeric metric (proto.range set; its versions have `numeric`).
  bool numeric() const { return proto.has_range(); }
  // nullptr if the version does not exist.
  const MetricVersion* Find(uint32_t version) const;
};

class MetricRegistry {
 public:
  // `max_cache_age`: a cached metric older than this is read again from storage on its next
  // Find, so design versions added by another collector on a shared database (PostgreSQL) are
  // seen within this bound; infinite (the default) when this process is the only writer.
  // `heavy_hitters_salt`: 0 (the default) draws each heavy-hitters design's hash salt at random
  // when it is created; any other value is the salt of every design, so a test's seeded run
  // repeats exactly (ServerOptions::heavy_hitters_salt; never in production: a salt known before
  // the data lets devices aim hash collisions, docs/statistics.md "random-hash model").
  MetricRegistry(Storage* storage, const Clock* clock,
                 absl::Duration max_cache_age = absl::InfiniteDuration(),
                 uint64_t heavy_hitters_salt = 0);

  // Validates and stores a new metric with its first design (version 1), its reporting period
  // and randomization (ValidateReportingPolicy). A metric with `categories` (ValidateCategories)
  // takes only a `categorical` design, whose mechanism UNSPECIFIED becomes the one of least
  // variance for (k, epsilon) (CategoricalDesign::LeastVariance): the stored parameters always
  // name the concrete mechanism. A metric with a `range` (numeric_metric.h) takes only a
  // `numeric` design and a `numeric` design needs a range; the stored parameters hold the
  // resolved design (concrete mechanism, all bucket edges, k, d, the range's unit).
  // A yes/no metric takes every other design kind.
  // Errors: INVALID_ARGUMENT naming the field ("name", "description", "categories", "range",
  // "range.lo", "range.hi", "range.unit", "design.numeric...",
  // "categories[i]", "design.categorical.epsilon", "design.forced_response",
  // "time_precision_seconds", "reporting_period_seconds", "randomization"; "design" for a design
  // that reveals every answer, see RevealsEveryAnswer, unless request.allow_no_privacy);
  // ALREADY_EXISTS; storage errors.
  absl::StatusOr<v1::Metric> Create(const v1::CreateMetricRequest& request);

  // Adds a new design version (the newest + 1) to an existing metric. Earlier reports keep their
  // version. A categorical metric keeps its categories (k): the new design must be categorical,
  // a yes/no metric's must not be. A numeric metric keeps its range, mechanism and (D_BIT_FLIP)
  // bucket edges: the new design must be numeric and may change epsilon, d and (ONE_BIT_MEAN)
  // the rounding grid. Errors: NOT_FOUND; INVALID_ARGUMENT naming "design..." (also for
  // a design with no privacy unless request.allow_no_privacy); FAILED_PRECONDITION when a
  // concurrent update added a version first; storage errors.
  absl::StatusOr<v1::Metric> AddVersion(const v1::AddDesignVersionRequest& request);

  // Deletes the metric with its design versions, reports and counts (Storage::DeleteMetric, one
  // transaction) and drops it from the cache, so that a report naming it is refused with
  // NOT_FOUND from now on and the name can be created again. Other collectors on a shared
  // database (PostgreSQL) see the delete within their max_cache_age.
  // Errors: INVALID_ARGUMENT "metric: ..." for a name that is not a metric name; NOT_FOUND;
  // storage errors (nothing deleted).
  absl::Status Delete(absl::string_view name);

  // Drops `name` from the cache if the cached metric has id `id` (a metric the storage found
  // deleted, AppendResult::missing_metrics): its next Find reads storage again.
  void Forget(absl::string_view name, int64_t id);

  // Sets the metric's retention (Storage::SetRetention; RetentionFromRequest checks it) and
  // caches the updated metric. Errors: INVALID_ARGUMENT naming "metric", "retention_days" or
  // "retention_policy"; NOT_FOUND; storage errors.
  absl::StatusOr<v1::Metric> SetRetention(const v1::SetRetentionRequest& request);

  // All metrics ordered by name. Errors: storage errors.
  absl::StatusOr<std::vector<v1::Metric>> List();

  // The metric named `name`, from the cache or storage. Errors: INVALID_ARGUMENT "metric: ..."
  // for a name that is not a metric name (ValidateMetricName; checked before storage);
  // NOT_FOUND; storage errors.
  absl::StatusOr<std::shared_ptr<const MetricInfo>> Find(absl::string_view name);

  // Find, but always read from storage (and cached): for a report naming a design version the
  // cached metric lacks, which another collector may have just added. Errors: as Find.
  absl::StatusOr<std::shared_ptr<const MetricInfo>> Reload(absl::string_view name);

 private:
  struct Cached {
    std::shared_ptr<const MetricInfo> info;
    absl::Time fetched;
  };
  absl::StatusOr<std::shared_ptr<const MetricInfo>> Build(const StoredMetric& stored) const;
  absl::StatusOr<v1::Metric> Cache(const StoredMetric& stored);

  Storage* const storage_;
  const Clock* const clock_;
  const absl::Duration max_cache_age_;
  const uint64_t heavy_hitters_salt_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Cached> cache_ ABSL_GUARDED_BY(mu_);
};

// A metric's reporting period and randomization (docs/sdk.md, "One report per period").
inline constexpr uint32_t kDefaultReportingPeriodSeconds = 86400;    // a day
inline constexpr uint32_t kMaxReportingPeriodSeconds = 366 * 86400;  // 366 days
struct ReportingPolicy {
  uint32_t period_seconds = kDefaultReportingPeriodSeconds;
  v1::Randomization randomization = v1::MEMOIZED;
};

// Resolves and checks a CreateMetricRequest's reporting period and randomization: period 0
// means 86400; it must be a multiple of `time_precision_seconds` (> 0) and at most 366 days;
// UNSPECIFIED randomization means MEMOIZED. Errors: INVALID_ARGUMENT naming
// "reporting_period_seconds" or "randomization" (an enum value this server does not know).
absl::StatusOr<ReportingPolicy> ValidateReportingPolicy(uint32_t reporting_period_seconds,
                                                        v1::Randomization randomization,
                                                        uint32_t time_precision_seconds);

// What a device fetches for `metric`: its name, current design, its fingerprint, time precision,
// reporting period, randomization, categories and range (ReportService.GetDesign, over gRPC and
// HTTP/JSON alike). Thread-safe. Errors: those of MetricRegistry::Find (INVALID_ARGUMENT naming
// "metric", NOT_FOUND).
absl::StatusOr<v1::GetDesignResponse> DesignForDevice(MetricRegistry& registry,
                                                      absl::string_view metric);

// ValidateCategories (the rules for category names) lives with the wire conversion.
using ::deniable::ValidateCategories;

// A metric's retention settings as stored (StoredMetric.retention_days / retention_policy):
// UNSPECIFIED policy means DROP_REPORTS_KEEP_COUNTS. Errors: INVALID_ARGUMENT naming
// "retention_days" (over kMaxRetentionDays) or "retention_policy" (a value this server does not
// know).
struct RetentionSettings {
  uint32_t days = 0;
  int policy = kRetentionKeepCounts;
};
absl::StatusOr<RetentionSettings> ValidateRetention(uint32_t days, v1::RetentionPolicy policy);

// Checks a metric name: [a-z][a-z0-9_.-]{0,63}. Errors: INVALID_ARGUMENT naming `field`.
absl::Status ValidateMetricName(absl::string_view name, absl::string_view field);

}  // namespace deniable::server

#endif  // DENIABLE_SERVER_CORE_METRIC_REGISTRY_H_
