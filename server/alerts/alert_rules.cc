#include "server/alerts/alert_rules.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace deniable::server {
namespace {

using google::protobuf::Value;

bool ValidName(absl::string_view name) {
  if (name.empty() || name.size() > 64 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

class RuleReader {
 public:
  RuleReader(absl::string_view file, std::string field) : file_(file), field_(std::move(field)) {}

  absl::Status Error(absl::string_view name, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat(file_, ": ", field_, ".", name, ": ", what));
  }

  absl::StatusOr<std::string> String(const Value& v, absl::string_view name) const {
    if (v.kind_case() != Value::kStringValue) return Error(name, "must be a string");
    return v.string_value();
  }

  absl::StatusOr<double> Number(const Value& v, absl::string_view name) const {
    if (v.kind_case() != Value::kNumberValue || !std::isfinite(v.number_value())) {
      return Error(name, "must be a finite number");
    }
    return v.number_value();
  }

  absl::StatusOr<int64_t> Integer(const Value& v, absl::string_view name) const {
    absl::StatusOr<double> d = Number(v, name);
    if (!d.ok()) return d.status();
    if (*d != std::floor(*d) || std::abs(*d) > 9.0e15) return Error(name, "must be an integer");
    return static_cast<int64_t>(*d);
  }

 private:
  std::string file_;
  std::string field_;
};

}  // namespace

absl::StatusOr<std::vector<AlertRule>> ParseAlertRules(absl::string_view json,
                                                       absl::string_view file) {
  google::protobuf::Struct root;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &root);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not a JSON object: ", parsed.message().as_string()));
  }
  for (const auto& [key, value] : root.fields()) {
    if (key != "rules") {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ": ", key, ": unknown field (the file holds {\"rules\": [...]})"));
    }
  }
  auto rules = root.fields().find("rules");
  if (rules == root.fields().end() || rules->second.kind_case() != Value::kListValue) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": rules: must be a list of rules"));
  }
  std::vector<AlertRule> out;
  std::set<std::string> names;
  const auto& list = rules->second.list_value().values();
  for (int i = 0; i < list.size(); ++i) {
    const std::string field = absl::StrCat("rules[", i, "]");
    const RuleReader r(file, field);
    if (list[i].kind_case() != Value::kStructValue) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": ", field, ": must be an object"));
    }
    AlertRule rule;
    bool has_above = false, has_change = false;
    for (const auto& [key, v] : list[i].struct_value().fields()) {
      if (key == "name") {
        absl::StatusOr<std::string> s = r.String(v, key);
        if (!s.ok()) return s.status();
        rule.name = *s;
      } else if (key == "metric") {
        absl::StatusOr<std::string> s = r.String(v, key);
        if (!s.ok()) return s.status();
        rule.metric = *s;
      } else if (key == "quantity") {
        absl::StatusOr<std::string> s = r.String(v, key);
        if (!s.ok()) return s.status();
        rule.quantity = *s;
      } else if (key == "above" || key == "changed_by") {
        absl::StatusOr<double> d = r.Number(v, key);
        if (!d.ok()) return d.status();
        rule.threshold = *d;
        (key == "above" ? has_above : has_change) = true;
      } else if (key == "since_seconds") {
        absl::StatusOr<int64_t> n = r.Integer(v, key);
        if (!n.ok()) return n.status();
        if (*n < 0) return r.Error(key, absl::StrCat("must be >= 0, but is ", *n));
        rule.since_seconds = *n;
      } else if (key == "window_seconds" || key == "tuned_reports") {
        absl::StatusOr<int64_t> n = r.Integer(v, key);
        if (!n.ok()) return n.status();
        (key == "window_seconds" ? rule.window_seconds : rule.tuned_reports) = *n;
      } else if (key == "level") {
        absl::StatusOr<double> d = r.Number(v, key);
        if (!d.ok()) return d.status();
        rule.level = *d;
      } else {
        return r.Error(key,
                       "unknown field (known: name, metric, quantity, above, changed_by, "
                       "window_seconds, level, tuned_reports, since_seconds)");
      }
    }
    if (!ValidName(rule.name)) {
      return r.Error("name",
                     absl::StrCat("must match [a-z][a-z0-9_]{0,63}, but is \"", rule.name, "\""));
    }
    if (!names.insert(rule.name).second) {
      return r.Error("name", absl::StrCat("\"", rule.name, "\" names an earlier rule too"));
    }
    if (rule.metric.empty()) return r.Error("metric", "is required");
    if (rule.quantity != "prevalence" && rule.quantity != "mean" &&
        !(absl::StartsWith(rule.quantity, "share:") && rule.quantity.size() > 6)) {
      return r.Error("quantity",
                     absl::StrCat("must be prevalence, share:<category> or mean, but is \"",
                                  rule.quantity, "\""));
    }
    if (has_above == has_change)
      return r.Error("above", "give exactly one of above and changed_by");
    rule.kind = has_above ? AlertRule::Kind::kAbove : AlertRule::Kind::kChangedBy;
    if (has_change && !(rule.threshold > 0)) {
      return r.Error("changed_by", absl::StrCat("must be > 0, but is ", rule.threshold));
    }
    if (rule.window_seconds < 3600 || rule.window_seconds > 366 * 86400) {
      return r.Error("window_seconds",
                     absl::StrCat("must be in [3600, 31622400], but is ", rule.window_seconds));
    }
    if (!(rule.level > 0.0 && rule.level < 1.0)) {
      return r.Error("level", absl::StrCat("must be in (0, 1), but is ", rule.level));
    }
    if (rule.tuned_reports <= 0) {
      return r.Error("tuned_reports", absl::StrCat("must be > 0, but is ", rule.tuned_reports));
    }
    out.push_back(std::move(rule));
  }
  return out;
}

absl::StatusOr<std::vector<AlertRule>> LoadAlertRules(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    const std::string message = absl::StrCat(path, ": cannot read: ", std::strerror(err));
    return err == EACCES ? absl::PermissionDeniedError(message) : absl::NotFoundError(message);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseAlertRules(text.str(), path);
}

}  // namespace deniable::server
