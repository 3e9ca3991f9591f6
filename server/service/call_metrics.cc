#include "server/service/call_metrics.h"

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "deniable/v1/report_service.pb.h"
#include "server/access_log.h"
#include "server/auth/access_policy.h"

namespace deniable::server {
namespace {

// gRPC builds an interceptor on one thread and runs its hooks on others, handing it over inside
// libgrpc, which ThreadSanitizer cannot see (not instrumented). Every hand-over is published here:
// a release after the constructor and after each hook, an acquire before each hook. The counter
// only grows by read-modify-writes, so an acquire orders a hook after every earlier release,
// this interceptor's construction and its earlier hooks included. One relaxed-cost atomic per
// hook; it adds no ordering the real program lacks.
std::atomic<uint64_t> g_handoffs{0};

class CallMetrics : public grpc::experimental::Interceptor {
 public:
  CallMetrics(absl::string_view method, ServerCounters* counters, bool access_log)
      : method_(absl::StripPrefix(method, "/")),
        counters_(counters),
        access_log_(access_log),
        report_call_(IsReportMethod(method_)),
        start_(absl::Now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    g_handoffs.load(std::memory_order_acquire);
    Observe(methods);
    g_handoffs.fetch_add(1, std::memory_order_release);
    methods->Proceed();
  }

 private:
  void Observe(grpc::experimental::InterceptorBatchMethods* methods) {
    using grpc::experimental::InterceptionHookPoints;
    if (access_log_ && report_call_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_INITIAL_METADATA)) {
      const auto* metadata = methods->GetRecvInitialMetadata();
      import_ = metadata != nullptr &&
                metadata->find(grpc::string_ref(kImportHeader.data(), kImportHeader.size())) !=
                    metadata->end();
    }
    if (access_log_ && report_call_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      // The deserialized request (null when the stream ended): only its size is read.
      const auto* request = static_cast<const v1::SubmitReportsRequest*>(methods->GetRecvMessage());
      if (request != nullptr) reports_ += request->reports_size();
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const auto code = static_cast<absl::StatusCode>(methods->GetSendStatus().error_code());
      const absl::Duration latency = absl::Now() - start_;
      counters_->RecordCall("grpc", method_, code, latency);
      if (access_log_) {
        const std::string code_name = absl::StatusCodeToString(code);
        LogAccess({.transport = "grpc",
                   .method = method_,
                   .code = code_name,
                   .latency = latency,
                   .reports = report_call_ ? reports_ : -1,
                   .import = import_});
      }
    }
  }

  const std::string method_;
  ServerCounters* const counters_;
  const bool access_log_;
  const bool report_call_;
  const absl::Time start_;
  int64_t reports_ = 0;
  bool import_ = false;  // the call carried the x-deniable-import header
};

}  // namespace

grpc::experimental::Interceptor* CallMetricsFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  auto* interceptor =
      new CallMetrics(info->method() != nullptr ? info->method() : "", counters_, access_log_);
  g_handoffs.fetch_add(1, std::memory_order_release);
  return interceptor;
}

}  // namespace deniable::server
