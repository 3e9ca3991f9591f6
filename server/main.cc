// deniable-server: the collector. Flags fall back to DENIABLE_* environment variables.
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "deniable/common/clock.h"
#include "server/service/collector_server.h"
#include "server/storage/group_commit_storage.h"
#include "server/storage/sqlite_storage.h"

namespace {

std::string EnvOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

}  // namespace

ABSL_FLAG(std::string, listen, EnvOr("DENIABLE_LISTEN", "127.0.0.1:50051"),
          "host:port to listen on (env DENIABLE_LISTEN)");
ABSL_FLAG(std::string, db, EnvOr("DENIABLE_DB", "deniable.db"),
          "SQLite database file, created if missing (env DENIABLE_DB)");
ABSL_FLAG(std::string, durability, EnvOr("DENIABLE_DURABILITY", "full"),
          "full: synchronous=FULL, an acknowledged batch survives power loss; normal: survives a "
          "crash of the server, not power loss (env DENIABLE_DURABILITY)");
ABSL_FLAG(int, max_batch_reports, 10000, "largest number of reports in one SubmitReports call");
ABSL_FLAG(int, max_message_bytes, 2 * 1024 * 1024, "largest request accepted, in bytes");
ABSL_FLAG(int, max_future_skew_seconds, 3600,
          "reports whose event time is further than this in the future are rejected");
ABSL_FLAG(int, shutdown_grace_seconds, 10,
          "on SIGTERM/SIGINT, time in-flight calls get to finish before they are cancelled");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "The Deniable collector: stores randomized-response reports in SQLite and serves "
      "debiased prevalence over gRPC.\n  deniable-server --listen=127.0.0.1:50051 "
      "--db=deniable.db");
  absl::ParseCommandLine(argc, argv);

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
  auto storage = deniable::server::SqliteStorage::Open(sqlite);
  if (!storage.ok()) {
    spdlog::error("cannot open the database: {}", storage.status().ToString());
    return 1;
  }

  deniable::server::ServerOptions options;
  options.listen_address = absl::GetFlag(FLAGS_listen);
  options.ingest.max_batch_reports = absl::GetFlag(FLAGS_max_batch_reports);
  options.ingest.max_future_skew = absl::Seconds(absl::GetFlag(FLAGS_max_future_skew_seconds));
  options.max_receive_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  // Concurrent SubmitReports calls share transactions (and their fsync).
  auto server = deniable::server::CollectorServer::Start(
      std::make_unique<deniable::server::GroupCommitStorage>(*std::move(storage)),
      deniable::SystemClock::Default(), options);
  if (!server.ok()) {
    spdlog::error("cannot start: {}", server.status().ToString());
    return 1;
  }
  spdlog::warn(
      "event=start listen={} port={} db={} durability={} tls=off auth=off "
      "(plaintext, tokenless: for local development only)",
      options.listen_address, (*server)->port(), sqlite.path, durability);

  std::thread signal_waiter([&server, &stop_signals] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    spdlog::info("event=draining signal={} grace_seconds={}", signal,
                 absl::GetFlag(FLAGS_shutdown_grace_seconds));
    (*server)->Shutdown(absl::Seconds(absl::GetFlag(FLAGS_shutdown_grace_seconds)));
  });
  (*server)->Wait();
  signal_waiter.join();
  server->reset();  // closes the database after the last call has finished
  spdlog::info("event=stopped");
  return 0;
}
