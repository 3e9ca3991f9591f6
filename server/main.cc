// deniable-server: the collector. Flags fall back to DENIABLE_* environment variables.
//
//   deniable-server [flags]                               serve
//   deniable-server tokens add --role=reporter|analyst [--label=TEXT] --db=FILE
//   deniable-server tokens list --db=FILE
//   deniable-server tokens revoke --id=N --db=FILE
//
//   deniable-server migrate --from=FILE.db --to=postgresql://...   SQLite -> PostgreSQL
//   deniable-server backup --db=FILE.db --out=COPY.db   online backup while a server runs on FILE
//   deniable-server restore --from=COPY.db --db=FILE.db  the backup back as FILE (server stopped)
//
// --db is a SQLite file, or a PostgreSQL URI ("postgresql://user@host/dbname": several
// collectors on one database, docs/deploy.md); the tokens subcommands take either.
//
// Access (docs/security.md): bearer tokens are on as soon as the database holds a token (even a
// revoked one); TLS is on with --tls_cert_file and --tls_key_file. Without TLS or without tokens
// the server listens only on a loopback address unless --insecure is given, and says so loudly.
#include <fcntl.h>
#include <prometheus/counter.h>
#include <prometheus/text_serializer.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "server/alerts/alert_monitor.h"
#include "server/alerts/alert_rules.h"
#include "server/alerts/webhook.h"
#include "server/auth/authenticator.h"
#include "server/auth/token_store.h"
#include "server/env_flags.h"
#include "server/http/http_server.h"
#include "server/http/json_api.h"
#include "server/metrics/estimate_metrics.h"
#include "server/metrics/memory_trim.h"
#include "server/metrics/metered_storage.h"
#include "server/metrics/process_metrics.h"
#include "server/server_logging.h"
#include "server/service/collector_server.h"
#include "server/storage/backend.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/postgres/postgres_connection.h"
#include "server/storage/postgres/sqlite_to_postgres.h"
#include "server/storage/sqlite/sqlite_backup.h"
#include "server/storage/sqlite/sqlite_statement.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

bool EnvFlag(const char* name) {
  const std::string v = EnvOr(name, "");
  return v == "1" || v == "true" || v == "yes";
}

}  // namespace

ABSL_FLAG(std::string, listen, EnvOr("DENIABLE_LISTEN", "127.0.0.1:50051"),
          "host:port to listen on (env DENIABLE_LISTEN)");
ABSL_FLAG(std::string, db, EnvOr("DENIABLE_DB", "deniable.db"),
          "SQLite database file, created if missing; or a PostgreSQL URI "
          "postgresql://user@host[:port]/dbname (password from the URI, PGPASSFILE or "
          "PGPASSWORD; never logged) for several collectors on one database (env DENIABLE_DB)");
ABSL_FLAG(std::string, durability, EnvOr("DENIABLE_DURABILITY", "full"),
          "full: synchronous=FULL, an acknowledged batch survives power loss; normal: survives a "
          "crash of the server, not power loss (env DENIABLE_DURABILITY)");
ABSL_FLAG(int, sqlite_write_cache_mib, 64,
          "SQLite: page cache of the writing connection, MiB (bounds the storage's memory; "
          "docs/operations.md, Memory)");
ABSL_FLAG(bool, sqlite_bound_move_wal, true,
          "SQLite: size the transactions that move a metric-hour's reports so the WAL stays "
          "below 64 MiB while they run (false: fixed transactions of 50 000 rows; "
          "docs/performance.md, 'The WAL and the hot hour')");
ABSL_FLAG(int64_t, max_recent_reports, 4'000'000,
          "SQLite: ids of recent reports held in memory (about 30 bytes each) before the oldest "
          "metric-hours move to the keyed table (docs/operations.md, Memory)");
ABSL_FLAG(int, max_batch_reports, 10000, "largest number of reports in one SubmitReports call");
ABSL_FLAG(int, max_message_bytes, 2 * 1024 * 1024, "largest request accepted, in bytes");
ABSL_FLAG(int, max_future_skew_seconds, 3600,
          "reports whose event time is further than this in the future are rejected");
ABSL_FLAG(int64_t, default_min_reports, 50,
          "reports a selection needs before its prevalence is served, for metrics created "
          "without their own min_reports");
ABSL_FLAG(int, max_report_age_seconds, 30 * 86400,
          "reports whose event time is older than this are rejected (default 30 days)");
ABSL_FLAG(int64_t, max_label_values, deniable::server::kDefaultMaxLabelValues,
          "distinct values each label key of a metric may have: a report bringing a new value "
          "past it is refused (INVALID_ARGUMENT, permanent); labels are public and "
          "low-cardinality, never an identifier; 0: no cap (docs/operations.md, Labels)");
ABSL_FLAG(int64_t, max_label_keys, deniable::server::kDefaultMaxLabelKeys,
          "distinct label keys a metric may have: a report bringing another key past it is "
          "refused (INVALID_ARGUMENT, permanent), so an identifier cannot move into the key; 0: "
          "no cap (docs/operations.md, Labels)");
ABSL_FLAG(int64_t, max_import_age_seconds, 0,
          "historical imports (SubmitReports/StreamReports with the x-deniable-import: historical "
          "header and an analyst token) accept reports this old, for example 157680000 (5 "
          "years); 0 (the default): imports are refused");
ABSL_FLAG(int64_t, estimate_refresh_seconds, 60,
          "how often each metric's estimate over the last --estimate_window_seconds is computed "
          "for /metrics (deniable_estimate{metric, quantity}, shown to the analyst role or the "
          "metrics token; docs/operations.md, Estimates on /metrics); 0: no estimate series");
ABSL_FLAG(int64_t, estimate_window_seconds, 86400,
          "the selection [now - this, now) of /metrics' estimate series (default the last 24 h)");
ABSL_FLAG(int64_t, max_estimate_metrics, 100,
          "metrics (in name order) with estimate series on /metrics; the rest are counted in "
          "deniable_estimate_metrics_omitted");
ABSL_FLAG(int64_t, max_window_firsts_per_token, 100000,
          "reports one token may send of one metric flagged first in one UTC day, ISO week or "
          "calendar month (Report.window_firsts); a report past it is refused "
          "(RESOURCE_EXHAUSTED, permanent) and counted in deniable_window_firsts_refused_total; "
          "tokenless callers and imports are not limited; 0: no limit (docs/security.md, Forged "
          "window flags)");
