#include "tools/cli/command_flags.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace deniable::tools {
namespace {

bool Contains(const std::vector<const char*>& names, absl::string_view name) {
  return std::any_of(names.begin(), names.end(),
                     [name](const char* n) { return absl::string_view(n) == name; });
}

}  // namespace

const std::vector<const char*>& CommonFlags() {
  static const auto* flags = new std::vector<const char*>{
      "target", "timeout_seconds", "token", "tls_ca_file", "tls_cert_file", "tls_key_file",
      "tls_server_name", "json",
      // Abseil's: help and version, flag files and environment.
      "help", "helpfull", "helpshort", "helppackage", "version", "only_check_args", "flagfile",
      "fromenv", "tryfromenv", "undefok"};
  return *flags;
}

const std::vector<CommandSpec>& Commands() {
  static const auto* commands = new std::vector<CommandSpec>{
      {"create-metric",
       "--name=N --design=D [design flags] [--categories=Y,N,U,A] [--description=TEXT] "
       "[--min_reports=K] [--time_precision_seconds=S] [--reporting_period=1d|once] "
       "[--nowindow_flags] [--randomization=memoized|fresh] [--allow_no_privacy] "
       "[--retention_days=N "
       "[--retention_policy=keep_counts|drop_counts]] | --range=LO,HI [--unit=U] "
       "[--design=numeric] [--mechanism=one_bit_mean|d_bit_flip] [--buckets=K | "
       "--bucket_edges=e0,e1,...] [--sampled_buckets=D] --epsilon=E",
       {"name",
        "description",
        "design",
        "epsilon",
        "p",
        "q",
        "pi_b",
        "gamma",
        "categories",
        "time_precision_seconds",
        "min_reports",
        "reporting_period",
        "window_flags",
        "randomization",
        "allow_no_privacy",
        "retention_days",
        "retention_policy",
        "range",
        "unit",
        "mechanism",
        "buckets",
        "bucket_edges",
        "sampled_buckets",
        "max_length"}},
      {"add-version",
       "--metric=N --design=D [design flags] [--allow_no_privacy]   (numeric: --design=numeric "
       "[--mechanism=M] [--buckets=K | --bucket_edges=...] [--sampled_buckets=D] --epsilon=E)",
       {"metric", "design", "epsilon", "p", "q", "pi_b", "gamma", "allow_no_privacy", "mechanism",
        "buckets", "bucket_edges", "sampled_buckets"}},
      {"list-metrics", "", {}},
      {"alerts",
       "   (each alert rule's state: firing, estimate, anytime interval, window; "
       "docs/alerts.md)",
       {}},
      {"delete-metric",
       "NAME [--yes]   (deletes the metric with its reports and counts; asks you to type NAME "
       "unless --yes)",
       {"yes"}},
      {"set-retention",
       "NAME --days=N [--policy=keep_counts|drop_counts]   (drop the metric's reports older "
       "than N days, 0 = never; drop_counts: their counts too)",
       {"days", "policy"}},
      {"prevalence",
       "--metric=N [--start=T] [--end=T] [--level=0.95] [--method=M] [--combination=C] "
       "[--group_by=LABEL] [--simultaneous=sidak|bonferroni] [--quantiles=0.5,0.9] "
       "[--interval_kind=fixed|anytime] [--anytime_tuned_reports=N] [--manipulation_reports=M]   "
       "(T: 2026-11-01, 2026-11-01T12:00:00Z, -7d, -24h, now or Unix seconds; default: every "
       "report)",
       {"metric", "start", "end", "level", "method", "combination", "group_by", "simultaneous",
        "quantiles", "interval_kind", "anytime_tuned_reports", "manipulation_reports"}},
      {"series",
       "--metric=N [--start=T] [--end=T] [--bucket=hour|day|week|month] [--level] [--method] "
       "[--combination] [--plot=FILE.svg|.pdf] [--simultaneous=sidak|bonferroni] "
       "[--interval_kind=fixed|anytime] [--anytime_tuned_reports=N] [--manipulation_reports=M]   "
       "(T as for prevalence; default: the last 30 days)",
       {"metric", "start", "end", "level", "method", "combination", "bucket", "plot",
        "simultaneous", "interval_kind", "anytime_tuned_reports", "manipulation_reports"}},
      {"difference",
       "--metric=N [--metric2=M] [--start=T] [--end=T] [--start2=T] [--end2=T] [--level] "
       "[--combination]   (T as for prevalence; default: the last 30 days against the 30 "
       "days before)",
       {"metric", "start", "end", "metric2", "start2", "end2", "level", "combination"}},
      {"top",
       "--metric=N [--start=T] [--end=T | --window=day|week|month] [--level=0.95] "
       "[--max_prefixes=64]   (a heavy-hitters metric: its most frequent values with intervals "
       "and the detection threshold; T as for prevalence; --window: the whole UTC day, ISO week "
       "or month holding --start (default now), each device counted once)",
       {"metric", "start", "end", "level", "max_prefixes", "window"}},
      {"frequency",
       "--metric=N (--value=V | --values_file=F) [--estimation_group_only] [--start=T] [--end=T] "
       "[--window=day|week|month] [--level=0.95]   (a heavy-hitters metric: the shares of "
       "given values)",
       {"metric", "value", "values_file", "estimation_group_only", "start", "end", "level",
        "window"}},
      {"design",
       "(--design=D [design flags] | --categories=Y,N,U,A [--design=k_rr|oue|olh|categorical] "
       "--epsilon=E [--shares=PRIOR,...] | --range=LO,HI [--unit=U] [--mechanism=M] "
       "[--buckets=K | --bucket_edges=...] [--sampled_buckets=D] --epsilon=E | --metric=N) "
       "[--prior=PI] [--n=REPORTS]   (--design, --categories, --range: computed locally, no "
       "server; --n: the shuffle-amplified epsilon for N reports; --design=heavy_hitters "
       "[--epsilon=E] [--max_length=B]: PI is P(a device holds a given value))",
       {"design", "epsilon", "p", "q", "pi_b", "gamma", "categories", "shares", "metric", "prior",
        "n", "range", "unit", "mechanism", "buckets", "bucket_edges", "sampled_buckets",
        "max_length"}},
      {"plan",
       "--design=D [design flags] --half_width=H [--prior=PI|-1] [--level] | --categories=Y,N,U,A "
       "[--design=k_rr|oue|olh|categorical] --epsilon=E --half_width=H [--shares=F,...] "
       "[--simultaneous=sidak|bonferroni] [--level] [--window=day|week|month|once "
       "[--reports_per_device=R]] | --range=LO,HI [--unit=U] [--mechanism=M] [--buckets=K | "
       "--bucket_edges=...] [--sampled_buckets=D] --epsilon=E --half_width=H | "
       "--design=heavy_hitters [--epsilon=E] [--max_length=B] --find_share=S "
       "[--find_probability=0.9] [--level] [--max_prefixes=64]   (computed locally, no server; "
       "numeric: H in the unit for a mean, a share for a histogram; heavy_hitters: the devices "
       "needed to find a value held by a share S)",
       {"design",
        "epsilon",
        "p",
        "q",
        "pi_b",
        "gamma",
        "categories",
        "shares",
        "simultaneous",
        "half_width",
        "prior",
        "level",
        "window",
        "reports_per_device",
        "range",
        "unit",
        "mechanism",
        "buckets",
        "bucket_edges",
        "sampled_buckets",
        "max_length",
        "find_share",
        "find_probability",
        "max_prefixes"}},
      {"replay",
       "--metric=N --csv=F --column=C [--yes=V] [--label_columns=a,b] [--group_by=a] "
       "[--blank=no|skip] [--simultaneous=sidak|bonferroni] [--time_column=C [--time_format=F] | "
       "--spread=7d] [--import] [--devices_in_flight=8]   (without --yes: a metric with "
       "categories, each --column value "
       "one "
       "of them; --import: a historical import with an analyst --token) | --metric=N --csv=F "
       "--value_column=C [--quantiles=0.5,0.9] ...   (a numeric metric); a metric that does not "
       "exist is created as a survey question (reporting_period=once) with create-metric's "
       "design flags (yes/no default: two_coin) | --metric=N --csv=F --string_column=C   (an "
       "existing heavy-hitters metric: one device per row, then the values found beside their "
       "true shares)",
       {"metric", "csv", "column", "yes", "label_columns", "group_by", "blank", "level", "method",
        "simultaneous", "time_column", "time_format", "spread", "import", "devices_in_flight",
        "value_column", "quantiles", "string_column",
        // A metric that does not exist yet is created as a survey question with these.
        "design", "epsilon", "p", "q", "pi_b", "gamma", "categories", "description", "min_reports",
        "reporting_period", "randomization", "range", "unit", "mechanism", "buckets",
        "bucket_edges", "sampled_buckets"}},
      {"stats", "   (AdminService counters since the server started)", {}},
      {"tail",
       "[--metric=N,M] [--interval=1s] [--count=POLLS]   (a line per metric whose stored report "
       "count grew: arrivals only, never answers; until Ctrl-C or --count polls)",
       {"metric", "interval", "count"}},
      {"health",
       "[--service=deniable.v1.ReportService|deniable.v1.QueryService|deniable.v1.AdminService]"
       "   (SERVING: exit 0; NOT_SERVING: exit 1; an unknown service: exit 3)",
       {"service"}},
  };
  return *commands;
}

