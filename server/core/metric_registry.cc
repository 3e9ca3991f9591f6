#include "server/core/metric_registry.h"

#include <utility>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "deniable/common/status_macros.h"
#include "deniable/convert/categorical_convert.h"
#include "deniable/convert/design_convert.h"
#include "deniable/convert/heavy_hitters_convert.h"
#include "deniable/convert/numeric_convert.h"
#include "server/core/design_fingerprint.h"
#include "server/core/echo.h"
#include "server/core/numeric_metric.h"

namespace deniable::server {
namespace {

constexpr size_t kMaxNameLength = 64;
constexpr size_t kMaxDescriptionBytes = 1024;
constexpr uint32_t kDefaultPrecisionSeconds = 3600;
constexpr uint32_t kSecondsPerDay = 86400;

// Refuses a design that reveals every answer unless the analyst allowed it.
absl::Status CheckPrivacy(const Design& design, bool allow_no_privacy) {
  if (allow_no_privacy || !RevealsEveryAnswer(design.channel())) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("design: ", design.ToString(), " has a = ", design.channel().a,
                   " and b = ", design.channel().b,
                   ": every report reveals its true answer (no privacy at all); set "
                   "allow_no_privacy to create it anyway"));
}

// A design parsed from a request for a metric with k categories (0: yes/no), with what storage
// keeps of it.
struct ParsedDesign {
  // yes/no: the design; categorical: its support channel; numeric: one coordinate's channel
  // (metric_registry.h)
  Design design;
  std::optional<CategoricalDesign> categorical;
  std::optional<NumericDesign> numeric;
  std::string parameters;  // serialized DesignParameters, naming a concrete mechanism
};

// The support channel (p*, q*) of a categorical design as a binary design (forced response with
// p = p* - q*, q = q* / (1 - p), whose channel is (p*, q*)). Never fails for a valid design
// (p* - q* >= kMinChannelGap).
Design SupportDesign(const CategoricalDesign& c) {
  const double p = c.p_star() - c.q_star();
  absl::StatusOr<Design> d = Design::ForcedResponse(p, c.q_star() / (1.0 - p));
  return d.ok() ? *d : Design::TwoCoin();
}

// `range`: a numeric metric's range (nullptr for yes/no and categorical metrics).
// `fixed_salt`: a heavy-hitters design's salt; 0: drawn at random.
absl::StatusOr<ParsedDesign> ParseDesign(const v1::DesignParameters& parameters, int k,
                                         const v1::NumericRange* range, bool allow_no_privacy,
                                         uint64_t fixed_salt) {
  if (range != nullptr) {
    DENIABLE_ASSIGN_OR_RETURN(NumericDesign numeric,
                              NumericDesignFromProto(parameters, "design", range));
    return ParsedDesign{NumericChannelDesign(numeric), std::nullopt, numeric,
                        NumericParameters(numeric, range->unit()).SerializeAsString()};
  }
  if (parameters.kind_case() == v1::DesignParameters::kHeavyHitters) {
    if (k > 0) {
      return absl::InvalidArgumentError(
          "categories: a heavy-hitters metric's values are strings; it takes no categories");
    }
    DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign hh,
                              HeavyHittersDesignFromProto(parameters, "design"));
    // The salt is drawn here, before any report (the random-hash model of the estimates).
    if (fixed_salt != 0) {
      hh.salt = fixed_salt;
    } else {
      absl::BitGen gen;
      hh.salt = absl::Uniform<uint64_t>(gen);
    }
    return ParsedDesign{Design::SymmetricEpsilon(hh.epsilon).value_or(Design::TwoCoin()),
                        std::nullopt, std::nullopt, HeavyHittersParameters(hh).SerializeAsString()};
  }
  if (parameters.kind_case() == v1::DesignParameters::kNumeric) {
    return absl::InvalidArgumentError(
        "range: a numeric design (design.numeric) is for a numeric metric, but no range is given "
        "(set range.lo and range.hi, or choose another design)");
  }
  const bool categorical_kind = parameters.kind_case() == v1::DesignParameters::kCategorical;
  if (k == 0 && categorical_kind) {
    return absl::InvalidArgumentError(
        "categories: a categorical design (design.categorical) is for a metric with categories, "
        "but none are given (name 2 to 256 categories, or choose a yes/no design)");
  }
  if (k > 0) {
    DENIABLE_ASSIGN_OR_RETURN(CategoricalDesign c,
                              CategoricalDesignFromProto(parameters, k, "design"));
    return ParsedDesign{SupportDesign(c), c, std::nullopt,
                        CategoricalParameters(c).SerializeAsString()};
  }
  DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromProto(parameters, "design"));
  DENIABLE_RETURN_IF_ERROR(CheckPrivacy(design, allow_no_privacy));
  return ParsedDesign{design, std::nullopt, std::nullopt, parameters.SerializeAsString()};
}