ABSL_FLAG(int, retention_interval_seconds, 3600,
          "how often metrics' retention is applied (also once at start); 0: never (docs/"
          "operations.md, Retention)");
ABSL_FLAG(int, memory_trim_seconds, 10,
          "how often the heap's free memory is given back to the system (malloc_trim), so that "
          "resident memory falls after a load; 0: never (docs/operations.md, Memory)");
ABSL_FLAG(int, shutdown_grace_seconds, 10,
          "on SIGTERM/SIGINT, time in-flight calls get to finish before they are cancelled");
ABSL_FLAG(std::string, tls_cert_file, EnvOr("DENIABLE_TLS_CERT_FILE", ""),
          "PEM certificate chain of the server; with --tls_key_file turns TLS on "
          "(env DENIABLE_TLS_CERT_FILE)");
ABSL_FLAG(std::string, tls_key_file, EnvOr("DENIABLE_TLS_KEY_FILE", ""),
          "PEM private key of the server (env DENIABLE_TLS_KEY_FILE)");
ABSL_FLAG(std::string, tls_client_ca_file, EnvOr("DENIABLE_TLS_CLIENT_CA_FILE", ""),
          "PEM CA certificates; when set, clients must present a certificate they signed (mTLS) "
          "(env DENIABLE_TLS_CLIENT_CA_FILE)");
ABSL_FLAG(bool, insecure, EnvFlag("DENIABLE_INSECURE"),
          "allow plaintext or tokenless serving on a non-loopback address (behind a "
          "TLS-terminating proxy, or in a private network) (env DENIABLE_INSECURE=1)");
ABSL_FLAG(std::string, http_listen, EnvOr("DENIABLE_HTTP_LISTEN", ""),
          "host:port of the HTTP listener: the JSON API (POST /v1/<Service>/<Method>), "
          "Prometheus /metrics and the dashboard at /; empty (the default) turns it off. Same TLS "
          "files, tokens and loopback rule as --listen (env DENIABLE_HTTP_LISTEN)");
ABSL_FLAG(std::vector<std::string>, http_cors_origins,
          absl::StrSplit(EnvOr("DENIABLE_HTTP_CORS_ORIGINS", ""), ',', absl::SkipEmpty()),
          "comma-separated web origins (https://app.example, or *) whose pages may call "
          "ReportService over the HTTP listener: the browser SDK on a page the collector does "
          "not serve; empty (the default): no CORS (env DENIABLE_HTTP_CORS_ORIGINS)");
ABSL_FLAG(std::string, metrics_token, EnvOr("DENIABLE_METRICS_TOKEN", ""),
          "a bearer token that GET /metrics then requires (it lists every metric's name and "
          "counts); empty (the default): /metrics is open to whoever reaches the HTTP port. "
          "Prefer the environment (env DENIABLE_METRICS_TOKEN): a flag shows in the process list");
ABSL_FLAG(std::string, alert_rules, EnvOr("DENIABLE_ALERT_RULES", ""),
          "a JSON file of alert rules (docs/alerts.md) evaluated with anytime-valid intervals; "
          "a bad file stops the server with exit code 2 (env DENIABLE_ALERT_RULES); empty: no "
          "alerts");
ABSL_FLAG(int, alert_period_seconds, 60, "seconds between two evaluations of the alert rules");
ABSL_FLAG(std::string, alert_webhook_url, EnvOr("DENIABLE_ALERT_WEBHOOK_URL", ""),
          "http:// or https:// URL that gets a JSON POST each time an alert rule starts or stops "
          "firing (env DENIABLE_ALERT_WEBHOOK_URL); empty: no webhook");
ABSL_FLAG(int, http_header_timeout_seconds, 10,
          "HTTP listener: a request's headers must arrive within this many seconds of the "
          "connection opening or finishing its previous request (slow clients and idle "
          "kept-alive connections are closed)");
ABSL_FLAG(int, http_request_timeout_seconds, 60,
          "HTTP listener: a whole request, headers and body, must arrive within this many "
          "seconds");
ABSL_FLAG(int, http_idle_timeout_seconds, 60,
          "HTTP listener: a connection that neither sends nor reads for this many seconds is "
          "closed");
ABSL_FLAG(int, http_max_connections, 1024,
          "HTTP listener: connections open at once (one thread each); past them a few more, "
          "max(4, N / 32), answer only /livez and /healthz (others 503), then new ones are closed");
ABSL_FLAG(int, http_max_connections_per_address, 0,
          "HTTP listener: connections open at once from one client address; further ones are "
          "closed at once (0: --http_max_connections / 16, at least 1)");
ABSL_FLAG(double, http_min_body_bytes_per_second, 1024,
          "HTTP listener: a request body must arrive at this many bytes a second on average, "
          "checked from 5 s after its headers; slower is cut (0: no minimum)");
ABSL_FLAG(bool, reflection, EnvFlag("DENIABLE_REFLECTION"),
          "serve grpc.reflection (the public schema; unauthenticated) (env DENIABLE_REFLECTION=1)");
ABSL_FLAG(double, rate_limit_reports_per_second, 0,
          "per-token (tokenless: per-peer) sustained rate of reports; 0 turns the limit off");
ABSL_FLAG(double, rate_limit_burst, 0,
          "per-token bucket size in reports; 0 means one second's worth of the rate");
ABSL_FLAG(int, max_threads, 64,
          "threads of the synchronous handlers (queries, GetDesign); a call arriving while all "
          "are busy gets RESOURCE_EXHAUSTED; report calls hold no thread; 0: no limit");
ABSL_FLAG(int, max_grpc_memory_mib, 256,
          "memory gRPC may use for its buffers, in MiB (gRPC ResourceQuota); 0: no limit");
ABSL_FLAG(int, max_concurrent_streams, 1024,
          "StreamReports calls open at once over all connections; one more gets "
          "RESOURCE_EXHAUSTED; 0: no limit");
ABSL_FLAG(int, max_streams_per_connection, 100,
          "calls open at once on one connection (HTTP/2 MAX_CONCURRENT_STREAMS); further calls "
          "wait in the client; 0: no limit");
ABSL_FLAG(int, metric_cache_seconds, 5,
          "with a PostgreSQL --db: a design version added through another collector reaches "
          "GetDesign here within this many seconds (reports naming it are accepted at once)");
ABSL_FLAG(uint64_t, testing_heavy_hitters_salt, 0,
          "for tests only: nonzero, the hash salt of every new heavy-hitters design, so a seeded "
          "test repeats exactly; 0 (the default): drawn at random, as the estimates need");
