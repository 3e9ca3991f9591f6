#include "server/service/collector_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>
#include <grpcpp/resource_quota.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deniable/common/status_macros.h"
#include "google/protobuf/descriptor.h"
#include "server/core/echo.h"
#include "server/listen_probe.h"
#include "server/service/call_metrics.h"

namespace deniable::server {
namespace {

class WithoutReflection : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    std::erase_if(*plugins, [](const std::unique_ptr<grpc::ServerBuilderPlugin>& plugin) {
      return plugin->name() == "proto_server_reflection";
    });
  }
};

}  // namespace

CollectorServer::CollectorServer(std::unique_ptr<Storage> storage, const Clock* clock,
                                 const ServerOptions& options)
    : core_(std::move(storage), clock,
            {.ingest = options.ingest,
             .query = options.query,
             .authenticator = options.authenticator,
             .rate_limit = options.rate_limit,
             .metric_cache_age = options.metric_cache_age,
             .heavy_hitters_salt = options.heavy_hitters_salt,
             .metrics_registry = options.metrics_registry}),
      report_service_(&core_, options.max_concurrent_streams, options.max_stream_buffered_rows),
      query_service_(&core_),
      admin_service_(&core_) {}

CollectorServer::~CollectorServer() {
  Shutdown(absl::ZeroDuration());
  {
    absl::MutexLock lock(&health_mu_);
    stopping_ = true;
  }
  if (health_watcher_.joinable()) health_watcher_.join();
  if (retention_thread_.joinable()) retention_thread_.join();
}

void CollectorServer::RetentionLoop(absl::Duration interval) {
  absl::MutexLock lock(&health_mu_);
  do {
    health_mu_.Unlock();
    (void)ApplyRetention();  // logged; the next run tries again
    health_mu_.Lock();
  } while (!stopping_ && !health_mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval));
}

void CollectorServer::WatchHealth(absl::Duration interval) {
  absl::MutexLock lock(&health_mu_);
  bool healthy = true;
  while (!health_mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval)) {
    health_mu_.Unlock();
    const absl::Status status = core_.storage()->Health();
    health_mu_.Lock();
    if (stopping_) break;
    if (status.ok() == healthy) continue;
    healthy = status.ok();
    unhealthy_reason_ = healthy ? "" : std::string(status.message());
    if (healthy) {
      spdlog::info("event=storage_healthy");
    } else {
      spdlog::error("event=storage_unhealthy reason=\"{}\"", std::string(status.message()));
    }
    server_->GetHealthCheckService()->SetServingStatus(healthy);
  }
}

absl::StatusOr<std::unique_ptr<CollectorServer>> CollectorServer::Start(
    std::unique_ptr<Storage> storage, const Clock* clock, const ServerOptions& options) {
  std::unique_ptr<CollectorServer> server(new CollectorServer(std::move(storage), clock, options));
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  if (options.reflection) {
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  } else {
    // Linking grpc++_reflection registers its plugin for every builder at static-init time;
    // without --reflection the plugin is removed from this builder.
    builder.SetOption(std::make_unique<WithoutReflection>());
  }
  if (!options.listen_address.empty()) {
    builder.AddListeningPort(
        options.listen_address,
        options.credentials != nullptr ? options.credentials : grpc::InsecureServerCredentials(),
        &server->port_);
  }
  // One collector per port: without this, gRPC's SO_REUSEPORT lets a second collector (a
  // forgotten demo's) share the port, and clients land on either at random.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  int idle_threads = options.max_idle_threads;
  if (options.max_threads > 0 && idle_threads > options.max_threads) {
    idle_threads = options.max_threads;
  }
  if (idle_threads > 0) {
    builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, idle_threads);
  }
  if (options.max_threads > 0 || options.max_grpc_memory_bytes > 0) {
    grpc::ResourceQuota quota("deniable-server");
    if (options.max_threads > 0) quota.SetMaxThreads(options.max_threads);
    if (options.max_grpc_memory_bytes > 0) {
      quota.Resize(static_cast<size_t>(options.max_grpc_memory_bytes));
    }
    builder.SetResourceQuota(quota);
  }
  if (options.max_streams_per_connection > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.max_streams_per_connection);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(
      std::make_unique<CallMetricsFactory>(server->core_.counters(), options.access_log));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.RegisterService(&server->report_service_);
  builder.RegisterService(&server->query_service_);
  builder.RegisterService(&server->admin_service_);
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || (!options.listen_address.empty() && server->port_ == 0)) {
    const std::string reason = BindFailureReason(options.listen_address);
    return absl::UnavailableError(absl::StrCat("listen_address: cannot listen on \"",
                                               options.listen_address, "\"",
                                               reason.empty() ? "" : ": ", reason));
  }
  // Every method of the served services shows in /metrics (at 0) before its first call.
  for (const char* service : kHealthServices) {
    const google::protobuf::ServiceDescriptor* descriptor =
        google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(service);
    for (int i = 0; descriptor != nullptr && i < descriptor->method_count(); ++i) {
      server->core_.AddMethod(Transport::kGrpc,
                              absl::StrCat(service, "/", descriptor->method(i)->name()));
    }
  }
  (void)server->AddMetricSeries();  // a storage error here shows at the first scrape's retry
  grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService();
  for (const char* service : kHealthServices) health->SetServingStatus(service, true);
  health->SetServingStatus(true);  // "" and every service above
  if (options.retention_interval > absl::ZeroDuration()) {
    CollectorServer* raw = server.get();
    const absl::Duration interval = options.retention_interval;
    server->retention_thread_ = std::thread([raw, interval] { raw->RetentionLoop(interval); });
  }
  if (options.health_check_interval > absl::ZeroDuration()) {
    CollectorServer* raw = server.get();
    const absl::Duration interval = options.health_check_interval;
    server->health_watcher_ = std::thread([raw, interval] { raw->WatchHealth(interval); });
  }
  return server;
}

absl::Status CollectorServer::AddMetricSeries() { return core_.AddMetricSeries(); }

std::shared_ptr<grpc::Channel> CollectorServer::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

void CollectorServer::Shutdown(absl::Duration grace) {
  if (server_ == nullptr) return;
  {
    absl::MutexLock lock(&health_mu_);
    stopping_ = true;  // the watcher never turns the status back to SERVING
    server_->GetHealthCheckService()->SetServingStatus(false);
  }
  // Saturating (InfiniteDuration: wait for every call; now() + milliseconds(INT64_MAX) overflowed).
  server_->Shutdown(absl::ToChronoTime(absl::Now() + grace));
}

absl::Status CollectorServer::ServingStatus(absl::string_view service) {
  if (!service.empty() && std::find(std::begin(kHealthServices), std::end(kHealthServices),
                                    service) == std::end(kHealthServices)) {
    return absl::NotFoundError(absl::StrCat("service: no service ", EchoValue(service),
                                            "; the health service knows \"\", ",
                                            absl::StrJoin(kHealthServices, ", ")));
  }
  absl::MutexLock lock(&health_mu_);
  if (stopping_) return absl::UnavailableError("health: NOT_SERVING (the server is draining)");
  if (!unhealthy_reason_.empty()) {
    return absl::UnavailableError(absl::StrCat("health: NOT_SERVING (", unhealthy_reason_, ")"));
  }
  return absl::OkStatus();
}

void CollectorServer::Wait() {
  if (server_ != nullptr) server_->Wait();
}

}  // namespace deniable::server