// A numeric metric's new design keeps what its counts mean: the mechanism, and for dBitFlip the
// buckets (bucket j of every version is the same interval, so versions combine bucket by bucket).
absl::Status CheckSameNumericKind(const MetricInfo& metric, const NumericDesign& next) {
  const NumericDesign& current = *metric.current().numeric;
  if (next.mechanism() != current.mechanism()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "design.numeric.mechanism: metric \"", metric.proto.name(), "\" uses ",
        NumericMechanismName(current.mechanism()), "; a new design version keeps the mechanism (",
        NumericMechanismName(next.mechanism()), " asked)"));
  }
  if (next.mechanism() == NumericMechanism::kDBitFlip && next.edges() != current.edges()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "design.numeric.bucket_edges: metric \"", metric.proto.name(), "\" has ", current.buckets(),
        " buckets; a new design version keeps them (change epsilon or "
        "sampled_buckets only)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ReportingPolicy> ValidateReportingPolicy(uint32_t reporting_period_seconds,
                                                        v1::Randomization randomization,
                                                        uint32_t time_precision_seconds) {
  ReportingPolicy policy;
  policy.period_seconds =
      reporting_period_seconds == 0 ? kDefaultReportingPeriodSeconds : reporting_period_seconds;
  if (policy.period_seconds > kMaxReportingPeriodSeconds ||
      policy.period_seconds % time_precision_seconds != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "reporting_period_seconds: must be a positive multiple of time_precision_seconds (",
        time_precision_seconds, ") and at most ", kMaxReportingPeriodSeconds,
        " (366 days), but is ", policy.period_seconds));
  }
  switch (randomization) {
    case v1::RANDOMIZATION_UNSPECIFIED:
    case v1::MEMOIZED:
      policy.randomization = v1::MEMOIZED;
      break;
    case v1::FRESH_PER_PERIOD:
      policy.randomization = v1::FRESH_PER_PERIOD;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("randomization: must be MEMOIZED or FRESH_PER_PERIOD, but is ",
                       static_cast<int>(randomization)));
  }
  return policy;
}

static_assert(v1::DROP_REPORTS_KEEP_COUNTS == kRetentionKeepCounts);
static_assert(v1::DROP_REPORTS_AND_COUNTS == kRetentionDropCounts);

absl::StatusOr<RetentionSettings> ValidateRetention(uint32_t days, v1::RetentionPolicy policy) {
  RetentionSettings settings;
  settings.days = days;
  if (days > kMaxRetentionDays) {
    return absl::InvalidArgumentError(absl::StrCat("retention_days: must be at most ",
                                                   kMaxRetentionDays,
                                                   " (0 keeps reports forever), but is ", days));
  }
  switch (policy) {
    case v1::RETENTION_POLICY_UNSPECIFIED:
    case v1::DROP_REPORTS_KEEP_COUNTS:
      settings.policy = kRetentionKeepCounts;
      break;
    case v1::DROP_REPORTS_AND_COUNTS:
      settings.policy = kRetentionDropCounts;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "retention_policy: must be DROP_REPORTS_KEEP_COUNTS or DROP_REPORTS_AND_COUNTS, but is ",
          static_cast<int>(policy)));
  }
  return settings;
}

absl::Status ValidateMetricName(absl::string_view name, absl::string_view field) {
  bool ok = !name.empty() && name.size() <= kMaxNameLength && absl::ascii_islower(name[0]);
  for (char c : name) {
    ok = ok &&
         (absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_' || c == '.' || c == '-');
  }
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": must match [a-z][a-z0-9_.-]{0,63}, but is ", EchoValue(name)));
  }
  return absl::OkStatus();
}

const MetricVersion* MetricInfo::Find(uint32_t version) const {
  for (const MetricVersion& v : versions) {
    if (v.version == version) return &v;
  }
  return nullptr;
}