ABSL_FLAG(std::string, log_level, "info",
          "trace | debug | info | warning | error | off (gRPC's own lines follow it)");
ABSL_FLAG(std::string, log_format, "text",
          "text | json (one JSON object per line: time, level, msg; values escaped)");
ABSL_FLAG(bool, access_log, true,
          "one info line per finished call, gRPC and HTTP: method, code, latency_ms, reports "
          "received (never the peer address, the token or a report); --access_log=false turns "
          "it off");
ABSL_FLAG(int, token_reload_seconds, 5, "revoked or added tokens take effect within this time");
ABSL_FLAG(std::string, role, "", "tokens add: reporter or analyst");
ABSL_FLAG(std::string, label, "", "tokens add: free text naming the holder (not a secret)");
ABSL_FLAG(int64_t, id, 0, "tokens revoke: the id shown by `tokens list`");
ABSL_FLAG(std::string, from, "",
          "migrate: the SQLite database file to copy (no collector on it); restore: the backup");
ABSL_FLAG(std::string, to, "", "migrate: the PostgreSQL URI to copy into");
ABSL_FLAG(std::string, out, "",
          "backup: the file to write (must not exist); the copy is verified before it appears");

namespace {

namespace server = deniable::server;

// The tokens subcommands on the token store of --db (SQLite or PostgreSQL alike).
int RunTokens(const std::vector<char*>& args) {
  const std::string command = args.size() > 2 ? args[2] : "";
  if (command != "add" && command != "list" && command != "revoke") {
    std::fprintf(stderr, "usage: deniable-server tokens add|list|revoke --db=FILE|URI ...\n");
    return 2;
  }
  // list and revoke read tokens made before: a mistyped --db fails (NOT_FOUND) instead of
  // creating an empty database; add may start a new one, as the server does.
  const absl::StatusOr<std::unique_ptr<server::TokenStore>> store =
      server::OpenTokenStore(absl::GetFlag(FLAGS_db), /*must_exist=*/command != "add");
  if (!store.ok()) {
    std::fprintf(stderr, "error: %s\n", store.status().ToString().c_str());
    return 1;
  }
  if (command == "add") {
    auto role = server::ParseRole(absl::GetFlag(FLAGS_role));
    if (!role.ok()) {
      std::fprintf(stderr, "error: --%s\n", std::string(role.status().message()).c_str());
      return 2;
    }
    auto added = (*store)->Add(*role, absl::GetFlag(FLAGS_label), absl::Now());
    if (!added.ok()) {
      std::fprintf(stderr, "error: %s\n", added.status().ToString().c_str());
      return 1;
    }
    std::fprintf(stderr, "token %lld (%s) added; it is shown once, store it now:\n",
                 static_cast<long long>(added->record.id), RoleName(*role));
    std::printf("%s\n", added->token.c_str());
    return 0;
  }
  if (command == "revoke") {
    absl::Status s = (*store)->Revoke(absl::GetFlag(FLAGS_id), absl::Now());
    if (!s.ok()) {
      std::fprintf(stderr, "error: %s\n", s.ToString().c_str());
      return 1;
    }
    std::printf("token %lld revoked\n", static_cast<long long>(absl::GetFlag(FLAGS_id)));
    return 0;
  }
  if (command == "list") {
    auto tokens = (*store)->List();
    if (!tokens.ok()) {
      std::fprintf(stderr, "error: %s\n", tokens.status().ToString().c_str());
      return 1;
    }
    const auto rfc3339 = [](int64_t seconds) {  // UTC, as every time the server prints
      return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::FromUnixSeconds(seconds),
                              absl::UTCTimeZone());
    };
    std::printf("id\trole\tcreated\trevoked\tlabel\n");
    for (const auto& t : *tokens) {
      std::printf("%lld\t%s\t%s\t%s\t%s\n", static_cast<long long>(t.id), RoleName(t.role),
                  rfc3339(t.created_time_seconds).c_str(),
                  t.revoked_time_seconds ? rfc3339(*t.revoked_time_seconds).c_str() : "-",
                  t.label.c_str());
    }
    return 0;
  }
  return 2;  // not reached: the command was checked above
}

// `deniable-server tokens --help` (Abseil's --help knows no subcommands): on stdout, exit 0.
int PrintTokensHelp() {
  std::printf(
      "usage: deniable-server tokens add|list|revoke --db=FILE|postgresql://...\n\n"
      "  tokens add --role=reporter|analyst [--label=TEXT]\n"
      "      prints a new token once on stdout (store it now; only its hash is kept)\n"
      "  tokens list\n"
      "      id, role, created and revoked (RFC 3339, UTC) and label, tab-separated; never a "
      "token\n"
      "  tokens revoke --id=N\n"
      "      a running server refuses the token within --token_reload_seconds\n\n"
      "Once the database holds a token, every call but the health check needs one "
      "(docs/security.md).\n\nflags:\n");
  for (const char* name : {"db", "role", "label", "id"}) {
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag != nullptr) std::printf("  --%s (%s)\n", name, flag->Help().c_str());
  }
  return 0;
}

// `deniable-server --help`: the usage and this file's flags, on stdout, exit 0 (Abseil's own
// --help exits 1).
int PrintServerHelp() {
  std::printf("%s\n\nflags (each also from the environment as DENIABLE_<FLAG>):\n",
              std::string(absl::ProgramUsageMessage()).c_str());
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (absl::EndsWith(flag->Filename(), "server/main.cc")) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  for (const absl::CommandLineFlag* flag : flags) {
    std::printf("  --%s (%s; default \"%s\")\n", std::string(flag->Name()).c_str(),
                flag->Help().c_str(), flag->DefaultValue().c_str());
  }
  std::printf("\n`deniable-server tokens --help` for the tokens subcommand; docs/operations.md.\n");
  return 0;
}

bool AsksForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--helpshort") return true;
  }
  return false;
}

