#include "bench/load.h"

#include <grpcpp/resource_quota.h>

#include <algorithm>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "deniable/common/clock.h"
#include "deniable/common/status_macros.h"
#include "server/core/metric_registry.h"
#include "server/service/collector_server.h"

namespace deniable::bench {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

v1::SubmitReportsRequest Template(const LoadSpec& spec) {
  v1::SubmitReportsRequest request;
  for (int i = 0; i < spec.reports_per_call; ++i) {
    v1::Report* r = request.add_reports();
    r->set_metric(spec.metric);
    r->set_design_version(1);
    r->set_bit(static_cast<uint32_t>(i % 3 == 0));
    r->set_report_id(std::string(16, '\0'));
    r->set_event_time_seconds(spec.event_time_seconds);
  }
  return request;
}

void FreshIds(v1::SubmitReportsRequest* request, IdSource* ids) {
  for (v1::Report& r : *request->mutable_reports()) ids->Next(r.mutable_report_id());
}

struct Tally {
  absl::Mutex mu;
  LoadResult result;
  void Add(const grpc::Status& status, const v1::SubmitReportsResponse& response) {
    absl::MutexLock lock(&mu);
    if (status.ok()) {
      ++result.calls;
      result.reports += response.accepted() + response.duplicates();
    } else {
      if (result.errors++ == 0) result.first_error = status.error_message();
    }
  }
};

}  // namespace

void IdSource::Next(std::string* out) {
  const uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
  const uint64_t words[2] = {time_ordered_ ? __builtin_bswap64(n) : SplitMix64(n),
                             SplitMix64(n ^ 0x5bd1e995ULL)};
  out->assign(reinterpret_cast<const char*>(words), sizeof(words));
}

std::vector<std::shared_ptr<grpc::Channel>> MakeChannels(const std::string& target, int n) {
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < n; ++i) {
    grpc::ChannelArguments args;
    args.SetInt("deniable.bench.channel", i);  // distinct arguments: a connection per channel
    args.SetMaxReceiveMessageSize(-1);
    channels.push_back(grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(), args));
  }
  return channels;
}

LoadResult RunUnary(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                    const LoadSpec& spec, IdSource* ids) {
  struct Slot {
    std::unique_ptr<v1::ReportService::Stub> stub;
    std::unique_ptr<grpc::ClientContext> context;
    v1::SubmitReportsRequest request;
    v1::SubmitReportsResponse response;
  };
  Tally tally;
  absl::Mutex mu;
  int active = spec.in_flight;
  std::vector<Slot*> free_slots;  // paced loads: slots whose call has returned
  const bool paced = spec.calls_per_second > 0;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + spec.duration;
  std::vector<Slot> slots(static_cast<size_t>(spec.in_flight));
  std::function<void(Slot*)> issue = [&](Slot* s) {
    FreshIds(&s->request, ids);
    s->context = std::make_unique<grpc::ClientContext>();
    s->response.Clear();
    s->stub->async()->SubmitReports(s->context.get(), &s->request, &s->response,
                                    [&, s](grpc::Status status) {
                                      tally.Add(status, s->response);
                                      if (!paced && absl::Now() < deadline) {
                                        issue(s);
                                        return;
                                      }
                                      absl::MutexLock lock(&mu);
                                      if (paced) {
                                        free_slots.push_back(s);
                                      } else {
                                        --active;
                                      }
                                    });
  };
  for (size_t i = 0; i < slots.size(); ++i) {
    slots[i].stub = v1::ReportService::NewStub(channels[i % channels.size()]);
    slots[i].request = Template(spec);
  }
  if (paced) {
    // Open loop: call k leaves at start + k / rate (or when a slot frees up, if all are busy).
    for (Slot& s : slots) free_slots.push_back(&s);
    const absl::Duration interval = absl::Seconds(1.0 / spec.calls_per_second);
    for (int64_t k = 0;; ++k) {
      const absl::Time at = start + interval * k;
      if (at >= deadline) break;
      absl::SleepFor(at - absl::Now());
      Slot* s = nullptr;
      {
        absl::MutexLock lock(&mu);
        mu.Await(absl::Condition(
            +[](std::vector<Slot*>* f) { return !f->empty(); }, &free_slots));
        s = free_slots.back();
        free_slots.pop_back();
      }
      issue(s);
    }
    std::pair<std::vector<Slot*>*, size_t> all_free(&free_slots, slots.size());
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](std::pair<std::vector<Slot*>*, size_t>* f) { return f->first->size() == f->second; },
        &all_free));
  } else {
    for (Slot& s : slots) issue(&s);
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](int* n) { return *n == 0; }, &active));
  }
  absl::MutexLock lock(&tally.mu);
  tally.result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return tally.result;
}