MetricRegistry::MetricRegistry(Storage* storage, const Clock* clock, absl::Duration max_cache_age,
                               uint64_t heavy_hitters_salt)
    : storage_(storage),
      clock_(clock),
      max_cache_age_(max_cache_age),
      heavy_hitters_salt_(heavy_hitters_salt) {}

absl::StatusOr<v1::Metric> MetricRegistry::Create(const v1::CreateMetricRequest& request) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(request.name(), "name"));
  if (request.description().size() > kMaxDescriptionBytes) {
    return absl::InvalidArgumentError(absl::StrCat("description: must be at most ",
                                                   kMaxDescriptionBytes, " bytes, but is ",
                                                   request.description().size()));
  }
  if (request.categories_size() > 0)
    DENIABLE_RETURN_IF_ERROR(ValidateCategories(request.categories()));
  if (request.has_range()) {
    if (request.categories_size() > 0) {
      return absl::InvalidArgumentError(
          "range: a metric is numeric (range) or has categories (categories), not both");
    }
    DENIABLE_RETURN_IF_ERROR(ValidateNumericRange(request.range()));
  }
  DENIABLE_ASSIGN_OR_RETURN(ParsedDesign parsed,
                            ParseDesign(request.design(), request.categories_size(),
                                        request.has_range() ? &request.range() : nullptr,
                                        request.allow_no_privacy(), heavy_hitters_salt_));
  const uint32_t precision = request.time_precision_seconds() == 0
                                 ? kDefaultPrecisionSeconds
                                 : request.time_precision_seconds();
  if (precision < 60 || kSecondsPerDay % precision != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("time_precision_seconds: must be >= 60 and divide 86400, but is ", precision));
  }
  DENIABLE_ASSIGN_OR_RETURN(ReportingPolicy policy,
                            ValidateReportingPolicy(request.reporting_period_seconds(),
                                                    request.randomization(), precision));
  DENIABLE_ASSIGN_OR_RETURN(
      RetentionSettings retention,
      ValidateRetention(request.retention_days(), request.retention_policy()));
  const int64_t now = absl::ToUnixSeconds(clock_->Now());
  StoredMetric stored;
  stored.retention_days = retention.days;
  stored.retention_policy = retention.policy;
  stored.name = request.name();
  stored.description = request.description();
  stored.created_time_seconds = now;
  stored.time_precision_seconds = precision;
  stored.min_reports = request.min_reports();
  stored.reporting_period_seconds = policy.period_seconds;
  stored.randomization = policy.randomization;
  stored.categories.assign(request.categories().begin(), request.categories().end());
  stored.window_firsts_off = request.window_firsts_off();
  stored.reporting_once = request.reporting_once();
  stored.designs.push_back(StoredDesign{1, parsed.parameters, parsed.design.channel().a,
                                        parsed.design.channel().b, now});
  DENIABLE_ASSIGN_OR_RETURN(StoredMetric created, storage_->CreateMetric(std::move(stored)));
  return Cache(created);
}

absl::StatusOr<v1::Metric> MetricRegistry::AddVersion(const v1::AddDesignVersionRequest& request) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(request.metric(), "metric"));
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> current, Find(request.metric()));
  if (current->categorical() &&
      request.design().kind_case() != v1::DesignParameters::kCategorical) {
    return absl::InvalidArgumentError(absl::StrCat(
        "design: metric \"", request.metric(), "\" has ", current->proto.categories_size(),
        " categories and takes only a categorical design (design.categorical)"));
  }
  if (current->current().mechanism->TakesStrings() !=
      (request.design().kind_case() == v1::DesignParameters::kHeavyHitters)) {
    return absl::InvalidArgumentError(
        absl::StrCat("design: metric \"", request.metric(), "\" ",
                     current->current().mechanism->TakesStrings()
                         ? "takes strings and only a heavy_hitters design"
                         : "takes numbers; a heavy_hitters design is for a new metric"));
  }
  const v1::NumericRange* range = current->numeric() ? &current->proto.range() : nullptr;
  DENIABLE_ASSIGN_OR_RETURN(ParsedDesign parsed,
                            ParseDesign(request.design(), current->proto.categories_size(), range,
                                        request.allow_no_privacy(), heavy_hitters_salt_));
  if (range != nullptr) DENIABLE_RETURN_IF_ERROR(CheckSameNumericKind(*current, *parsed.numeric));
  const int64_t now = absl::ToUnixSeconds(clock_->Now());
  DENIABLE_ASSIGN_OR_RETURN(
      StoredMetric updated,
      storage_->AddDesignVersion(
          request.metric(),
          StoredDesign{current->current().version + 1, parsed.parameters, parsed.design.channel().a,
                       parsed.design.channel().b, now}));
  return Cache(updated);
}