// migrate: SQLite -> PostgreSQL with progress on stderr; 0 when the counts verify.
int RunMigrate() {
  const std::string from = absl::GetFlag(FLAGS_from);
  const std::string to = absl::GetFlag(FLAGS_to);
  if (from.empty() || server::BackendKindOf(to) != server::BackendKind::kPostgres) {
    std::fprintf(stderr,
                 "usage: deniable-server migrate --from=FILE.db --to=postgresql://user@host/db\n");
    return 2;
  }
  auto summary = deniable::server::MigrateSqliteToPostgres(
      from, to, [](const std::string& line) { std::fputs(line.c_str(), stderr); });
  if (!summary.ok()) {
    std::fprintf(stderr, "error: %s\n", summary.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "metrics %lld (created %lld, versions added %lld), tokens %lld (copied %lld), reports %lld "
      "(copied %lld), count rows verified %lld\n",
      static_cast<long long>(summary->metrics), static_cast<long long>(summary->metrics_created),
      static_cast<long long>(summary->versions_added), static_cast<long long>(summary->tokens),
      static_cast<long long>(summary->tokens_copied), static_cast<long long>(summary->reports),
      static_cast<long long>(summary->reports_copied),
      static_cast<long long>(summary->count_rows_verified));
  return 0;
}

// backup: an online, verified copy of a SQLite database (a server may be running on it).
int RunBackup() {
  const std::string db = absl::GetFlag(FLAGS_db);
  if (server::BackendKindOf(db) == server::BackendKind::kPostgres) {
    std::fprintf(stderr,
                 "error: --db is a PostgreSQL database: back it up with PostgreSQL's own tools, "
                 "for example pg_dump --format=custom --file=deniable.dump \"%s\" "
                 "(docs/deploy.md, \"Backup and restore\")\n",
                 deniable::server::RedactedConninfo(db).c_str());
    return 2;
  }
  const absl::Time start = absl::Now();
  auto summary = deniable::server::BackupSqlite(db, absl::GetFlag(FLAGS_out));
  if (!summary.ok()) {
    std::fprintf(stderr, "error: %s\n", summary.status().ToString().c_str());
    return summary.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  std::printf(
      "backup %s: verified (integrity_check ok, counts = stored reports, schema version %d), "
      "%lld pages, %lld bytes, "
      "%.1f s; metrics %lld, design versions %lld, reports %lld, count rows %lld counting "
      "%lld reports\n",
      absl::GetFlag(FLAGS_out).c_str(), summary->schema_version,
      static_cast<long long>(summary->pages), static_cast<long long>(summary->bytes),
      absl::ToDoubleSeconds(absl::Now() - start), static_cast<long long>(summary->metrics),
      static_cast<long long>(summary->design_versions), static_cast<long long>(summary->reports),
      static_cast<long long>(summary->count_rows),
      static_cast<long long>(summary->counted_reports));
  return 0;
}

// restore: a backup (both of its files) back as --db, the server stopped.
int RunRestore() {
  const std::string db = absl::GetFlag(FLAGS_db);
  if (server::BackendKindOf(db) == server::BackendKind::kPostgres) {
    std::fprintf(stderr,
                 "error: --db is a PostgreSQL database: restore it with pg_restore "
                 "(docs/deploy.md, \"Backup and restore\")\n");
    return 2;
  }
  auto summary = deniable::server::RestoreSqlite(absl::GetFlag(FLAGS_from), db);
  if (!summary.ok()) {
    std::fprintf(stderr, "error: %s\n", summary.status().ToString().c_str());
    return summary.status().code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (!summary->moved_aside.empty()) {
    std::printf("restore %s: the files that were there are now %s (and its -wal, -reports, ...)\n",
                db.c_str(), summary->moved_aside.c_str());
  }
  std::printf(
      "restore %s from %s: verified (integrity_check ok, counts = stored reports, schema "
      "version %d), %lld bytes; metrics %lld, reports %lld, count rows %lld counting %lld "
      "reports\n",
      db.c_str(), absl::GetFlag(FLAGS_from).c_str(), summary->copy.schema_version,
      static_cast<long long>(summary->copy.bytes), static_cast<long long>(summary->copy.metrics),
      static_cast<long long>(summary->copy.reports),
      static_cast<long long>(summary->copy.count_rows),
      static_cast<long long>(summary->copy.counted_reports));
  return 0;
}

// The whole of the file `flag` names into `out`. Errors: INVALID_ARGUMENT naming the flag and the
// file, with the reason (strerror) and the uid that tried: a key readable by root only is the
// usual cause in a container (the image runs as uid 10001, docs/docker.md).
absl::Status ReadFile(const char* flag, const std::string& path, std::string* out) {
  const auto cannot_read = [&](int error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, ": cannot read \"", path, "\": ", std::strerror(error),
                     " (this process runs as uid ", getuid(), ", gid ", getgid(),
                     "; the file must be readable by it)"));
  };
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return cannot_read(errno);
  out->clear();
  char buffer[8192];
  ssize_t got = 0;
  while ((got = read(fd, buffer, sizeof buffer)) > 0) out->append(buffer, got);
  const int error = errno;
  close(fd);
  if (got < 0) return cannot_read(error);  // a directory opens, then fails to read (EISDIR)
  return absl::OkStatus();
}

bool IsLoopback(const std::string& address) {
  return absl::StartsWith(address, "127.") || absl::StartsWith(address, "[::1]") ||
         absl::StartsWith(address, "localhost:") || absl::StartsWith(address, "unix:");
}

// Sets the usage and version texts, answers --help, applies DENIABLE_<FLAG>, parses the flags
// into `args` and configures logging. Returns the exit code when the process is done already.
std::optional<int> ParseCommandLine(int argc, char** argv, std::vector<char*>* args) {
  absl::SetProgramUsageMessage(
      "The Deniable collector: stores randomized-response reports in SQLite and serves "
      "debiased prevalence over gRPC.\n  deniable-server --listen=127.0.0.1:50051 "
      "--db=deniable.db\n  deniable-server tokens add --role=reporter|analyst --db=deniable.db"
      "\n  deniable-server tokens list|revoke --db=deniable.db [--id=N]"
      "\n  deniable-server backup --db=deniable.db --out=backup.db"
      "\n  deniable-server restore --from=backup.db --db=deniable.db");
  if (AsksForHelp(argc, argv)) {
    return argc > 1 && absl::string_view(argv[1]) == "tokens" ? PrintTokensHelp()
                                                              : PrintServerHelp();
  }
  absl::FlagsUsageConfig usage_config;
  usage_config.version_string = [] {
    return std::string("deniable-server " DENIABLE_VERSION " (" DENIABLE_BUILD_INFO ")\n");
  };
  absl::SetFlagsUsageConfig(usage_config);
  // Every flag of this file also from DENIABLE_<FLAG> (docs/operations.md); the command line wins.
  if (absl::Status env = server::ApplyEnvironmentToFlags("server/main.cc"); !env.ok()) {
    spdlog::error("{}", std::string(env.message()));
    return 2;
  }
  *args = absl::ParseCommandLine(argc, argv);
  if (absl::Status logging =
          server::ConfigureLogging(absl::GetFlag(FLAGS_log_level), absl::GetFlag(FLAGS_log_format));
      !logging.ok()) {
    spdlog::error("{}", std::string(logging.message()));
    return 2;
  }
  // Debian's Abseil checks every lock for deadlock cycles (a debug aid costing a graph update
  // per lock on the ingestion path); the server's lock order is fixed, so skip the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Before any SQLite call: no global mutex around each of SQLite's allocations.
  server::TurnOffSqliteMemoryStatistics();
  return std::nullopt;
}

// tokens, migrate, backup, restore; args[1] is the command.
int RunCommand(const std::vector<char*>& args) {
  const std::string command = args[1];
  if (command == "tokens") return RunTokens(args);
  if (command == "migrate") return RunMigrate();
  if (command == "backup") return RunBackup();
  if (command == "restore") return RunRestore();
  spdlog::error("unknown command \"{}\" (see --help)", args[1]);
  return 2;
}

// Blocks the stop signals in every thread (threads started later inherit the mask); one thread
// waits for them (ServeUntilStopped).
sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

// Everything serving needs, read from the flags in one place.
struct ServeOptions {
  std::string db;
  std::string durability;  // as given, for the start line
  server::BackendOptions backend;
  server::ServerOptions server;  // authenticator, rate_limit.shared, metric_cache_age: later
  std::string tls_cert_file, tls_key_file, tls_client_ca_file;
  bool tls = false;
  bool insecure = false;
  server::http::HttpOptions http;  // listen_address empty: no HTTP listener
  server::EstimateMetricsOptions estimates;
  absl::Duration token_reload_interval;
  absl::Duration memory_trim_interval;
  absl::Duration shutdown_grace;
  bool text_logs = true;  // --log_format=text: the insecure warning gets a banner
  std::vector<server::AlertRule> alert_rules;  // --alert_rules (empty: no alert monitor)
  absl::Duration alert_period;
  std::string alert_webhook_url;
};

// A refused flag value: the message main logs before it exits with 2.
absl::Status FlagError(const std::string& message) { return absl::InvalidArgumentError(message); }

// --db, --durability and the SQLite flags. Errors: INVALID_ARGUMENT naming the flag.
absl::Status StorageFromFlags(ServeOptions* o) {
  o->db = absl::GetFlag(FLAGS_db);
  server::SqliteOptions& sqlite = o->backend.sqlite;
  o->durability = absl::GetFlag(FLAGS_durability);
  if (o->durability == "full") {
    sqlite.durability = server::Durability::kFull;
  } else if (o->durability == "normal") {
    sqlite.durability = server::Durability::kNormal;
  } else {
    return FlagError(
        absl::StrCat("--durability must be full or normal, but is \"", o->durability, "\""));
  }
  if (absl::GetFlag(FLAGS_sqlite_write_cache_mib) < 1 ||
      absl::GetFlag(FLAGS_max_recent_reports) < 1) {
    return FlagError(
        absl::StrCat("--sqlite_write_cache_mib and --max_recent_reports must be >= 1, but are ",
                     absl::GetFlag(FLAGS_sqlite_write_cache_mib), " and ",
                     absl::GetFlag(FLAGS_max_recent_reports)));
  }
  sqlite.write_cache_kib = absl::GetFlag(FLAGS_sqlite_write_cache_mib) * 1024;
  sqlite.max_recent_reports = absl::GetFlag(FLAGS_max_recent_reports);
  sqlite.bound_move_wal = absl::GetFlag(FLAGS_sqlite_bound_move_wal);
  sqlite.max_label_values = absl::GetFlag(FLAGS_max_label_values);
  sqlite.max_label_keys = absl::GetFlag(FLAGS_max_label_keys);
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"max_label_values", sqlite.max_label_values},
        {"max_label_keys", sqlite.max_label_keys}}) {
    if (value < 0) {
      return FlagError(absl::StrCat("--", name, " must be >= 0 (0: no cap), but is ", value));
    }
  }
  return absl::OkStatus();
}

