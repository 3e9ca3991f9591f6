#include "server/service/call_metrics.h"

#include <string>

#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace deniable::server {
namespace {

class CallMetrics : public grpc::experimental::Interceptor {
 public:
  CallMetrics(absl::string_view method, ServerCounters* counters)
      : method_(absl::StripPrefix(method, "/")), counters_(counters) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      counters_->RecordCall("grpc", method_,
                            static_cast<absl::StatusCode>(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  ServerCounters* const counters_;
};

}  // namespace

grpc::experimental::Interceptor* CallMetricsFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  return new CallMetrics(info->method() != nullptr ? info->method() : "", counters_);
}

}  // namespace deniable::server