absl::Status MetricRegistry::Delete(absl::string_view name) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(name, "metric"));
  const absl::Status deleted = storage_->DeleteMetric(name);
  if (deleted.ok() || absl::IsNotFound(deleted)) {
    absl::MutexLock lock(&mu_);
    cache_.erase(name);
  }
  return deleted;
}

absl::StatusOr<v1::Metric> MetricRegistry::SetRetention(const v1::SetRetentionRequest& request) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(request.metric(), "metric"));
  DENIABLE_ASSIGN_OR_RETURN(
      RetentionSettings retention,
      ValidateRetention(request.retention_days(), request.retention_policy()));
  DENIABLE_ASSIGN_OR_RETURN(
      StoredMetric updated,
      storage_->SetRetention(request.metric(), retention.days, retention.policy));
  return Cache(updated);
}

void MetricRegistry::Forget(absl::string_view name, int64_t id) {
  absl::MutexLock lock(&mu_);
  auto it = cache_.find(name);
  if (it != cache_.end() && it->second.info->id == id) cache_.erase(it);
}

absl::StatusOr<v1::Metric> MetricRegistry::Cache(const StoredMetric& stored) {
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> info, Build(stored));
  absl::MutexLock lock(&mu_);
  cache_[stored.name] = Cached{info, clock_->Now()};
  return info->proto;
}

absl::StatusOr<std::vector<v1::Metric>> MetricRegistry::List() {
  DENIABLE_ASSIGN_OR_RETURN(std::vector<StoredMetric> stored, storage_->ListMetrics());
  std::vector<v1::Metric> out;
  out.reserve(stored.size());
  for (const StoredMetric& m : stored) {
    DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> info, Build(m));
    out.push_back(info->proto);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const MetricInfo>> MetricRegistry::Find(absl::string_view name) {
  // A name that can never exist is refused here, before storage, with a bounded echo.
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(name, "metric"));
  {
    absl::MutexLock lock(&mu_);
    if (auto it = cache_.find(name);
        it != cache_.end() && (max_cache_age_ == absl::InfiniteDuration() ||
                               clock_->Now() - it->second.fetched < max_cache_age_)) {
      return it->second.info;
    }
  }
  return Reload(name);
}

absl::StatusOr<std::shared_ptr<const MetricInfo>> MetricRegistry::Reload(absl::string_view name) {
  DENIABLE_RETURN_IF_ERROR(ValidateMetricName(name, "metric"));
  const absl::Time fetched = clock_->Now();
  DENIABLE_ASSIGN_OR_RETURN(StoredMetric stored, storage_->GetMetric(name));
  DENIABLE_ASSIGN_OR_RETURN(std::shared_ptr<const MetricInfo> info, Build(stored));
  absl::MutexLock lock(&mu_);
  cache_[stored.name] = Cached{info, fetched};
  return info;
}