// The collector's ingestion, retention, rate-limit and gRPC limits. Errors: INVALID_ARGUMENT
// naming the flag.
absl::Status CollectorFromFlags(ServeOptions* o) {
  server::ServerOptions& options = o->server;
  options.listen_address = absl::GetFlag(FLAGS_listen);
  options.ingest.max_batch_reports = absl::GetFlag(FLAGS_max_batch_reports);
  options.ingest.max_future_skew = absl::Seconds(absl::GetFlag(FLAGS_max_future_skew_seconds));
  options.ingest.max_report_age = absl::Seconds(absl::GetFlag(FLAGS_max_report_age_seconds));
  if (const int64_t import_age = absl::GetFlag(FLAGS_max_import_age_seconds); import_age < 0) {
    return FlagError(absl::StrCat("--max_import_age_seconds must be >= 0 (0: imports off), but is ",
                                  import_age));
  } else if (import_age > 0) {
    options.ingest.max_import_age = absl::Seconds(import_age);
    spdlog::info("event=imports_enabled max_import_age_seconds={} (analyst tokens only)",
                 import_age);
  }
  if (const int64_t firsts = absl::GetFlag(FLAGS_max_window_firsts_per_token); firsts < 0) {
    return FlagError(
        absl::StrCat("--max_window_firsts_per_token must be >= 0 (0: no limit), but is ", firsts));
  } else {
    options.ingest.max_window_firsts_per_token = firsts;
  }
  if (absl::GetFlag(FLAGS_retention_interval_seconds) < 0) {
    return FlagError(absl::StrCat("--retention_interval_seconds must be >= 0 (0: never), but is ",
                                  absl::GetFlag(FLAGS_retention_interval_seconds)));
  }
  options.retention_interval = absl::Seconds(absl::GetFlag(FLAGS_retention_interval_seconds));
  options.max_receive_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.reflection = absl::GetFlag(FLAGS_reflection);
  options.access_log = absl::GetFlag(FLAGS_access_log);
  options.rate_limit.reports_per_second = absl::GetFlag(FLAGS_rate_limit_reports_per_second);
  options.rate_limit.burst = absl::GetFlag(FLAGS_rate_limit_burst);
  options.query.default_min_reports = absl::GetFlag(FLAGS_default_min_reports);
  for (const auto& [name, value] :
       {std::pair<const char*, int>{"max_threads", absl::GetFlag(FLAGS_max_threads)},
        {"max_grpc_memory_mib", absl::GetFlag(FLAGS_max_grpc_memory_mib)},
        {"max_concurrent_streams", absl::GetFlag(FLAGS_max_concurrent_streams)},
        {"max_streams_per_connection", absl::GetFlag(FLAGS_max_streams_per_connection)}}) {
    if (value < 0) {
      return FlagError(absl::StrCat("--", name, " must be >= 0 (0: no limit), but is ", value));
    }
  }
  options.max_threads = absl::GetFlag(FLAGS_max_threads);
  options.max_grpc_memory_bytes =
      static_cast<int64_t>(absl::GetFlag(FLAGS_max_grpc_memory_mib)) * 1024 * 1024;
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.max_streams_per_connection = absl::GetFlag(FLAGS_max_streams_per_connection);
  o->backend.shared_rate_limit = options.rate_limit.reports_per_second > 0;
  o->backend.metric_cache_age = absl::Seconds(absl::GetFlag(FLAGS_metric_cache_seconds));
  options.heavy_hitters_salt = absl::GetFlag(FLAGS_testing_heavy_hitters_salt);
  if (options.heavy_hitters_salt != 0) {
    spdlog::warn(
        "event=testing_salt_fixed (every new heavy-hitters design takes the salt of "
        "--testing_heavy_hitters_salt; for tests only)");
  }
  return absl::OkStatus();
}

