#include "tools/cli/cli_flags.h"

#include <cstdlib>

#include "absl/flags/flag.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

ABSL_FLAG(std::string, target, EnvOr("DENIABLE_TARGET", "127.0.0.1:50051"),
          "server address host:port (env DENIABLE_TARGET)");
ABSL_FLAG(double, timeout_seconds, 10, "deadline of each call");
ABSL_FLAG(std::string, token, EnvOr("DENIABLE_TOKEN", ""),
          "bearer token (env DENIABLE_TOKEN; prefer the variable: flags show in `ps`)");
ABSL_FLAG(std::string, tls_ca_file, EnvOr("DENIABLE_TLS_CA_FILE", ""),
          "PEM CA that signs the server's certificate; set to use TLS (env DENIABLE_TLS_CA_FILE)");
ABSL_FLAG(std::string, tls_cert_file, EnvOr("DENIABLE_CLIENT_CERT_FILE", ""),
          "mTLS: PEM client certificate chain (env DENIABLE_CLIENT_CERT_FILE)");
ABSL_FLAG(std::string, tls_key_file, EnvOr("DENIABLE_CLIENT_KEY_FILE", ""),
          "mTLS: PEM client private key (env DENIABLE_CLIENT_KEY_FILE)");
ABSL_FLAG(std::string, tls_server_name, "",
          "name to check the server's certificate against, when it differs from --target's host");
ABSL_FLAG(bool, json, false, "print JSON instead of a table");
// Designs: create-metric, add-version, design, plan
ABSL_FLAG(std::string, name, "", "create-metric: metric name, [a-z][a-z0-9_.-]{0,63}");
ABSL_FLAG(std::string, description, "", "create-metric: the question asked");
ABSL_FLAG(std::string, design, "",
          "two_coin | tails_says_yes | symmetric_epsilon (--epsilon) | forced_response (--p --q) "
          "| unrelated_question (--p --pi_b) | mirrored_question (--p) | truth_with_gamma "
          "(--gamma); with --categories: k_rr | oue | olh | categorical (the server picks the "
          "least-variance mechanism), each with --epsilon");
ABSL_FLAG(double, epsilon, 0,
          "symmetric_epsilon, k_rr, oue, olh, categorical: epsilon in nats (per report)");
ABSL_FLAG(std::vector<std::string>, categories, {},
          "create-metric: the k answers of a question with categories, comma-separated, in "
          "order (2 to 256 names matching [A-Za-z0-9_.:-]{1,32}), e.g. Y,N,U,A; design, plan: "
          "the categories of a categorical design (k = their number)");
ABSL_FLAG(std::vector<std::string>, shares, {},
          "design, plan with --categories: shares of the categories in [0, 1] summing to 1, "
          "comma-separated in their order (design: the prior, default uniform; plan: the "
          "assumed shares, default the worst case)");
ABSL_FLAG(double, p, 0, "p (forced_response) or P (unrelated_question, mirrored_question)");
ABSL_FLAG(double, q, 0, "q (forced_response)");
ABSL_FLAG(double, pi_b, 0, "pi_B, the innocuous question's known yes share");
ABSL_FLAG(double, gamma, 0, "gamma (truth_with_gamma)");
ABSL_FLAG(int, time_precision_seconds, 0, "create-metric: event-time precision; 0 = 3600");
ABSL_FLAG(int, min_reports, 0,
          "create-metric: reports needed before a prevalence is served; 0 = server default");
ABSL_FLAG(std::string, reporting_period, "",
          "create-metric: each device reports at most once per period, e.g. 1d, 12h, 3600s, 1w "
          "(a multiple of the time precision, at most 366d); empty = 1d; once = one report per "
          "device ever (a survey question: every selection counts independent devices)");
ABSL_FLAG(bool, window_flags, true,
          "create-metric: devices mark their first report in each UTC day, ISO week and month, "
          "so whole-window queries count devices once (docs/privacy.md, \"Window flags\"); "
          "--nowindow_flags turns that off");
ABSL_FLAG(std::string, randomization, "",
          "create-metric: memoized (one bit per answer, re-sent every period; default) | fresh "
          "(a new bit each period, spending epsilon each period)");