absl::StatusOr<std::shared_ptr<const MetricInfo>> MetricRegistry::Build(
    const StoredMetric& stored) const {
  auto info = std::make_shared<MetricInfo>();
  info->id = stored.id;
  for (const StoredDesign& d : stored.designs) {
    v1::DesignParameters parameters;
    if (!parameters.ParseFromString(d.parameters)) {
      return absl::DataLossError(absl::StrCat("metric \"", stored.name, "\" design version ",
                                              d.version, ": stored parameters do not parse"));
    }
    if (parameters.kind_case() == v1::DesignParameters::kNumeric) {
      DENIABLE_ASSIGN_OR_RETURN(NumericDesign numeric,
                                NumericDesignFromProto(parameters, "stored design"));
      MetricVersion version{
          d.version, NumericChannelDesign(numeric), {}, DesignFingerprint(stored, d)};
      NumericDesignToProto(numeric, d.version, parameters.numeric().unit(), &version.wire);
      version.mechanism = MechanismFor(numeric);
      version.numeric = numeric;
      info->versions.push_back(std::move(version));
      continue;
    }
    if (parameters.kind_case() == v1::DesignParameters::kHeavyHitters) {
      DENIABLE_ASSIGN_OR_RETURN(HeavyHittersDesign hh,
                                HeavyHittersDesignFromProto(parameters, "stored design"));
      MetricVersion version{d.version,
                            Design::SymmetricEpsilon(hh.epsilon).value_or(Design::TwoCoin()),
                            {},
                            DesignFingerprint(stored, d)};
      HeavyHittersDesignToProto(hh, d.version, &version.wire);
      version.mechanism = MechanismFor(hh);
      info->versions.push_back(std::move(version));
      continue;
    }
    if (!stored.categories.empty()) {
      DENIABLE_ASSIGN_OR_RETURN(
          CategoricalDesign c,
          CategoricalDesignFromProto(parameters, static_cast<int>(stored.categories.size()),
                                     "stored design"));
      MetricVersion version{d.version, SupportDesign(c), {}, DesignFingerprint(stored, d), c};
      CategoricalDesignToProto(c, d.version, &version.wire);
      version.mechanism = MechanismFor(c);
      info->versions.push_back(std::move(version));
      continue;
    }
    DENIABLE_ASSIGN_OR_RETURN(Design design, DesignFromProto(parameters, "stored design"));
    MetricVersion version{d.version, design, {}, DesignFingerprint(stored, d)};
    DesignToProto(design, d.version, &version.wire);
    version.mechanism = MechanismFor(design);
    info->versions.push_back(std::move(version));
  }
  if (info->versions.empty()) {
    return absl::DataLossError(absl::StrCat("metric \"", stored.name, "\" has no design"));
  }
  info->proto.set_name(stored.name);
  info->proto.set_description(stored.description);
  info->proto.set_created_time_seconds(stored.created_time_seconds);
  info->proto.set_time_precision_seconds(stored.time_precision_seconds);
  info->proto.set_min_reports(stored.min_reports);
  info->proto.set_reporting_period_seconds(stored.reporting_period_seconds);
  info->proto.set_randomization(v1::Randomization_IsValid(stored.randomization)
                                    ? static_cast<v1::Randomization>(stored.randomization)
                                    : v1::MEMOIZED);
  for (const std::string& c : stored.categories) info->proto.add_categories(c);
  info->proto.set_retention_days(stored.retention_days);
  info->proto.set_retention_policy(stored.retention_policy == kRetentionDropCounts
                                       ? v1::DROP_REPORTS_AND_COUNTS
                                       : v1::DROP_REPORTS_KEEP_COUNTS);
  info->proto.set_window_firsts_off(stored.window_firsts_off);
  info->proto.set_reporting_once(stored.reporting_once);
  *info->proto.mutable_design() = info->current().wire;
  for (const MetricVersion& v : info->versions) *info->proto.add_versions() = v.wire;
  if (info->current().numeric.has_value()) {
    // The range as created: every version keeps lo and hi, the unit is kept in the parameters.
    *info->proto.mutable_range() =
        RangeOf(*info->current().numeric, info->current().wire.parameters().numeric().unit());
  }
  return std::shared_ptr<const MetricInfo>(std::move(info));
}

absl::StatusOr<v1::GetDesignResponse> DesignForDevice(MetricRegistry& registry,
                                                      absl::string_view metric) {
  absl::StatusOr<std::shared_ptr<const MetricInfo>> found = registry.Find(metric);
  if (!found.ok()) return found.status();
  v1::GetDesignResponse response;
  response.set_metric((*found)->proto.name());
  *response.mutable_design() = (*found)->current().wire;
  response.set_time_precision_seconds((*found)->proto.time_precision_seconds());
  response.set_reporting_period_seconds((*found)->proto.reporting_period_seconds());
  response.set_randomization((*found)->proto.randomization());
  response.set_design_fingerprint((*found)->current().fingerprint);
  for (const std::string& c : (*found)->proto.categories()) response.add_categories(c);
  response.set_retention_days((*found)->proto.retention_days());
  response.set_retention_policy((*found)->proto.retention_policy());
  response.set_window_firsts_off((*found)->proto.window_firsts_off());
  response.set_reporting_once((*found)->proto.reporting_once());
  if ((*found)->numeric()) *response.mutable_range() = (*found)->proto.range();
  return response;
}

}  // namespace deniable::server
