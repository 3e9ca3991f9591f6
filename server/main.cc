// deniable-server: the collector. Flags fall back to DENIABLE_* environment variables.
//
//   deniable-server [flags]                               serve
//   deniable-server tokens add --role=reporter|analyst [--label=TEXT] --db=FILE
//   deniable-server tokens list --db=FILE
//   deniable-server tokens revoke --id=N --db=FILE
//
//   deniable-server migrate --from=FILE.db --to=postgresql://...   SQLite -> PostgreSQL
//   deniable-server backup --db=FILE.db --out=COPY.db   online backup while a server runs on FILE
//
// --db is a SQLite file, or a PostgreSQL URI ("postgresql://user@host/dbname": several
// collectors on one database, docs/deploy.md); the tokens subcommands take either.
//
// Access (docs/security.md): bearer tokens are on as soon as the database holds a token (even a
// revoked one); TLS is on with --tls_cert_file and --tls_key_file. Without TLS or without tokens
// the server listens only on a loopback address unless --insecure is given, and says so loudly.
#include <prometheus/counter.h>
#include <prometheus/text_serializer.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
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
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "deniable/common/clock.h"
#include "server/auth/authenticator.h"
#include "server/auth/postgres_rate_buckets.h"
#include "server/auth/postgres_token_store.h"
#include "server/auth/token_store.h"
#include "server/env_flags.h"
#include "server/http/http_server.h"
#include "server/http/json_api.h"
#include "server/metrics/memory_trim.h"
#include "server/metrics/metered_storage.h"
#include "server/metrics/process_metrics.h"
#include "server/server_logging.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/postgres_storage.h"
#include "server/storage/sqlite_backup.h"
#include "server/storage/sqlite_storage.h"
#include "server/storage/sqlite_to_postgres.h"

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
ABSL_FLAG(bool, sqlite_bound_move_wal, false,
          "SQLite: size the transactions that move a metric-hour's reports so the WAL stays "
          "below 64 MiB while they run, at about 3x slower ingestion of a hot hour past "
          "--max_recent_reports (docs/performance.md, 'The WAL and the hot hour')");
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
          "HTTP listener: connections open at once (one thread each); further ones wait in the "
          "kernel's backlog");
ABSL_FLAG(int, http_max_connections_per_address, 128,
          "HTTP listener: connections open at once from one client address; further ones are "
          "closed at once");
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
ABSL_FLAG(std::string, from, "", "migrate: the SQLite database file to copy (no collector on it)");
ABSL_FLAG(std::string, to, "", "migrate: the PostgreSQL URI to copy into");
ABSL_FLAG(std::string, out, "",
          "backup: the file to write (must not exist); the copy is verified before it appears");