LoadResult RunStreaming(const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                        const LoadSpec& spec, IdSource* ids) {
  Tally tally;
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + spec.duration;
  std::vector<std::thread> threads;
  for (int t = 0; t < spec.in_flight; ++t) {
    threads.emplace_back([&, t] {
      auto stub = v1::ReportService::NewStub(channels[static_cast<size_t>(t) % channels.size()]);
      grpc::ClientContext context;
      v1::SubmitReportsResponse response;
      std::unique_ptr<grpc::ClientWriter<v1::SubmitReportsRequest>> writer =
          stub->StreamReports(&context, &response);
      v1::SubmitReportsRequest message = Template(spec);
      while (absl::Now() < deadline) {
        FreshIds(&message, ids);
        if (!writer->Write(message)) break;
      }
      writer->WritesDone();
      tally.Add(writer->Finish(), response);
    });
  }
  for (std::thread& t : threads) t.join();
  absl::MutexLock lock(&tally.mu);
  tally.result.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return tally.result;
}

grpc::ServerUnaryReactor* NullReportService::SubmitReports(grpc::CallbackServerContext* context,
                                                           const v1::SubmitReportsRequest* request,
                                                           v1::SubmitReportsResponse* response) {
  response->set_accepted(static_cast<uint32_t>(request->reports_size()));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

namespace {

// Reads every message, counts its reports, answers the total.
class NullStreamReactor final : public grpc::ServerReadReactor<v1::SubmitReportsRequest> {
 public:
  explicit NullStreamReactor(v1::SubmitReportsResponse* response) : response_(response) {
    StartRead(&message_);
  }
  void OnReadDone(bool ok) override {
    if (ok) {
      n_ += static_cast<uint32_t>(message_.reports_size());
      StartRead(&message_);
      return;
    }
    response_->set_accepted(n_);
    Finish(grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  v1::SubmitReportsResponse* const response_;
  v1::SubmitReportsRequest message_;
  uint32_t n_ = 0;
};

}  // namespace

grpc::ServerReadReactor<v1::SubmitReportsRequest>* NullReportService::StreamReports(
    grpc::CallbackServerContext* /*context*/, v1::SubmitReportsResponse* response) {
  return new NullStreamReactor(response);
}

std::unique_ptr<NullServer> StartNullServer() {
  const server::ServerOptions collector;  // the settings deniable-server starts with
  auto s = std::make_unique<NullServer>();
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &s->port);
  builder.SetMaxReceiveMessageSize(8 * 1024 * 1024);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              std::min(collector.max_idle_threads, collector.max_threads));
  grpc::ResourceQuota quota("deniable-bench-null");
  quota.SetMaxThreads(collector.max_threads);
  quota.Resize(static_cast<size_t>(collector.max_grpc_memory_bytes));
  builder.SetResourceQuota(quota);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, collector.max_streams_per_connection);
  builder.RegisterService(&s->service);
  s->server = builder.BuildAndStart();
  return s;
}

absl::StatusOr<int64_t> EnsureBenchMetric(server::Storage* storage) {
  server::MetricRegistry registry(storage, SystemClock::Default());
  absl::StatusOr<std::shared_ptr<const server::MetricInfo>> found = registry.Find(kBenchMetric);
  if (found.ok()) return (*found)->id;
  v1::CreateMetricRequest create;
  create.set_name(kBenchMetric);
  create.set_description("benchmark metric");
  create.mutable_design()->mutable_two_coin();
  DENIABLE_RETURN_IF_ERROR(registry.Create(create).status());
  DENIABLE_ASSIGN_OR_RETURN(found, registry.Find(kBenchMetric));
  return (*found)->id;
}

}  // namespace deniable::bench