const CommandSpec* FindCommand(absl::string_view name) {
  for (const CommandSpec& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

std::vector<std::string> FlagNames(const std::vector<std::string>& args) {
  std::vector<std::string> names;
  for (const std::string& arg : args) {
    if (arg == "--") break;
    absl::string_view a = arg;
    if (!absl::ConsumePrefix(&a, "-")) continue;
    absl::ConsumePrefix(&a, "-");
    if (a.empty() || !(a[0] >= 'a' && a[0] <= 'z')) continue;  // a negative number, not a flag
    names.emplace_back(a.substr(0, a.find('=')));
  }
  return names;
}

absl::Status CheckCommandFlags(const CommandSpec& command,
                               const std::vector<std::string>& flag_names) {
  for (const std::string& flag : flag_names) {
    if (Contains(CommonFlags(), flag) || Contains(command.flags, flag)) continue;
    if (absl::StartsWith(flag, "no") &&
        (Contains(CommonFlags(), flag.substr(2)) || Contains(command.flags, flag.substr(2)))) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        command.name, ": --", flag, " is not a flag of this command (its flags: ",
        command.flags.empty()
            ? std::string("only the connection flags")
            : absl::StrJoin(command.flags, ", ",
                            [](std::string* out, const char* f) { absl::StrAppend(out, "--", f); }),
        ")"));
  }
  return absl::OkStatus();
}

int ExitCodeFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return kExitOk;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
      return kExitUnavailable;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return kExitAccess;
    case absl::StatusCode::kFailedPrecondition:
      return kExitFailedPrecondition;
    default:
      return kExitError;
  }
}

}  // namespace deniable::tools