namespace {

using deniable::server::IsPostgresUri;
using deniable::server::PostgresTokenStore;
using deniable::server::Role;
using deniable::server::TokenStore;

// The tokens subcommands on a TokenStore or a PostgresTokenStore (same methods).
template <typename Store>
int RunTokensOn(const std::vector<char*>& args,
                const absl::StatusOr<std::unique_ptr<Store>>& store) {
  const std::string command = args.size() > 2 ? args[2] : "";
  if (!store.ok()) {
    std::fprintf(stderr, "error: %s\n", store.status().ToString().c_str());
    return 1;
  }
  if (command == "add") {
    auto role = deniable::server::ParseRole(absl::GetFlag(FLAGS_role));
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
  std::fprintf(stderr, "usage: deniable-server tokens add|list|revoke --db=FILE|URI ...\n");
  return 2;
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

int RunTokens(const std::vector<char*>& args) {
  const std::string db = absl::GetFlag(FLAGS_db);
  if (IsPostgresUri(db)) return RunTokensOn(args, PostgresTokenStore::Open(db));
  return RunTokensOn(args, TokenStore::Open(db));
}

// migrate: SQLite -> PostgreSQL with progress on stderr; 0 when the counts verify.
int RunMigrate() {
  const std::string from = absl::GetFlag(FLAGS_from);
  const std::string to = absl::GetFlag(FLAGS_to);
  if (from.empty() || !IsPostgresUri(to)) {
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
  if (IsPostgresUri(db)) {
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
      "backup %s: verified (integrity_check ok, schema version %d), %lld pages, %lld bytes, "
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

// Lists the tokens of either store (the authenticator reloads through it).
using TokenLister = std::function<absl::StatusOr<std::vector<deniable::server::TokenRecord>>()>;

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

bool IsLoopback(const std::string& address) {
  return absl::StartsWith(address, "127.") || absl::StartsWith(address, "[::1]") ||
         absl::StartsWith(address, "localhost:") || absl::StartsWith(address, "unix:");
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "The Deniable collector: stores randomized-response reports in SQLite and serves "
      "debiased prevalence over gRPC.\n  deniable-server --listen=127.0.0.1:50051 "
      "--db=deniable.db\n  deniable-server tokens add --role=reporter|analyst --db=deniable.db"
      "\n  deniable-server tokens list|revoke --db=deniable.db [--id=N]"
      "\n  deniable-server backup --db=deniable.db --out=backup.db");
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
  if (absl::Status env = deniable::server::ApplyEnvironmentToFlags("server/main.cc"); !env.ok()) {
    spdlog::error("{}", std::string(env.message()));
    return 2;
  }
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (absl::Status logging = deniable::server::ConfigureLogging(absl::GetFlag(FLAGS_log_level),
                                                                absl::GetFlag(FLAGS_log_format));
      !logging.ok()) {
    spdlog::error("{}", std::string(logging.message()));
    return 2;
  }
  // Debian's Abseil checks every lock for deadlock cycles (a debug aid costing a graph update
  // per lock on the ingestion path); the server's lock order is fixed, so skip the check.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (args.size() > 1 && std::string(args[1]) == "tokens") return RunTokens(args);
  if (args.size() > 1 && std::string(args[1]) == "migrate") return RunMigrate();
  if (args.size() > 1 && std::string(args[1]) == "backup") return RunBackup();
  if (args.size() > 1) {
    spdlog::error("unknown command \"{}\" (see --help)", args[1]);
    return 2;
  }

  // Block the stop signals in every thread; one thread waits for them below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  deniable::server::SqliteOptions sqlite;
  sqlite.path = absl::GetFlag(FLAGS_db);
  const std::string durability = absl::GetFlag(FLAGS_durability);
  if (durability == "full") {
    sqlite.durability = deniable::server::Durability::kFull;
  } else if (durability == "normal") {
    sqlite.durability = deniable::server::Durability::kNormal;
  } else {
    spdlog::error("--durability must be full or normal, but is \"{}\"", durability);
    return 2;
  }
  if (absl::GetFlag(FLAGS_sqlite_write_cache_mib) < 1 ||
      absl::GetFlag(FLAGS_max_recent_reports) < 1) {
    spdlog::error(
        "--sqlite_write_cache_mib and --max_recent_reports must be >= 1, but are {} and {}",
        absl::GetFlag(FLAGS_sqlite_write_cache_mib), absl::GetFlag(FLAGS_max_recent_reports));
    return 2;
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
      spdlog::error("--{} must be >= 0 (0: no cap), but is {}", name, value);
      return 2;
    }
  }

  deniable::server::ServerOptions options;
  options.listen_address = absl::GetFlag(FLAGS_listen);
  options.ingest.max_batch_reports = absl::GetFlag(FLAGS_max_batch_reports);
  options.ingest.max_future_skew = absl::Seconds(absl::GetFlag(FLAGS_max_future_skew_seconds));
  options.ingest.max_report_age = absl::Seconds(absl::GetFlag(FLAGS_max_report_age_seconds));
  if (const int64_t import_age = absl::GetFlag(FLAGS_max_import_age_seconds); import_age < 0) {
    spdlog::error("--max_import_age_seconds must be >= 0 (0: imports off), but is {}", import_age);
    return 2;
  } else if (import_age > 0) {
    options.ingest.max_import_age = absl::Seconds(import_age);
    spdlog::info("event=imports_enabled max_import_age_seconds={} (analyst tokens only)",
                 import_age);
  }
  if (absl::GetFlag(FLAGS_retention_interval_seconds) < 0) {
    spdlog::error("--retention_interval_seconds must be >= 0 (0: never), but is {}",
                  absl::GetFlag(FLAGS_retention_interval_seconds));
    return 2;
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
      spdlog::error("--{} must be >= 0 (0: no limit), but is {}", name, value);
      return 2;
    }
  }
  options.max_threads = absl::GetFlag(FLAGS_max_threads);
  options.max_grpc_memory_bytes =
      static_cast<int64_t>(absl::GetFlag(FLAGS_max_grpc_memory_mib)) * 1024 * 1024;
  options.max_concurrent_streams = absl::GetFlag(FLAGS_max_concurrent_streams);
  options.max_streams_per_connection = absl::GetFlag(FLAGS_max_streams_per_connection);
  if (deniable::server::IsPostgresUri(absl::GetFlag(FLAGS_db))) {
    options.metric_cache_age = absl::Seconds(absl::GetFlag(FLAGS_metric_cache_seconds));
  }

  // TLS.
  const std::string cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  const std::string key_file = absl::GetFlag(FLAGS_tls_key_file);
  const std::string ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  const bool tls = !cert_file.empty() || !key_file.empty();
  if (tls) {
    grpc::SslServerCredentialsOptions ssl;
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    if (!ReadFile(cert_file, &pair.cert_chain) || !ReadFile(key_file, &pair.private_key)) {
      spdlog::error("--tls_cert_file and --tls_key_file must both name readable PEM files");
      return 2;
    }
    ssl.pem_key_cert_pairs.push_back(std::move(pair));
    if (!ca_file.empty()) {
      if (!ReadFile(ca_file, &ssl.pem_root_certs)) {
        spdlog::error("--tls_client_ca_file: cannot read \"{}\"", ca_file);
        return 2;
      }
      ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
    }
    options.credentials = grpc::SslServerCredentials(ssl);
  } else if (!ca_file.empty()) {
    spdlog::error("--tls_client_ca_file needs --tls_cert_file and --tls_key_file");
    return 2;
  }

  // SQLite file or PostgreSQL URI; a URI is logged without its password.
  const bool postgres = IsPostgresUri(sqlite.path);
  const std::string db_for_log =
      postgres ? deniable::server::RedactedConninfo(sqlite.path) : sqlite.path;
  std::unique_ptr<deniable::server::Storage> storage;
  TokenLister list_tokens;
  if (postgres) {
    auto opened =
        deniable::server::PostgresStorage::Open({.uri = sqlite.path,
                                                 .max_label_values = sqlite.max_label_values,
                                                 .max_label_keys = sqlite.max_label_keys});
    if (!opened.ok()) {
      spdlog::error("cannot open the database {}: {}", db_for_log, opened.status().ToString());
      return 1;
    }
    spdlog::info("event=postgres db={} shard={}", db_for_log, (*opened)->shard());
    storage = *std::move(opened);
    auto token_store = PostgresTokenStore::Open(sqlite.path);
    if (!token_store.ok()) {
      spdlog::error("cannot open the token table: {}", token_store.status().ToString());
      return 1;
    }
    std::shared_ptr<PostgresTokenStore> tokens = *std::move(token_store);
    list_tokens = [tokens] { return tokens->List(); };
    if (options.rate_limit.reports_per_second > 0) {
      // A token's rate limit holds over all collectors on the database together.
      auto buckets = deniable::server::PostgresRateBuckets::Open(sqlite.path);
      if (!buckets.ok()) {
        spdlog::error("cannot open the rate-limit table: {}", buckets.status().ToString());
        return 1;
      }
      options.rate_limit.shared = *std::move(buckets);
    }
  } else {
    auto opened = deniable::server::SqliteStorage::Open(sqlite);
    if (!opened.ok()) {
      spdlog::error("cannot open the database: {}", opened.status().ToString());
      return 1;
    }
    storage = *std::move(opened);
    auto token_store = TokenStore::Open(sqlite.path);
    if (!token_store.ok()) {
      spdlog::error("cannot open the token table: {}", token_store.status().ToString());
      return 1;
    }
    std::shared_ptr<TokenStore> tokens = *std::move(token_store);
    list_tokens = [tokens] { return tokens->List(); };
  }

  // Tokens: on as soon as one was ever added (revoking the last one does not open the server).
  // The authenticator always runs, so a token added while the server runs turns tokens on live
  // (SQLite or PostgreSQL token table alike).
  auto authenticator = deniable::server::Authenticator::Create(
      list_tokens, deniable::SystemClock::Default(),
      absl::Seconds(absl::GetFlag(FLAGS_token_reload_seconds)));
  if (!authenticator.ok()) {
    spdlog::error("cannot load tokens: {}", authenticator.status().ToString());
    return 1;
  }
  const bool auth = (*authenticator)->TokensRequired();
  options.authenticator = *std::move(authenticator);
  const std::string http_listen = absl::GetFlag(FLAGS_http_listen);
  for (const std::string& address : {options.listen_address, http_listen}) {
    if ((!tls || !auth) && !IsLoopback(address) && !address.empty() &&
        !absl::GetFlag(FLAGS_insecure)) {
      spdlog::error(
          "refusing to serve {} on the non-loopback address {}: add tokens (deniable-server "
          "tokens add) and TLS (--tls_cert_file, --tls_key_file), or pass --insecure",
          !tls && !auth ? "plaintext and tokenless" : (!tls ? "plaintext" : "tokenless"), address);
      return 2;
    }
  }

  // Concurrent SubmitReports calls share transactions (and their fsync); MeteredStorage times
  // each group transaction for /metrics.
  auto metrics = std::make_shared<prometheus::Registry>();
  // On PostgreSQL one group per writing session commits at once.
  deniable::server::GroupCommitOptions group_options;
  if (postgres) group_options.committers = deniable::server::PostgresStorage::kWriteConnections;
  auto group_commit = std::make_unique<deniable::server::GroupCommitStorage>(
      std::make_unique<deniable::server::MeteredStorage>(std::move(storage), *metrics),
      group_options);
  deniable::server::GroupCommitStorage* committer = group_commit.get();
  options.metrics_registry = metrics;
  auto server = deniable::server::CollectorServer::Start(std::move(group_commit),
                                                         deniable::SystemClock::Default(), options);
  if (!server.ok()) {
    spdlog::error("cannot start: {}", server.status().ToString());
    return 1;
  }
  const deniable::server::MemoryTrimmer memory_trimmer(
      absl::Seconds(std::max(0, absl::GetFlag(FLAGS_memory_trim_seconds))));
  deniable::server::ProcessMetrics process_metrics(
      *metrics, postgres ? "" : sqlite.path, [committer] { return committer->QueuedCalls(); },
      DENIABLE_VERSION);
  prometheus::Counter& http_connections_cut =
      prometheus::BuildCounter()
          .Name("deniable_http_connections_cut_total")
          .Help(
              "HTTP connections shut down for missing their header or request deadline "
              "(--http_header_timeout_seconds, --http_request_timeout_seconds): slow clients")
          .Register(*metrics)
          .Add({});
  std::unique_ptr<deniable::server::http::JsonApi> json_api;
  std::unique_ptr<deniable::server::http::HttpServer> http_server;
  if (!http_listen.empty()) {
    json_api = std::make_unique<deniable::server::http::JsonApi>(
        deniable::server::http::JsonApiBackends{.registry = (*server)->registry(),
                                                .ingestor = (*server)->ingestor(),
                                                .prevalence = (*server)->prevalence(),
                                                .advisor = (*server)->advisor(),
                                                .policy = (*server)->policy(),
                                                .counters = (*server)->mutable_counters()});
    auto started = deniable::server::http::HttpServer::Start(
        {.listen_address = http_listen,
         .tls_cert_file = cert_file,
         .tls_key_file = key_file,
         .tls_client_ca_file = ca_file,
         .max_body_bytes = static_cast<size_t>(options.max_receive_message_bytes),
         .header_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_header_timeout_seconds)),
         .request_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_request_timeout_seconds)),
         .idle_timeout = absl::Seconds(absl::GetFlag(FLAGS_http_idle_timeout_seconds)),
         .max_connections = absl::GetFlag(FLAGS_http_max_connections),
         .max_connections_per_address = absl::GetFlag(FLAGS_http_max_connections_per_address),
         .on_connection_cut = [&http_connections_cut] { http_connections_cut.Increment(); },
         .cors_origins = absl::GetFlag(FLAGS_http_cors_origins),
         .access_log = options.access_log,
         .metrics_token = absl::GetFlag(FLAGS_metrics_token)},
        json_api.get(),
        [&process_metrics, metrics, collector = server->get()] {
          process_metrics.Update();
          // Every metric's series at 0 from its creation, also one another collector made.
          const absl::Status listed = collector->AddMetricSeries();
          if (!listed.ok())
            spdlog::debug("event=metrics_list_failed reason=\"{}\"", std::string(listed.message()));
          return prometheus::TextSerializer().Serialize(metrics->Collect());
        },
        [collector = server->get()](absl::string_view service) {
          return collector->ServingStatus(service);
        });
    if (!started.ok()) {
      spdlog::error("cannot start the HTTP listener: {}", started.status().ToString());
      return 1;
    }
    http_server = *std::move(started);
  }
  const char* mode = tls && auth ? "" : " INSECURE";
  spdlog::warn(
      "event=start listen={} port={} http_listen={} http_port={} db={} durability={} tls={} "
      "mtls={} auth={} rate_limit={} reflection={}{}",
      options.listen_address, (*server)->port(), http_listen.empty() ? "off" : http_listen,
      http_server != nullptr ? http_server->port() : 0, db_for_log, durability, tls ? "on" : "off",
      !ca_file.empty() ? "on" : "off", auth ? "tokens" : "off",
      options.rate_limit.reports_per_second, options.reflection ? "on" : "off", mode);
  if (!tls || !auth) {
    // A banner in text logs; in JSON logs one record, without the lines of stars.
    const bool banner = absl::GetFlag(FLAGS_log_format) == "text";
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

  std::thread signal_waiter([&server, &http_server, &stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    spdlog::info("event=draining signal={} grace_seconds={}", signal,
                 absl::GetFlag(FLAGS_shutdown_grace_seconds));
    // HTTP first: its calls end before the core objects they use go away.
    if (http_server != nullptr) http_server->Stop();
    (*server)->Shutdown(absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  });
  (*server)->Wait();
  signal_waiter.join();
  http_server.reset();
  server->reset();  // closes the database after the last call has finished
  spdlog::info("event=stopped");
  return 0;
}