// --tls_*: the server credentials, read from the files. Errors: INVALID_ARGUMENT naming the
// flag or the file that cannot be read.
absl::Status TlsFromFlags(ServeOptions* o) {
  server::ServerOptions& options = o->server;
  o->tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  o->tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  o->tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  o->tls = !o->tls_cert_file.empty() || !o->tls_key_file.empty();
  if (o->tls) {
    grpc::SslServerCredentialsOptions ssl;
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (o->tls_cert_file.empty() || o->tls_key_file.empty()) {
      return FlagError(absl::StrCat("--tls_cert_file and --tls_key_file must both be given (",
                                    o->tls_cert_file.empty() ? "--tls_cert_file" : "--tls_key_file",
                                    " is empty)"));
    }
    if (absl::Status s = ReadFile("tls_cert_file", o->tls_cert_file, &pair.cert_chain); !s.ok()) {
      return s;
    }
    if (absl::Status s = ReadFile("tls_key_file", o->tls_key_file, &pair.private_key); !s.ok()) {
      return s;
    }
    ssl.pem_key_cert_pairs.push_back(std::move(pair));
    if (!o->tls_client_ca_file.empty()) {
      if (absl::Status s =
              ReadFile("tls_client_ca_file", o->tls_client_ca_file, &ssl.pem_root_certs);
          !s.ok()) {
        return s;
      }
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    options.credentials = grpc::SslServerCredentials(ssl);
  } else if (!o->tls_client_ca_file.empty()) {
    return FlagError("--tls_client_ca_file needs --tls_cert_file and --tls_key_file");
  }
  o->insecure = absl::GetFlag(FLAGS_insecure);
  return absl::OkStatus();
}

// The HTTP listener, the estimate gauges and the process's intervals. Errors: INVALID_ARGUMENT
// naming the flag.
absl::Status HttpFromFlags(ServeOptions* o) {
  server::ServerOptions& options = o->server;
  o->http = {.listen_address = absl::GetFlag(FLAGS_http_listen),
             .tls_cert_file = o->tls_cert_file,
             .tls_key_file = o->tls_key_file,
             .tls_client_ca_file = o->tls_client_ca_file,
             .max_body_bytes = static_cast<size_t>(options.max_receive_message_bytes),
             .header_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_header_timeout_seconds)),
             .request_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_request_timeout_seconds)),
             .idle_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_idle_timeout_seconds)),
             .max_connections = absl::GetFlag(FLAGS_http_max_connections),
             .max_connections_per_address = absl::GetFlag(FLAGS_http_max_connections_per_address),
             .min_body_bytes_per_second = absl::GetFlag(FLAGS_http_min_body_bytes_per_second),
             .on_connection_cut = nullptr,
             .cors_origins = absl::GetFlag(FLAGS_http_cors_origins),
             .access_log = options.access_log,
             .metrics_token = absl::GetFlag(FLAGS_metrics_token),
             .alerts_json = nullptr,
             .estimates_text = nullptr};  // set once the collector runs (StartHttp)
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"estimate_refresh_seconds",
                                        absl::GetFlag(FLAGS_estimate_refresh_seconds)},
        {"max_estimate_metrics", absl::GetFlag(FLAGS_max_estimate_metrics)}}) {
    if (value < 0) return FlagError(absl::StrCat("--", name, " must be >= 0, but is ", value));
  }
  if (absl::GetFlag(FLAGS_estimate_window_seconds) <= 0) {
    return FlagError(absl::StrCat("--estimate_window_seconds must be > 0, but is ",
                                  absl::GetFlag(FLAGS_estimate_window_seconds)));
  }
  o->estimates.refresh = absl::Seconds(absl::GetFlag(FLAGS_estimate_refresh_seconds));
  o->estimates.window = absl::Seconds(absl::GetFlag(FLAGS_estimate_window_seconds));
  o->estimates.max_metrics = static_cast<int>(absl::GetFlag(FLAGS_max_estimate_metrics));
  o->token_reload_interval = absl::Seconds(absl::GetFlag(FLAGS_token_reload_seconds));
  o->memory_trim_interval = absl::Seconds(std::max(0, absl::GetFlag(FLAGS_memory_trim_seconds)));
  o->shutdown_grace = absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds));
  o->text_logs = absl::GetFlag(FLAGS_log_format) == "text";
  return absl::OkStatus();
}

