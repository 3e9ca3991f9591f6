// One device of the soak (tests/soak/run_soak.py): reports COUNT answers, one every INTERVAL_MS,
// through a Reporter over a SQLite device store and a TLS channel whose bearer token is read
// from TOKEN_FILE every 100 ms (so the soak can rotate it), printing each accepted report's id
// (hex) on its own line after Report() returned OK. Then it flushes until the queue is empty or
// DRAIN_SECONDS passed and prints one line of figures:
//   made=N pending=P acknowledged=A duplicates=D dropped_rejected=R dropped_queue_full=Q
//   dropped_too_old=O send_attempts=S failed_attempts=F
// Exit 0 when the queue drained.
//   soak_device TARGET CA_FILE TOKEN_FILE STORE METRIC COUNT INTERVAL_MS DRAIN_SECONDS
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "deniable/client/grpc_transport.h"
#include "deniable/client/reporter.h"

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

// The token file's content, re-read every 100 ms on a thread of its own, so that the
// credentials plugin below neither reads files nor waits.
class TokenFile {
 public:
  explicit TokenFile(std::string path) : path_(std::move(path)), token_(Read()) {
    thread_ = std::thread([this] {
      while (true) {
        std::string token = Read();
        absl::MutexLock lock(&mu_);
        token_ = std::move(token);
        if (mu_.AwaitWithTimeout(absl::Condition(&stop_), absl::Milliseconds(100))) return;
      }
    });
  }
  ~TokenFile() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  std::string Get() const {
    absl::MutexLock lock(&mu_);
    return token_;
  }

 private:
  std::string Read() const { return std::string(absl::StripAsciiWhitespace(ReadFile(path_))); }

  const std::string path_;
  mutable absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Sends "authorization: Bearer <token>" with the token file's content of the last 100 ms.
// Non-blocking (issue 25): gRPC calls it inline and never parks the call on a plugin thread. A
// blocking plugin ran on gRPC's thread pool while the SDK's deadline could cancel the call,
// and one soak device crashed in grpc's LoadBalancedCall destructor under
// grpc_plugin_credentials::PendingRequest::RequestMetadataReady.
class TokenFilePlugin : public grpc::MetadataCredentialsPlugin {
 public:
  explicit TokenFilePlugin(std::shared_ptr<const TokenFile> token) : token_(std::move(token)) {}
  bool IsBlocking() const override { return false; }
  grpc::Status GetMetadata(grpc::string_ref, grpc::string_ref, const grpc::AuthContext&,
                           std::multimap<grpc::string, grpc::string>* metadata) override {
    const std::string token = token_->Get();
    if (!token.empty()) metadata->emplace("authorization", "Bearer " + token);
    return grpc::Status::OK;
  }

 private:
  const std::shared_ptr<const TokenFile> token_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 9) {
    std::fprintf(stderr,
                 "usage: soak_device TARGET CA_FILE TOKEN_FILE STORE METRIC COUNT INTERVAL_MS "
                 "DRAIN_SECONDS\n");
    return 2;
  }
  const std::string target = argv[1], ca_file = argv[2], token_file = argv[3], path = argv[4],
                    metric = argv[5];
  const long count = std::strtol(argv[6], nullptr, 10);
  const long interval_ms = std::strtol(argv[7], nullptr, 10);
  const long drain_seconds = std::strtol(argv[8], nullptr, 10);

  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFile(ca_file);
  auto credentials = grpc::CompositeChannelCredentials(
      grpc::SslCredentials(ssl),
      grpc::MetadataCredentialsFromPlugin(
          std::make_unique<TokenFilePlugin>(std::make_shared<const TokenFile>(token_file))));
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 200);
  auto channel = grpc::CreateCustomChannel(target, credentials, args);

  auto store = deniable::client::OpenSqliteDeviceStore({.path = path});
  if (!store.ok()) {
    std::fprintf(stderr, "store: %s\n", store.status().ToString().c_str());
    return 1;
  }
  deniable::client::ReporterOptions options;
  options.send_interval = absl::Milliseconds(20);
  options.max_batch_reports = 50;
  options.one_report_per_period = false;  // each Report() stands for a device
  options.rpc_timeout = absl::Seconds(2);
  options.first_design_wait = absl::Seconds(2);
  options.backoff_policy = std::make_shared<deniable::client::ExponentialBackoffPolicy>(
      absl::Milliseconds(20), absl::Milliseconds(500));
  options.retry_policy =
      std::make_shared<deniable::client::LimitedTimeRetryPolicy>(absl::Seconds(drain_seconds));
  options.log = [](deniable::client::LogLevel level, absl::string_view message) {
    if (level == deniable::client::LogLevel::kError) {
      std::fprintf(stderr, "%s\n", std::string(message).c_str());
    }
  };
  auto reporter = deniable::client::Reporter::Open(deniable::client::MakeGrpcTransport(channel),
                                                   *std::move(store), options);
  if (!reporter.ok()) {
    std::fprintf(stderr, "reporter: %s\n", reporter.status().ToString().c_str());
    return 1;
  }
  long made = 0;
  for (long i = 0; i < count; ++i) {
    std::string id;
    absl::Status s = (*reporter)->Report(metric, i % 3 == 0, &id);
    if (s.ok()) {
      ++made;
      std::printf("%s\n", absl::BytesToHexString(id).c_str());
      std::fflush(stdout);
    } else {  // only the first design fetch may fail (server down): try again later
      std::fprintf(stderr, "report: %s\n", s.ToString().c_str());
    }
    absl::SleepFor(absl::Milliseconds(interval_ms));
  }
  const absl::Time end = absl::Now() + absl::Seconds(drain_seconds);
  absl::Status flushed;
  while (absl::Now() < end) {
    flushed = (*reporter)->Flush(end - absl::Now());
    if ((*reporter)->pending() == 0) break;
  }
  absl::StatusOr<deniable::client::DeliveryStats> stats = (*reporter)->Stats();
  if (!stats.ok()) return 1;
  const auto& c = stats->counters;
  std::printf(
      "made=%ld pending=%lld acknowledged=%lld duplicates=%lld dropped_rejected=%lld "
      "dropped_queue_full=%lld dropped_too_old=%lld send_attempts=%lld failed_attempts=%lld\n",
      made, static_cast<long long>(stats->queued), static_cast<long long>(c.acknowledged),
      static_cast<long long>(c.duplicates), static_cast<long long>(c.dropped_rejected),
      static_cast<long long>(c.dropped_queue_full), static_cast<long long>(c.dropped_too_old),
      static_cast<long long>(stats->send_attempts), static_cast<long long>(stats->failed_attempts));
  if (stats->queued != 0) std::fprintf(stderr, "flush: %s\n", flushed.ToString().c_str());
  return stats->queued == 0 ? 0 : 1;
}