ABSL_FLAG(int, retention_days, 0,
          "create-metric: drop reports older than this many days (0 = keep forever)");
ABSL_FLAG(std::string, retention_policy, "",
          "create-metric: keep_counts (drop only the reports; default) | drop_counts (the counts "
          "of the same periods too)");
ABSL_FLAG(int, days, -1, "set-retention: drop reports older than this many days (0 = never)");
ABSL_FLAG(std::string, policy, "",
          "set-retention: keep_counts (drop only the reports; default) | drop_counts (the "
          "counts of the same periods too)");
ABSL_FLAG(bool, allow_no_privacy, false,
          "create-metric, add-version: accept a design where every report reveals its answer "
          "(a = 1, b = 0)");
// Queries
ABSL_FLAG(std::string, metric, "", "metric name (tail: names, comma-separated)");
// The time flags are text: ParseTimeFlag (cli_parse.h) reads them and names the accepted forms.
ABSL_FLAG(std::string, start, "",
          "start of the range [start, end): 2026-11-01 (00:00 UTC), 2026-11-01T12:00:00Z (RFC "
          "3339, any offset), now, -90m, -24h, -7d, -2w (before now) or Unix seconds; default: "
          "prevalence from the first report, series 30 days before --end, difference the second "
          "window's length before --end (two metrics: 30 days before --end)");
ABSL_FLAG(std::string, end, "",
          "end of the range, excluded, in the forms of --start; default: prevalence no end, "
          "series now, difference --start2 (two metrics: now); 0 = no end");
ABSL_FLAG(double, level, 0.95, "confidence level in (0, 1)");
ABSL_FLAG(std::string, method, "",
          "interval: wald | wilson | agresti_coull | jeffreys | clopper_pearson; empty = the "
          "design's default from docs/coverage.md");
ABSL_FLAG(std::string, interval_kind, "",
          "prevalence, series: fixed (valid at one look) | anytime (valid at every look at once, "
          "for a range within one reporting period or calendar window; docs/statistics.md "
          "section 10); empty = fixed");
ABSL_FLAG(
    int64_t, anytime_tuned_reports, 0,
    "with --interval_kind=anytime: the reports at which the interval is tightest, chosen before "
    "looking; 0 = 10000");
ABSL_FLAG(std::string, combination, "by_reports",
          "design versions: by_reports (the window's share) | inverse_variance (only for a "
          "prevalence constant across versions)");
ABSL_FLAG(std::string, group_by, "", "prevalence, replay: a label key to group by (e.g. region)");
ABSL_FLAG(std::string, bucket, "day", "series: hour | day | week | month (UTC calendar months)");
ABSL_FLAG(std::string, simultaneous, "",
          "metrics with categories: simultaneous intervals over the k shares by sidak | "
          "bonferroni; empty = sidak");
ABSL_FLAG(std::string, plot, "",
          "series: also draw the series (estimate, interval band, suppressed buckets, design "
          "version changes) into this .svg or .pdf file");
ABSL_FLAG(std::string, metric2, "", "difference: the second metric (default: --metric)");
ABSL_FLAG(std::string, start2, "",
          "difference: start of the second window, in the forms of --start; default: 30 days "
          "before --end2 (two metrics without --start2 and --end2: the first window)");
ABSL_FLAG(std::string, end2, "",
          "difference: end of the second window, in the forms of --start; default: now; 0 = no "
          "end");
ABSL_FLAG(double, prior, 0.5, "design, plan: assumed prevalence in [0, 1] (plan: -1 = unknown)");
ABSL_FLAG(int64_t, n, 0,
          "design: also print the epsilon against an analyst who sees only the counts of n "
          "reports (shuffle amplification, docs/privacy.md); 0 = not shown");
ABSL_FLAG(double, half_width, 0.05, "plan: target half-width of the interval, e.g. 0.03");
ABSL_FLAG(std::string, window, "",
          "plan: day | week | month | once: answer in devices active in that window, each counted "
          "once (docs/statistics.md section 4.4); empty = reports. top, frequency: day | week | "
          "month: the whole window holding --start (default now), each device counted once");
ABSL_FLAG(double, reports_per_device, 1,
          "plan: reports each device sends per --window (e.g. 7 for a daily metric over a week)");