// --alert_*: the rules, period and webhook. Errors: INVALID_ARGUMENT naming the flag.
absl::Status AlertsFromFlags(ServeOptions* o) {
  if (absl::GetFlag(FLAGS_alert_period_seconds) < 1) {
    return FlagError(absl::StrCat("--alert_period_seconds: must be >= 1, but is ",
                                  absl::GetFlag(FLAGS_alert_period_seconds)));
  }
  o->alert_period = absl::Seconds(absl::GetFlag(FLAGS_alert_period_seconds));
  o->alert_webhook_url = absl::GetFlag(FLAGS_alert_webhook_url);
  if (!o->alert_webhook_url.empty() && !absl::StartsWith(o->alert_webhook_url, "http://") &&
      !absl::StartsWith(o->alert_webhook_url, "https://")) {
    return FlagError(
        absl::StrCat("--alert_webhook_url: must start with http:// or https://, "
                     "but is \"",
                     o->alert_webhook_url, "\""));
  }
  if (const std::string rules = absl::GetFlag(FLAGS_alert_rules); !rules.empty()) {
    absl::StatusOr<std::vector<server::AlertRule>> loaded = server::LoadAlertRules(rules);
    if (!loaded.ok()) {
      return FlagError(absl::StrCat("--alert_rules: ", loaded.status().message()));
    }
    o->alert_rules = *std::move(loaded);
  }
  return absl::OkStatus();
}

// The flags into ServeOptions, in the order they are checked. Errors: INVALID_ARGUMENT with the
// message to log (a flag's value refused, or a TLS file that cannot be read).
absl::StatusOr<ServeOptions> ServeOptionsFromFlags() {
  ServeOptions o;
  for (absl::Status (*step)(ServeOptions*) :
       {StorageFromFlags, CollectorFromFlags, TlsFromFlags, HttpFromFlags, AlertsFromFlags}) {
    if (absl::Status s = step(&o); !s.ok()) return s;
  }
  return o;
}

// Tokens: on as soon as one was ever added (revoking the last one does not open the server).
// The authenticator always runs, so a token added while the server runs turns tokens on live
// (SQLite or PostgreSQL token table alike). Returns whether tokens are required now.
absl::StatusOr<bool> StartAuthenticator(std::shared_ptr<server::TokenStore> tokens,
                                        ServeOptions& options) {
  auto authenticator = server::Authenticator::Create([tokens] { return tokens->List(); },
                                                     deniable::SystemClock::Default(),
                                                     options.token_reload_interval);
  if (!authenticator.ok()) return authenticator.status();
  const bool auth = (*authenticator)->TokensRequired();
  options.server.authenticator = *std::move(authenticator);
  return auth;
}

// Without TLS or tokens the listeners stay on loopback addresses unless --insecure.
// Errors: FAILED_PRECONDITION naming the address and what is missing.
absl::Status CheckExposure(const ServeOptions& options, bool auth) {
  for (const std::string& address : {options.server.listen_address, options.http.listen_address}) {
    if ((!options.tls || !auth) && !IsLoopback(address) && !address.empty() && !options.insecure) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to serve ",
          !options.tls && !auth ? "plaintext and tokenless"
                                : (!options.tls ? "plaintext" : "tokenless"),
          " on the non-loopback address ", address,
          ": add tokens (deniable-server tokens add) and TLS (--tls_cert_file, --tls_key_file), "
          "or pass --insecure"));
    }
  }
  return absl::OkStatus();
}

// What runs until the stop signal, in the order it is stopped (HTTP first: its calls end before
// the core objects they use go away; then the collector, which closes the database after its
// last call).
struct Running {
  std::shared_ptr<prometheus::Registry> metrics;
  std::unique_ptr<server::CollectorServer> collector;
  std::unique_ptr<server::MemoryTrimmer> memory_trimmer;
  std::unique_ptr<server::ProcessMetrics> process_metrics;
  std::unique_ptr<server::http::JsonApi> json_api;
  std::unique_ptr<server::EstimateMetrics> estimates;  // /metrics' estimate series
  std::unique_ptr<server::http::HttpServer> http_server;
  std::unique_ptr<server::AlertMonitor> alerts;  // with --alert_rules; stopped first
};

// The alert monitor (docs/alerts.md) over the collector's queries, with --alert_rules.
void StartAlerts(const ServeOptions& options, Running& running) {
  if (options.alert_rules.empty()) return;
  server::CollectorCore* core = running.collector->core();
  server::AlertMonitor::WebhookFn webhook = nullptr;
  if (!options.alert_webhook_url.empty()) {
    webhook = [url = options.alert_webhook_url](const std::string& json) {
      if (absl::Status s = server::PostJson(url, json, absl::Seconds(10)); !s.ok()) {
        spdlog::warn("event=alert_webhook_failed reason=\"{}\"", std::string(s.message()));
      }
    };
  }
  running.alerts = std::make_unique<server::AlertMonitor>(
      options.alert_rules,
      [core](const deniable::v1::GetPrevalenceRequest& r) { return core->GetPrevalence(r); },
      running.metrics.get(), std::move(webhook));
  core->SetAlertSource([alerts = running.alerts.get()] { return alerts->StatesProto(); });
  running.alerts->Start(options.alert_period, deniable::SystemClock::Default());
  spdlog::info("event=alerts_started rules={} period_seconds={}", options.alert_rules.size(),
               absl::ToInt64Seconds(options.alert_period));
}

// Storage behind group commit and its metrics, then the gRPC collector, memory trimming and the
// process gauges. Errors: the collector's Start.
absl::Status StartCollector(server::Backend backend, const ServeOptions& options,
                            Running& running) {
  // Concurrent SubmitReports calls share transactions (and their fsync); MeteredStorage times
  // each group transaction for /metrics. On PostgreSQL one group per writing session commits
  // at once.
  running.metrics = std::make_shared<prometheus::Registry>();
  server::GroupCommitOptions group_options;
  group_options.committers = backend.traits.group_committers;
  auto group_commit = std::make_unique<server::GroupCommitStorage>(
      std::make_unique<server::MeteredStorage>(std::move(backend.storage), *running.metrics),
      group_options);
  server::GroupCommitStorage* committer = group_commit.get();
  server::ServerOptions server_options = options.server;
  server_options.metrics_registry = running.metrics;
  server_options.metric_cache_age = backend.traits.metric_cache_age;
  server_options.rate_limit.shared = backend.rate_buckets;
  auto collector = server::CollectorServer::Start(std::move(group_commit),
                                                  deniable::SystemClock::Default(), server_options);
  if (!collector.ok()) return collector.status();
  running.collector = *std::move(collector);
  running.memory_trimmer = std::make_unique<server::MemoryTrimmer>(options.memory_trim_interval);
  running.process_metrics = std::make_unique<server::ProcessMetrics>(
      *running.metrics, backend.traits.sqlite_path,
      [committer] { return committer->QueuedCalls(); }, DENIABLE_VERSION);
  return absl::OkStatus();
}

// The HTTP listener (JSON API, /metrics, dashboard, health) over the collector, when
// --http_listen is set. Errors: HttpServer::Start's.
absl::Status StartHttp(const ServeOptions& options, Running& running) {
  prometheus::Counter& http_connections_cut =
      prometheus::BuildCounter()
          .Name("deniable_http_connections_cut_total")
          .Help(
              "HTTP connections shut down for missing their header or request deadline "
              "(--http_header_timeout_seconds, --http_request_timeout_seconds): slow clients")
          .Register(*running.metrics)
          .Add({});
  if (options.http.listen_address.empty()) return absl::OkStatus();
  server::CollectorServer* collector = running.collector.get();
  running.json_api = std::make_unique<server::http::JsonApi>(collector->core());
  server::http::HttpOptions http = options.http;
  if (running.alerts != nullptr) {
    http.alerts_json = [alerts = running.alerts.get()] { return alerts->StatesJson(); };
  }
  http.on_connection_cut = [&http_connections_cut] { http_connections_cut.Increment(); };
  if (options.estimates.refresh > absl::ZeroDuration()) {
    server::CollectorCore* core = collector->core();
    running.estimates = std::make_unique<server::EstimateMetrics>(
        [core] { return core->ListMetrics(deniable::v1::ListMetricsRequest()); },
        [core](const deniable::v1::GetPrevalenceRequest& r) { return core->GetPrevalence(r); },
        deniable::SystemClock::Default(), options.estimates);
    running.estimates->Start();
    http.estimates_text = [estimates = running.estimates.get()] { return estimates->Text(); };
  }
  auto started = server::http::HttpServer::Start(
      http, running.json_api.get(),
      [process_metrics = running.process_metrics.get(), metrics = running.metrics, collector] {
        process_metrics->Update();
        // Every metric's series at 0 from its creation, also one another collector made.
        const absl::Status listed = collector->AddMetricSeries();
        if (!listed.ok())
          spdlog::debug("event=metrics_list_failed reason=\"{}\"", std::string(listed.message()));
        return prometheus::TextSerializer().Serialize(metrics->Collect());
      },
      [collector](absl::string_view service) { return collector->ServingStatus(service); });
  if (!started.ok()) return started.status();
  running.http_server = *std::move(started);
  return absl::OkStatus();
}

// The start line, and a loud warning when serving without TLS or without tokens.
void LogStart(const ServeOptions& options, const server::BackendTraits& traits, bool auth,
              const Running& running) {
  const bool tls = options.tls;
  const std::string& http_listen = options.http.listen_address;
  const char* mode = tls && auth ? "" : " INSECURE";
  spdlog::warn(
      "event=start listen={} port={} http_listen={} http_port={} db={} durability={} tls={} "
      "mtls={} auth={} rate_limit={} reflection={}{}",
      options.server.listen_address, running.collector->port(),
      http_listen.empty() ? "off" : http_listen,
      running.http_server != nullptr ? running.http_server->port() : 0, traits.db_for_log,
      options.durability, tls ? "on" : "off", !options.tls_client_ca_file.empty() ? "on" : "off",
      auth ? "tokens" : "off", options.server.rate_limit.reports_per_second,
      options.server.reflection ? "on" : "off", mode);
  if (tls && auth) return;
  // A banner in text logs; in JSON logs one record, without the lines of stars.
  const bool banner = options.text_logs;
  constexpr char kStars[] =
      "**************************************************************************";
  if (banner) spdlog::warn(kStars);
  spdlog::warn("{}INSECURE: {}{}{} -- for local development only.", banner ? "** " : "",
               tls ? "" : "plaintext (no TLS: reports and tokens travel in clear)",
               !tls && !auth ? "; " : "",
               auth ? ""
                    : "tokenless until a token is added (anyone who can connect may submit and "
                      "query)");
  if (banner) spdlog::warn(kStars);
}

// Serves until SIGTERM or SIGINT, drains (HTTP first, then gRPC within the grace period) and
// stops everything. Returns the exit code.
int ServeUntilStopped(const sigset_t& stop_signals, absl::Duration grace, Running& running) {
  std::thread signal_waiter([&running, &stop_signals, grace] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    spdlog::info("event=draining signal={} grace_seconds={}", signal, absl::ToInt64Seconds(grace));
    // HTTP first: its calls end before the core objects they use go away.
    if (running.http_server != nullptr) running.http_server->Stop();
    if (running.estimates != nullptr) running.estimates->Stop();
    running.collector->Shutdown(grace);
  });
  running.collector->Wait();
  signal_waiter.join();
  running.collector->core()->SetAlertSource(nullptr);  // ListAlerts reads the monitor
  running.alerts.reset();                              // its queries use the collector
  running.http_server.reset();
  running.collector.reset();  // closes the database after the last call has finished
  spdlog::info("event=stopped");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  if (const std::optional<int> done = ParseCommandLine(argc, argv, &args)) return *done;
  if (args.size() > 1) return RunCommand(args);
  const sigset_t stop_signals = BlockStopSignals();
  absl::StatusOr<ServeOptions> options = ServeOptionsFromFlags();
  if (!options.ok()) {
    spdlog::error("{}", std::string(options.status().message()));
    return 2;
  }
  absl::StatusOr<server::Backend> backend = server::OpenBackend(options->db, options->backend);
  if (!backend.ok()) {
    spdlog::error("{}", std::string(backend.status().message()));
    return 1;
  }
  const server::BackendTraits traits = backend->traits;
  const absl::StatusOr<bool> auth = StartAuthenticator(backend->tokens, *options);
  if (!auth.ok()) {
    spdlog::error("cannot load tokens: {}", auth.status().ToString());
    return 1;
  }
  if (absl::Status exposure = CheckExposure(*options, *auth); !exposure.ok()) {
    spdlog::error("{}", std::string(exposure.message()));
    return 2;
  }
  Running running;
  if (absl::Status started = StartCollector(*std::move(backend), *options, running);
      !started.ok()) {
    spdlog::error("cannot start: {}", started.ToString());
    return 1;
  }
  StartAlerts(*options, running);
  if (absl::Status started = StartHttp(*options, running); !started.ok()) {
    spdlog::error("cannot start the HTTP listener: {}", started.ToString());
    return 1;
  }
  LogStart(*options, traits, *auth, running);
  return ServeUntilStopped(stop_signals, options->shutdown_grace, running);
}