ABSL_FLAG(std::string, service, "",
          "health: the service to check (deniable.v1.ReportService, deniable.v1.QueryService, "
          "deniable.v1.AdminService); empty = the whole server");
// Replay
ABSL_FLAG(std::string, csv, "", "replay: CSV file with a header row");
ABSL_FLAG(std::string, column, "",
          "replay: the answer column (yes/no with --yes; else the metric's category names)");
ABSL_FLAG(std::string, yes, "",
          "replay: the value of --column that means yes; omit it for a metric with categories. "
          "delete-metric: --yes deletes without asking for the name");
ABSL_FLAG(std::vector<std::string>, label_columns, {},
          "replay: columns sent as public labels (comma-separated)");
ABSL_FLAG(std::string, blank, "",
          "replay: how to read a blank answer: no (count as no; yes/no metrics) | skip (leave "
          "out); unset: a blank answer is an error");
ABSL_FLAG(std::string, time_column, "",
          "replay: the column holding each respondent's answer time (see --time_format); "
          "unset: now, or --spread");
ABSL_FLAG(std::string, time_format, "%Y-%m-%d",
          "replay: format of --time_column: unix (seconds) or a strptime format such as "
          "%Y-%m-%dT%H:%M:%S%Ez (no zone: UTC)");
ABSL_FLAG(std::string, spread, "",
          "replay: spread the answer times evenly over the last N days (7d; also h, m, s), "
          "shuffled with a fixed seed; rounded down to the metric's time precision");
ABSL_FLAG(int32_t, devices_in_flight, 8,
          "replay: respondents' devices reporting at once (1 to 256; 1: one after another); each "
          "row is still its own device. --import and --string_column replays go one after "
          "another");
ABSL_FLAG(bool, import, false,
          "replay: a historical import (analyst token; older than the collector's report age, up "
          "to its --max_import_age_seconds): sends x-deniable-import, needs --token and "
          "--time_column or --spread");
// Numeric metrics (docs/cli.md, "Numeric metrics")
ABSL_FLAG(std::string, range, "",
          "create-metric: a numeric metric's range LO,HI (values outside are clipped to it by the "
          "SDK), e.g. 0,120");
ABSL_FLAG(std::string, unit, "",
          "create-metric: the unit of a numeric metric's values, for people (years, ms; at most "
          "32 characters)");
ABSL_FLAG(std::string, mechanism, "",
          "create-metric, add-version: a numeric design's mechanism, one_bit_mean (mean and "
          "total) | d_bit_flip (histogram and quantiles); empty = the server picks (--buckets > "
          "1 or --bucket_edges: d_bit_flip)");
ABSL_FLAG(int, buckets, 0,
          "create-metric, add-version: a numeric design's k equal-width buckets over --range (1 "
          "to 256; 0 = 1 for one_bit_mean, 10 for d_bit_flip)");
ABSL_FLAG(std::vector<std::string>, bucket_edges, {},
          "create-metric, add-version: a numeric design's k + 1 ascending bucket edges from LO "
          "to HI of --range, comma-separated (instead of --buckets)");
ABSL_FLAG(int, sampled_buckets, 0,
          "create-metric, add-version: d_bit_flip's d, the buckets each report samples (1 to k; "
          "0 = k, least variance)");
ABSL_FLAG(std::vector<std::string>, quantiles, {},
          "prevalence, replay: the quantile levels of a d_bit_flip metric, comma-separated in "
          "(0, 1), e.g. 0.5,0.9; empty = the server's (0.5, 0.9, 0.99)");
ABSL_FLAG(int64_t, manipulation_reports, 0,
          "prevalence, series: the fake reports each estimate's manipulation bound is for "
          "(docs/security.md); 0 = 1 % of the estimate's n");
ABSL_FLAG(std::string, value_column, "",
          "replay: the column of a numeric metric's values (numbers); each respondent's device "
          "reports its value with Reporter::ReportValue");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(1),
          "tail: time between two polls of the collector's counts (e.g. 1s, 500ms)");
ABSL_FLAG(int64_t, count, 0, "tail: stop after this many polls (0 = until interrupted)");
